//! Two `pharmapay` processes on one PostgreSQL database: servers are stateless, so payments
//! made through both are all counted, and a token issued by one is accepted by the other
//! (the generated signing secret is kept in the database, D28).

mod process;

use std::sync::Arc;

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
    let mut tasks = Vec::new();
    for n in 0..20 {
        let http = Arc::clone(&servers[n % 2]);
        tasks.push(tokio::spawn(async move {
            let body = json!({ "invoiceId": invoice, "amount": 1.00, "transactionDate": "2024-05-01", "transactionType": "Cash" });
            http.call(Method::POST, "/api/transactions", Some(&body), None).await.map(|(status, _)| status)
        }));
    }
    for task in tasks {
        assert_eq!(task.await.expect("no task panics"), Ok(201));
    }
    for http in &servers {
        let read: Value = http.ok(Method::GET, &format!("/api/invoices/{invoice}"), None).await;
        assert_eq!(dec(&read["paidAmount"]), dec(&json!(20)), "every payment through either server is counted");
    }
    drop((first, second));
}
