//! Two `pharmapay` processes on one PostgreSQL database: servers are stateless, so payments
//! made through both are all counted, a token issued by one is accepted by the other (the
//! generated signing secret is kept in the database, D28), and a poller following the event
//! feed through both while they write collects every event exactly once (D47).

mod process;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hyper::Method;
use process::{Http, ServerProcess, dec};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_one_postgres_database() {
    let Some(admin_url) = pharmapay_store_sqlx::testing::postgres_admin_url() else { return };
    let database = pharmapay_store_sqlx::testing::PgDatabase::create(&admin_url).await;
    // Neither server is given a secret: both must use the one generated and kept in the database.
    let first = ServerProcess::start_with(database.url(), None);
    let second = ServerProcess::start_with(database.url(), None);

    let mut through_first = Http::new(&first.base);
    let setup = json!({ "pharmacy": { "name": "Chain HQ" }, "adminUser": { "firstName": "C", "lastName": "H", "email": "hq@example.com", "password": "hq-password" } });
    through_first.token = through_first.ok(Method::POST, "/api/onboarding/setup", Some(&setup)).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut through_second = Http::new(&second.base);
    through_second.token = through_first.token.clone();
    through_second.ok(Method::GET, "/api/vendors", None).await;
    let login = through_second
        .ok(Method::POST, "/api/auth/login", Some(&json!({ "email": "hq@example.com", "password": "hq-password" })))
        .await;
    let token_from_second = login["token"].as_str().unwrap().to_owned();
    let mut check = Http::new(&first.base);
    check.token = token_from_second;
    check.ok(Method::GET, "/api/profile", None).await;

    let vendor = through_first
        .ok(Method::POST, "/api/vendors", Some(&json!({ "name": "Cipla", "vendorType": "Wholesaler" })))
        .await["id"]
        .as_i64()
        .unwrap();
    let invoice_body = json!({ "vendorId": vendor, "invoiceNumber": "CH-1", "amount": 100, "invoiceDate": "2024-01-01", "dueDate": "2030-01-01" });
    let invoice = through_second.ok(Method::POST, "/api/invoices", Some(&invoice_body)).await["id"].as_i64().unwrap();
    let duplicate = through_first.call(Method::POST, "/api/invoices", Some(&invoice_body), None).await.unwrap();
    assert_eq!(duplicate.0, 409, "uniqueness holds across servers");

    let servers = [Arc::new(through_first), Arc::new(through_second)];
    // A poller follows the feed through either server in turn while the payments go in.
    let writing = Arc::new(AtomicBool::new(true));
    let poller = {
        let (servers, writing) = (servers.clone(), Arc::clone(&writing));
        tokio::spawn(async move {
            let (mut seen, mut after, mut turn) = (Vec::<Value>::new(), 0, 0);
            loop {
                let done = !writing.load(Ordering::SeqCst);
                let page = servers[turn % 2].ok(Method::GET, &format!("/api/events?after={after}&limit=7"), None).await;
                turn += 1;
                let items = page["items"].as_array().unwrap().clone();
                after = page["nextAfter"].as_i64().unwrap();
                if items.is_empty() && done {
                    return seen;
                }
                seen.extend(items);
            }
        })
    };
    const PAYMENTS: usize = 200;
    let mut tasks = Vec::new();
    for n in 0..PAYMENTS {
        let http = Arc::clone(&servers[n % 2]);
        tasks.push(tokio::spawn(async move {
            let body = json!({ "invoiceId": invoice, "amount": 0.50, "transactionDate": "2024-05-01", "transactionType": "Cash" });
            http.call(Method::POST, "/api/transactions", Some(&body), None).await.map(|(status, created)| (status, created["id"].as_i64()))
        }));
    }
    let mut paid = Vec::new();
    for task in tasks {
        let (status, id) = task.await.expect("no task panics").expect("an answer");
        assert_eq!(status, 201);
        paid.push(id.unwrap());
    }
    writing.store(false, Ordering::SeqCst);
    let seen = poller.await.expect("the poller finishes");
    for http in &servers {
        let read: Value = http.ok(Method::GET, &format!("/api/invoices/{invoice}"), None).await;
        assert_eq!(dec(&read["paidAmount"]), dec(&json!(100)), "every payment through either server is counted");
    }
    let ids: Vec<i64> = seen.iter().map(|event| event["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "event ids increase: {ids:?}");
    let mut announced: BTreeMap<i64, usize> = BTreeMap::new();
    for event in seen.iter().filter(|event| event["type"] == "transaction.created") {
        *announced.entry(event["data"]["id"].as_i64().unwrap()).or_default() += 1;
    }
    paid.sort_unstable();
    assert_eq!(announced.keys().copied().collect::<Vec<_>>(), paid, "every payment's event, seen once");
    assert!(announced.values().all(|count| *count == 1));
    assert!(seen.iter().any(|event| event["type"] == "invoice.paid"), "the last payment paid the invoice in full");
    drop((first, second));
}
