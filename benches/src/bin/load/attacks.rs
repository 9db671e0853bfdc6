//! Attacks on shared resources (D48), measured on a running server: clients that open the
//! aging of every vendor and go away after 100 ms, and clients that take report downloads
//! and read them as slowly as they can. Each is measured by what it does to everyone else: the
//! p99 of other users' `GET /api/profile` and sign-ins, alone and then while the attack runs,
//! against the target of at most twice the unloaded p99. Beside them, for comparison, the same
//! victims beside one honest client downloading the same report as fast as it can: what a
//! report costs everyone else by itself, which the attacks should not exceed.
//!
//! The attackers speak HTTP over sockets of their own, as a script would: the aging clients
//! reset their connection after 100 ms, the download clients shrink their receive buffer and
//! read one 64 KiB piece every 30 seconds. This module decides what to send and how to report
//! it; the victims' connections and timing belong to [`crate::client`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hyper::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::client::{self, Measured, Timing, Traffic, request};
use crate::setup::Fixture;
use pharmapay_benches::stats::ms;

/// Attacking connections of each attack.
pub const ATTACKERS: usize = 8;
/// How long an aging client waits before it goes away.
const AGING_PATIENCE: Duration = Duration::from_millis(100);
/// What a slow download client reads at a time, and how long it waits between reads.
const SLOW_READ: (usize, Duration) = (64 * 1024, Duration::from_secs(30));
/// How long an attack runs before the victims are measured beside it, so that it is in its
/// steady state (the download clients hold their slots, the queued ones wait).
const RAMP: Duration = Duration::from_secs(5);
/// The victims' measuring window under each attack. Slow downloads first fill the socket
/// buffers between server and client, which meets the pace of the first request timeout (30 s)
/// by itself: theirs is long enough for the second to judge them.
fn under_attack(attack: Attack) -> Duration {
    match attack {
        Attack::AgingThenGone => Duration::from_secs(30),
        Attack::SlowDownloads => Duration::from_secs(80),
        Attack::OneDownload => Duration::from_secs(30),
    }
}
/// The target: other users' p99 under an attack is at most this many times their unloaded p99.
pub const TARGET_RATIO: f64 = 2.0;

/// One attack, selectable with `--only` by its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attack {
    /// [`ATTACKERS`] clients open the aging of every vendor a year back and go away after
    /// 100 ms, again and again.
    AgingThenGone,
    /// [`ATTACKERS`] clients ask for the transactions report and read it 64 KiB every 30 s.
    SlowDownloads,
    /// Not an attack: one client downloads the transactions report as fast as it can, again
    /// and again, so the attacks can be held against what one report costs by itself.
    OneDownload,
}

impl Attack {
    /// Every attack, in measuring order.
    pub const ALL: [Attack; 3] = [Attack::AgingThenGone, Attack::SlowDownloads, Attack::OneDownload];

    /// A short key for `--only`; `attack` selects both.
    pub fn key(self) -> &'static str {
        match self {
            Attack::AgingThenGone => "attack-aging",
            Attack::SlowDownloads => "attack-downloads",
            Attack::OneDownload => "attack-one-download",
        }
    }

    /// The connections it takes.
    fn connections(self) -> usize {
        match self {
            Attack::OneDownload => 1,
            _ => ATTACKERS,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Attack::AgingThenGone => "agings abandoned after 100 ms",
            Attack::SlowDownloads => "report downloads read 64 KiB every 30 s",
            Attack::OneDownload => "(for comparison) one report downloaded at full speed",
        }
    }
}

/// What an attack's clients saw.
#[derive(Clone, Debug, Default)]
pub struct AttackerCounts {
    /// Requests sent.
    pub sent: u64,
    /// Downloads that began (200 and headers).
    pub began: u64,
    /// Answers 503 (no report slot within the wait, or no database turn).
    pub refused: u64,
    /// Downloads the server cut off while the client was still reading.
    pub cut: u64,
    /// Downloads taken whole.
    pub completed: u64,
}

impl AttackerCounts {
    /// What the attack's clients saw, in a few words.
    fn describe(&self) -> String {
        let mut words = vec![format!("{} sent", self.sent)];
        for (n, what) in [
            (self.began, "downloads began"),
            (self.completed, "taken whole"),
            (self.refused, "refused 503"),
            (self.cut, "seen cut off"),
        ] {
            if n > 0 {
                words.push(format!("{n} {what}"));
            }
        }
        words.join(", ")
    }
}

/// The victims' figures alone and under one attack.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The attack.
    pub attack: Attack,
    /// `GET /api/profile` alone, then under the attack.
    pub profile: (Measured, Measured),
    /// Sign-ins alone, then under the attack.
    pub sign_ins: (Measured, Measured),
    /// What the attackers saw.
    pub attackers: AttackerCounts,
}

/// What the attacks need from the block that runs them.
pub struct Setup<'a> {
    /// The server under test.
    pub addr: SocketAddr,
    /// Its fixture: the admin's token, the login users and the calendar.
    pub fixture: &'a Fixture,
    /// The unloaded victims' timing.
    pub timing: Timing,
    /// Which attacks to run.
    pub attacks: Vec<Attack>,
}

/// Other users, at the pace of people at screens rather than back to back: four connections
/// fetching their profile 50 times a second each, and two signing in 4 times a second each, as
/// users of their own (D21 counts per email).
fn victims(setup: &Setup<'_>) -> Vec<Traffic> {
    let addr = setup.addr;
    let token = Arc::new(setup.fixture.token.clone());
    let profile = Traffic {
        connections: 4,
        make: Arc::new(move |_, _| request(addr, Method::GET, "/api/profile", Some(&token), None)),
        expect: StatusCode::OK,
        pace: Some(Duration::from_millis(20)),
    };
    let bodies: Arc<Vec<Bytes>> = Arc::new(
        setup
            .fixture
            .users
            .iter()
            .map(|(email, password)| {
                Bytes::from(serde_json::json!({ "email": email, "password": password }).to_string())
            })
            .collect(),
    );
    let sign_ins = Traffic {
        connections: 2.min(bodies.len()),
        make: Arc::new(move |connection, _| {
            let body = bodies[connection % bodies.len()].clone();
            request(addr, Method::POST, "/api/auth/login", None, Some(body))
        }),
        expect: StatusCode::OK,
        pace: Some(Duration::from_millis(250)),
    };
    vec![profile, sign_ins]
}

/// Runs each attack: the victims alone, then beside the attack.
///
/// # Errors
/// When the server cannot be reached.
pub async fn measure(setup: Setup<'_>) -> Result<Vec<Outcome>, String> {
    let mut outcomes = Vec::new();
    for &attack in &setup.attacks {
        client::settle(setup.addr, "/api/health", Duration::from_secs(180)).await;
        let mut alone = client::run(setup.addr, &victims(&setup), setup.timing).await;
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let attackers: Vec<_> = (0..attack.connections())
            .map(|_| {
                let (stop, counts) = (Arc::clone(&stop), Arc::clone(&counts));
                let (addr, token) = (setup.addr, setup.fixture.token.clone());
                let today = setup.fixture.calendar.date_of(pharmapay_core::jiff::Timestamp::now());
                tokio::spawn(async move {
                    match attack {
                        Attack::AgingThenGone => {
                            let path = format!("/api/payables/aging?asOf={}", crate::sql::year_back(today));
                            agings_then_gone(addr, &token, &path, &stop, &counts).await;
                        }
                        Attack::SlowDownloads => downloads(addr, &token, Some(SLOW_READ.1), &stop, &counts).await,
                        Attack::OneDownload => downloads(addr, &token, None, &stop, &counts).await,
                    }
                })
            })
            .collect();
        eprintln!("attack: {} on {} connections", attack.label(), attack.connections());
        tokio::time::sleep(RAMP).await;
        let timing = Timing { warmup: Duration::ZERO, window: under_attack(attack) };
        let mut under = client::run(setup.addr, &victims(&setup), timing).await;
        stop.store(true, Ordering::Release);
        for attacker in attackers {
            attacker.abort();
        }
        let attackers = counts.snapshot();
        eprintln!("attack: {}", attackers.describe());
        outcomes.push(Outcome {
            attack,
            profile: (alone.remove(0), under.remove(0)),
            sign_ins: (alone.remove(0), under.remove(0)),
            attackers,
        });
    }
    Ok(outcomes)
}

#[derive(Default)]
struct Counts {
    sent: AtomicU64,
    began: AtomicU64,
    refused: AtomicU64,
    cut: AtomicU64,
    completed: AtomicU64,
}

impl Counts {
    fn snapshot(&self) -> AttackerCounts {
        AttackerCounts {
            sent: self.sent.load(Ordering::Acquire),
            began: self.began.load(Ordering::Acquire),
            refused: self.refused.load(Ordering::Acquire),
            cut: self.cut.load(Ordering::Acquire),
            completed: self.completed.load(Ordering::Acquire),
        }
    }
}

fn get(addr: SocketAddr, path: &str, token: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n")
}

/// Opens the aging, waits 100 ms and resets the connection, until `stop`.
async fn agings_then_gone(addr: SocketAddr, token: &str, path: &str, stop: &AtomicBool, counts: &Counts) {
    while !stop.load(Ordering::Acquire) {
        let Ok(mut socket) = tokio::net::TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        if socket.write_all(get(addr, path, token).as_bytes()).await.is_ok() {
            counts.sent.fetch_add(1, Ordering::AcqRel);
        }
        tokio::time::sleep(AGING_PATIENCE).await;
        // Reset, as a client that crashed: the server learns at once that nobody waits.
        let _ = socket.set_zero_linger();
        drop(socket);
    }
}

/// Asks for the transactions report and reads it 64 KiB every `pause` (with none, as fast as
/// it comes), again and again, until `stop`.
async fn downloads(addr: SocketAddr, token: &str, pause: Option<Duration>, stop: &AtomicBool, counts: &Counts) {
    while !stop.load(Ordering::Acquire) {
        let socket = match tokio::net::TcpSocket::new_v4() {
            Ok(socket) => socket,
            Err(_) => return,
        };
        if pause.is_some() {
            let _ = socket.set_recv_buffer_size(4096);
        }
        let Ok(mut stream) = socket.connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        if stream.write_all(get(addr, "/api/reports/transactions", token).as_bytes()).await.is_err() {
            continue;
        }
        counts.sent.fetch_add(1, Ordering::AcqRel);
        let mut head = Vec::new();
        let mut buffer = vec![0_u8; SLOW_READ.0];
        while !head.windows(4).any(|window| window == b"\r\n\r\n") {
            match stream.read(&mut buffer[..1024]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
        if head.starts_with(b"HTTP/1.1 503") {
            counts.refused.fetch_add(1, Ordering::AcqRel);
            continue;
        }
        if !head.starts_with(b"HTTP/1.1 200") {
            continue;
        }
        counts.began.fetch_add(1, Ordering::AcqRel);
        loop {
            if stop.load(Ordering::Acquire) {
                return;
            }
            if let Some(pause) = pause {
                tokio::time::sleep(pause).await;
            }
            let mut taken = 0;
            let ended = loop {
                match stream.read(&mut buffer[taken..]).await {
                    Ok(0) | Err(_) => break Some(false),
                    Ok(n) => taken += n,
                }
                // The last chunk of a whole body (the connection stays open after it).
                if buffer[..taken].ends_with(b"\r\n0\r\n\r\n") {
                    break Some(true);
                }
                if taken >= SLOW_READ.0 {
                    break None;
                }
            };
            match ended {
                Some(true) => {
                    counts.completed.fetch_add(1, Ordering::AcqRel);
                    break;
                }
                Some(false) => {
                    counts.cut.fetch_add(1, Ordering::AcqRel);
                    break;
                }
                None => {}
            }
        }
    }
}

fn p99(measured: &Measured) -> f64 {
    measured.latencies.p99_ms()
}

/// Each victim's p99 under the attack against alone, and whether it holds the target.
pub fn verdicts(outcome: &Outcome) -> Vec<(&'static str, f64, f64, bool)> {
    [("GET /api/profile", &outcome.profile), ("sign-in", &outcome.sign_ins)]
        .into_iter()
        .map(|(who, (alone, under))| {
            let (alone, under) = (p99(alone), p99(under));
            (who, alone, under, alone > 0.0 && under <= alone * TARGET_RATIO)
        })
        .collect()
}

/// The attacks' table, in Markdown.
pub fn render(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "\n| Attack (D48) | Victim | p99 alone | p99 under attack | Ratio | Target | Requests under attack | Attackers saw |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for outcome in outcomes {
        let saw = outcome.attackers.describe();
        for ((who, alone, under, met), measured) in
            verdicts(outcome).into_iter().zip([&outcome.profile.1, &outcome.sign_ins.1])
        {
            let mut requests = format!("{} ok", measured.ok);
            if measured.errors > 0 {
                requests.push_str(&format!(
                    ", {} failed ({})",
                    measured.errors,
                    measured.first_error.as_deref().unwrap_or("?")
                ));
            }
            out.push_str(&format!(
                "| {} | {who} | {} ms | {} ms | {:.2} | at most {TARGET_RATIO} x: {} | {requests} | {saw} |\n",
                outcome.attack.label(),
                ms(alone),
                ms(under),
                if alone > 0.0 { under / alone } else { f64::NAN },
                if met { "met" } else { "MISSED" },
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attack_keys_are_selected_together_by_attack() {
        assert!(Attack::ALL.iter().all(|attack| attack.key().contains("attack")));
        assert_ne!(Attack::ALL[0].key(), Attack::ALL[1].key());
    }
}
