//! The sign-in throttling scenarios (D21, D40), measured on a running server: a burst of
//! parallel right-password sign-ins for one account, a flood of attempts for an email that is
//! already throttled, and payments while such a flood runs beside them.
//!
//! Each scenario signs in as users it creates itself: the burst as one account kept between
//! runs (it only ever gives the right password, so it never collects failures), the floods as a
//! fresh account per run, throttled with five wrong passwords just before, so a database reused
//! within the fifteen-minute window starts every flood the same way. What a flood wrote is read
//! back through `GET /api/audit-log` as the admin, and from the database's size on disk
//! (SQLite's main file and its `-wal`, or `pg_database_size`). This module decides what to send
//! and how to report it; connections and timing belong to [`crate::client`].

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use pharmapay_benches::stats::{Latencies, per_second};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::sessions::login as login_rules;
use serde_json::json;

use crate::client::{self, Answer, Measured, Timing, Traffic, call, request};
use crate::setup::Backend;
use crate::sql::Ceiling;
use pharmapay_benches::stats::{ms, rate};

/// Parallel sign-ins in one burst.
pub const BURST: usize = 32;
/// How many bursts are sent, one after the other.
pub const BURST_ROUNDS: usize = 5;
/// Attempts sent for an email once it is throttled.
pub const FLOOD_ATTEMPTS: u64 = 1_000;
/// Connections the counted flood is sent over.
pub const FLOOD_CONNECTIONS: usize = 10;
/// Connections of throttled attempts running beside the payments.
pub const FLOOD_ALONGSIDE: usize = 20;

/// The account of the burst: one email for every sign-in.
const BURST_USER: (&str, &str) = ("bench-burst@example.com", "bench-burst-password");
/// The password of the accounts the floods throttle.
const FLOOD_PASSWORD: &str = "bench-flood-password";
/// A password that is never right.
const WRONG_PASSWORD: &str = "not-the-password";
/// How long any one scenario's fixed set of requests may take.
const LIMIT: Duration = Duration::from_secs(300);

/// One scenario, selectable with `--only` by its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// [`BURST`] parallel right-password sign-ins for one account, [`BURST_ROUNDS`] times.
    Burst,
    /// [`FLOOD_ATTEMPTS`] attempts, right and wrong passwords, for a throttled email.
    Flood,
    /// `POST /api/transactions` alone, then with [`FLOOD_ALONGSIDE`] connections of throttled
    /// attempts beside it.
    PaymentsDuringFlood,
}

impl Scenario {
    /// Every scenario, in measuring order.
    pub const ALL: [Scenario; 3] = [Scenario::Burst, Scenario::Flood, Scenario::PaymentsDuringFlood];

    /// A short key for `--only`; `throttling` selects all three.
    pub fn key(self) -> &'static str {
        match self {
            Scenario::Burst => "throttling-burst",
            Scenario::Flood => "throttling-flood",
            Scenario::PaymentsDuringFlood => "throttling-payments",
        }
    }
}

/// What the scenarios need from the block that runs them.
pub struct Setup<'a> {
    /// The server under test.
    pub addr: SocketAddr,
    /// The admin's token, to create users and read the audit log.
    pub token: &'a str,
    /// The backend, to know where its data lies on disk.
    pub backend: Backend,
    /// The database URL the server opened.
    pub url: &'a str,
    /// Warm-up and window of the payment runs.
    pub loaded: Timing,
    /// The payments, as the `POST /api/transactions` row sends them.
    pub payments: Traffic,
    /// The scenarios to run.
    pub scenarios: Vec<Scenario>,
}

/// The answers of a fixed set of requests, counted by status.
#[derive(Clone, Debug, Default)]
pub struct Answers {
    /// How many answers had each status (`failed` for exchanges that broke).
    pub by_status: BTreeMap<String, u64>,
    /// Latencies of every answer that arrived.
    pub latencies: Latencies,
    /// How many answers there were.
    pub total: u64,
    /// The first failed exchange, for the log.
    pub first_failure: Option<String>,
}

impl Answers {
    fn of(answers: &[Answer]) -> Self {
        let mut counted = Answers { total: answers.len() as u64, ..Answers::default() };
        let mut samples = Vec::with_capacity(answers.len());
        for answer in answers {
            let key = match &answer.status {
                Ok(status) => {
                    samples.push(answer.latency_us);
                    status.as_u16().to_string()
                }
                Err(error) => {
                    counted.first_failure.get_or_insert_with(|| error.clone());
                    "failed".to_owned()
                }
            };
            *counted.by_status.entry(key).or_default() += 1;
        }
        counted.latencies = Latencies::of(samples);
        counted
    }

    /// How many answers had `status`.
    pub fn with(&self, status: StatusCode) -> u64 {
        self.by_status.get(status.as_str()).copied().unwrap_or(0)
    }

    /// `200 x 160`, `429 x 998, 401 x 2`: most frequent first.
    pub fn describe(&self) -> String {
        let mut counts: Vec<(&String, &u64)> = self.by_status.iter().collect();
        counts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        counts.iter().map(|(status, n)| format!("{status} x {n}")).collect::<Vec<_>>().join(", ")
    }
}

/// What the right-password bursts found.
#[derive(Clone, Debug)]
pub struct Burst {
    /// Every answer of every round.
    pub answers: Answers,
    /// The slowest answer of each round, in microseconds: how long a whole burst took.
    pub round_us: Latencies,
}

/// Bytes a backend keeps on disk, before and after a flood.
#[derive(Clone, Debug)]
pub struct Storage {
    /// What was measured.
    pub what: &'static str,
    /// Bytes before the flood.
    pub before: u64,
    /// Bytes after it.
    pub after: u64,
}

impl Storage {
    /// The growth, signed.
    pub fn growth(&self) -> i128 {
        i128::from(self.after) - i128::from(self.before)
    }
}

/// What the counted flood found.
#[derive(Clone, Debug)]
pub struct Flood {
    /// Every answer.
    pub answers: Answers,
    /// Answers per second over the whole flood.
    pub rps: f64,
    /// Audit entries written while it ran.
    pub audit_rows: u64,
    /// Their actions, newest first.
    pub audit_actions: Vec<String>,
    /// Bytes on disk before and after (none for the memory store).
    pub storage: Option<Storage>,
}

/// Payments alone and beside a throttled flood.
#[derive(Clone, Debug)]
pub struct PaymentsDuringFlood {
    /// Payment connections, the same in both runs.
    pub connections: usize,
    /// The payments alone.
    pub alone: Measured,
    /// The payments while the flood ran.
    pub during: Measured,
    /// The flood beside them (a success is a 429).
    pub flood: Measured,
}

impl PaymentsDuringFlood {
    /// p99 with the flood over p99 alone.
    pub fn p99_ratio(&self) -> Option<f64> {
        let alone = self.alone.latencies.p99_ms();
        (alone > 0.0).then(|| self.during.latencies.p99_ms() / alone)
    }
}

/// The scenarios' findings in one block; a scenario not run is `None`.
#[derive(Clone, Debug, Default)]
pub struct Throttling {
    /// The right-password bursts.
    pub burst: Option<Burst>,
    /// The counted flood.
    pub flood: Option<Flood>,
    /// Payments beside a flood.
    pub payments: Option<PaymentsDuringFlood>,
}

/// Runs the selected scenarios, in [`Scenario::ALL`] order.
///
/// # Errors
/// When the users cannot be prepared or the server stops answering; a wrong answer is
/// reported in the findings, not as an error.
pub async fn measure(setup: Setup<'_>) -> Result<Throttling, String> {
    let mut found = Throttling::default();
    for scenario in Scenario::ALL {
        if !setup.scenarios.contains(&scenario) {
            continue;
        }
        client::settle(setup.addr, "/api/health", Duration::from_secs(180)).await;
        match scenario {
            Scenario::Burst => {
                let burst = burst(&setup).await?;
                eprintln!(
                    "{BURST} parallel right-password sign-ins, {BURST_ROUNDS} rounds: {}, p50 {} ms",
                    burst.answers.describe(),
                    ms(burst.answers.latencies.p50_ms())
                );
                found.burst = Some(burst);
            }
            Scenario::Flood => {
                let flood = flood(&setup).await?;
                eprintln!(
                    "{FLOOD_ATTEMPTS} throttled attempts: {}, {}",
                    flood.answers.describe(),
                    plural(flood.audit_rows, "audit row", "audit rows")
                );
                found.flood = Some(flood);
            }
            Scenario::PaymentsDuringFlood => {
                let payments = payments_during_flood(&setup).await?;
                eprintln!(
                    "payments: p99 {} ms alone, {} ms beside a throttled flood",
                    ms(payments.alone.latencies.p99_ms()),
                    ms(payments.during.latencies.p99_ms())
                );
                found.payments = Some(payments);
            }
        }
    }
    Ok(found)
}

/// A sign-in request with a prepared JSON body.
fn sign_in(addr: SocketAddr, body: &Bytes) -> hyper::Request<http_body_util::Full<Bytes>> {
    request(addr, Method::POST, "/api/auth/login", None, Some(body.clone()))
}

fn sign_in_body(email: &str, password: &str) -> Bytes {
    Bytes::from(json!({ "email": email, "password": password }).to_string())
}

/// Creates a user as the admin; an email already taken (409) is the same user from an earlier
/// run.
async fn create_user(setup: &Setup<'_>, email: &str, password: &str) -> Result<(), String> {
    let body = json!({ "firstName": "Bench", "lastName": "Throttling", "email": email, "password": password,
        "roleId": 2 });
    let (status, answer) = call(setup.addr, Method::POST, "/api/users", Some(setup.token), Some(body)).await?;
    if status == StatusCode::CREATED || status == StatusCode::CONFLICT {
        Ok(())
    } else {
        Err(format!("creating {email}: {status} {answer}"))
    }
}

/// Creates a fresh user and records five failed sign-ins for it, so that its email is throttled
/// for the next fifteen minutes (D21); returns its email.
async fn throttled_user(setup: &Setup<'_>, what: &str) -> Result<String, String> {
    let email = format!("bench-{what}-{}@example.com", Timestamp::now().as_microsecond());
    create_user(setup, &email, FLOOD_PASSWORD).await?;
    let wrong = json!({ "email": email, "password": WRONG_PASSWORD });
    for n in 1..=login_rules::LIMIT {
        let (status, answer) = call(setup.addr, Method::POST, "/api/auth/login", None, Some(wrong.clone())).await?;
        if status != StatusCode::UNAUTHORIZED {
            return Err(format!("failed sign-in {n} of {email} answered {status} {answer}, not 401"));
        }
    }
    Ok(email)
}

/// Sends [`BURST`] right-password sign-ins for one account at once, [`BURST_ROUNDS`] times.
async fn burst(setup: &Setup<'_>) -> Result<Burst, String> {
    let (email, password) = BURST_USER;
    create_user(setup, email, password).await?;
    let addr = setup.addr;
    let body = sign_in_body(email, password);
    let mut all = Vec::new();
    let mut rounds = Vec::new();
    for _ in 0..BURST_ROUNDS {
        let body = body.clone();
        let answers =
            client::send_all(addr, BURST, BURST as u64, Arc::new(move |_, _| sign_in(addr, &body)), LIMIT).await?;
        rounds.push(answers.iter().map(|answer| answer.latency_us).max().unwrap_or(0));
        all.extend(answers);
    }
    Ok(Burst { answers: Answers::of(&all), round_us: Latencies::of(rounds) })
}

/// Requests for a throttled email: the right password on even numbers, a wrong one on odd.
fn mixed_attempts(addr: SocketAddr, email: &str) -> client::MakeRequest {
    let right = sign_in_body(email, FLOOD_PASSWORD);
    let wrong = sign_in_body(email, WRONG_PASSWORD);
    Arc::new(move |_, n| sign_in(addr, if n % 2 == 0 { &right } else { &wrong }))
}

/// Throttles a fresh email, then sends [`FLOOD_ATTEMPTS`] attempts for it and reads what they
/// wrote.
async fn flood(setup: &Setup<'_>) -> Result<Flood, String> {
    let email = throttled_user(setup, "flood").await?;
    let audit_before = audit_total(setup).await?;
    let storage_before = storage_bytes(setup).await?;
    let started = Instant::now();
    let answers =
        client::send_all(setup.addr, FLOOD_CONNECTIONS, FLOOD_ATTEMPTS, mixed_attempts(setup.addr, &email), LIMIT)
            .await?;
    let elapsed = started.elapsed();
    let storage_after = storage_bytes(setup).await?;
    let audit_rows = audit_total(setup).await?.saturating_sub(audit_before);
    let audit_actions = latest_audit_actions(setup, audit_rows).await?;
    let storage = storage_before.zip(storage_after).map(|((what, before), (_, after))| Storage { what, before, after });
    Ok(Flood {
        answers: Answers::of(&answers),
        rps: per_second(answers.len() as u64, elapsed),
        audit_rows,
        audit_actions,
        storage,
    })
}

/// Payments alone, then the same payments with [`FLOOD_ALONGSIDE`] connections of attempts for a
/// throttled email beside them, for the whole window.
async fn payments_during_flood(setup: &Setup<'_>) -> Result<PaymentsDuringFlood, String> {
    let email = throttled_user(setup, "flood-alongside").await?;
    let payments = setup.payments.clone();
    let alone = client::run(setup.addr, std::slice::from_ref(&payments), setup.loaded).await.remove(0);
    client::settle(setup.addr, "/api/health", Duration::from_secs(180)).await;
    let flood = Traffic {
        connections: FLOOD_ALONGSIDE,
        make: mixed_attempts(setup.addr, &email),
        expect: StatusCode::TOO_MANY_REQUESTS,
        pace: None,
    };
    let mut measured = client::run(setup.addr, &[payments.clone(), flood], setup.loaded).await;
    let during = measured.remove(0);
    let flood = measured.remove(0);
    Ok(PaymentsDuringFlood { connections: payments.connections, alone, during, flood })
}

/// The number of entries in the whole audit log.
async fn audit_total(setup: &Setup<'_>) -> Result<u64, String> {
    let (status, page) = call(setup.addr, Method::GET, "/api/audit-log?pageSize=1", Some(setup.token), None).await?;
    if status != StatusCode::OK {
        return Err(format!("reading the audit log: {status} {page}"));
    }
    page["totalCount"].as_u64().ok_or_else(|| format!("the audit page has no totalCount: {page}"))
}

/// The actions of the newest `n` audit entries (at most a hundred), newest first.
async fn latest_audit_actions(setup: &Setup<'_>, n: u64) -> Result<Vec<String>, String> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let path = format!("/api/audit-log?pageSize={}", n.min(100));
    let (status, page) = call(setup.addr, Method::GET, &path, Some(setup.token), None).await?;
    if status != StatusCode::OK {
        return Err(format!("reading the audit log: {status} {page}"));
    }
    Ok(page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| entry["action"].as_str().unwrap_or("?").to_owned())
        .collect())
}

/// The SQLite file of a `sqlite:` URL.
fn sqlite_file(url: &str) -> Option<&str> {
    let path = url.strip_prefix("sqlite:")?;
    let path = path.strip_prefix("//").unwrap_or(path);
    let path = path.split('?').next()?;
    (!path.is_empty()).then_some(path)
}

/// What the backend keeps on disk, in bytes: SQLite's main file plus its `-wal`, or the
/// PostgreSQL database's size; `None` for the memory store.
async fn storage_bytes(setup: &Setup<'_>) -> Result<Option<(&'static str, u64)>, String> {
    match setup.backend {
        Backend::Memory => Ok(None),
        Backend::Sqlite => {
            let path = sqlite_file(setup.url).ok_or_else(|| format!("not a SQLite file URL: {}", setup.url))?;
            let size = |path: String| std::fs::metadata(path).map(|metadata| metadata.len()).unwrap_or(0);
            Ok(Some(("SQLite file", size(path.to_owned()) + size(format!("{path}-wal")))))
        }
        Backend::Postgres => {
            let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(setup.url)
                .await
                .map_err(|error| format!("PostgreSQL at {}: {error}", setup.url))?;
            let bytes: i64 = sqlx::query_scalar("SELECT pg_database_size(current_database())")
                .fetch_one(&mut conn)
                .await
                .map_err(|error| error.to_string())?;
            let _ = sqlx::Connection::close(conn).await;
            Ok(Some(("PostgreSQL database", u64::try_from(bytes).unwrap_or(0))))
        }
    }
}

/// A target of the throttling scenarios, checked.
pub struct Target {
    /// The scenario, as the table names it.
    pub scenario: &'static str,
    /// The target.
    pub target: &'static str,
    /// What was measured, in the target's terms.
    pub measured: String,
    /// Whether it was met.
    pub met: bool,
    /// The one-line statement of the result.
    pub headline: String,
}

const BURST_LABEL: &str = "32 parallel right-password sign-ins for one account, 5 rounds";
const FLOOD_LABEL: &str = "1,000 attempts for a throttled email, right and wrong passwords";
const PAYMENTS_ALONE_LABEL: &str = "POST /api/transactions alone";
const PAYMENTS_DURING_LABEL: &str = "POST /api/transactions, 20 connections of throttled sign-ins alongside";

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The targets the scenarios that ran were measured against.
pub fn targets(found: &Throttling) -> Vec<Target> {
    let mut targets = Vec::new();
    if let Some(burst) = &found.burst {
        let throttled = burst.answers.with(StatusCode::TOO_MANY_REQUESTS);
        let signed_in = burst.answers.with(StatusCode::OK);
        let others = burst.answers.total - throttled - signed_in;
        let mut measured = format!("{throttled} throttled");
        if others > 0 {
            measured.push_str(&format!(", {others} neither 200 nor 429"));
        }
        targets.push(Target {
            scenario: BURST_LABEL,
            target: "0 throttled",
            headline: format!("{BURST} parallel right-password sign-ins: {measured} (target 0)"),
            measured,
            met: throttled == 0 && others == 0,
        });
    }
    if let Some(flood) = &found.flood {
        let refused = flood.answers.with(StatusCode::TOO_MANY_REQUESTS);
        let answers = if refused == flood.answers.total { "all 429".to_owned() } else { flood.answers.describe() };
        let mut headline = format!(
            "1,000 throttled attempts: {answers}, {} (target at most 1)",
            plural(flood.audit_rows, "audit row", "audit rows")
        );
        if let Some(storage) = &flood.storage {
            headline.push_str(&format!(", {} {:+} bytes", storage.what, storage.growth()));
        }
        targets.push(Target {
            scenario: FLOOD_LABEL,
            target: "429 only, at most 1 audit row",
            measured: format!("{answers}, {}", plural(flood.audit_rows, "audit row", "audit rows")),
            met: refused == flood.answers.total && flood.audit_rows <= 1,
            headline,
        });
    }
    if let Some(payments) = &found.payments
        && let Some(ratio) = payments.p99_ratio()
    {
        targets.push(Target {
            scenario: PAYMENTS_DURING_LABEL,
            target: "p99 <= 1.5 x alone",
            measured: format!("{ratio:.2} x alone"),
            met: ratio <= 1.5,
            headline: format!("payment p99 during a throttled flood: {ratio:.2} x alone (target at most 1.5)"),
        });
    }
    targets
}

fn verdict(target: Option<&Target>) -> (String, String) {
    match target {
        Some(target) => {
            (target.target.to_owned(), format!("{} ({})", if target.met { "met" } else { "MISSED" }, target.measured))
        }
        None => ("-".into(), "-".into()),
    }
}

/// The Markdown of the scenarios in one block: a line per target, then a table.
pub fn render(found: &Throttling, argon2: Option<&Ceiling>) -> String {
    let targets = targets(found);
    let find = |label: &str| targets.iter().find(|target| target.scenario == label);
    let mut out = String::from("\n#### Sign-in throttling\n\n");
    for target in &targets {
        out.push_str(&format!("{}: {}.\n", target.headline, if target.met { "met" } else { "MISSED" }));
    }
    out.push_str("\n| Scenario | Conns | Requests | Answers | req/s | p50 ms | p99 ms | Target | Met | Notes |\n");
    out.push_str("|---|---:|---:|---|---:|---:|---:|---|---|---|\n");
    let mut row = |label: &str, connections: usize, answers: &Answers, rps: Option<f64>, notes: Vec<String>| {
        let (target, met) = verdict(find(label));
        out.push_str(&format!(
            "| {label} | {connections} | {} | {} | {} | {} | {} | {target} | {met} | {} |\n",
            answers.total,
            answers.describe(),
            rps.map_or("-".into(), rate),
            ms(answers.latencies.p50_ms()),
            ms(answers.latencies.p99_ms()),
            notes.join("; ").replace('|', "/"),
        ));
    };
    if let Some(burst) = &found.burst {
        let mut notes = vec![format!("a whole burst answered within p50 {} ms", ms(burst.round_us.p50_ms()))];
        if let Some(argon2) = argon2.filter(|argon2| argon2.rps > 0.0) {
            notes.push(format!(
                "Argon2id alone: {BURST} verifications take at least {} ms on two threads",
                ms(BURST as f64 / argon2.rps * 1000.0)
            ));
        }
        if let Some(failure) = &burst.answers.first_failure {
            notes.push(format!("first failure: {failure}"));
        }
        row(BURST_LABEL, BURST, &burst.answers, None, notes);
    }
    if let Some(flood) = &found.flood {
        let mut notes = vec![format!(
            "audit log +{}{}",
            flood.audit_rows,
            if flood.audit_actions.is_empty() {
                String::new()
            } else {
                format!(" ({})", flood.audit_actions.join(", "))
            }
        )];
        if let Some(storage) = &flood.storage {
            notes.push(format!(
                "{}: {} -> {} bytes ({:+})",
                storage.what,
                storage.before,
                storage.after,
                storage.growth()
            ));
        }
        if let Some(failure) = &flood.answers.first_failure {
            notes.push(format!("first failure: {failure}"));
        }
        row(FLOOD_LABEL, FLOOD_CONNECTIONS, &flood.answers, Some(flood.rps), notes);
    }
    if let Some(payments) = &found.payments {
        let as_answers = |measured: &Measured| {
            let mut by_status = BTreeMap::from([(StatusCode::CREATED.as_str().to_owned(), measured.ok)]);
            if measured.errors > 0 {
                by_status.insert("other".to_owned(), measured.errors);
            }
            Answers {
                by_status,
                latencies: measured.latencies,
                total: measured.ok + measured.errors,
                first_failure: measured.first_error.clone(),
            }
        };
        let errors = |measured: &Measured| {
            measured.first_error.as_ref().filter(|_| measured.errors > 0).map(|error| format!("first error: {error}"))
        };
        let mut payments_row = |label: &str, measured: &Measured, notes: Vec<String>| {
            row(label, payments.connections, &as_answers(measured), Some(measured.rps), notes);
        };
        payments_row(PAYMENTS_ALONE_LABEL, &payments.alone, errors(&payments.alone).into_iter().collect());
        let mut notes = Vec::new();
        if payments.alone.rps > 0.0 {
            notes.push(format!("{:.2} x the rate alone", payments.during.rps / payments.alone.rps));
        }
        let flood = &payments.flood;
        notes.push(format!(
            "{} throttled attempts (429) on {FLOOD_ALONGSIDE} connections alongside: {}/s, p50 {} ms, p99 {} ms{}",
            flood.ok,
            rate(flood.rps),
            ms(flood.latencies.p50_ms()),
            ms(flood.latencies.p99_ms()),
            if flood.errors > 0 {
                format!(", {} other answers, first: {}", flood.errors, flood.first_error.as_deref().unwrap_or("?"))
            } else {
                String::new()
            }
        ));
        notes.extend(errors(&payments.during));
        payments_row(PAYMENTS_DURING_LABEL, &payments.during, notes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, latency_us: u64) -> Answer {
        Answer { status: Ok(StatusCode::from_u16(status).expect("a valid status")), latency_us }
    }

    #[test]
    fn answers_are_counted_by_status_most_frequent_first() {
        let mut answers = vec![answer(429, 100), answer(429, 300), answer(401, 200)];
        answers.push(Answer { status: Err("connection reset".into()), latency_us: 5 });
        let counted = Answers::of(&answers);
        assert_eq!(counted.total, 4);
        assert_eq!(counted.with(StatusCode::TOO_MANY_REQUESTS), 2);
        assert_eq!(counted.describe(), "429 x 2, 401 x 1, failed x 1");
        assert_eq!(counted.latencies.count, 3, "a broken exchange has no latency");
        assert_eq!(counted.first_failure.as_deref(), Some("connection reset"));
    }

    #[test]
    fn only_throttling_picks_the_scenarios_and_no_endpoint_key_picks_one() {
        assert!(Scenario::ALL.iter().all(|scenario| scenario.key().starts_with("throttling-")));
        for endpoint in crate::table::Endpoint::ALL {
            assert!(!endpoint.key().contains("throttling"), "{}", endpoint.key());
            assert!(Scenario::ALL.iter().all(|scenario| !scenario.key().contains(endpoint.key())));
        }
    }

    #[test]
    fn the_labels_state_the_figures_the_scenarios_use() {
        assert!(
            BURST_LABEL.starts_with(&format!("{BURST} parallel"))
                && BURST_LABEL.ends_with(&format!("{BURST_ROUNDS} rounds"))
        );
        assert!(FLOOD_LABEL.starts_with("1,000 ") && FLOOD_ATTEMPTS == 1_000);
        assert!(PAYMENTS_DURING_LABEL.contains(&format!(", {FLOOD_ALONGSIDE} connections")));
    }

    #[test]
    fn sqlite_urls_give_their_file() {
        assert_eq!(sqlite_file("sqlite:data/s.db"), Some("data/s.db"));
        assert_eq!(sqlite_file("sqlite:///tmp/s.db?mode=rwc"), Some("/tmp/s.db"));
        assert_eq!(sqlite_file("postgres://127.0.0.1/x"), None);
    }

    #[test]
    fn targets_name_what_was_missed() {
        let burst =
            Burst { answers: Answers::of(&[answer(200, 10), answer(429, 5)]), round_us: Latencies::of(vec![10]) };
        let flood = Flood {
            answers: Answers::of(&vec![answer(429, 1); 3]),
            rps: 3.0,
            audit_rows: 1,
            audit_actions: vec!["login_throttled".into()],
            storage: Some(Storage { what: "SQLite file", before: 100, after: 100 }),
        };
        let found = Throttling { burst: Some(burst), flood: Some(flood), payments: None };
        let targets = targets(&found);
        assert_eq!(targets.len(), 2);
        assert!(!targets[0].met);
        assert_eq!(targets[0].headline, "32 parallel right-password sign-ins: 1 throttled (target 0)");
        assert!(targets[1].met);
        assert_eq!(
            targets[1].headline,
            "1,000 throttled attempts: all 429, 1 audit row (target at most 1), SQLite file +0 bytes"
        );
    }

    #[test]
    fn the_payment_ratio_compares_the_99th_percentiles() {
        let with_p99 =
            |p99_us: u64| Measured { latencies: Latencies { count: 100, p50_us: 1, p99_us }, ..Measured::default() };
        let payments = PaymentsDuringFlood {
            connections: 64,
            alone: with_p99(2_000),
            during: with_p99(3_000),
            flood: Measured::default(),
        };
        assert_eq!(payments.p99_ratio(), Some(1.5));
        let found = Throttling { payments: Some(payments), ..Throttling::default() };
        let targets = targets(&found);
        assert!(targets[0].met, "1.5 is within the target");
        assert_eq!(targets[0].headline, "payment p99 during a throttled flood: 1.50 x alone (target at most 1.5)");
    }
}
