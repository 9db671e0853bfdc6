//! `GET /api/reports/{vendors,invoices,transactions}` (spec, Reports; D26), `aging` (D34) and
//! `vendor-statement` (D35): Excel downloads.
//!
//! Each report accepts its list's filters (not paging) and holds active records only. The sheet
//! is built first, so a failure still answers problem details; the finished file then streams
//! to the client from the blocking pool while it is being zipped, so memory stays flat.
//!
//! A client that stops reading cannot hold a download open: when it takes no chunk within the
//! request timeout, the writer gives up, which frees its blocking thread and drops the report
//! with its temporary files, and the response ends in an error rather than looking complete.

use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::StatusCode;
use hyper::body::Frame;
use hyper::header;
use pharmapay_core::domain::aging::AgingQuery;
use pharmapay_core::domain::statement::StatementQuery;
use pharmapay_core::domain::{InvoiceFilter, TransactionFilter, VendorFilter};
use pharmapay_core::ids::VendorId;
use pharmapay_core::paging::read_id;
use pharmapay_core::report::Report;
use pharmapay_core::{FieldErrors, Principal, Store};
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::SendTimeoutError;

use crate::app::App;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// The content type of every download.
pub const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

fn filter<T>(req: &Req, read: impl FnOnce(&Vec<(String, String)>, &mut FieldErrors) -> T) -> Result<T, ApiError> {
    let mut errors = FieldErrors::new();
    let filter = read(&req.query, &mut errors);
    if errors.is_empty() { Ok(filter) } else { Err(ApiError::Invalid(errors)) }
}

/// Active vendors matching the vendor list's filters.
pub async fn vendors<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let filter = filter(&req, VendorFilter::from_params)?;
    Ok(download(app, app.engine.vendors_report(principal, filter).await?))
}

/// Active invoices matching the invoice list's filters.
pub async fn invoices<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let filter = filter(&req, InvoiceFilter::from_params)?;
    Ok(download(app, app.engine.invoices_report(principal, filter).await?))
}

/// Active payments matching the transaction list's filters.
pub async fn transactions<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let filter = filter(&req, TransactionFilter::from_params)?;
    Ok(download(app, app.engine.transactions_report(principal, filter).await?))
}

/// The payables aging (D34): `asOf` and `vendorId` as the aging takes them.
pub async fn aging<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let query = AgingQuery::from_params(&req.query)?;
    Ok(download(app, app.engine.aging_report(principal, &query).await?))
}

/// A vendor's statement (D35): `vendorId` (required), `fromDate` and `toDate`.
pub async fn vendor_statement<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let mut errors = FieldErrors::new();
    let vendor_id = read_id(&req.query, "vendorId", &mut errors);
    if vendor_id.is_none() && errors.is_empty() {
        errors.add("vendorId", "is required");
    }
    let query = StatementQuery::from_params(&req.query);
    match (vendor_id, query) {
        (Some(vendor_id), Ok(query)) if errors.is_empty() => {
            Ok(download(app, app.engine.statement_report(principal, VendorId(vendor_id), &query).await?))
        }
        (_, query) => {
            if let Err(more) = query {
                errors.merge(more);
            }
            Err(ApiError::Invalid(errors))
        }
    }
}

/// A 200 whose body is the report's file, written on the blocking pool as the client reads it.
fn download<S>(app: &App<S>, report: Report) -> Reply {
    let disposition = format!("attachment; filename=\"{}\"", report.file_name());
    let (sender, receiver) = mpsc::channel::<Bytes>(4);
    let complete = Arc::new(AtomicBool::new(false));
    let open = OpenDownload::new(Arc::clone(&app.open_downloads));
    let mut writer = ChannelWriter::new(sender, Handle::current(), app.request_timeout);
    let written = Arc::clone(&complete);
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || {
        // Declared first, so it is dropped last: the count falls once the report is gone.
        let _open = open;
        let _span = span.enter();
        let (file_name, rows) = (report.file_name().to_owned(), report.rows());
        // The report is consumed here, so its temporary files are gone when this returns.
        let outcome = report.save_to(&mut writer).map_err(std::io::Error::other).and_then(|()| writer.flush());
        match (outcome, writer.stopped) {
            (Ok(()), _) => written.store(true, Ordering::Release),
            (Err(_), Some(Stop::Stalled)) => tracing::warn!(
                file = %file_name,
                rows,
                timeout_secs = writer.timeout.as_secs_f64(),
                "cut off a report download: the client took no data for the request timeout"
            ),
            (Err(_), Some(Stop::Closed)) => {
                tracing::info!(file = %file_name, rows, "a report download ended early: its connection closed");
            }
            (Err(error), None) => tracing::warn!(%error, file = %file_name, rows, "a report download stopped early"),
        }
    });
    Reply::stream(StatusCode::OK, XLSX, ReceiverBody { receiver, complete }.boxed_unsync())
        .with_header(header::CONTENT_DISPOSITION, &disposition)
        .with_header(header::CACHE_CONTROL, "no-store")
}

/// Counts a download in [`App::open_downloads`] for as long as it lives.
struct OpenDownload(Arc<AtomicUsize>);

impl OpenDownload {
    fn new(count: Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for OpenDownload {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

const CHUNK: usize = 64 * 1024;

/// Why the client made a download stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// It took no chunk for the request timeout.
    Stalled,
    /// Its connection closed, so nobody takes chunks any more.
    Closed,
}

/// A `Write` that hands the bytes to the response body in 64 KiB chunks, waiting at most
/// `timeout` for the client to take each one.
struct ChannelWriter {
    sender: mpsc::Sender<Bytes>,
    buffer: Vec<u8>,
    runtime: Handle,
    timeout: Duration,
    /// Set when the client made writing stop.
    stopped: Option<Stop>,
}

impl ChannelWriter {
    fn new(sender: mpsc::Sender<Bytes>, runtime: Handle, timeout: Duration) -> Self {
        Self { sender, buffer: Vec::with_capacity(CHUNK), runtime, timeout, stopped: None }
    }

    fn send_buffer(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK)));
        // This runs on the blocking pool, where waiting on the runtime is allowed.
        match self.runtime.block_on(self.sender.send_timeout(chunk, self.timeout)) {
            Ok(()) => Ok(()),
            Err(SendTimeoutError::Timeout(_)) => {
                self.stopped = Some(Stop::Stalled);
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the client took no data within the request timeout",
                ))
            }
            Err(SendTimeoutError::Closed(_)) => {
                self.stopped = Some(Stop::Closed);
                Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the connection closed"))
            }
        }
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= CHUNK {
            self.send_buffer()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send_buffer()
    }
}

/// A response body fed by a channel. It ends cleanly only when the writer says the file is
/// complete; a writer that stopped early makes it end in an error, so the connection is cut
/// rather than a truncated file looking whole.
struct ReceiverBody {
    receiver: mpsc::Receiver<Bytes>,
    complete: Arc<AtomicBool>,
}

impl hyper::body::Body for ReceiverBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.receiver.poll_recv(cx) {
            Poll::Ready(Some(chunk)) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
            Poll::Ready(None) if self.complete.load(Ordering::Acquire) => Poll::Ready(None),
            Poll::Ready(None) => Poll::Ready(Some(Err(std::io::Error::other("the report was not written to the end")))),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[tokio::test]
    async fn a_writer_whose_chunks_nobody_takes_gives_up_after_the_timeout() {
        let (sender, receiver) = mpsc::channel::<Bytes>(1);
        let mut writer = ChannelWriter::new(sender, Handle::current(), Duration::from_millis(50));
        let stopped = tokio::task::spawn_blocking(move || {
            // The first chunk fills the channel; the second waits for a reader that never comes.
            let chunk = vec![b'x'; CHUNK];
            let first = writer.write_all(&chunk);
            let second = writer.write_all(&chunk);
            (first.is_ok(), second.map_err(|error| error.kind()), writer.stopped)
        })
        .await
        .unwrap();
        assert_eq!(stopped, (true, Err(std::io::ErrorKind::TimedOut), Some(Stop::Stalled)));
        drop(receiver);
    }

    #[tokio::test]
    async fn a_writer_stops_at_once_when_the_connection_is_gone() {
        let (sender, receiver) = mpsc::channel::<Bytes>(1);
        drop(receiver);
        let mut writer = ChannelWriter::new(sender, Handle::current(), Duration::from_secs(3600));
        let stopped = tokio::task::spawn_blocking(move || {
            let result = writer.write_all(&vec![b'x'; CHUNK]);
            (result.map_err(|error| error.kind()), writer.stopped)
        })
        .await
        .unwrap();
        assert_eq!(stopped, (Err(std::io::ErrorKind::BrokenPipe), Some(Stop::Closed)));
    }

    #[tokio::test]
    async fn a_body_ends_cleanly_only_when_the_whole_file_was_written() {
        for complete in [true, false] {
            let (sender, receiver) = mpsc::channel::<Bytes>(2);
            sender.send(Bytes::from_static(b"PK")).await.unwrap();
            drop(sender);
            let mut body = ReceiverBody { receiver, complete: Arc::new(AtomicBool::new(complete)) };
            let first = body.frame().await.expect("a frame").expect("data").into_data().unwrap();
            assert_eq!(first, Bytes::from_static(b"PK"));
            let last = body.frame().await;
            if complete {
                assert!(last.is_none(), "a complete file ends the body");
            } else {
                assert!(matches!(last, Some(Err(_))), "an unfinished file ends the body in an error");
            }
        }
    }
}
