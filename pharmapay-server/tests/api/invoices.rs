//! Invoices over HTTP (spec, Invoices; D1, D2, D4, D5, D10, D13, D15).

use serde_json::{Value, json};

use crate::helpers::spawn_app;

fn invoice_body(vendor: i64, number: &str, amount: &str) -> Value {
    serde_json::from_str(&format!(
        r#"{{"vendorId":{vendor},"invoiceNumber":"{number}","amount":{amount},"invoiceDate":"2024-05-01T09:30:00+05:30","dueDate":"2024-06-01"}}"#
    ))
    .unwrap()
}

#[tokio::test]
async fn invoice_lifecycle_with_exact_money() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let created = app.post("/api/invoices", &invoice_body(vendor, "INV-1", "1000.10")).await;
    let invoice = created.expect(201).json();
    let id = invoice["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/invoices/{id}").as_str()));
    assert_eq!(invoice["invoiceDate"], "2024-05-01T04:00:00Z", "D2: offsets are normalised to UTC");
    assert_eq!(invoice["dueDate"], "2024-06-01T00:00:00Z", "D2: a bare date is midnight UTC");
    assert_eq!(invoice["status"], "PartiallyPaid");
    assert_eq!(invoice["vendorName"], "Cipla");
    assert!(invoice.get("vendor").is_none(), "lists and creates carry no nested vendor");
    for amount in ["0.1", "0.2"] {
        app.pay(id, amount).await;
    }
    let read = app.get(&format!("/api/invoices/{id}")).await;
    let text = String::from_utf8(read.body.to_vec()).unwrap();
    assert!(text.contains(r#""paidAmount":0.3,"#), "D1: 0.1 + 0.2 is exactly 0.3 on the wire: {text}");
    assert!(text.contains(r#""pendingAmount":999.8,"#), "{text}");
    let read = read.json();
    assert_eq!(read["vendor"]["name"], "Cipla", "D13: nested vendor");
    let mut vendor_keys: Vec<&str> = read["vendor"].as_object().unwrap().keys().map(String::as_str).collect();
    vendor_keys.sort();
    assert_eq!(
        vendor_keys,
        [
            "address",
            "drugLicenseNumber1",
            "drugLicenseNumber2",
            "email",
            "id",
            "isActive",
            "name",
            "phone",
            "vendorType"
        ]
    );

    let mut replaced = invoice_body(vendor, "INV-1A", "1000.10");
    replaced["description"] = json!("corrected number");
    let updated = app.put(&format!("/api/invoices/{id}"), &replaced).await.expect(200).json();
    assert_eq!(
        (updated["invoiceNumber"].clone(), updated["description"].clone()),
        (json!("INV-1A"), json!("corrected number"))
    );
    assert_eq!(updated["paidAmount"], json!(0.3), "D14: a replacement keeps the payments");
    app.pay(id, "999.8").await;
    assert_eq!(app.get(&format!("/api/invoices/{id}")).await.json()["status"], "FullyPaid");
    app.delete(&format!("/api/invoices/{id}")).await.expect(204);
    app.get(&format!("/api/invoices/{id}")).await.problem(404);
    let canceled = app.get("/api/invoices?isActive=false").await.json();
    assert_eq!(canceled["items"][0]["status"], "Canceled");
    assert_eq!(canceled["items"][0]["paidAmount"], json!(1000.1), "D10: canceled invoices keep their figures");
    app.post("/api/invoices", &invoice_body(vendor, "inv-1a", "5")).await.expect(201);
    let clash = app.post_empty(&format!("/api/invoices/{id}/restore")).await;
    assert!(clash.problem(409)["errors"]["invoiceNumber"].is_array(), "D15: restore onto a taken number");
}

#[tokio::test]
async fn invoice_validation_and_uniqueness() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    app.post("/api/invoices", &invoice_body(vendor, "DUP", "10")).await.expect(201);
    let duplicate = app.post("/api/invoices", &invoice_body(vendor, " dup ", "10")).await;
    assert!(duplicate.problem(409)["errors"]["invoiceNumber"].is_array(), "D5");
    let cases = [
        ("1.23456", "amount", "D1: five decimals"),
        ("0", "amount", "zero"),
        ("-10", "amount", "negative"),
        ("\"10\"", "amount", "a string"),
        ("1000000000000", "amount", "too large"),
    ];
    for (amount, field, label) in cases {
        let response = app.post("/api/invoices", &invoice_body(vendor, &format!("X-{label}"), amount)).await;
        assert_eq!(response.status.as_u16(), 400, "{label}");
        response.invalid(field);
    }
    let mut backwards = invoice_body(vendor, "B-1", "10");
    backwards["dueDate"] = json!("2024-04-01");
    app.post("/api/invoices", &backwards).await.invalid("dueDate");
    let mut bad_date = invoice_body(vendor, "B-2", "10");
    bad_date["invoiceDate"] = json!("01/05/2024");
    app.post("/api/invoices", &bad_date).await.invalid("invoiceDate");
    app.post("/api/invoices", &invoice_body(9999, "B-3", "10")).await.invalid("vendorId");
    app.delete(&format!("/api/vendors/{vendor}")).await.expect(204);
    app.post("/api/invoices", &invoice_body(vendor, "B-4", "10")).await.invalid("vendorId");
}

#[tokio::test]
async fn invoice_list_filters_and_sorts() {
    let app = spawn_app().await;
    let acme = app.vendor("Acme").await;
    let zen = app.vendor("Zenith").await;
    let [overdue, paid] = app.invoices(acme, [("AC-1", "100", "2024-05-02"), ("AC-2", "200", "2024-06-01")]).await;
    let open = app.invoice(zen, "ZN-1", "300", "2024-06-01").await;
    app.pay(paid, "200").await;
    let ids =
        |body: Value| body["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect::<Vec<_>>();
    assert_eq!(ids(app.get("/api/invoices?status=overdue").await.json()), [overdue]);
    assert_eq!(ids(app.get("/api/invoices?status=FullyPaid").await.json()), [paid]);
    assert_eq!(ids(app.get("/api/invoices?search=zen").await.json()), [open]);
    assert_eq!(
        ids(app.get(&format!("/api/invoices?vendorId={acme}&sortBy=amount&sortDir=asc")).await.json()),
        [overdue, paid]
    );
    assert_eq!(
        ids(app.get("/api/invoices?minAmount=150&maxAmount=300&sortBy=pendingAmount&sortDir=desc").await.json()),
        [open, paid]
    );
    assert_eq!(
        ids(app.get("/api/invoices?invoiceNumber=ac&sortBy=invoiceNumber&sortDir=desc").await.json()),
        [paid, overdue]
    );
    let page = app.get("/api/invoices").await.json();
    assert_eq!((page["pageSize"].clone(), page["totalCount"].clone()), (json!(15), json!(3)), "defaults");
    for (query, field) in [
        ("status=Late", "status"),
        ("sortBy=vendor", "sortBy"),
        ("minAmount=abc", "minAmount"),
        ("fromDate=yesterday", "fromDate"),
        ("vendorId=x", "vendorId"),
    ] {
        app.get(&format!("/api/invoices?{query}")).await.invalid(field);
    }
}
