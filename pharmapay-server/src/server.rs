//! The HTTP/1.1 server: accepting connections, turning each request into a [`Req`], logging
//! it, and shutting down gracefully.
//!
//! [`serve`] takes an already-bound listener and a shutdown future, so tests bind port 0 and
//! `main` passes SIGINT/SIGTERM. On shutdown it stops accepting, lets in-flight requests finish
//! (up to [`DRAIN_TIMEOUT`]) and returns. Slow clients are cut off: request headers, and then
//! bodies, must arrive within the application's request timeout (30 seconds by default), and a
//! client that leaves an answer unread for as long loses its connection. At most
//! [`App::max_connections`] connections are served at once; further clients wait in the
//! listener's backlog until one closes.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use pharmapay_core::Store;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Sleep;
use tracing::{Instrument, info, warn};

use crate::app::{App, Matched};
use crate::http::{Body, Reply, Req, TraceId};
use crate::problem::ApiError;

/// The log target of each request's line (method, path, status, time):
/// `RUST_LOG=info,pharmapay::http=warn` keeps the server's other logs and drops these lines.
pub const REQUEST_LOG: &str = "pharmapay::http";

/// The target of each request's span, which gives the request's other events (a failed
/// sign-in, a store failure) its trace id, method and path. It has a target of its own so that
/// filtering the request lines out keeps the trace id on what is still logged; a filter that
/// leaves it below `info` (such as `warn`, or `info,pharmapay::request=warn`) builds no span at
/// all, which is the cheapest way to serve.
pub const REQUEST_SPAN: &str = "pharmapay::request";

/// How long an attempt refused by sign-in throttling (D21) waits before its 429 is sent.
///
/// Throttling costs the attacker, not the pharmacy (D40). A refusal costs the server a read and
/// an answer; a client that sends the next attempt as soon as one is answered would otherwise
/// get tens of thousands a second and take the cores payments need. Held for this long, each
/// connection gets at most four refusals a second, while the wait costs the server a timer. A
/// person who was throttled is told when to try again (`Retry-After`), so the pause costs them
/// nothing.
pub const THROTTLED_PAUSE: Duration = Duration::from_millis(250);

/// How long shutdown waits for in-flight requests.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `app` on `listener` until `shutdown` completes, then drains open connections.
///
/// # Errors
/// Never in practice: accept errors (such as running out of file descriptors) are logged and
/// retried after a short pause.
pub async fn serve<S: Store>(
    listener: TcpListener,
    app: Arc<App<S>>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(app.request_timeout).keep_alive(true);
    let connections = Arc::new(Semaphore::new(app.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    let mut warned_at_capacity = false;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // A connection is accepted only once it can be served: beyond the cap, clients wait in
        // the kernel's backlog rather than holding memory here.
        if connections.available_permits() == 0 {
            if !warned_at_capacity {
                warn!(
                    max_connections = app.max_connections,
                    "the connection limit is reached; new clients wait until a connection closes"
                );
                warned_at_capacity = true;
            } else {
                tracing::debug!(max_connections = app.max_connections, "the connection limit is reached");
            }
        }
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => permit.expect("the connection semaphore is never closed"),
            () = &mut shutdown => break,
        };
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _peer)) => stream,
                    Err(error) => {
                        warn!(%error, "could not accept a connection");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let io = TokioIo::new(WriteTimeout::new(stream, app.request_timeout));
                let app = Arc::clone(&app);
                let service = service_fn(move |request| handle(Arc::clone(&app), request));
                let connection = graceful.watch(builder.serve_connection(io, service));
                tokio::spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(%error, "connection ended with an error");
                    }
                    drop(permit);
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    info!(open_connections = graceful.count(), "shutting down: finishing in-flight requests");
    tokio::select! {
        () = graceful.shutdown() => info!("all connections closed"),
        () = tokio::time::sleep(DRAIN_TIMEOUT) => warn!("gave up waiting for connections to close"),
    }
    Ok(())
}

/// Answers one request, always: every failure becomes a problem-details reply.
async fn handle<S: Store>(app: Arc<App<S>>, request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let started = Instant::now();
    let trace_id = TraceId::next();
    let (parts, body) = request.into_parts();
    let span = tracing::info_span!(
        target: REQUEST_SPAN,
        "request",
        trace_id = %trace_id,
        method = %parts.method,
        path = %parts.uri.path()
    );
    // The request line names the request itself rather than relying on the span, which may be
    // filtered out while the lines are kept; what it names is copied only when it is logged.
    let line =
        tracing::enabled!(target: REQUEST_LOG, tracing::Level::INFO).then(|| (parts.method.clone(), parts.uri.clone()));
    let origin = parts.headers.get(header::ORIGIN).cloned();
    let reply = async {
        if let Some(preflight) = app.cors.preflight(&parts.method, &parts.headers) {
            return preflight;
        }
        match respond(&app, parts, body, trace_id).await {
            Ok(reply) => reply,
            Err(error) => {
                if matches!(error, ApiError::Core(pharmapay_core::Error::Throttled { .. })) {
                    tokio::time::sleep(THROTTLED_PAUSE).await;
                }
                error.into_reply(trace_id)
            }
        }
    }
    .instrument(span)
    .await;
    let mut reply = reply;
    app.cors.decorate(origin.as_ref(), &mut reply);
    if let Some((method, uri)) = line {
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        info!(
            target: REQUEST_LOG,
            trace_id = %trace_id,
            %method,
            path = %uri.path(),
            status = reply.status.as_u16(),
            elapsed_ms = format_args!("{elapsed_ms:.2}"),
            "request"
        );
    }
    let mut response = Response::new(reply.body);
    *response.status_mut() = reply.status;
    let headers = response.headers_mut();
    for (name, value) in reply.headers {
        headers.append(name, value);
    }
    headers.insert("x-trace-id", trace_id.header_value());
    Ok(response)
}

async fn respond<S: Store>(
    app: &App<S>,
    parts: hyper::http::request::Parts,
    body: Incoming,
    trace_id: TraceId,
) -> Result<Reply, ApiError> {
    let (route, params) = match app.router.find(&parts.method, parts.uri.path()) {
        Matched::Route(route, params) => (route, params),
        Matched::WrongMethod(allow) => return Err(ApiError::MethodNotAllowed(allow)),
        Matched::Unknown => return Err(ApiError::RouteNotFound),
    };
    let declared_length = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared_length.is_some_and(|length| length > route.max_body as u64) {
        return Err(ApiError::PayloadTooLarge);
    }
    // A request without a body (most reads) skips the timer of the body's deadline.
    let body = if hyper::body::Body::is_end_stream(&body) {
        hyper::body::Bytes::new()
    } else {
        let collected = tokio::time::timeout(app.request_timeout, Limited::new(body, route.max_body).collect())
            .await
            .map_err(|_| ApiError::Timeout)?;
        match collected {
            Ok(collected) => collected.to_bytes(),
            Err(error) if error.is::<http_body_util::LengthLimitError>() => return Err(ApiError::PayloadTooLarge),
            Err(_) => return Err(ApiError::malformed("the request body could not be read")),
        }
    };
    let req = Req {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: Vec::new(),
        headers: parts.headers,
        body,
        params,
        trace_id,
    };
    app.dispatch(route, parts.uri.query().unwrap_or(""), req).await
}

/// A connection whose writes fail once they make no progress for `timeout`: a client that
/// stops reading its answers is cut off instead of holding the connection, and whatever feeds
/// the answer, for ever.
struct WriteTimeout {
    stream: TcpStream,
    timeout: Duration,
    /// When the write now waiting on the client gives up; set while writes are pending.
    deadline: Option<Pin<Box<Sleep>>>,
}

impl WriteTimeout {
    fn new(stream: TcpStream, timeout: Duration) -> Self {
        Self { stream, timeout, deadline: None }
    }

    /// Passes on a finished write and forgets the deadline; turns a pending one into an error
    /// once the deadline has passed.
    fn watch<T>(&mut self, cx: &mut Context<'_>, polled: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match polled {
            Poll::Ready(result) => {
                self.deadline = None;
                Poll::Ready(result)
            }
            Poll::Pending => {
                let timeout = self.timeout;
                let deadline = self.deadline.get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                match deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        self.deadline = None;
                        tracing::info!(timeout_secs = timeout.as_secs_f64(), "cut off a client that stopped reading");
                        Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "the client stopped reading")))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl AsyncRead for WriteTimeout {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteTimeout {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.watch(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.stream).poll_flush(cx);
        self.watch(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.stream).poll_shutdown(cx);
        self.watch(cx, polled)
    }
}
