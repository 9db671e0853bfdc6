//! The walk a new user takes, end to end over HTTP.

use hyper::Method;
use serde_json::json;

use crate::helpers::{ADMIN_EMAIL, ADMIN_PASSWORD, setup_body, spawn_fresh};

#[tokio::test]
async fn a_new_pharmacy_from_setup_to_a_canceled_invoice() {
    let app = spawn_fresh().await;
    // A fresh server is not onboarded.
    let status = app.call(Method::GET, "/api/onboarding/status", None, None).await;
    assert_eq!(status.expect(200).json()["isOnboarded"], false);
    // Setup, then login.
    app.post_public("/api/onboarding/setup", &setup_body()).await.expect(200);
    let login = app.post_public("/api/auth/login", &json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD })).await;
    let token = login.expect(200).json()["token"].as_str().unwrap().to_owned();
    let call = |method: Method, path: String, body: Option<serde_json::Value>| {
        let token = token.clone();
        let app = &app;
        async move { app.call(method, &path, Some(&token), body.as_ref()).await }
    };
    // A vendor, an invoice, two payments.
    let vendor = call(
        Method::POST,
        "/api/vendors".into(),
        Some(json!({ "name": "Cipla Distributors", "vendorType": "Wholesaler" })),
    )
    .await;
    let vendor_id = vendor.expect(201).json()["id"].as_i64().unwrap();
    let invoice = call(Method::POST, "/api/invoices".into(), Some(json!({
        "vendorId": vendor_id, "invoiceNumber": "CIP-001", "amount": 12500.5, "invoiceDate": "2024-05-01", "dueDate": "2024-05-31"
    }))).await;
    let invoice_id = invoice.expect(201).json()["id"].as_i64().unwrap();
    for amount in ["5000", "7500.5"] {
        let body: serde_json::Value = serde_json::from_str(&format!(
            r#"{{"invoiceId":{invoice_id},"amount":{amount},"transactionDate":"2024-05-10","transactionType":"UPI"}}"#
        ))
        .unwrap();
        call(Method::POST, "/api/transactions".into(), Some(body)).await.expect(201);
    }
    // The invoice is fully paid.
    let read = call(Method::GET, format!("/api/invoices/{invoice_id}"), None).await.expect(200).json();
    assert_eq!(
        (read["status"].clone(), read["paidAmount"].clone(), read["pendingAmount"].clone()),
        (json!("FullyPaid"), json!(12500.5), json!(0))
    );
    // The dashboard agrees.
    let summary = call(Method::GET, "/api/dashboard/summary".into(), None).await.expect(200).json();
    assert_eq!(
        summary,
        json!({ "totalVendors": 2, "totalInvoices": 1, "totalDue": 0, "totalPaid": 12500.5, "recentTransactions": 2 })
    );
    let vendor = call(Method::GET, format!("/api/vendors/{vendor_id}"), None).await.json();
    assert_eq!((vendor["totalInvoiceValue"].clone(), vendor["outstandingBalance"].clone()), (json!(12500.5), json!(0)));
    // Deleting the invoice cancels it.
    call(Method::DELETE, format!("/api/invoices/{invoice_id}"), Some(json!({ "reason": "entered by mistake" })))
        .await
        .expect(204);
    let canceled = call(Method::GET, "/api/invoices?isActive=false".into(), None).await.json();
    assert_eq!(canceled["items"][0]["status"], "Canceled");
    let summary = call(Method::GET, "/api/dashboard/summary".into(), None).await.json();
    assert_eq!(
        (summary["totalInvoices"].clone(), summary["totalDue"].clone(), summary["totalPaid"].clone()),
        (json!(1), json!(0), json!(12500.5))
    );
}
