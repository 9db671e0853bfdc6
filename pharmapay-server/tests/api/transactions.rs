//! Payments over HTTP (spec, Transactions; D2, D10, D13, D14).

use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test]
async fn payment_lifecycle_moves_paid_and_pending() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let [a, b] = app.invoices(vendor, [("A", "100", "2024-06-01"), ("B", "100", "2024-06-01")]).await;
    let body = json!({ "invoiceId": a, "amount": 25.5, "transactionDate": "2024-05-10T08:00:00Z", "transactionType": "netbanking", "description": "first" });
    let created = app.post("/api/transactions", &body).await;
    let payment = created.expect(201).json();
    let id = payment["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/transactions/{id}").as_str()));
    assert_eq!(payment["transactionType"], "NetBanking", "D7");
    assert_eq!(
        payment["invoice"],
        json!({
            "id": a, "invoiceNumber": "A", "vendorId": vendor, "vendorName": "Cipla", "branchId": 1, "branchCode": "HO",
            "amount": 100, "pendingAmount": 74.5
        }),
        "D13, D49"
    );
    assert_eq!((payment["branchId"].clone(), payment["branchCode"].clone()), (json!(1), json!("HO")), "D49");
    assert_eq!(app.get(&format!("/api/transactions/{id}")).await.expect(200).json(), payment);

    let moved = app
        .put(
            &format!("/api/transactions/{id}"),
            &json!({ "invoiceId": b, "amount": 40, "transactionDate": "2024-05-10", "transactionType": "Cash" }),
        )
        .await;
    assert_eq!(moved.expect(200).json()["invoice"]["pendingAmount"], 60);
    assert_eq!(app.get(&format!("/api/invoices/{a}")).await.json()["paidAmount"], 0);
    app.delete(&format!("/api/transactions/{id}")).await.expect(204);
    app.get(&format!("/api/transactions/{id}")).await.problem(404);
    assert_eq!(app.get(&format!("/api/invoices/{b}")).await.json()["paidAmount"], 0);
    let deleted = app.get("/api/transactions?isActive=false").await.json();
    assert_eq!(deleted["items"][0]["id"], id);
    app.post_empty(&format!("/api/transactions/{id}/restore")).await.expect(200);
    assert_eq!(app.get(&format!("/api/invoices/{b}")).await.json()["paidAmount"], 40);
}

#[tokio::test]
async fn payment_rules_over_http() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let invoice = app.invoice(vendor, "A", "100", "2024-06-01").await;
    let payment = |date: &str, kind: &str, invoice: i64| json!({ "invoiceId": invoice, "amount": 1, "transactionDate": date, "transactionType": kind });
    app.post("/api/transactions", &payment("2024-05-11", "UPI", invoice)).await.invalid("transactionDate");
    app.post("/api/transactions", &payment("2024-05-10", "Cheque", invoice)).await.invalid("transactionType");
    app.post("/api/transactions", &payment("2024-05-10", "UPI", 4040)).await.invalid("invoiceId");
    app.post("/api/transactions", &json!({})).await.invalid("amount");
    app.pay(invoice, "1").await;
    app.pay(invoice, "2").await;
    let listed = app
        .get(&format!("/api/transactions?invoiceId={invoice}&sortBy=amount&sortDir=asc&transactionType=upi"))
        .await
        .json();
    assert_eq!(listed["totalCount"], 2);
    assert_eq!(listed["items"][0]["amount"], 1);
    app.get("/api/transactions?transactionType=Cheque").await.invalid("transactionType");
    app.delete(&format!("/api/invoices/{invoice}")).await.expect(204);
    app.post("/api/transactions", &payment("2024-05-10", "UPI", invoice)).await.invalid("invoiceId");
}
