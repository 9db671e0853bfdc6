//! Hostile uploads against a real server (D51): the files a security review built to stop the
//! server are sent to both imports and the bank statement upload on SQLite and PostgreSQL. Each
//! must answer 400 or 413 with the server still up, and grow its resident memory by at most
//! 256 MiB; then eight at once are all answered while another user keeps signing in.
//!
//! The growth is the process's peak resident size (`VmHWM`, reset before each upload through
//! `/proc/<pid>/clear_refs`) less its resident size before; it is printed for the record.

mod process;

use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use pharmapay_core::conformance::hostile::{HostileFile, review_files};
use pharmapay_core::imports::FileFormat;
use process::{Http, ServerProcess};

const MIB: u64 = 1024 * 1024;

/// What one upload may grow the server's memory by (D51).
const BOUND: u64 = 256 * MIB;

const ROUTES: [&str; 3] =
    ["/api/imports/invoices?dryRun=true", "/api/imports/vendors?dryRun=true", "/api/bank-statements?account=Hostile"];

/// A field of `/proc/<pid>/status` in bytes (`VmRSS`, `VmHWM`), when the system has one.
fn status_bytes(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Starts a new peak: `VmHWM` falls back to the resident size now. Answers that size, or
/// `None` where the system cannot (then nothing is measured, only answers checked).
fn new_peak(pid: u32) -> Option<u64> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").ok()?;
    status_bytes(pid, "VmRSS")
}

async fn upload(base: &str, token: &str, route: &str, file: &HostileFile) -> (u16, String) {
    let media_type = match file.format {
        FileFormat::Csv => "text/csv",
        FileFormat::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    };
    let request = Request::builder()
        .method(Method::POST)
        .uri(format!("{base}{route}"))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", media_type)
        .body(Full::new(Bytes::from(file.bytes.clone())))
        .expect("a request");
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let response = client.request(request).await.expect("the server answers the upload");
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.expect("the whole answer").to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

async fn hostile_uploads_are_refused_within_bounds(database_url: &str) {
    let mut server = ServerProcess::start(database_url);
    let pid = server.pid();
    let mut http = Http::new(&server.base);
    http.onboard("hostile@example.com", "hostile-password").await;
    let files = review_files();

    for file in &files {
        for route in ROUTES {
            let before = new_peak(pid);
            let (status, body) = upload(&server.base, &http.token, route, file).await;
            assert!(status == 400 || status == 413, "{}, {route}: {status} {body}", file.name);
            assert!(server.is_running(), "{}, {route}: the server stopped", file.name);
            if let (Some(before), Some(peak)) = (before, status_bytes(pid, "VmHWM")) {
                let grown = peak.saturating_sub(before);
                eprintln!(
                    "{} to {route}: {status}, peak resident growth {:.1} MiB",
                    file.name,
                    grown as f64 / MIB as f64
                );
                assert!(grown <= BOUND, "{}, {route}: grew by {grown} bytes", file.name);
            }
        }
    }

    // Eight at once, while another user signs in again and again.
    let before = new_peak(pid);
    let uploads: Vec<_> = (0..8)
        .map(|n| {
            let (base, token) = (server.base.clone(), http.token.clone());
            let file = HostileFile {
                name: files[n % files.len()].name,
                format: files[n % files.len()].format,
                bytes: files[n % files.len()].bytes.clone(),
            };
            tokio::spawn(async move { upload(&base, &token, ROUTES[n % ROUTES.len()], &file).await })
        })
        .collect();
    let started = Instant::now();
    let mut sign_ins = 0;
    while uploads.iter().any(|upload| !upload.is_finished()) && started.elapsed() < Duration::from_secs(120) {
        let mut other = Http::new(&server.base);
        other.sign_in("hostile@example.com", "hostile-password").await;
        sign_ins += 1;
    }
    for upload in uploads {
        let (status, body) = upload.await.expect("the upload task ends");
        assert!(status == 400 || status == 413, "at once: {status} {body}");
    }
    assert!(server.is_running(), "the server stays up");
    if let (Some(before), Some(peak)) = (before, status_bytes(pid, "VmHWM")) {
        let grown = peak.saturating_sub(before);
        eprintln!(
            "eight at once: peak resident growth {:.1} MiB; {sign_ins} sign-ins meanwhile",
            grown as f64 / MIB as f64
        );
    }
    let mut after = Http::new(&server.base);
    after.sign_in("hostile@example.com", "hostile-password").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_refuses_hostile_uploads_within_bounds() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite:{}", dir.path().join("hostile.db").display());
    hostile_uploads_are_refused_within_bounds(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_refuses_hostile_uploads_within_bounds() {
    let Some(admin_url) = pharmapay_store_sqlx::testing::postgres_admin_url() else { return };
    let database = pharmapay_store_sqlx::testing::PgDatabase::create(&admin_url).await;
    hostile_uploads_are_refused_within_bounds(database.url()).await;
}
