//! Every row of the spec's condition table, table-driven.

use hyper::Method;
use serde_json::{Value, json};

use crate::helpers::{setup_body, spawn_app};

#[tokio::test]
async fn every_row_of_the_condition_table() {
    let app = spawn_app().await;
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    let vendor = app.vendor("Cipla").await;
    let invoice = app.invoice(vendor, "INV-1", "100", "2024-06-01").await;
    let payment = app.pay(invoice, "1").await;

    // GET /api/vendors with isActive=false and a token without is_admin true: 403.
    app.call(Method::GET, "/api/vendors?isActive=false", Some(&pharmacist), None).await.problem(403);

    // Operation without the required permission: 403.
    for (method, path, body) in [
        (Method::DELETE, format!("/api/vendors/{vendor}"), None),
        (Method::DELETE, format!("/api/invoices/{invoice}"), None),
        (Method::POST, "/api/users".to_owned(), Some(json!({}))),
        (Method::POST, "/api/roles".to_owned(), Some(json!({}))),
        (Method::GET, "/api/policies".to_owned(), None),
        (Method::GET, "/api/audit-log".to_owned(), None),
        (Method::PUT, "/api/settings/Currency".to_owned(), Some(json!({ "value": "$" }))),
    ] {
        let response = app.call(method.clone(), &path, Some(&pharmacist), body.as_ref()).await;
        assert_eq!(response.status.as_u16(), 403, "{method} {path}");
    }

    // POST /api/onboarding/setup when already onboarded: 400.
    app.post_public("/api/onboarding/setup", &setup_body()).await.problem(400);

    // DELETE role with isSystem true: 400.
    app.delete("/api/roles/1").await.problem(400);
    app.delete("/api/roles/2").await.problem(400);

    // Create with an invalid body (vendor, invoice, transaction, user, role): 400.
    for (path, body) in [
        ("/api/vendors", json!({ "name": "" , "vendorType": "Dealer" })),
        (
            "/api/invoices",
            json!({ "vendorId": vendor, "invoiceNumber": "X", "amount": -1, "invoiceDate": "2024-05-01", "dueDate": "2024-05-02" }),
        ),
        (
            "/api/transactions",
            json!({ "invoiceId": invoice, "amount": 1, "transactionDate": "tomorrow", "transactionType": "UPI" }),
        ),
        (
            "/api/users",
            json!({ "firstName": "A", "lastName": "B", "email": "nope", "password": "password-1", "roleId": 2 }),
        ),
        ("/api/roles", json!({ "name": 42 })),
    ] {
        let response = app.post(path, &body).await;
        assert_eq!(response.status.as_u16(), 400, "{path}");
        assert!(response.problem(400)["errors"].is_object(), "{path}: validation errors are listed");
    }

    // Invoice or transaction creation referencing a missing or inactive parent: 400.
    let gone_vendor = app.vendor("Gone").await;
    app.delete(&format!("/api/vendors/{gone_vendor}")).await.expect(204);
    let canceled = app.invoice(vendor, "INV-2", "100", "2024-06-01").await;
    app.delete(&format!("/api/invoices/{canceled}")).await.expect(204);
    for (path, body) in [
        (
            "/api/invoices",
            json!({ "vendorId": 9999, "invoiceNumber": "P-1", "amount": 1, "invoiceDate": "2024-05-01", "dueDate": "2024-05-02" }),
        ),
        (
            "/api/invoices",
            json!({ "vendorId": gone_vendor, "invoiceNumber": "P-2", "amount": 1, "invoiceDate": "2024-05-01", "dueDate": "2024-05-02" }),
        ),
        (
            "/api/transactions",
            json!({ "invoiceId": 9999, "amount": 1, "transactionDate": "2024-05-01", "transactionType": "UPI" }),
        ),
        (
            "/api/transactions",
            json!({ "invoiceId": canceled, "amount": 1, "transactionDate": "2024-05-01", "transactionType": "UPI" }),
        ),
    ] {
        let response = app.post(path, &body).await;
        assert_eq!(response.status.as_u16(), 400, "{path} {body}");
    }

    // Fetch, update or delete of a missing or soft-deleted id: 404.
    app.delete(&format!("/api/transactions/{payment}")).await.expect(204);
    let (deleted_user, _) = app.user("gone@example.com", 2).await;
    app.delete(&format!("/api/users/{deleted_user}")).await.expect(204);
    let role = app.post("/api/roles", &json!({ "name": "Temp" })).await.json()["id"].as_i64().unwrap();
    app.delete(&format!("/api/roles/{role}")).await.expect(204);
    let policy =
        app.post("/api/policies", &json!({ "name": "Temp", "permissionIds": [] })).await.json()["id"].as_i64().unwrap();
    app.delete(&format!("/api/policies/{policy}")).await.expect(204);
    let bodies: [(&str, i64, Value); 6] = [
        ("vendors", gone_vendor, json!({ "name": "X", "vendorType": "Dealer" })),
        (
            "invoices",
            canceled,
            json!({ "vendorId": vendor, "invoiceNumber": "Q", "amount": 1, "invoiceDate": "2024-05-01", "dueDate": "2024-05-02" }),
        ),
        (
            "transactions",
            payment,
            json!({ "invoiceId": invoice, "amount": 1, "transactionDate": "2024-05-01", "transactionType": "UPI" }),
        ),
        ("users", deleted_user, json!({ "firstName": "A", "lastName": "B", "email": "a@b.co", "roleId": 2 })),
        ("roles", role, json!({ "name": "Temp2" })),
        ("policies", policy, json!({ "name": "Temp2", "permissionIds": [] })),
    ];
    for (collection, soft_deleted, body) in bodies {
        for id in [soft_deleted, 987_654] {
            let path = format!("/api/{collection}/{id}");
            assert_eq!(app.get(&path).await.status.as_u16(), 404, "GET {path}");
            assert_eq!(app.put(&path, &body).await.status.as_u16(), 404, "PUT {path}");
            assert_eq!(app.delete(&path).await.status.as_u16(), 404, "DELETE {path}");
        }
    }

    // GET /api/settings/:key with an unknown key: 404.
    app.get("/api/settings/NoSuchKey").await.problem(404);
}
