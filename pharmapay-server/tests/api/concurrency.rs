//! Races through a real server: every backend must end each one with exact sums and exactly
//! one winner (D5, D21, D23; issue of concurrent writes).

use std::sync::Arc;

use serde_json::json;

use crate::helpers::{ADMIN_EMAIL, TestApp, statuses_at_once};

/// Thirty concurrent payments of 1.00 on one invoice sum to exactly 30.
pub async fn parallel_payments_sum_exactly(app: Arc<TestApp>) {
    let vendor = app.vendor("Busy").await;
    let invoice = app.invoice(vendor, "BUSY-1", "100", "2024-06-01").await;
    let statuses = statuses_at_once(&app, 30, |app, _| async move {
        let body =
            json!({ "invoiceId": invoice, "amount": 1.00, "transactionDate": "2024-05-10", "transactionType": "Cash" });
        app.post("/api/transactions", &body).await.status.as_u16()
    })
    .await;
    assert_eq!(statuses, vec![201; 30]);
    let read = app.get(&format!("/api/invoices/{invoice}")).await.json();
    assert_eq!((read["paidAmount"].clone(), read["pendingAmount"].clone()), (json!(30), json!(70)));
}

/// Twelve concurrent creates of one invoice number: one 201, eleven 409 (D5).
pub async fn parallel_invoice_numbers_have_one_winner(app: Arc<TestApp>) {
    let vendor = app.vendor("Racer").await;
    let statuses = statuses_at_once(&app, 12, |app, _| async move {
        let body = json!({ "vendorId": vendor, "invoiceNumber": "RACE-1", "amount": 5, "invoiceDate": "2024-05-01", "dueDate": "2024-06-01" });
        app.post("/api/invoices", &body).await.status.as_u16()
    })
    .await;
    let mut expected = vec![201];
    expected.extend(vec![409; 11]);
    assert_eq!(statuses, expected);
}

/// Twelve concurrent failed logins for one email: five are checked, seven throttled (D21).
pub async fn parallel_failed_logins_stop_at_the_limit(app: Arc<TestApp>) {
    let statuses = statuses_at_once(&app, 12, |app, _| async move {
        app.post_public("/api/auth/login", &json!({ "email": ADMIN_EMAIL, "password": "wrong-guess" }))
            .await
            .status
            .as_u16()
    })
    .await;
    let mut expected = vec![401; 5];
    expected.extend(vec![429; 7]);
    assert_eq!(statuses, expected);
}

crate::helpers::on_every_backend!(
    parallel_payments_sum_exactly,
    parallel_invoice_numbers_have_one_winner,
    parallel_failed_logins_stop_at_the_limit
);
