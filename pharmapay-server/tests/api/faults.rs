//! Faults from the outside, through a real server (D48): clients that disconnect while their
//! writes run, payments of every kind racing on one vendor, and a database connection lost
//! during a commit. Whatever happens around it, an answer tells the truth about its write: a
//! 201 is kept, an error is not (but for a 503 that says the outcome is unknown), and nothing
//! is answered 500.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::helpers::{Backend, TestApp};

/// A small generator of its own per task, so delays differ between tasks with no shared state.
struct Draws(u64);

impl Draws {
    fn new(seed: u64) -> Self {
        Self(0x9e37_79b9_7f4a_7c15 ^ (seed + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn payment(invoice: i64, reference: &str) -> Value {
    json!({ "invoiceId": invoice, "amount": 1, "transactionDate": "2024-05-05", "transactionType": "UPI", "reference": reference })
}

/// Sends `body` as a POST to `path` on a socket of its own and closes the socket after
/// `after`, without reading the answer: a client that went away.
async fn post_and_leave(app: &TestApp, path: &str, body: &Value, after: Duration) {
    let body = serde_json::to_vec(body).expect("JSON serialises");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        app.addr(),
        app.admin_token,
        body.len()
    );
    let mut socket = tokio::net::TcpStream::connect(app.addr()).await.expect("the server accepts");
    socket.write_all(head.as_bytes()).await.expect("the request is sent");
    socket.write_all(&body).await.expect("the request is sent");
    tokio::time::sleep(after).await;
    // Reset rather than closed, as a client that crashed or lost its network: the server learns at
    // once that nobody waits for the answer.
    let _ = socket.set_zero_linger();
    drop(socket);
}

/// The references of every active payment on `invoice`.
async fn references_on(app: &TestApp, invoice: i64) -> BTreeSet<String> {
    let mut references = BTreeSet::new();
    for page in 1.. {
        let listed = app.get(&format!("/api/transactions?invoiceId={invoice}&pageSize=100&page={page}")).await;
        let items = listed.expect(200).json()["items"].as_array().cloned().unwrap_or_default();
        if items.is_empty() {
            break;
        }
        references.extend(items.iter().filter_map(|item| item["reference"].as_str().map(str::to_owned)));
    }
    references
}

/// Sixteen clients post payments and wait for their answers while four others post the same
/// and go away after 0.5 to 12 ms: every 201 is kept, every error is absent, and no answer is
/// a 500 (D48).
pub async fn clients_that_go_away_change_no_other_answer(app: Arc<TestApp>) {
    let vendor = app.vendor("Disconnected").await;
    let invoice = app.invoice(vendor, "DIS-1", "1000000", "2024-06-01").await;
    const WAITING: u64 = 16;
    const LEAVING: u64 = 4;
    const EACH: u64 = 25;
    let tasks: Vec<_> = (0..WAITING + LEAVING)
        .map(|client| {
            let app = Arc::clone(&app);
            tokio::spawn(async move {
                let mut draws = Draws::new(client);
                let mut answers = Vec::new();
                for n in 0..EACH {
                    let reference = format!("UTR{client:02}X{n:02}");
                    if client < WAITING {
                        let status = app.post("/api/transactions", &payment(invoice, &reference)).await.status.as_u16();
                        answers.push((reference, status));
                    } else {
                        let after = Duration::from_micros(500 + draws.next() % 11_500);
                        post_and_leave(&app, "/api/transactions", &payment(invoice, &reference), after).await;
                    }
                }
                answers
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.extend(task.await.expect("no client task panics"));
    }
    // The writes of the clients that left end on the server's own tasks; let them.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let kept = references_on(&app, invoice).await;
    let untrue: Vec<_> = answers
        .iter()
        .filter(|(reference, status)| match status {
            201 => !kept.contains(reference),
            _ => true,
        })
        .collect();
    assert!(untrue.is_empty(), "answers that were not 201, or 201s whose payment is absent: {untrue:?}");
    let read = app.get(&format!("/api/invoices/{invoice}")).await.json();
    assert_eq!(read["paidAmount"], json!(kept.len()), "the paid total counts exactly the payments kept");
}

/// Six clients pay a vendor (vendor payments over two invoices, some deleted again) while six
/// others pay single invoices of it, move and delete those payments and edit the invoices: no
/// answer is a 500, and the totals are exact.
pub async fn vendor_payments_beside_single_payments_on_one_vendor_all_succeed(app: Arc<TestApp>) {
    let vendor = app.vendor("Contended").await;
    let mut invoices = Vec::new();
    for n in 0..4 {
        invoices.push(app.invoice(vendor, &format!("CON-{n}"), "1000000", "2024-06-01").await);
    }
    let invoices = Arc::new(invoices);
    let tasks: Vec<_> = (0..12_usize)
        .map(|client| {
            let (app, invoices) = (Arc::clone(&app), Arc::clone(&invoices));
            tokio::spawn(async move {
                let mut statuses = Vec::new();
                let mut paid = 0_i64;
                for round in 0..10_usize {
                    let first = invoices[round % invoices.len()];
                    let second = invoices[(round + 1 + client) % invoices.len()];
                    if client % 2 == 0 {
                        let mut body = json!({ "amount": 2, "transactionDate": "2024-05-05", "transactionType": "NetBanking" });
                        if first != second {
                            body["allocations"] =
                                json!([{ "invoiceId": first, "amount": 1 }, { "invoiceId": second, "amount": 1 }]);
                        }
                        let created = app.post(&format!("/api/vendors/{vendor}/payments"), &body).await;
                        statuses.push(created.status.as_u16());
                        if created.status == 201 {
                            paid += 2;
                            if round % 3 == 2 {
                                let id = created.json()["id"].as_i64().unwrap();
                                let deleted = app.delete(&format!("/api/vendor-payments/{id}")).await.status.as_u16();
                                statuses.push(deleted);
                                if deleted == 204 {
                                    paid -= 2;
                                }
                            }
                        }
                    } else {
                        let body = json!({ "invoiceId": first, "amount": 1, "transactionDate": "2024-05-05", "transactionType": "Cash" });
                        let created = app.post("/api/transactions", &body).await;
                        statuses.push(created.status.as_u16());
                        if created.status != 201 {
                            continue;
                        }
                        paid += 1;
                        let id = created.json()["id"].as_i64().unwrap();
                        match round % 3 {
                            0 => {
                                let moved = json!({ "invoiceId": second, "amount": 3, "transactionDate": "2024-05-05", "transactionType": "Cash" });
                                let answer = app.put(&format!("/api/transactions/{id}"), &moved).await.status.as_u16();
                                statuses.push(answer);
                                if answer == 200 {
                                    paid += 2;
                                }
                            }
                            1 => {
                                let answer = app.delete(&format!("/api/transactions/{id}")).await.status.as_u16();
                                statuses.push(answer);
                                if answer == 204 {
                                    paid -= 1;
                                }
                            }
                            _ => {
                                let edit = json!({ "vendorId": vendor, "invoiceNumber": format!("CON-{}", round % 4), "amount": 1000000, "invoiceDate": "2024-05-01", "dueDate": "2024-06-01", "description": format!("edited by {client}") });
                                let target = invoices[round % 4];
                                statuses.push(app.put(&format!("/api/invoices/{target}"), &edit).await.status.as_u16());
                            }
                        }
                    }
                }
                (statuses, paid)
            })
        })
        .collect();
    let (mut failed, mut paid) = (Vec::new(), 0);
    for task in tasks {
        let (statuses, kept) = task.await.expect("no client task panics");
        failed.extend(statuses.into_iter().filter(|status| !matches!(status, 200 | 201 | 204)));
        paid += kept;
    }
    assert!(failed.is_empty(), "writes failed for each other's locks: {failed:?}");
    let read = app.get(&format!("/api/vendors/{vendor}")).await.json();
    assert_eq!(read["totalPaidAmount"], json!(paid), "the vendor's paid total: {read}");
    let mut on_invoices = 0;
    for invoice in invoices.iter() {
        on_invoices += app.get(&format!("/api/invoices/{invoice}")).await.json()["paidAmount"].as_i64().unwrap();
    }
    assert_eq!(on_invoices, paid, "the invoices' paid totals");
}

/// A payment whose database connection is lost while PostgreSQL commits it is answered 503
/// saying that its outcome is unknown, and its Idempotency-Key stays claimed: a retry with the
/// key is told the first is still in progress rather than writing the payment a second time, and
/// writes it once the claim counts as abandoned (D23, D48).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_cut_off_by_a_lost_connection_is_answered_as_unknown_and_keeps_its_key() {
    use sqlx::Connection;
    let Some(app) = crate::helpers::spawn_app_on(Backend::Postgres).await else { return };
    let app = Arc::new(app);
    let vendor = app.vendor("Lost").await;
    let invoice = app.invoice(vendor, "LOST-1", "100", "2024-06-01").await;
    let url = app.postgres_url().expect("a PostgreSQL test database");
    let mut admin = sqlx::PgConnection::connect(&url).await.expect("the test database connects");
    // A deferred trigger runs inside COMMIT: this one holds every payment's commit for a while.
    sqlx::raw_sql(
        "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(5); RETURN NULL; END $$; \
         CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON transactions DEFERRABLE INITIALLY DEFERRED \
         FOR EACH ROW EXECUTE FUNCTION slow_commit()",
    )
    .execute(&mut admin)
    .await
    .expect("the trigger is made");
    let body = payment(invoice, "UTRLOST1");
    let posting = tokio::spawn({
        let (app, body) = (Arc::clone(&app), body.clone());
        async move { app.post_with_key("/api/transactions", &body, "lost-commit-1").await }
    });
    // The commit is under way once its connection sleeps in the trigger; end that connection.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let ended: Option<bool> = sqlx::query_scalar(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND query = 'COMMIT' AND wait_event = 'PgSleep'",
        )
        .fetch_optional(&mut admin)
        .await
        .expect("pg_stat_activity is read");
        if ended == Some(true) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the payment's commit never began");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let answer = posting.await.expect("the request task ends");
    let problem = answer.problem(503);
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with("The outcome of this write is unknown"), "{problem}");
    sqlx::raw_sql("DROP TRIGGER slow_commit ON transactions").execute(&mut admin).await.expect("the trigger goes");
    // PostgreSQL had not committed when its connection ended: nothing was kept...
    assert!(references_on(&app, invoice).await.is_empty());
    // ...and the key is still claimed, so the retry cannot pay a second time before the claim is
    // known to be abandoned.
    let retry = app.post_with_key("/api/transactions", &body, "lost-commit-1").await;
    retry.problem(409);
    app.advance(pharmapay_core::jiff::SignedDuration::from_secs(61));
    app.post_with_key("/api/transactions", &body, "lost-commit-1").await.expect(201);
    assert_eq!(references_on(&app, invoice).await.into_iter().collect::<Vec<_>>(), ["UTRLOST1"]);
}

crate::helpers::on_every_backend!(
    clients_that_go_away_change_no_other_answer,
    vendor_payments_beside_single_payments_on_one_vendor_all_succeed
);
