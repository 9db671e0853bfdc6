//! Dashboard figures over HTTP (spec, Dashboard; D8, D12).

use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test]
async fn dashboard_routes_answer_live_figures() {
    let app = spawn_app().await;
    let big = app.vendor("Big").await;
    let small = app.vendor("Small").await;
    let first = app.invoice(big, "D-1", "1000", "2024-06-01").await;
    let second = app.invoice(small, "D-2", "300.5", "2024-06-01").await;
    app.pay(first, "100").await;
    let summary = app.get("/api/dashboard/summary").await.expect(200).json();
    assert_eq!(
        summary,
        json!({ "totalVendors": 3, "totalInvoices": 2, "totalDue": 1200.5, "totalPaid": 100, "recentTransactions": 1 })
    );
    app.pay(second, "0.5").await;
    let summary = app.get("/api/dashboard/summary").await.json();
    assert_eq!(summary["totalDue"], 1200, "no caching: the next request sees the payment");

    let top = app.get("/api/dashboard/top-vendors").await.expect(200).json();
    assert_eq!(top[0], json!({ "vendorId": big, "vendorName": "Big", "outstandingBalance": 900, "totalInvoices": 1 }));
    assert_eq!(top.as_array().unwrap().len(), 3);
    assert_eq!(app.get("/api/dashboard/top-vendors?limit=1").await.json().as_array().unwrap().len(), 1);
    assert_eq!(
        app.get("/api/dashboard/top-vendors?limit=0").await.json().as_array().unwrap().len(),
        1,
        "D8: clamped to 1"
    );
    app.get("/api/dashboard/top-vendors?limit=1000").await.expect(200);
    app.get("/api/dashboard/top-vendors?limit=many").await.invalid("limit");

    let recent = app.get("/api/dashboard/recent-invoices").await.expect(200).json();
    assert_eq!(recent[0]["id"], second, "newest first");
    let mut keys: Vec<&str> = recent[0].as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["amount", "dueDate", "id", "invoiceDate", "invoiceNumber", "pendingAmount", "status", "vendorName"]
    );

    let months = app.get("/api/dashboard/monthly-transactions").await.expect(200).json();
    let months = months.as_array().unwrap();
    assert_eq!(months.len(), 12, "D12");
    assert_eq!(months[0], json!({ "month": "2024-05", "totalAmount": 100.5, "transactionCount": 2 }));
    assert_eq!(months[11]["month"], "2023-06");
    assert_eq!(months[1]["totalAmount"], 0);
}
