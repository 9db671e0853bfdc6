//! Report downloads (D26, D48): how a finished report streams to its client, and how downloads
//! share a server.
//!
//! The sheet is built first, so a failure still answers problem details; the finished file then
//! streams to the client from a background thread (`pharmapay_core::background`) while it is
//! being zipped, so memory stays flat and answering other requests comes first.
//!
//! Reports share the server ([`DownloadLimits`]): a few are generated and sent at once, each
//! holding a slot from before its sheet is built until its last byte is taken (a report at a
//! chain's scale is a temporary file of hundreds of megabytes and a blocking thread); the
//! others queue for a slot in the order they came, for up to the report wait, then answer 503.
//! A client that takes a download more slowly than the minimum pace (fewer than its bytes a
//! second, over each request timeout) or stops reading cannot hold its slot open: the writer
//! gives up at the end of the window, which frees its blocking thread and drops the report with
//! its temporary files at once, and the response ends in an error rather than looking complete.
//! Which reports there are, and the filters they read, is `routes/reports.rs`'s.

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
use pharmapay_core::reports::Report;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::SendTimeoutError;
use tokio::time::Instant;

use crate::app::App;
use crate::http::Reply;
use crate::problem::ApiError;
use crate::turns::Turn;

/// The content type of every download.
pub const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/// Builds the report `build` makes once a slot is free, and answers its download, which keeps
/// the slot until it ends.
///
/// # Errors
/// 503 when no slot frees up within the report wait; the engine's errors.
pub async fn generate<S>(
    app: &App<S>,
    build: impl Future<Output = Result<Report, pharmapay_core::Error>>,
) -> Result<Reply, ApiError> {
    let slot = app.downloads.slot().await?;
    let report = build.await?;
    Ok(download(app, report, slot))
}

/// A 200 whose body is the report's file, written on a background thread as the client reads it;
/// `slot` is given back when the writing ends.
fn download<S>(app: &App<S>, report: Report, slot: Turn) -> Reply {
    let disposition = format!("attachment; filename=\"{}\"", report.file_name());
    let (sender, receiver) = mpsc::channel::<Bytes>(4);
    let complete = Arc::new(AtomicBool::new(false));
    let open = OpenDownload::new(Arc::clone(&app.downloads.open));
    let pace = Pace::new(app.request_timeout, app.downloads.limits.min_bytes_per_second);
    let mut writer = ChannelWriter::new(sender, Handle::current(), pace);
    let written = Arc::clone(&complete);
    let span = tracing::Span::current();
    // D48: zipped on a thread of lower priority, so a long download takes the processor time
    // that answering everyone else leaves.
    let started = pharmapay_core::background::spawn("pharmapay-download", move || {
        // Declared first, so they are dropped last: the slot is given back and the count falls
        // once the report is gone.
        let _slot = slot;
        let _open = open;
        let _span = span.enter();
        let (file_name, rows) = (report.file_name().to_owned(), report.rows());
        // The report is consumed here, so its temporary files are gone when this returns.
        let outcome = report.save_to(&mut writer).map_err(std::io::Error::other).and_then(|()| writer.flush());
        match (outcome, writer.stopped) {
            (Ok(()), _) => written.store(true, Ordering::Release),
            (Err(_), Some(Stop::TooSlow)) => tracing::warn!(
                file = %file_name,
                rows,
                window_secs = writer.pace.window.as_secs_f64(),
                min_bytes = writer.pace.min_bytes,
                "cut off a report download: the client took too little of it in one window"
            ),
            (Err(_), Some(Stop::Closed)) => {
                tracing::info!(file = %file_name, rows, "a report download ended early: its connection closed");
            }
            (Err(error), None) => tracing::warn!(%error, file = %file_name, rows, "a report download stopped early"),
        }
    });
    if let Err(error) = started {
        // The report went with the work that could not start; the body ends in an error.
        tracing::warn!(%error, "a report download could not be started");
    }
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
    /// It took fewer bytes than the minimum in one window, or none at all.
    TooSlow,
    /// Its connection closed, so nobody takes chunks any more.
    Closed,
}

/// The slowest pace a download may go at: at least `min_bytes` taken in every `window`.
#[derive(Clone, Copy, Debug)]
struct Pace {
    window: Duration,
    min_bytes: u64,
    /// When the current window ends.
    window_end: Instant,
    /// What the client took in the current window.
    taken: u64,
}

impl Pace {
    /// `min_bytes_per_second` over windows of `window`.
    fn new(window: Duration, min_bytes_per_second: u64) -> Self {
        let min_bytes = u64::try_from(u128::from(min_bytes_per_second) * window.as_millis() / 1000).unwrap_or(u64::MAX);
        Self { window, min_bytes: min_bytes.max(1), window_end: Instant::now() + window, taken: 0 }
    }

    /// At `now`, whether the download keeps its pace: a window that ended with enough taken
    /// starts the next; one that ended with too little ends the download.
    fn kept_at(&mut self, now: Instant) -> bool {
        if now < self.window_end {
            return true;
        }
        if self.taken < self.min_bytes {
            return false;
        }
        self.window_end = now + self.window;
        self.taken = 0;
        true
    }
}

/// A `Write` that hands the bytes to the response body in 64 KiB chunks, as fast as the client
/// takes them but no slower than its [`Pace`].
struct ChannelWriter {
    sender: mpsc::Sender<Bytes>,
    buffer: Vec<u8>,
    runtime: Handle,
    pace: Pace,
    /// Set when the client made writing stop.
    stopped: Option<Stop>,
}

impl ChannelWriter {
    fn new(sender: mpsc::Sender<Bytes>, runtime: Handle, pace: Pace) -> Self {
        Self { sender, buffer: Vec::with_capacity(CHUNK), runtime, pace, stopped: None }
    }

    fn send_buffer(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let mut chunk = Bytes::from(std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK)));
        loop {
            let now = Instant::now();
            if !self.pace.kept_at(now) {
                self.stopped = Some(Stop::TooSlow);
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the client took the download more slowly than the minimum pace",
                ));
            }
            let len = chunk.len() as u64;
            // This runs on a background thread, where waiting on the runtime is allowed. The wait
            // ends with the window at the latest, when the pace is judged again.
            match self.runtime.block_on(self.sender.send_timeout(chunk, self.pace.window_end - now)) {
                Ok(()) => {
                    self.pace.taken += len;
                    return Ok(());
                }
                Err(SendTimeoutError::Timeout(unsent)) => chunk = unsent,
                Err(SendTimeoutError::Closed(_)) => {
                    self.stopped = Some(Stop::Closed);
                    return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the connection closed"));
                }
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
        let mut writer = ChannelWriter::new(sender, Handle::current(), Pace::new(Duration::from_millis(50), 1));
        let stopped = tokio::task::spawn_blocking(move || {
            // The first chunk fills the channel; the second waits for a reader that never comes.
            let chunk = vec![b'x'; CHUNK];
            let first = writer.write_all(&chunk);
            let second = writer.write_all(&chunk);
            (first.is_ok(), second.map_err(|error| error.kind()), writer.stopped)
        })
        .await
        .unwrap();
        assert_eq!(stopped, (true, Err(std::io::ErrorKind::TimedOut), Some(Stop::TooSlow)));
        drop(receiver);
    }

    #[test]
    fn a_pace_holds_while_each_window_takes_its_minimum() {
        let start = Instant::now();
        let mut pace = Pace::new(Duration::from_secs(10), 100);
        pace.window_end = start + Duration::from_secs(10);
        assert_eq!(pace.min_bytes, 1000, "100 bytes a second over ten seconds");
        assert!(pace.kept_at(start + Duration::from_secs(9)), "a window is judged when it ends");
        pace.taken = 1000;
        assert!(pace.kept_at(start + Duration::from_secs(10)), "enough was taken: the next window starts");
        assert_eq!((pace.taken, pace.window_end), (0, start + Duration::from_secs(20)));
        pace.taken = 999;
        assert!(!pace.kept_at(start + Duration::from_secs(20)), "one byte short ends the download");
    }

    #[tokio::test]
    async fn a_writer_stops_at_once_when_the_connection_is_gone() {
        let (sender, receiver) = mpsc::channel::<Bytes>(1);
        drop(receiver);
        let mut writer = ChannelWriter::new(sender, Handle::current(), Pace::new(Duration::from_secs(3600), 1));
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
