//! Real `pharmapay` processes for tests that must kill or share servers: start one on a
//! database, find its address in its log, talk to it over HTTP, and kill it (SIGKILL) at will.
//! Every process started here is killed when its handle is dropped.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use pharmapay_core::rust_decimal::Decimal;
use serde_json::Value;

/// The signing secret given to processes started with one.
pub const SECRET: &str = "crash-test-secret-crash-test-secret-0123";

/// A `pharmapay` process we started, killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// `http://host:port` of the server.
    pub base: String,
    /// Every line the server has written to its standard output (its log) so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl ServerProcess {
    /// Starts a server on `database_url` with the fixed [`SECRET`].
    pub fn start(database_url: &str) -> Self {
        Self::start_with(database_url, Some(SECRET))
    }

    /// Starts a server on `database_url`; without a secret it uses the one kept in the database.
    pub fn start_with(database_url: &str, secret: Option<&str>) -> Self {
        Self::start_logging(database_url, secret, "info")
    }

    /// Starts a server on `database_url` with the log filter `log`, keeping its log lines.
    pub fn start_logging(database_url: &str, secret: Option<&str>, log: &str) -> Self {
        let mut args = vec!["--database-url", database_url, "--listen", "127.0.0.1:0", "--log", log];
        if let Some(secret) = secret {
            args.extend(["--jwt-secret", secret]);
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_pharmapay"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the pharmapay binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, receiver) = std::sync::mpsc::channel();
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                kept.lock().expect("the log is not poisoned").push(line.clone());
                if !sent && line.contains("pharmapay is listening") {
                    let addr =
                        line.split("addr=").nth(1).and_then(|rest| rest.split_whitespace().next()).map(str::to_owned);
                    let _ = sender.send(addr);
                    sent = true;
                }
            }
        });
        let addr = receiver
            .recv_timeout(Duration::from_secs(60))
            .ok()
            .flatten()
            .expect("the server reports its address within a minute");
        Self { child, base: format!("http://{addr}"), log }
    }

    /// The first log line holding every one of `parts`, waiting up to ten seconds for it (the
    /// log is written as the server goes, a little after its answers).
    pub fn log_line(&self, parts: &[&str]) -> Option<String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let found = self.log_lines(parts).into_iter().next();
            if found.is_some() || std::time::Instant::now() >= deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every log line written so far that holds every one of `parts`.
    pub fn log_lines(&self, parts: &[&str]) -> Vec<String> {
        let log = self.log.lock().expect("the log is not poisoned");
        log.iter().filter(|line| parts.iter().all(|part| line.contains(part))).cloned().collect()
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGKILL: no shutdown, no flush, as a crash or an OOM kill would do.
    pub fn kill(mut self) {
        self.child.kill().expect("the server can be killed");
        self.child.wait().expect("the killed server is reaped");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A small HTTP client bound to one server and, once signed in, one token.
pub struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    base: String,
    /// The bearer token sent with each request (empty for none).
    pub token: String,
}

impl Http {
    /// A client of the server at `base`.
    pub fn new(base: &str) -> Self {
        Self { client: Client::builder(TokioExecutor::new()).build_http(), base: base.to_owned(), token: String::new() }
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        key: Option<&str>,
    ) -> Result<(u16, Value), String> {
        self.exchange(method, path, body, key).await.map(|(status, _, json)| (status, json))
    }

    /// Sends a request and answers its status, the trace id the server gave it (header
    /// `x-trace-id`) and its JSON body.
    pub async fn traced(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, String, Value), String> {
        self.exchange(method, path, body, None).await
    }

    async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        key: Option<&str>,
    ) -> Result<(u16, String, Value), String> {
        let mut builder = Request::builder().method(method).uri(format!("{}{path}", self.base));
        if !self.token.is_empty() {
            builder = builder.header("authorization", format!("Bearer {}", self.token));
        }
        if let Some(key) = key {
            builder = builder.header("idempotency-key", key);
        }
        let bytes = match body {
            Some(body) => {
                builder = builder.header("content-type", "application/json");
                Bytes::from(serde_json::to_vec(body).unwrap())
            }
            None => Bytes::new(),
        };
        let response = self.client.request(builder.body(Full::new(bytes)).unwrap()).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let trace_id =
            response.headers().get("x-trace-id").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
        let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
        let json =
            if body.is_empty() { Value::Null } else { serde_json::from_slice(&body).map_err(|e| e.to_string())? };
        Ok((status, trace_id, json))
    }

    /// Sends a request that must succeed (2xx).
    pub async fn ok(&self, method: Method, path: &str, body: Option<&Value>) -> Value {
        let (status, json) = self.call(method, path, body, None).await.expect("the server answers");
        assert!((200..300).contains(&status), "{path}: {status} {json}");
        json
    }
}

/// A JSON number as an exact decimal.
pub fn dec(value: &Value) -> Decimal {
    value.to_string().parse().unwrap_or_else(|_| panic!("{value} is a decimal"))
}

/// Asserts that SQLite's own check finds the file at `url` whole (after a crash and a restart).
pub async fn assert_sqlite_intact(url: &str) {
    use sqlx::Connection;
    let mut connection = sqlx::SqliteConnection::connect(url).await.expect("the file opens again");
    let verdict: String =
        sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut connection).await.expect("the check runs");
    assert_eq!(verdict, "ok", "PRAGMA integrity_check");
}

impl Http {
    /// Onboards the server's pharmacy with the admin `email` and `password`, and keeps the
    /// admin's token.
    pub async fn onboard(&mut self, email: &str, password: &str) {
        let setup = serde_json::json!({
            "pharmacy": { "name": "Crash Pharmacy" },
            "adminUser": { "firstName": "C", "lastName": "T", "email": email, "password": password }
        });
        let answer = self.ok(Method::POST, "/api/onboarding/setup", Some(&setup)).await;
        self.token = answer["token"].as_str().expect("onboarding answers a token").to_owned();
    }

    /// Signs in and keeps the token.
    pub async fn sign_in(&mut self, email: &str, password: &str) {
        let login = serde_json::json!({ "email": email, "password": password });
        let answer = self.ok(Method::POST, "/api/auth/login", Some(&login)).await;
        self.token = answer["token"].as_str().expect("sign-in answers a token").to_owned();
    }

    /// Creates a Wholesaler vendor named `name` and answers its id.
    pub async fn vendor(&self, name: &str) -> i64 {
        let body = serde_json::json!({ "name": name, "vendorType": "Wholesaler" });
        self.ok(Method::POST, "/api/vendors", Some(&body)).await["id"].as_i64().expect("a vendor id")
    }
}
