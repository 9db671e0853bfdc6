//! Events (D47), measured on a copy of the prepared database: what the outbox costs a write,
//! how many deliveries a second go out to a receiver on 127.0.0.1, and what a webhook whose
//! endpoint never answers costs the rest of the server.
//!
//! - The outbox: `POST /api/transactions` from [`CONNECTIONS`] keep-alive connections,
//!   [`PAYMENTS`] payments a series, against a server started with `PHARMAPAY_EVENTS=false` and
//!   one with events on, in turn, [`ROUNDS`] times each, on the same copy; the share is the
//!   median of each round's with over without, two series run one after the other on a
//!   database grown alike, so a slow minute of the machine weighs on one round, not the result.
//! - Deliveries: a webhook taking every event points at a receiver in this process that
//!   answers 204; [`DELIVERED`] vendors imported in one file make as many events at once, timed
//!   from the import's answer to the receiver's last request.
//! - A dead endpoint: a webhook points at a listener that accepts connections and never
//!   answers, so each try holds its slot for the full 10 s timeout; the payments are measured
//!   again beside it.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::Method;
use pharmapay_server::{DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::children::Child;
use crate::client::{self, MakeRequest, request};
use crate::imports::{self, Copy};
use crate::setup::{self, Backend, Places, Scale};

/// Connections sending payments.
const CONNECTIONS: usize = 8;
/// Payments of one timed series.
const PAYMENTS: u64 = 3_000;
/// Series of each kind of server.
const ROUNDS: usize = 5;
/// Events whose deliveries are timed.
const DELIVERED: u64 = 5_000;
/// The least throughput with the outbox, as a share of the throughput without (D47).
pub const TARGET_SHARE: f64 = 0.9;
/// The least deliveries a second to a local receiver (D47).
pub const TARGET_DELIVERIES: f64 = 1_000.0;

/// What one backend measured.
pub struct Measured {
    backend: Backend,
    scale: Scale,
    /// Payments a second: without events, with them (medians of the rounds), the median of the
    /// rounds' shares, and with them beside a dead webhook (median of its series).
    without: f64,
    with: f64,
    share: f64,
    dead: f64,
    /// Deliveries a second to the local receiver.
    deliveries: f64,
    conditions: String,
}

/// Measures every SQL backend and scale in `targets` and renders the table.
///
/// # Errors
/// When a copy, a server or a request fails.
pub async fn measure_all(
    places: &Places,
    targets: &[(Backend, Scale, String)],
    max_busy: f64,
) -> Result<String, String> {
    let mut measured = Vec::new();
    for (backend, scale, url) in targets {
        eprintln!("== events {} {} ==", backend.name(), scale.name());
        let copy = Copy::make(places, *backend, url, "events").await?;
        let outcome = measure_on(places, (*backend, *scale), &copy.url, max_busy).await;
        copy.drop_it(places).await;
        measured.push(outcome?);
    }
    Ok(render(&measured))
}

/// A server on `url`, with events on or off and `PHARMAPAY_WEBHOOK_ALLOW_PRIVATE`.
fn server(places: &Places, url: &str, events: bool) -> Result<(Child, SocketAddr), String> {
    let mut command = Command::new(&places.server_bin);
    command.args(["--database-url", url, "--listen", "127.0.0.1:0", "--log", "warn,pharmapay_server=info"]);
    command.env("PHARMAPAY_EVENTS", events.to_string()).env("PHARMAPAY_WEBHOOK_ALLOW_PRIVATE", "true");
    Child::spawn_server(&format!("pharmapay events={events}"), command, Duration::from_secs(120))
}

async fn measure_on(
    places: &Places,
    (backend, scale): (Backend, Scale),
    url: &str,
    max_busy: f64,
) -> Result<Measured, String> {
    let conditions = crate::machine::quiet_machine(max_busy).await;
    eprintln!("{conditions}");
    let (mut without, mut with, mut shares) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let mut pair = [0.0; 2];
        for (slot, events) in [false, true].into_iter().enumerate() {
            let (mut child, addr) = server(places, url, events)?;
            pair[slot] = payments(addr).await?;
            eprintln!("round {round}, events {events}: {:.0} payments/s", pair[slot]);
            child.stop();
        }
        without.push(pair[0]);
        with.push(pair[1]);
        shares.push(pair[1] / pair[0]);
    }

    let (mut child, addr) = server(places, url, true)?;
    let (token, _) = setup::login(addr, DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD).await?;
    let deliveries = deliveries(addr, &token).await?;
    eprintln!("deliveries: {deliveries:.0} a second");
    // A webhook at an endpoint that takes connections and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").await.map_err(|error| error.to_string())?;
    let silent_url = format!("http://{}/never", silent.local_addr().map_err(|error| error.to_string())?);
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            open.push(stream);
        }
    });
    let body = json!({ "url": silent_url, "events": ["*"] });
    expect_created(client::call(addr, Method::POST, "/api/webhooks", Some(&token), Some(body)).await?, "a webhook")?;
    let mut dead = Vec::new();
    for _ in 0..ROUNDS {
        dead.push(payments(addr).await?);
    }
    let dead = median(dead);
    eprintln!("beside a dead webhook: {dead:.0} payments/s");
    held.abort();
    child.stop();
    let (without, with, share) = (median(without), median(with), median(shares));
    Ok(Measured { backend, scale, without, with, share, dead, deliveries, conditions })
}

/// The median of `values` (the mean of the middle two for an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn expect_created((status, body): (hyper::StatusCode, Value), what: &str) -> Result<Value, String> {
    if status.as_u16() == 201 { Ok(body) } else { Err(format!("{what} answered {status}: {body}")) }
}

/// Payments a second over one series of [`PAYMENTS`] on the server at `addr`.
async fn payments(addr: SocketAddr) -> Result<f64, String> {
    let (token, _) = setup::login(addr, DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD).await?;
    let (_, invoices) =
        client::call(addr, Method::GET, "/api/invoices?pageSize=100&status=Overdue", Some(&token), None).await?;
    let invoices: Vec<i64> =
        invoices["items"].as_array().into_iter().flatten().filter_map(|invoice| invoice["id"].as_i64()).collect();
    if invoices.is_empty() {
        return Err("the database holds no invoice to pay".into());
    }
    let make: MakeRequest = Arc::new(move |_, n| {
        let invoice = invoices[n as usize % invoices.len()];
        let body = format!(
            r#"{{"invoiceId":{invoice},"amount":0.01,"transactionDate":"2024-05-01","transactionType":"Cash","description":"events bench {n}"}}"#
        );
        request(addr, Method::POST, "/api/transactions", Some(&token), Some(Bytes::from(body)))
    });
    let started = Instant::now();
    let answers = client::send_all(addr, CONNECTIONS, PAYMENTS, make, Duration::from_secs(600)).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let failed: Vec<String> = answers
        .iter()
        .filter(|answer| !matches!(answer.status, Ok(status) if status.as_u16() == 201))
        .map(|answer| format!("{:?}", answer.status))
        .collect();
    if let Some(first) = failed.first() {
        return Err(format!("{} of {PAYMENTS} payments failed, the first with {first}", failed.len()));
    }
    Ok(PAYMENTS as f64 / elapsed)
}

/// Deliveries a second: [`DELIVERED`] vendors imported at once, each `vendor.created` posted
/// to a receiver here that answers 204, timed from the import's answer to the last delivery.
async fn deliveries(addr: SocketAddr, token: &str) -> Result<f64, String> {
    let receiver = TcpListener::bind("127.0.0.1:0").await.map_err(|error| error.to_string())?;
    let url = format!("http://{}/events", receiver.local_addr().map_err(|error| error.to_string())?);
    let received = Arc::new(AtomicU64::new(0));
    let last = Arc::new(std::sync::Mutex::new(Instant::now()));
    let counting = tokio::spawn(receive(receiver, Arc::clone(&received), Arc::clone(&last)));
    let body = json!({ "url": url, "events": ["vendor.created"] });
    let webhook =
        expect_created(client::call(addr, Method::POST, "/api/webhooks", Some(token), Some(body)).await?, "a webhook")?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_micros();
    let mut file = String::from("Name,Type\n");
    for n in 0..DELIVERED {
        let _ = writeln!(file, "Events Bench {stamp} {n},Wholesaler");
    }
    let (status, answer) = imports::send(addr, token, "/api/imports/vendors", "text/csv", Bytes::from(file)).await?;
    if status != 200 {
        return Err(format!("the import answered {status}: {answer}"));
    }
    let started = Instant::now();
    while received.load(Ordering::SeqCst) < DELIVERED {
        if started.elapsed() > Duration::from_secs(300) {
            return Err(format!("{} of {DELIVERED} deliveries in 300 s", received.load(Ordering::SeqCst)));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = last.lock().map(|last| last.duration_since(started)).unwrap_or_default().as_secs_f64();
    counting.abort();
    // The webhook goes, so the dead endpoint's series measures that endpoint alone.
    let id = webhook["id"].as_i64().unwrap_or_default();
    client::call(addr, Method::DELETE, &format!("/api/webhooks/{id}"), Some(token), None).await?;
    Ok(DELIVERED as f64 / elapsed.max(1e-3))
}

/// Answers every request on `listener` with 204, counting them and noting when the last came.
async fn receive(listener: TcpListener, received: Arc<AtomicU64>, last: Arc<std::sync::Mutex<Instant>>) {
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    while let Ok((stream, _)) = listener.accept().await {
        let (received, last) = (Arc::clone(&received), Arc::clone(&last));
        tokio::spawn(async move {
            let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let (received, last) = (Arc::clone(&received), Arc::clone(&last));
                async move {
                    use http_body_util::BodyExt as _;
                    let _ = request.into_body().collect().await;
                    if let Ok(mut last) = last.lock() {
                        *last = Instant::now();
                    }
                    received.fetch_add(1, Ordering::SeqCst);
                    let empty = http_body_util::Full::new(Bytes::new());
                    Ok::<_, std::convert::Infallible>(
                        hyper::Response::builder().status(204).body(empty).unwrap_or_default(),
                    )
                }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

fn render(measured: &[Measured]) -> String {
    let mut text = String::from("### Events (D47)\n\n");
    let _ = writeln!(
        text,
        "| Backend | Scale | Payments/s without events | With the outbox | Share, median of {ROUNDS} rounds (target ≥ {TARGET_SHARE}) | Beside a dead \
         webhook | Deliveries/s (target ≥ {TARGET_DELIVERIES:.0}) |"
    );
    text.push_str("|---|---|---:|---:|---:|---:|---:|\n");
    for row in measured {
        let _ = writeln!(
            text,
            "| {} | {} | {:.0} | {:.0} | {:.2} | {:.0} ({:.2} of the outbox's) | {:.0} |",
            row.backend.name(),
            row.scale.name(),
            row.without,
            row.with,
            row.share,
            row.dead,
            row.dead / row.with.max(1e-9),
            row.deliveries
        );
    }
    for row in measured {
        let _ = writeln!(text, "\n{} {}: {}", row.backend.name(), row.scale.name(), row.conditions);
    }
    text
}
