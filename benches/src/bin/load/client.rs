//! The load generator: HTTP/1.1 keep-alive connections over hyper's client, one task each, that
//! send requests back to back for a warm-up and then a fixed measuring window, or until a fixed
//! number of requests has been answered ([`send_all`], for bursts and floods counted request by
//! request).
//!
//! Only requests that complete inside the window count; their latencies (from sending the
//! request to reading the whole body) are kept one by one, so the percentiles are exact. A
//! request still running when the window closes is abandoned with its connection. This module
//! knows nothing of pharmapay beyond paths and status codes: what to send comes from a
//! [`MakeRequest`] closure.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use pharmapay_benches::stats::{Latencies, cpu_time, cpu_time_between, cpu_times_of, per_second};
use tokio::net::TcpStream;

/// Builds the `n`th request of connection `connection`.
pub type MakeRequest = Arc<dyn Fn(usize, u64) -> Request<Full<Bytes>> + Send + Sync>;

/// A request to `path` on `addr`, with a bearer token and a JSON body when given.
pub fn request(
    addr: SocketAddr,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Bytes>,
) -> Request<Full<Bytes>> {
    let mut builder = Request::builder().method(method).uri(path).header(HOST, addr.to_string());
    if let Some(token) = token {
        builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    if body.is_some() {
        builder = builder.header(CONTENT_TYPE, "application/json");
    }
    builder.body(Full::new(body.unwrap_or_default())).expect("paths and headers built here are valid")
}

/// One kind of traffic: how many connections send it, what they send, and the status a
/// successful answer has.
#[derive(Clone)]
pub struct Traffic {
    /// Keep-alive connections, each with one request in flight at a time.
    pub connections: usize,
    /// What each connection sends.
    pub make: MakeRequest,
    /// The status of a successful answer; any other counts as an error.
    pub expect: StatusCode,
    /// When set, each connection begins a request at most once per this long, as a person at a
    /// screen would, instead of back to back.
    pub pace: Option<Duration>,
}

/// How long to warm up and how long to measure.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Requests run but are not counted.
    pub warmup: Duration,
    /// Requests completed in this window are counted.
    pub window: Duration,
}

/// What one kind of traffic achieved in the window.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Successful requests completed in the window.
    pub ok: u64,
    /// Requests that failed or answered another status, in the window.
    pub errors: u64,
    /// Successful requests per second.
    pub rps: f64,
    /// Latencies of the successful requests.
    pub latencies: Latencies,
    /// The first error seen, for the log.
    pub first_error: Option<String>,
    /// Processor time the serving process used inside the window per request answered in it,
    /// in microseconds ([`run_with_cpu`]; `None` from [`run`]).
    pub cpu_us_per_request: Option<f64>,
    /// The same for this process, the load generator ([`run_with_cpu`]).
    pub generator_cpu_us_per_request: Option<f64>,
    /// The same for the database's own processes, where it has any ([`run_with_cpu`] given
    /// their name).
    pub database_cpu_us_per_request: Option<f64>,
}

#[derive(Default)]
struct ConnectionResult {
    ok: u64,
    errors: u64,
    samples: Vec<u64>,
    first_error: Option<String>,
}

/// Runs every kind of traffic at once for `timing.warmup + timing.window` and measures each.
pub async fn run(addr: SocketAddr, traffic: &[Traffic], timing: Timing) -> Vec<Measured> {
    let started = Instant::now();
    let window_start = started + timing.warmup;
    let window_end = window_start + timing.window;
    let mut tasks = Vec::new();
    for (kind, traffic) in traffic.iter().enumerate() {
        for connection in 0..traffic.connections {
            let make = Arc::clone(&traffic.make);
            let (expect, pace) = (traffic.expect, traffic.pace);
            let spread = pace.map(|pace| (pace * connection as u32) / traffic.connections.max(1) as u32);
            let paced = pace.zip(spread);
            tasks.push((kind, tokio::spawn(drive(addr, connection, make, (expect, paced), window_start, window_end))));
        }
    }
    let mut merged: Vec<ConnectionResult> = traffic.iter().map(|_| ConnectionResult::default()).collect();
    for (kind, task) in tasks {
        let result = task.await.unwrap_or_else(|error| ConnectionResult {
            errors: 1,
            first_error: Some(format!("a connection task failed: {error}")),
            ..ConnectionResult::default()
        });
        let into = &mut merged[kind];
        into.ok += result.ok;
        into.errors += result.errors;
        into.samples.extend(result.samples);
        if into.first_error.is_none() {
            into.first_error = result.first_error;
        }
    }
    merged
        .into_iter()
        .map(|result| Measured {
            ok: result.ok,
            errors: result.errors,
            rps: per_second(result.ok, timing.window),
            latencies: Latencies::of(result.samples),
            first_error: result.first_error,
            cpu_us_per_request: None,
            generator_cpu_us_per_request: None,
            database_cpu_us_per_request: None,
        })
        .collect()
}

/// Runs one kind of traffic as [`run`] does and also reads the processor time process `pid`
/// (the server) used inside the measuring window, shared out over the requests answered in
/// it. That is the server's own cost of a request, without the load generator's, which shares
/// the machine's cores with it. The load generator's (this process's) is read the same way,
/// and the database's, from its processes named `database` where it runs in processes of its
/// own: together they are where the two cores went.
pub async fn run_with_cpu(
    addr: SocketAddr,
    traffic: Traffic,
    timing: Timing,
    pid: u32,
    database: Option<&'static str>,
) -> Measured {
    let started = Instant::now();
    let (start, end) = (started + timing.warmup, started + timing.warmup + timing.window);
    let server = tokio::spawn(cpu_in_window(Some(pid), start, end));
    let generator = tokio::spawn(cpu_in_window(None, start, end));
    let database = database.map(|name| tokio::spawn(cpu_of_all_in_window(name, start, end)));
    let mut measured = run(addr, &[traffic], timing).await.remove(0);
    let answered = measured.ok + measured.errors;
    let per_request = |used: Duration| (answered > 0).then(|| used.as_secs_f64() * 1e6 / answered as f64);
    measured.cpu_us_per_request = server.await.ok().flatten().and_then(per_request);
    measured.generator_cpu_us_per_request = generator.await.ok().flatten().and_then(per_request);
    if let Some(database) = database {
        measured.database_cpu_us_per_request = database.await.ok().and_then(per_request);
    }
    measured
}

/// The processor time every process named `name` uses between `start` and `end`
/// ([`cpu_time_between`]).
pub async fn cpu_of_all_in_window(name: &'static str, start: Instant, end: Instant) -> Duration {
    tokio::time::sleep_until(tokio::time::Instant::from_std(start)).await;
    let before = cpu_times_of(name);
    tokio::time::sleep_until(tokio::time::Instant::from_std(end)).await;
    cpu_time_between(&before, &cpu_times_of(name))
}

/// The processor time process `pid` (`None`: this one) uses between `start` and `end`.
pub async fn cpu_in_window(pid: Option<u32>, start: Instant, end: Instant) -> Option<Duration> {
    tokio::time::sleep_until(tokio::time::Instant::from_std(start)).await;
    let before = cpu_time(pid)?;
    tokio::time::sleep_until(tokio::time::Instant::from_std(end)).await;
    cpu_time(pid)?.checked_sub(before)
}

/// One connection's loop: connect, then send requests back to back (or one per `pace`, the
/// first after `offset`) until the window ends, reconnecting after a failure.
async fn drive(
    addr: SocketAddr,
    connection: usize,
    make: MakeRequest,
    (expect, paced): (StatusCode, Option<(Duration, Duration)>),
    window_start: Instant,
    window_end: Instant,
) -> ConnectionResult {
    let mut result = ConnectionResult::default();
    let mut n = 0u64;
    let mut next_start = paced.map(|(_, offset)| tokio::time::Instant::now() + offset);
    let deadline = tokio::time::Instant::from_std(window_end);
    'connections: while Instant::now() < window_end {
        let connected = tokio::time::timeout_at(deadline, connect(addr)).await;
        let mut sender = match connected {
            Err(_) => break,
            Ok(Ok(sender)) => sender,
            Ok(Err(error)) => {
                note_error(&mut result, Instant::now() >= window_start, format!("connect: {error}"));
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        while Instant::now() < window_end {
            if let (Some(start), Some((pace, _))) = (next_start.as_mut(), paced) {
                if *start >= deadline {
                    break 'connections;
                }
                tokio::time::sleep_until(*start).await;
                *start += pace;
            }
            let request = make(connection, n);
            n += 1;
            let sent = Instant::now();
            let answer = tokio::time::timeout_at(deadline, exchange(&mut sender, request)).await;
            let done = Instant::now();
            let counted = done >= window_start && done < window_end;
            match answer {
                Err(_) => break 'connections,
                Ok(Ok((status, _))) if status == expect => {
                    if counted {
                        result.ok += 1;
                        result.samples.push(done.duration_since(sent).as_micros() as u64);
                    }
                }
                Ok(Ok((status, body))) => {
                    let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
                    note_error(&mut result, counted, format!("{status}: {text}"));
                }
                Ok(Err(error)) => {
                    note_error(&mut result, counted, format!("request: {error}"));
                    continue 'connections;
                }
            }
        }
    }
    result
}

fn note_error(result: &mut ConnectionResult, counted: bool, message: String) {
    if counted {
        result.errors += 1;
    }
    if result.first_error.is_none() {
        result.first_error = Some(message);
    }
}

type Sender = http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Result<Sender, Box<dyn std::error::Error + Send + Sync>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
    // The connection task ends when the sender is dropped or the server closes.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

async fn exchange(
    sender: &mut Sender,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, Bytes), Box<dyn std::error::Error + Send + Sync>> {
    sender.ready().await?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    Ok((status, body))
}

/// One answer of [`send_all`].
#[derive(Clone, Debug)]
pub struct Answer {
    /// The status, or why the exchange failed.
    pub status: Result<StatusCode, String>,
    /// From sending the request to reading the whole body, in microseconds.
    pub latency_us: u64,
}

/// Sends exactly `total` requests over `connections` keep-alive connections and returns every
/// answer, in the order of the requests' numbers.
///
/// All connections are opened first; then each sends one request at the same moment (numbers
/// `0..connections`, so a burst of `connections` requests is truly parallel), and each takes
/// the next unsent number as soon as its answer has arrived, until `total` are sent. A failed
/// exchange counts as an answer and its connection is opened again.
///
/// # Errors
/// When a connection cannot be opened, or the whole exchange takes longer than `limit`.
pub async fn send_all(
    addr: SocketAddr,
    connections: usize,
    total: u64,
    make: MakeRequest,
    limit: Duration,
) -> Result<Vec<Answer>, String> {
    let connections = connections.max(1);
    let mut senders = Vec::with_capacity(connections);
    for _ in 0..connections {
        senders.push(connect(addr).await.map_err(|error| format!("connect to {addr}: {error}"))?);
    }
    let next = Arc::new(AtomicU64::new(connections as u64));
    let start = Arc::new(tokio::sync::Barrier::new(connections));
    // Dropping the set aborts whatever still runs, so nothing outlives a timeout.
    let mut tasks = tokio::task::JoinSet::new();
    for (connection, mut sender) in senders.into_iter().enumerate() {
        let (make, next, start) = (Arc::clone(&make), Arc::clone(&next), Arc::clone(&start));
        tasks.spawn(async move {
            let mut answers: Vec<(u64, Answer)> = Vec::new();
            start.wait().await;
            let mut n = connection as u64;
            while n < total {
                let sent = Instant::now();
                let status = match exchange(&mut sender, make(connection, n)).await {
                    Ok((status, _)) => Ok(status),
                    Err(error) => {
                        if let Ok(fresh) = connect(addr).await {
                            sender = fresh;
                        }
                        Err(error.to_string())
                    }
                };
                answers.push((n, Answer { status, latency_us: sent.elapsed().as_micros() as u64 }));
                n = next.fetch_add(1, Ordering::Relaxed);
            }
            answers
        });
    }
    let collect = async {
        let mut answers = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            answers.extend(joined.map_err(|error| format!("a connection task failed: {error}"))?);
        }
        Ok::<_, String>(answers)
    };
    let mut answers = tokio::time::timeout(limit, collect)
        .await
        .map_err(|_| format!("{total} requests took longer than {} s", limit.as_secs()))??;
    answers.sort_by_key(|(n, _)| *n);
    Ok(answers.into_iter().map(|(_, answer)| answer).collect())
}

/// Sends one request on a fresh connection and returns the status and body.
///
/// # Errors
/// When the server cannot be reached or the exchange fails.
pub async fn call(
    addr: SocketAddr,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<serde_json::Value>,
) -> Result<(StatusCode, serde_json::Value), String> {
    let body = body.map(|value| Bytes::from(value.to_string()));
    let mut sender = connect(addr).await.map_err(|error| format!("connect to {addr}: {error}"))?;
    let (status, bytes) = exchange(&mut sender, request(addr, method.clone(), path, token, body))
        .await
        .map_err(|error| format!("{method} {path}: {error}"))?;
    let value =
        if bytes.is_empty() { serde_json::Value::Null } else { serde_json::from_slice(&bytes).unwrap_or_default() };
    Ok((status, value))
}

/// Sends one prepared request on a fresh connection and returns the status and the body as
/// text.
///
/// # Errors
/// When the server cannot be reached or the exchange fails.
pub async fn call_request(addr: SocketAddr, request: Request<Full<Bytes>>) -> Result<(StatusCode, String), String> {
    let mut sender = connect(addr).await.map_err(|error| format!("connect to {addr}: {error}"))?;
    let (status, bytes) = exchange(&mut sender, request).await.map_err(|error| error.to_string())?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

/// Waits until `path` answers quickly three times in a row, so one measurement's left-over
/// work (abandoned slow requests still running in the server or the database) does not spill
/// into the next. Gives up after `limit`.
pub async fn settle(addr: SocketAddr, path: &str, limit: Duration) -> Duration {
    let started = Instant::now();
    let mut quick = 0;
    while quick < 3 && started.elapsed() < limit {
        let sent = Instant::now();
        let answered = tokio::time::timeout(limit, call(addr, Method::GET, path, None, None)).await;
        let fast =
            matches!(answered, Ok(Ok((status, _))) if status.is_success()) && sent.elapsed() < Duration::from_millis(5);
        quick = if fast { quick + 1 } else { 0 };
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    started.elapsed()
}
