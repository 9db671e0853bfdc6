//! Crash safety: a payment load against a real `pharmapay` process, killed with SIGKILL
//! mid-load, restarted on the same database and killed again. Every payment acknowledged with
//! 201 must be there exactly once, nothing may be half-written, every invariant must still hold,
//! and each payment kept has exactly one event in the feed, in increasing ids (D47).

mod process;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hyper::Method;
use pharmapay_core::rust_decimal::Decimal;
use process::{Http, ServerProcess, dec};
use serde_json::{Value, json};
use tokio::sync::Mutex;

#[derive(Debug, Clone)]
struct Acknowledged {
    id: i64,
    invoice: i64,
    amount: Decimal,
    description: String,
}

/// Runs the whole scenario on `database_url`; returns after checking the restarted server.
async fn payments_survive_a_kill(database_url: &str) {
    // Arrange: a server with a pharmacy, a vendor and three invoices.
    let server = ServerProcess::start(database_url);
    let mut http = Http::new(&server.base);
    http.onboard("crash@example.com", "crash-password").await;
    let vendor = http.vendor("Cipla").await;
    let mut invoices = Vec::new();
    for n in 0..3 {
        let body = json!({ "vendorId": vendor, "invoiceNumber": format!("CR-{n}"), "amount": 1000000, "invoiceDate": "2024-01-01", "dueDate": "2030-01-01" });
        invoices.push(http.ok(Method::POST, "/api/invoices", Some(&body)).await["id"].as_i64().unwrap());
    }

    // Act: eight clients pay in a loop; the server is killed once enough payments are in, twice.
    let first = pay_until_killed(server, http, &invoices, 1).await;
    let server = ServerProcess::start(database_url);
    let http = signed_in(&server.base).await;
    let second = pay_until_killed(server, http, &invoices, 2).await;
    let acknowledged: Vec<Acknowledged> = first.into_iter().chain(second).collect();

    // Assert: restart on the same database; every acknowledged payment is there exactly once.
    let server = ServerProcess::start(database_url);
    let http = signed_in(&server.base).await;
    let mut stored: Vec<Value> = Vec::new();
    for page in 1.. {
        let listed = http
            .ok(Method::GET, &format!("/api/transactions?pageSize=100&page={page}&sortBy=createdAt&sortDir=asc"), None)
            .await;
        let items = listed["items"].as_array().unwrap().clone();
        if items.is_empty() {
            break;
        }
        stored.extend(items);
    }
    eprintln!(
        "{} payments acknowledged before the kill, {} stored after the restart",
        acknowledged.len(),
        stored.len()
    );
    let by_id: BTreeMap<i64, &Value> = stored.iter().map(|p| (p["id"].as_i64().unwrap(), p)).collect();
    let descriptions: Vec<&str> = stored.iter().map(|p| p["description"].as_str().unwrap()).collect();
    let unique: BTreeSet<&str> = descriptions.iter().copied().collect();
    assert_eq!(unique.len(), descriptions.len(), "no payment is stored twice");
    for payment in &acknowledged {
        let found = by_id.get(&payment.id).unwrap_or_else(|| panic!("acknowledged payment {} is missing", payment.id));
        assert_eq!(found["description"].as_str(), Some(payment.description.as_str()));
        assert_eq!(dec(&found["amount"]), payment.amount, "payment {}", payment.id);
        assert_eq!(found["invoiceId"].as_i64(), Some(payment.invoice));
    }
    // Nothing is half-written: each invoice's paid total is the exact sum of its payments.
    let mut total_paid = Decimal::ZERO;
    for invoice in &invoices {
        let read = http.ok(Method::GET, &format!("/api/invoices/{invoice}"), None).await;
        let sum: Decimal =
            stored.iter().filter(|p| p["invoiceId"].as_i64() == Some(*invoice)).map(|p| dec(&p["amount"])).sum();
        assert_eq!(dec(&read["paidAmount"]), sum, "invoice {invoice}: paid equals its payments");
        assert_eq!(dec(&read["pendingAmount"]), dec(&read["amount"]) - sum, "invoice {invoice}: pending");
        total_paid += sum;
    }
    let summary = http.ok(Method::GET, "/api/dashboard/summary", None).await;
    assert_eq!(dec(&summary["totalPaid"]), total_paid, "the dashboard agrees");
    let vendor_read = http.ok(Method::GET, &format!("/api/vendors/{vendor}"), None).await;
    assert_eq!(dec(&vendor_read["totalPaidAmount"]), total_paid, "the vendor's totals agree");

    // D47: each stored payment has exactly one event, in increasing ids, and no event names a
    // payment that is not there.
    let mut events: Vec<Value> = Vec::new();
    let mut after = 0;
    loop {
        let page = http.ok(Method::GET, &format!("/api/events?after={after}&limit=1000"), None).await;
        let items = page["items"].as_array().unwrap().clone();
        if items.is_empty() {
            break;
        }
        after = page["nextAfter"].as_i64().unwrap();
        events.extend(items);
    }
    let ids: Vec<i64> = events.iter().map(|event| event["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "event ids increase");
    let mut announced: BTreeMap<i64, usize> = BTreeMap::new();
    for event in events.iter().filter(|event| event["type"] == "transaction.created") {
        *announced.entry(event["data"]["id"].as_i64().unwrap()).or_default() += 1;
    }
    let stored_ids: BTreeSet<i64> = by_id.keys().copied().collect();
    assert_eq!(
        announced.keys().copied().collect::<BTreeSet<i64>>(),
        stored_ids,
        "an event for each payment kept, none else"
    );
    assert!(announced.values().all(|count| *count == 1), "exactly one event each");
    drop(server);
}

/// Eight clients pay the `invoices` in a loop through `http` until `server` is killed, once 150
/// payments are in; answers the payments acknowledged with 201. `round` keeps each round's
/// idempotency keys and descriptions apart.
async fn pay_until_killed(server: ServerProcess, http: Http, invoices: &[i64], round: u32) -> Vec<Acknowledged> {
    let http = Arc::new(http);
    let acknowledged = Arc::new(Mutex::new(Vec::<Acknowledged>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for client in 0..8 {
        let (http, acknowledged, stop, invoices) =
            (Arc::clone(&http), Arc::clone(&acknowledged), Arc::clone(&stop), invoices.to_vec());
        clients.push(tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let invoice = invoices[(n as usize + client) % invoices.len()];
                let description = format!("round {round} client {client} payment {n}");
                let cents = 1 + (n % 97) as i64;
                let amount = Decimal::new(cents, 2);
                let body: Value = serde_json::from_str(&format!(
                    r#"{{"invoiceId":{invoice},"amount":{amount},"transactionDate":"2024-05-01","transactionType":"UPI","description":"{description}"}}"#
                ))
                .unwrap();
                let key = format!("crash-{round}-{client}-{n}");
                match http.call(Method::POST, "/api/transactions", Some(&body), Some(&key)).await {
                    Ok((201, created)) => acknowledged.lock().await.push(Acknowledged {
                        id: created["id"].as_i64().unwrap(),
                        invoice,
                        amount,
                        description,
                    }),
                    Ok((status, body)) => panic!("a payment was refused with {status}: {body}"),
                    Err(_) => break,
                }
            }
        }));
    }
    let started = Instant::now();
    while acknowledged.lock().await.len() < 150 && started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    server.kill();
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.expect("no client panics");
    }
    let acknowledged = acknowledged.lock().await.clone();
    assert!(acknowledged.len() >= 150, "the load ran before the kill ({} acknowledged)", acknowledged.len());
    acknowledged
}

/// A client of the server at `base`, signed in as the crash test's admin.
async fn signed_in(base: &str) -> Http {
    let mut http = Http::new(base);
    let body = json!({ "email": "crash@example.com", "password": "crash-password" });
    http.token = http.ok(Method::POST, "/api/auth/login", Some(&body)).await["token"].as_str().unwrap().to_owned();
    http
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_every_acknowledged_payment_through_sigkill() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("ledger.db");
    let url = format!("sqlite:{}", path.display());
    payments_survive_a_kill(&url).await;
    process::assert_sqlite_intact(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_every_acknowledged_payment_through_sigkill() {
    let Some(admin_url) = pharmapay_store_sqlx::testing::postgres_admin_url() else { return };
    let database = pharmapay_store_sqlx::testing::PgDatabase::create(&admin_url).await;
    payments_survive_a_kill(database.url()).await;
}
