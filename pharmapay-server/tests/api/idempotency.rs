//! Idempotent creates over HTTP (D23).

use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app, statuses_at_once};

async fn post_with_key(
    app: &TestApp,
    token: &str,
    path: &str,
    key: &str,
    body: &Value,
) -> crate::helpers::TestResponse {
    app.post_with_key_as(token, path, key, body).await
}

#[tokio::test]
async fn the_same_key_and_body_replay_the_first_response() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let invoice = app.invoice(vendor, "A", "100", "2024-06-01").await;
    let body =
        json!({ "invoiceId": invoice, "amount": 10, "transactionDate": "2024-05-10", "transactionType": "Cash" });
    let first = post_with_key(&app, &app.admin_token, "/api/transactions", "pay-1", &body).await;
    first.expect(201);
    assert!(first.header("idempotent-replayed").is_none());
    let reordered: Value = serde_json::from_str(&format!(
        r#"{{ "transactionType": "Cash", "transactionDate": "2024-05-10", "amount": 10, "invoiceId": {invoice} }}"#
    ))
    .unwrap();
    let replay = post_with_key(&app, &app.admin_token, "/api/transactions", "pay-1", &reordered).await;
    replay.expect(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body, first.body, "byte for byte");
    assert_eq!(replay.header("location"), first.header("location"));
    let paid = app.get(&format!("/api/invoices/{invoice}")).await.json()["paidAmount"].clone();
    assert_eq!(paid, 10, "the replay paid nothing more");

    let other_body =
        json!({ "invoiceId": invoice, "amount": 11, "transactionDate": "2024-05-10", "transactionType": "Cash" });
    post_with_key(&app, &app.admin_token, "/api/transactions", "pay-1", &other_body).await.problem(422);
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    post_with_key(&app, &pharmacist, "/api/transactions", "pay-1", &body).await.expect(201);
    assert_eq!(app.get(&format!("/api/invoices/{invoice}")).await.json()["paidAmount"], 20, "keys are per user");
    post_with_key(&app, &app.admin_token, "/api/transactions", &"k".repeat(300), &body)
        .await
        .invalid("Idempotency-Key");
}

#[tokio::test]
async fn parallel_retries_with_one_key_create_one_record() {
    let app = std::sync::Arc::new(spawn_app().await);
    let vendor = app.vendor("Cipla").await;
    let body = json!({ "vendorId": vendor, "invoiceNumber": "RETRY", "amount": 5, "invoiceDate": "2024-05-01", "dueDate": "2024-06-01" });
    let statuses = statuses_at_once(&app, 8, |app, _| {
        let body = body.clone();
        async move { post_with_key(&app, &app.admin_token, "/api/invoices", "inv-retry", &body).await.status.as_u16() }
    })
    .await;
    assert!(statuses.iter().all(|s| *s == 201 || *s == 409), "{statuses:?}");
    let listed = app.get("/api/invoices?invoiceNumber=retry").await.json();
    assert_eq!(listed["totalCount"], 1, "one record whatever the interleaving: {statuses:?}");
}
