//! Paying vendors as pharmacies do, over HTTP: references that stop double payments (D30), one
//! payment over several invoices (D31), what falls due when (D32) and overpaid invoices (D33).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::helpers::{spawn_app, statuses_at_once};

fn payment(invoice: i64, amount: f64, reference: Value, kind: &str) -> Value {
    json!({ "invoiceId": invoice, "amount": amount, "transactionDate": "2024-05-10", "transactionType": kind, "reference": reference })
}

#[tokio::test]
async fn a_reference_is_recorded_once_per_payment_type() {
    let app = spawn_app().await;
    let vendor = app.vendor("Sun Pharma").await;
    let invoice = app.invoice(vendor, "S-1", "1000", "2024-06-01").await;
    let first = app.post("/api/transactions", &payment(invoice, 10.0, json!("  UTR 4123-889/01 "), "NetBanking")).await;
    let first = first.expect(201).json();
    assert_eq!(first["reference"], "UTR 4123-889/01", "stored trimmed");
    assert_eq!(first["vendorPaymentId"], Value::Null);
    let id = first["id"].as_i64().unwrap();

    // The same key, however spelled, for the same type: 409 naming the holder.
    let again = app.post("/api/transactions", &payment(invoice, 10.0, json!("utr412388901"), "netbanking")).await;
    let problem = again.problem(409);
    assert_eq!(problem["existingTransactionId"], id);
    assert!(problem["errors"]["reference"].is_array(), "{problem}");
    // Another type may carry it.
    app.post("/api/transactions", &payment(invoice, 10.0, json!("UTR412388901"), "UPI")).await.expect(201);
    // A replacement or a restore that would take it: 409 too.
    let other = app.post("/api/transactions", &payment(invoice, 1.0, json!("CHQ-1"), "NetBanking")).await.json();
    let other = other["id"].as_i64().unwrap();
    let replaced = app
        .put(&format!("/api/transactions/{other}"), &payment(invoice, 1.0, json!("UTR-4123-88901"), "NetBanking"))
        .await;
    assert_eq!(replaced.problem(409)["existingTransactionId"], id);
    app.delete(&format!("/api/transactions/{id}")).await.expect(204);
    let reused = app.post("/api/transactions", &payment(invoice, 10.0, json!("UTR412388901"), "NetBanking")).await;
    let reused = reused.expect(201).json()["id"].as_i64().unwrap();
    assert_eq!(
        app.post_empty(&format!("/api/transactions/{id}/restore")).await.problem(409)["existingTransactionId"],
        reused
    );

    // Filtered by key, on the list and the report.
    let listed = app.get("/api/transactions?reference=utr%2F4123%2088901").await.json();
    assert_eq!(listed["totalCount"], 2, "{listed}");
    app.get("/api/transactions?reference=--").await.invalid("reference");
    app.get("/api/reports/transactions?reference=utr412388901").await.expect(200);
    for bad in [json!(""), json!(" - / "), json!("x".repeat(65)), json!(42), json!("a\u{0}b")] {
        app.post("/api/transactions", &payment(invoice, 1.0, bad.clone(), "Cash")).await.invalid("reference");
    }
}

#[tokio::test]
async fn one_payment_settles_several_invoices() {
    let app = spawn_app().await;
    let vendor = app.vendor("Mankind").await;
    let [late, soon, later] = app
        .invoices(vendor, [("M-1", "100", "2024-05-01"), ("M-2", "200", "2024-05-20"), ("M-3", "300", "2024-06-30")])
        .await;
    app.pay(late, "40").await;

    // Oldest due first.
    let body = json!({ "amount": 110, "transactionDate": "2024-05-10", "transactionType": "NetBanking", "reference": "NEFT-1", "description": "May bills" });
    let created = app.post(&format!("/api/vendors/{vendor}/payments"), &body).await;
    let recorded = created.expect(201).json();
    let id = recorded["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/vendor-payments/{id}").as_str()), "D9");
    assert_eq!(recorded["vendorId"], vendor);
    assert_eq!(recorded["vendorName"], "Mankind");
    assert_eq!(recorded["amount"], 110);
    let parts: Vec<(i64, f64)> = recorded["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| (part["invoiceId"].as_i64().unwrap(), part["amount"].as_f64().unwrap()))
        .collect();
    assert_eq!(parts, [(late, 60.0), (soon, 50.0)]);
    for part in recorded["transactions"].as_array().unwrap() {
        assert_eq!(part["vendorPaymentId"], id);
        assert_eq!(part["reference"], "NEFT-1");
        assert_eq!(part["description"], "May bills");
    }
    assert_eq!(app.get(&format!("/api/vendor-payments/{id}")).await.expect(200).json(), recorded);
    assert_eq!(app.get(&format!("/api/vendors/{vendor}")).await.json()["outstandingBalance"], 450);

    // As asked, idempotently.
    let asked = json!({ "amount": 160, "transactionDate": "2024-05-10", "transactionType": "Cash",
                         "allocations": [{ "invoiceId": later, "amount": 100 }, { "invoiceId": soon, "amount": 60 }] });
    let path = format!("/api/vendors/{vendor}/payments");
    let first = app.post_with_key(&path, &asked, "pay-160").await;
    first.expect(201);
    let replay = app.post_with_key(&path, &asked, "pay-160").await;
    assert_eq!(replay.expect(201).header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json(), first.json(), "D23: the replay answers the same body");
    assert_eq!(app.get(&format!("/api/invoices/{soon}")).await.json()["paidAmount"], 110);

    // Delete the whole payment at once.
    app.delete_with(&format!("/api/vendor-payments/{id}"), &json!({ "reason": "entered twice" })).await.expect(204);
    app.get(&format!("/api/vendor-payments/{id}")).await.problem(404);
    app.delete(&format!("/api/vendor-payments/{id}")).await.problem(404);
    assert_eq!(app.get(&format!("/api/invoices/{late}")).await.json()["paidAmount"], 40);
    let audit = app.get(&format!("/api/audit-log?entity=VendorPayment&entityId={id}")).await.json();
    let actions: Vec<&str> =
        audit["items"].as_array().unwrap().iter().map(|entry| entry["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["delete", "create"], "D22: audited");
    assert_eq!(audit["items"][0]["reason"], "entered twice");

    // Unknown or deleted vendors.
    app.post("/api/vendors/999999/payments", &body).await.problem(404);
    app.get("/api/vendor-payments/999999").await.problem(404);
}

#[tokio::test]
async fn every_malformed_allocation_names_its_field_and_writes_nothing() {
    let app = spawn_app().await;
    let vendor = app.vendor("Lupin").await;
    let other = app.vendor("Elsewhere").await;
    let [a, b] = app.invoices(vendor, [("L-1", "100", "2024-05-20"), ("L-2", "100", "2024-05-25")]).await;
    let foreign = app.invoice(other, "O-1", "100", "2024-05-20").await;
    let path = format!("/api/vendors/{vendor}/payments");
    let with = |amount: Value, allocations: Value| json!({ "amount": amount, "transactionDate": "2024-05-10", "transactionType": "UPI", "allocations": allocations });
    let many: Vec<Value> = (0..201).map(|_| json!({ "invoiceId": a, "amount": 1 })).collect();
    let cases: Vec<(&str, Value, &str)> = vec![
        ("empty", with(json!(1), json!([])), "allocations"),
        (
            "twice",
            with(json!(2), json!([{ "invoiceId": a, "amount": 1 }, { "invoiceId": a, "amount": 1 }])),
            "allocations[1].invoiceId",
        ),
        ("foreign", with(json!(1), json!([{ "invoiceId": foreign, "amount": 1 }])), "allocations[0].invoiceId"),
        ("missing invoice", with(json!(1), json!([{ "invoiceId": 987654, "amount": 1 }])), "allocations[0].invoiceId"),
        (
            "zero",
            with(json!(1), json!([{ "invoiceId": a, "amount": 1 }, { "invoiceId": b, "amount": 0 }])),
            "allocations[1].amount",
        ),
        ("negative", with(json!(1), json!([{ "invoiceId": a, "amount": -1 }])), "allocations[0].amount"),
        ("over-precise", with(json!(1), json!([{ "invoiceId": a, "amount": 0.00001 }])), "allocations[0].amount"),
        ("over what it owes", with(json!(101), json!([{ "invoiceId": a, "amount": 101 }])), "allocations[0].amount"),
        (
            "not adding up",
            with(json!(5), json!([{ "invoiceId": a, "amount": 1 }, { "invoiceId": b, "amount": 1 }])),
            "amount",
        ),
        ("201 allocations", with(json!(201), json!(many)), "allocations"),
        ("not an array", with(json!(1), json!({ "invoiceId": a })), "allocations"),
        ("not an object", with(json!(1), json!([7])), "allocations[0]"),
        ("id as text", with(json!(1), json!([{ "invoiceId": "1", "amount": 1 }])), "allocations[0].invoiceId"),
        ("amount as text", with(json!(1), json!([{ "invoiceId": a, "amount": "1" }])), "allocations[0].amount"),
        ("missing amount", with(json!(1), json!([{ "invoiceId": a }])), "allocations[0].amount"),
        ("more than owed", with(json!(200.0001), Value::Null), "amount"),
    ];
    for (label, body, field) in cases {
        let problem = app.post(&path, &body).await.problem(400);
        assert!(problem["errors"][field].is_array(), "{label}: expected an error on {field}, got {problem}");
    }
    assert_eq!(app.get("/api/transactions").await.json()["totalCount"], 0, "nothing was written");
    assert_eq!(app.get(&format!("/api/vendors/{vendor}")).await.json()["totalPaidAmount"], 0);
}

#[tokio::test]
async fn racing_vendor_payments_never_overpay_and_one_reference_has_one_winner() {
    let app = Arc::new(spawn_app().await);
    let vendor = app.vendor("Race").await;
    for n in 0..3 {
        app.invoice(vendor, &format!("R-{n}"), "100", "2024-05-20").await;
    }
    let statuses = statuses_at_once(&app, 8, move |app, _| async move {
        let body = json!({ "amount": 70, "transactionDate": "2024-05-10", "transactionType": "Cash" });
        app.post(&format!("/api/vendors/{vendor}/payments"), &body).await.status.as_u16()
    })
    .await;
    assert_eq!(statuses.iter().filter(|status| **status == 201).count(), 4, "{statuses:?}");
    assert!(statuses.iter().all(|status| *status == 201 || *status == 400), "{statuses:?}");
    assert_eq!(app.get(&format!("/api/vendors/{vendor}")).await.json()["outstandingBalance"], 20);

    let invoice = app.invoice(vendor, "R-9", "1000", "2024-05-20").await;
    let statuses = statuses_at_once(&app, 6, move |app, n| async move {
        if n % 2 == 0 {
            app.post("/api/transactions", &payment(invoice, 5.0, json!("UTR 99"), "UPI")).await.status.as_u16()
        } else {
            let body = json!({ "amount": 5, "transactionDate": "2024-05-10", "transactionType": "upi", "reference": "utr-99",
                               "allocations": [{ "invoiceId": invoice, "amount": 5 }] });
            app.post(&format!("/api/vendors/{vendor}/payments"), &body).await.status.as_u16()
        }
    })
    .await;
    assert_eq!(statuses.iter().filter(|status| **status == 201).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|status| **status == 409).count(), 5, "{statuses:?}");
}

#[tokio::test]
async fn due_soon_payables_and_overpaid_invoices() {
    let app = spawn_app().await;
    let vendor = app.vendor("Dues").await;
    let [overdue, today, week, overpaid] = app
        .invoices(
            vendor,
            [
                ("D-1", "100", "2024-05-01"),
                ("D-2", "200", "2024-05-10"),
                ("D-3", "300", "2024-05-17"),
                ("D-4", "50", "2024-05-12"),
            ],
        )
        .await;
    app.pay(overpaid, "60").await;
    let ids = |page: Value| -> Vec<i64> {
        let mut ids: Vec<i64> =
            page["items"].as_array().unwrap().iter().map(|item| item["id"].as_i64().unwrap()).collect();
        ids.sort_unstable();
        ids
    };
    assert_eq!(ids(app.get("/api/invoices?dueWithinDays=7").await.json()), [today, week]);
    assert_eq!(ids(app.get("/api/invoices?dueWithinDays=0&sortBy=amount").await.json()), [today]);
    assert_eq!(ids(app.get("/api/invoices?overpaid=true").await.json()), [overpaid]);
    assert_eq!(ids(app.get("/api/invoices?overpaid=false").await.json()), [overdue, today, week]);
    app.get("/api/invoices?dueWithinDays=367").await.invalid("dueWithinDays");
    app.get("/api/invoices?dueWithinDays=-1").await.invalid("dueWithinDays");
    app.get("/api/invoices?overpaid=maybe").await.invalid("overpaid");
    app.get("/api/reports/invoices?dueWithinDays=7").await.expect(200);

    let payables = app.get("/api/dashboard/payables").await.expect(200).json();
    assert_eq!(
        payables,
        json!({
            "overdue": { "amount": 100, "invoiceCount": 1 },
            "dueToday": { "amount": 200, "invoiceCount": 1 },
            "dueIn7Days": { "amount": 300, "invoiceCount": 1 },
            "dueIn30Days": { "amount": 300, "invoiceCount": 1 },
            "availableCredit": { "amount": 0, "creditCount": 0 },
            "pendingClaims": { "amount": 0, "creditCount": 0, "oldestClaimDate": null }
        })
    );
}
