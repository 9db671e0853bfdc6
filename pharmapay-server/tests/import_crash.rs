//! Crash safety of imports (D45): a real `pharmapay` process killed with SIGKILL while it
//! writes a 50,000-row invoice file, then restarted on the same database. The import is one
//! transaction, so the database holds all of its invoices or none, and the kept figures agree
//! with what it holds.

mod process;

use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use pharmapay_core::rust_decimal::Decimal;
use process::{Http, ServerProcess, dec};

const ROWS: usize = 50_000;

/// The file: `ROWS` invoices of one vendor, amounts 1.01 to 100.00 in turn.
fn invoice_file() -> (String, Decimal) {
    let mut file = String::from("Invoice Number,Vendor,Amount,Invoice Date,Due Date\n");
    let mut total = Decimal::ZERO;
    for n in 0..ROWS {
        let amount = Decimal::new(101 + (n % 9900) as i64, 2);
        total += amount;
        file.push_str(&format!("KILL-{n},Cipla,{amount},01/04/2024,2024-04-30\n"));
    }
    (file, total)
}

async fn an_import_is_all_or_nothing_through_a_kill(database_url: &str) {
    // Arrange: a pharmacy and its vendor.
    let server = ServerProcess::start(database_url);
    let mut http = Http::new(&server.base);
    http.onboard("crash@example.com", "crash-password").await;
    let vendor = http.vendor("Cipla").await;
    let (file, total) = invoice_file();

    // Act: send the file, and kill the server once it has read it and is writing.
    let request = Request::builder()
        .method(Method::POST)
        .uri(format!("{}/api/imports/invoices", server.base))
        .header("authorization", format!("Bearer {}", http.token))
        .header("content-type", "text/csv")
        .body(Full::new(Bytes::from(file)))
        .unwrap();
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let upload = tokio::spawn(async move {
        let response = client.request(request).await.ok()?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.ok()?.to_bytes();
        Some((status, body))
    });
    let started = Instant::now();
    while server.log_lines(&["import file read"]).is_empty() && started.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!server.log_lines(&["import file read"]).is_empty(), "the server read the file");
    tokio::time::sleep(Duration::from_millis(30)).await;
    server.kill();
    let answered = upload.await.expect("the upload task ends");

    // Assert: restarted, the database holds every invoice of the file or none.
    let server = ServerProcess::start(database_url);
    let mut http = Http::new(&server.base);
    http.sign_in("crash@example.com", "crash-password").await;
    let stored = http.ok(Method::GET, "/api/invoices?pageSize=1", None).await["totalCount"].as_u64().unwrap();
    eprintln!("answered before the kill: {:?}; invoices after the restart: {stored}", answered.as_ref().map(|a| a.0));
    assert!(stored == 0 || stored == ROWS as u64, "all or nothing, found {stored}");
    if let Some((200, _)) = answered {
        assert_eq!(stored, ROWS as u64, "an acknowledged import is kept");
    }
    let expected = if stored == 0 { Decimal::ZERO } else { total };
    let vendor = http.ok(Method::GET, &format!("/api/vendors/{vendor}"), None).await;
    assert_eq!(dec(&vendor["totalInvoiceValue"]), expected, "the vendor's kept totals agree");
    let summary = http.ok(Method::GET, "/api/dashboard/summary", None).await;
    assert_eq!(dec(&summary["totalDue"]), expected, "the dashboard agrees");
    assert_eq!(summary["totalInvoices"].as_u64(), Some(stored));
    let audit = http.ok(Method::GET, "/api/audit-log?entity=Invoice&pageSize=1", None).await;
    assert_eq!(audit["totalCount"].as_u64(), Some(stored), "one audit entry per kept invoice");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_all_or_none_of_an_import_through_sigkill() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite:{}", dir.path().join("imports.db").display());
    an_import_is_all_or_nothing_through_a_kill(&url).await;
    process::assert_sqlite_intact(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_all_or_none_of_an_import_through_sigkill() {
    let Some(admin_url) = pharmapay_store_sqlx::testing::postgres_admin_url() else { return };
    let database = pharmapay_store_sqlx::testing::PgDatabase::create(&admin_url).await;
    an_import_is_all_or_nothing_through_a_kill(database.url()).await;
}
