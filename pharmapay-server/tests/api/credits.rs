//! Vendor credits over HTTP (D44): claims, decisions, replacements, deletes and restores, the
//! list and its filters, and what each bad field answers.

use serde_json::{Value, json};

use crate::helpers::spawn_app;

fn claim(vendor: i64, number: &str, claimed: f64, date: &str) -> Value {
    json!({ "vendorId": vendor, "creditNumber": number, "kind": "ExpiryReturn", "claimedAmount": claimed, "claimDate": date })
}

#[tokio::test]
async fn a_claim_is_recorded_decided_replaced_deleted_and_restored() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let invoice = app.invoice(vendor, "INV-1", "500", "2024-06-01").await;
    let mut body = claim(vendor, " CN-7 ", 120.5, "2024-05-09");
    body["kind"] = json!("breakage");
    body["againstInvoiceId"] = json!(invoice);
    body["description"] = json!("six strips broken");
    let created = app.post("/api/vendor-credits", &body).await;
    let credit = created.expect(201).json();
    let id = credit["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/vendor-credits/{id}").as_str()));
    assert_eq!(credit["creditNumber"], "CN-7");
    assert_eq!(credit["kind"], "Breakage", "canonical case");
    assert_eq!(credit["vendorName"], "Cipla");
    assert_eq!(credit["againstInvoiceId"], invoice);
    assert_eq!(credit["claimedAmount"], json!(120.5));
    assert_eq!(credit["claimDate"], "2024-05-09T00:00:00Z");
    assert_eq!((credit["acceptedAmount"].clone(), credit["decisionDate"].clone()), (Value::Null, Value::Null));
    assert_eq!((credit["appliedAmount"].clone(), credit["availableAmount"].clone()), (json!(0), json!(0)));
    assert_eq!(credit["status"], "Claimed");
    assert_eq!(credit["applications"], json!([]));
    assert_eq!(app.get(&format!("/api/vendor-credits/{id}")).await.expect(200).json(), credit);

    let taken = app.post("/api/vendor-credits", &claim(vendor, "cn-7", 1.0, "2024-05-09")).await.problem(409);
    assert!(taken["errors"]["creditNumber"].is_array(), "{taken}");

    let decision = json!({ "acceptedAmount": 100, "decisionDate": "2024-05-10", "distributorReference": "DCN/77" });
    let decided = app.post(&format!("/api/vendor-credits/{id}/decision"), &decision).await.expect(200).json();
    assert_eq!(decided["acceptedAmount"], json!(100));
    assert_eq!(decided["distributorReference"], "DCN/77");
    assert_eq!(decided["status"], "PartlyAccepted");
    assert_eq!(decided["availableAmount"], json!(100));
    assert_eq!(decided["applications"], json!([]));
    let rejected = json!({ "acceptedAmount": 0, "decisionDate": "2024-05-10" });
    let rejected = app.post(&format!("/api/vendor-credits/{id}/decision"), &rejected).await.expect(200).json();
    assert_eq!(
        (rejected["status"].clone(), rejected["distributorReference"].clone()),
        (json!("Rejected"), Value::Null)
    );
    app.post(&format!("/api/vendor-credits/{id}/decision"), &decision).await.expect(200);

    let replaced = app.put(&format!("/api/vendor-credits/{id}"), &claim(vendor, "CN-8", 150.0, "2024-05-08")).await;
    let replaced = replaced.expect(200).json();
    assert_eq!((replaced["creditNumber"].clone(), replaced["againstInvoiceId"].clone()), (json!("CN-8"), Value::Null));
    assert_eq!(replaced["acceptedAmount"], json!(100), "the decision stays");
    app.put(&format!("/api/vendor-credits/{id}"), &claim(vendor, "CN-8", 99.0, "2024-05-08"))
        .await
        .invalid("claimedAmount");

    app.delete_with(&format!("/api/vendor-credits/{id}"), &json!({ "reason": "entered twice" })).await.expect(204);
    app.get(&format!("/api/vendor-credits/{id}")).await.problem(404);
    app.post(&format!("/api/vendor-credits/{id}/decision"), &decision).await.problem(404);
    let restored = app.post_empty(&format!("/api/vendor-credits/{id}/restore")).await.expect(200).json();
    assert_eq!((restored["isActive"].clone(), restored["status"].clone()), (json!(true), json!("PartlyAccepted")));
    app.post_empty(&format!("/api/vendor-credits/{id}/restore")).await.problem(404);

    let audit = app.get(&format!("/api/audit-log?entity=VendorCredit&entityId={id}")).await.expect(200).json();
    let actions: Vec<&str> = audit["items"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["restore", "delete", "update", "decide", "decide", "decide", "create"]);
    assert_eq!(audit["items"][1]["reason"], "entered twice");
}

#[tokio::test]
async fn each_bad_field_of_a_claim_or_a_decision_is_named() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let other = app.vendor("Sun").await;
    let others_invoice = app.invoice(other, "S-1", "80", "2024-06-01").await;
    let good = claim(vendor, "CN-1", 10.0, "2024-05-09");
    for (field, value) in [
        ("vendorId", json!(424242)),
        ("vendorId", json!("1")),
        ("creditNumber", json!("  ")),
        ("creditNumber", json!("N".repeat(65))),
        ("kind", json!("Refund")),
        ("claimedAmount", json!(0)),
        ("claimedAmount", json!("10")),
        ("claimedAmount", json!(1.00001)),
        ("claimDate", json!("2024-05-11")),
        ("claimDate", json!("yesterday")),
        ("againstInvoiceId", json!(others_invoice)),
        ("againstInvoiceId", json!(0)),
    ] {
        let mut body = good.clone();
        body[field] = value;
        app.post("/api/vendor-credits", &body).await.invalid(field);
    }
    for field in ["vendorId", "creditNumber", "kind", "claimedAmount", "claimDate"] {
        let mut body = good.clone();
        body.as_object_mut().unwrap().remove(field);
        app.post("/api/vendor-credits", &body).await.invalid(field);
    }

    let id = app.post("/api/vendor-credits", &good).await.expect(201).json()["id"].as_i64().unwrap();
    let path = format!("/api/vendor-credits/{id}/decision");
    for (field, accepted, date) in [
        ("acceptedAmount", json!(10.0001), json!("2024-05-10")),
        ("acceptedAmount", json!(-1), json!("2024-05-10")),
        ("acceptedAmount", json!("5"), json!("2024-05-10")),
        ("decisionDate", json!(5), json!("2024-05-08")),
        ("decisionDate", json!(5), json!("2024-05-11")),
    ] {
        app.post(&path, &json!({ "acceptedAmount": accepted, "decisionDate": date })).await.invalid(field);
    }
    app.post("/api/vendor-credits/424242/decision", &json!({ "acceptedAmount": 1, "decisionDate": "2024-05-10" }))
        .await
        .problem(404);
    app.get("/api/vendor-credits/abc").await.invalid("id");
}

#[tokio::test]
async fn the_list_filters_and_finds_the_claims_to_chase() {
    let app = spawn_app().await;
    let cipla = app.vendor("Cipla").await;
    let sun = app.vendor("Sun").await;
    let mut ids = Vec::new();
    for (vendor, number, date) in [
        (cipla, "C-1", "2024-02-01"),
        (cipla, "C-2", "2024-04-01"),
        (sun, "S-1", "2024-04-01"),
        (sun, "S-2", "2024-05-09"),
    ] {
        let credit = app.post("/api/vendor-credits", &claim(vendor, number, 10.0, date)).await.expect(201).json();
        ids.push(credit["id"].as_i64().unwrap());
    }
    let decided = json!({ "acceptedAmount": 10, "decisionDate": "2024-04-02" });
    app.post(&format!("/api/vendor-credits/{}/decision", ids[1]), &decided).await.expect(200);

    let listed = |query: &'static str| {
        let app = &app;
        async move {
            let page = app.get(&format!("/api/vendor-credits{query}")).await.expect(200).json();
            let items = page["items"].as_array().unwrap();
            assert!(items.iter().all(|item| item.get("applications").is_none()), "list items carry none");
            (items.iter().map(|item| item["id"].as_i64().unwrap()).collect::<Vec<_>>(), page["totalCount"].clone())
        }
    };
    assert_eq!(listed("").await, (vec![ids[3], ids[2], ids[1], ids[0]], json!(4)), "newest claim, then id, first");
    let page = app.get("/api/vendor-credits").await.json();
    assert_eq!((page["page"].clone(), page["pageSize"].clone()), (json!(1), json!(15)));
    assert_eq!(listed("?status=accepted").await, (vec![ids[1]], json!(1)));
    assert_eq!(listed("?claimedBefore=2024-04-02").await, (vec![ids[2], ids[0]], json!(2)));
    assert_eq!(listed("?fromDate=2024-04-01&toDate=2024-04-01&kind=ExpiryReturn").await.1, json!(2));
    app.get("/api/vendor-credits?claimedBefore=2024-4-2").await.invalid("claimedBefore");
    app.get("/api/vendor-credits?status=Paid").await.invalid("status");
    app.get("/api/vendor-credits?pageSize=0").await.invalid("pageSize");
}

#[tokio::test]
async fn pharmacists_claim_and_decide_but_do_not_delete() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    let created = app
        .post_with_key_as(&pharmacist, "/api/vendor-credits", "claim-1", &claim(vendor, "C-1", 5.0, "2024-05-10"))
        .await;
    let id = created.expect(201).json()["id"].as_i64().unwrap();
    let replay = app
        .post_with_key_as(&pharmacist, "/api/vendor-credits", "claim-1", &claim(vendor, "C-1", 5.0, "2024-05-10"))
        .await;
    assert_eq!(
        (replay.expect(201).json()["id"].as_i64(), replay.header("idempotent-replayed")),
        (Some(id), Some("true"))
    );
    let denied = app
        .call(hyper::Method::DELETE, &format!("/api/vendor-credits/{id}"), Some(&pharmacist), None)
        .await
        .problem(403);
    assert!(denied["detail"].as_str().unwrap().contains("VendorCredit:Delete"), "{denied}");
}

/// An accepted credit of `accepted`, claimed on 1 May and decided on 2 May; answers its id.
async fn accepted_credit(app: &crate::helpers::TestApp, vendor: i64, number: &str, accepted: f64) -> i64 {
    let credit =
        app.post("/api/vendor-credits", &claim(vendor, number, accepted, "2024-05-01")).await.expect(201).json();
    let id = credit["id"].as_i64().unwrap();
    let decision = json!({ "acceptedAmount": accepted, "decisionDate": "2024-05-02" });
    app.post(&format!("/api/vendor-credits/{id}/decision"), &decision).await.expect(200);
    id
}

#[tokio::test]
async fn an_applied_credit_lowers_every_balance_and_can_be_undone() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let [early, later] = app.invoices(vendor, [("E-1", "100", "2024-05-05"), ("E-2", "50", "2024-06-01")]).await;
    let credit = accepted_credit(&app, vendor, "CN-1", 120.0).await;
    let path = format!("/api/vendor-credits/{credit}/applications");

    for (body, field) in [
        (json!({ "amount": 120.0001 }), "amount"),
        (json!({ "amount": 5, "date": "2024-05-01" }), "date"),
        (json!({ "allocations": [{ "invoiceId": later, "amount": 50.0001 }] }), "allocations[0].amount"),
        (json!({ "allocations": [] }), "allocations"),
        (json!({ "amount": "5" }), "amount"),
    ] {
        app.post(&path, &body).await.invalid(field);
    }
    let applied = app.post_with_key(&path, &json!({ "amount": 110 }), "apply-1").await;
    assert_eq!(applied.header("location"), Some(format!("/api/vendor-credits/{credit}").as_str()));
    let body = applied.expect(201).json();
    let shares: Vec<(i64, f64)> = body["applications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["invoiceId"].as_i64().unwrap(), a["amount"].as_f64().unwrap()))
        .collect();
    assert_eq!(shares, [(early, 100.0), (later, 10.0)], "oldest due first (D31)");
    assert_eq!((body["appliedAmount"].clone(), body["availableAmount"].clone()), (json!(110), json!(10)));
    let replay = app.post_with_key(&path, &json!({ "amount": 110 }), "apply-1").await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.expect(201).json()["appliedAmount"], 110, "D23: applied once");

    let invoice = app.get(&format!("/api/invoices/{early}")).await.expect(200).json();
    assert_eq!(
        (invoice["creditedAmount"].clone(), invoice["pendingAmount"].clone(), invoice["status"].clone()),
        (json!(100), json!(0), json!("FullyPaid"))
    );
    let totals = app.get(&format!("/api/vendors/{vendor}")).await.expect(200).json();
    assert_eq!(
        (
            totals["totalCreditedAmount"].clone(),
            totals["availableCredit"].clone(),
            totals["outstandingBalance"].clone()
        ),
        (json!(110), json!(10), json!(40))
    );
    let payables = app.get("/api/dashboard/payables").await.expect(200).json();
    assert_eq!(payables["availableCredit"], json!({ "amount": 10, "creditCount": 1 }));
    assert_eq!(payables["overdue"]["invoiceCount"], 0, "E-1 is settled by the credit");
    let summary = app.get("/api/dashboard/summary").await.expect(200).json();
    assert_eq!(summary["totalDue"], 40);

    let statement = app.get(&format!("/api/vendors/{vendor}/statement?fromDate=2024-05-01")).await.expect(200).json();
    let credit_line =
        statement["lines"].as_array().unwrap().iter().find(|line| line["kind"] == "Credit").unwrap().clone();
    assert_eq!(
        (credit_line["creditId"].clone(), credit_line["creditNumber"].clone(), credit_line["credited"].clone()),
        (json!(credit), json!("CN-1"), json!(120))
    );
    assert_eq!((statement["totalCredited"].clone(), statement["closingBalance"].clone()), (json!(120), json!(30)));

    // Reports show what was credited (D44).
    let invoices = crate::reports::download(&app, "/api/reports/invoices").await;
    let rows = crate::reports::sheet(&invoices, "Invoices");
    let credited: Vec<f64> = rows[1..].iter().map(|row| crate::reports::number(&row[10])).collect();
    assert_eq!(credited, [100.0, 10.0]);

    app.post("/api/vendor-credits/424242/applications", &json!({})).await.problem(404);

    let first = body["applications"][0]["id"].as_i64().unwrap();
    app.delete(&format!("/api/vendor-credits/{credit}/applications/{first}")).await.expect(204);
    app.delete(&format!("/api/vendor-credits/{credit}/applications/{first}")).await.problem(404);
    let other = accepted_credit(&app, vendor, "CN-2", 1.0).await;
    let second = body["applications"][1]["id"].as_i64().unwrap();
    app.delete(&format!("/api/vendor-credits/{other}/applications/{second}")).await.problem(404);
    let undone = app.get(&format!("/api/vendor-credits/{credit}")).await.expect(200).json();
    assert_eq!((undone["availableAmount"].clone(), undone["applications"].as_array().unwrap().len()), (json!(110), 1));
    assert_eq!(app.get(&format!("/api/invoices/{early}")).await.json()["pendingAmount"], 100);
}

#[tokio::test]
async fn thirty_parallel_applications_never_apply_more_than_accepted() {
    let app = std::sync::Arc::new(spawn_app().await);
    let vendor = app.vendor("Raced").await;
    app.invoices(vendor, [("R-1", "400", "2024-05-20"), ("R-2", "400", "2024-05-21")]).await;
    let credit = accepted_credit(&app, vendor, "CN-R", 250.0).await;
    let statuses = crate::helpers::statuses_at_once(&app, 30, move |app, _| async move {
        let path = format!("/api/vendor-credits/{credit}/applications");
        app.post(&path, &json!({ "amount": 20 })).await.status.as_u16()
    })
    .await;
    let acknowledged = statuses.iter().filter(|status| **status == 201).count();
    assert!(statuses.iter().all(|status| *status == 201 || *status == 400), "{statuses:?}");
    assert_eq!(acknowledged, 12, "250 accepted: twelve applications of 20 fit");
    let read = app.get(&format!("/api/vendor-credits/{credit}")).await.expect(200).json();
    assert_eq!(read["appliedAmount"], json!(20 * acknowledged), "what was acknowledged, and only that, was applied");
    assert_eq!(read["applications"].as_array().unwrap().len(), acknowledged);
    let vendor_totals = app.get(&format!("/api/vendors/{vendor}")).await.json();
    assert_eq!(vendor_totals["totalCreditedAmount"], json!(20 * acknowledged));
}
