//! `GET /api/reports/{vendors,invoices,transactions}` (spec, Reports; D26): Excel downloads.
//!
//! Each report accepts its list's filters (not paging) and holds active records only. The sheet
//! is built first, so a failure still answers problem details; the finished file then streams
//! to the client from the blocking pool while it is being zipped, so memory stays flat.

use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::StatusCode;
use hyper::body::Frame;
use hyper::header;
use pharmapay_core::domain::{InvoiceFilter, TransactionFilter, VendorFilter};
use pharmapay_core::report::Report;
use pharmapay_core::{FieldErrors, Store};
use tokio::sync::mpsc;

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
pub async fn vendors<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let filter = filter(req, VendorFilter::from_params)?;
    Ok(download(app.engine.vendors_report(&principal, filter).await?))
}

/// Active invoices matching the invoice list's filters.
pub async fn invoices<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let filter = filter(req, InvoiceFilter::from_params)?;
    Ok(download(app.engine.invoices_report(&principal, filter).await?))
}

/// Active payments matching the transaction list's filters.
pub async fn transactions<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let filter = filter(req, TransactionFilter::from_params)?;
    Ok(download(app.engine.transactions_report(&principal, filter).await?))
}

/// A 200 whose body is the report's file, written on the blocking pool as the client reads it.
fn download(report: Report) -> Reply {
    let disposition = format!("attachment; filename=\"{}\"", report.file_name());
    let (sender, receiver) = mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::task::spawn_blocking(move || {
        let mut writer = ChannelWriter { sender, buffer: Vec::with_capacity(CHUNK) };
        let outcome = report.save_to(&mut writer).map_err(std::io::Error::other).and_then(|()| writer.flush());
        if let Err(error) = outcome {
            tracing::warn!(%error, "a report download stopped early");
            let _ = writer.sender.blocking_send(Err(error));
        }
    });
    Reply::stream(StatusCode::OK, XLSX, ReceiverBody { receiver }.boxed_unsync())
        .with_header(header::CONTENT_DISPOSITION, &disposition)
        .with_header(header::CACHE_CONTROL, "no-store")
}

const CHUNK: usize = 64 * 1024;

/// A `Write` that hands the bytes to the response body in 64 KiB chunks.
struct ChannelWriter {
    sender: mpsc::Sender<std::io::Result<Bytes>>,
    buffer: Vec<u8>,
}

impl ChannelWriter {
    fn send_buffer(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK)));
        self.sender
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away"))
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

/// A response body fed by a channel.
struct ReceiverBody {
    receiver: mpsc::Receiver<std::io::Result<Bytes>>,
}

impl hyper::body::Body for ReceiverBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.receiver.poll_recv(cx).map(|chunk| chunk.map(|chunk| chunk.map(Frame::data)))
    }
}
