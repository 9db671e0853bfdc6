//! Bank statements over HTTP (D46): an upload matched against the payments, its lists and
//! uncleared payments, every line action, and what bad requests answer.

use hyper::Method;
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse, spawn_app};

const CSV: &str = "text/csv";

/// An ICICI-shaped download: a preamble, the header, a UPI line naming a recorded UTR, a NEFT
/// line of a recorded amount, a cheque nobody recorded and a deposit.
const STATEMENT: &str = "Detailed Statement,,,,,,,\n\
    Account Number,XXXXXXXX5678,,,,,,\n\
    S No.,Value Date,Transaction Date,Cheque Number,Transaction Remarks,Withdrawal Amount (INR ),Deposit Amount (INR ),Balance (INR )\n\
    1,05/05/2024,05/05/2024,,UPI/512345678901/Paid to Shree/shree@ybl,\"2,500.00\",0.00,97500.00\n\
    2,06/05/2024,06/05/2024,,NEFT-ACME PHARMA,1200.00,0.00,96300.00\n\
    3,07/05/2024,07/05/2024,000451,CHQ PAID-CLG,4000.00,0.00,92300.00\n\
    4,08/05/2024,08/05/2024,,NEFT CR-REFUND,0.00,100.00,92400.00\n";

impl TestApp {
    async fn statement(&self, query: &str, content_type: &str, body: impl Into<hyper::body::Bytes>) -> TestResponse {
        let path = format!("/api/bank-statements{query}");
        self.call_raw(Method::POST, &path, Some(&self.admin_token), Some(content_type), body).await
    }

    async fn line_action(&self, statement: i64, line: &Value, action: &str, body: &Value) -> TestResponse {
        let path = format!("/api/bank-statements/{statement}/lines/{}/{action}", line["id"]);
        self.post(&path, body).await
    }
}

/// A UPI payment of `amount` on `day` against `invoice`, with `reference`.
fn upi_payment(invoice: i64, amount: &str, day: &str, reference: Value) -> Value {
    json!({ "invoiceId": invoice, "amount": amount.parse::<f64>().unwrap(), "transactionDate": day,
            "transactionType": "UPI", "reference": reference })
}

#[tokio::test]
async fn statements_are_uploaded_matched_listed_and_acted_on() {
    let app = spawn_app().await;
    let vendor = app.vendor("Shree Medicals").await;
    let invoice = app.invoice(vendor, "SM-1", "50000", "2024-06-30").await;
    let payment = |amount: &str, day: &str, reference: Value| upi_payment(invoice, amount, day, reference);
    let upi = app.post("/api/transactions", &payment("2500", "2024-05-05", json!("512345678901"))).await;
    let upi = upi.expect(201).json()["id"].clone();
    let neft = app.post("/api/transactions", &payment("1200", "2024-05-04", Value::Null)).await;
    let neft = neft.expect(201).json()["id"].clone();
    let unseen = app.post("/api/transactions", &payment("333", "2024-05-03", json!("NEVER-SEEN"))).await;
    let unseen = unseen.expect(201).json()["id"].clone();

    let created = app.statement("?account=ICICI%205678", CSV, STATEMENT).await;
    created.expect(201);
    let statement = created.json();
    let id = statement["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/bank-statements/{id}").as_str()));
    assert_eq!(
        statement,
        json!({ "id": id, "account": "ICICI 5678", "branchId": 1, "branchCode": "HO", "fromDate": "2024-05-05",
                "toDate": "2024-05-07",
                "lineCount": 3, "matched": 1, "amountDiffers": 0, "suggested": 1, "unmatched": 1, "ignored": 0,
                "duplicateLines": 0, "depositLines": 1, "skippedRows": 0, "isActive": true,
                "createdAt": statement["createdAt"] })
    );
    let detail = app.get(&format!("/api/bank-statements/{id}")).await.expect(200).json();
    assert_eq!((detail["unclearedCount"].clone(), detail["unclearedAmount"].clone()), (json!(1), json!(333)));
    assert!(detail.get("unclearedPayments").is_none(), "D51: a list of its own");
    let uncleared = app.get(&format!("/api/bank-statements/{id}/uncleared-payments")).await.expect(200).json();
    assert_eq!(
        uncleared,
        json!({ "items": [{ "transactionId": unseen, "vendorPaymentId": null, "date": "2024-05-03T00:00:00Z",
                 "amount": 333, "transactionType": "UPI", "reference": "NEVER-SEEN" }],
                "totalCount": 1, "page": 1, "pageSize": 50 })
    );
    let lines = app.get(&format!("/api/bank-statements/{id}/lines")).await.expect(200).json();
    assert_eq!(lines["totalCount"], 3);
    let line = |n: usize| lines["items"][n - 1].clone();
    assert_eq!(
        line(1),
        json!({ "id": line(1)["id"], "lineNumber": 1, "date": "2024-05-05",
                "narration": "UPI/512345678901/Paid to Shree/shree@ybl", "reference": null, "amount": 2500,
                "status": "Matched", "matchedBy": "Reference", "transactionId": upi, "vendorPaymentId": null })
    );
    assert_eq!((line(2)["status"].clone(), line(2)["transactionId"].clone()), (json!("Suggested"), neft.clone()));
    assert_eq!((line(3)["status"].clone(), line(3)["reference"].clone()), (json!("Unmatched"), json!("000451")));
    let suggested = app.get(&format!("/api/bank-statements/{id}/lines?status=suggested")).await.expect(200).json();
    assert_eq!(suggested["totalCount"], 1);
    app.get(&format!("/api/bank-statements/{id}/lines?status=Cleared")).await.invalid("status");

    // Every action answers the line.
    let confirmed = app.line_action(id, &line(2), "confirm", &json!({})).await.expect(200).json();
    assert_eq!(
        (confirmed["status"].clone(), confirmed["matchedBy"].clone()),
        (json!("Matched"), json!("AmountAndDate"))
    );
    let again = app.line_action(id, &line(2), "confirm", &json!({})).await.problem(400);
    assert!(again["detail"].as_str().unwrap().contains("Suggested"), "{again}");
    let taken = app.line_action(id, &line(3), "match", &json!({ "transactionId": upi })).await.problem(409);
    assert_eq!(taken["existingLineId"], line(1)["id"]);
    assert!(taken["errors"]["transactionId"].is_array(), "{taken}");
    app.line_action(id, &line(3), "match", &json!({})).await.invalid("transactionId");
    app.line_action(id, &line(3), "match", &json!({ "transactionId": 999999 })).await.problem(404);
    let freed = app.line_action(id, &line(1), "unmatch", &json!({})).await.expect(200).json();
    assert_eq!((freed["status"].clone(), freed["transactionId"].clone()), (json!("Unmatched"), Value::Null));
    let by_hand = app.line_action(id, &line(3), "match", &json!({ "transactionId": upi })).await.expect(200).json();
    assert_eq!(
        (by_hand["status"].clone(), by_hand["matchedBy"].clone()),
        (json!("AmountDiffers"), json!("Hand")),
        "2,500 recorded against a 4,000 cheque"
    );
    let ignored = app.line_action(id, &line(3), "ignore", &json!({ "reason": "rent" })).await.expect(200).json();
    assert_eq!((ignored["status"].clone(), ignored["transactionId"].clone()), (json!("Ignored"), Value::Null));
    let audit = app.get(&format!("/api/audit-log?entity=BankLine&entityId={}", line(3)["id"])).await.expect(200).json();
    assert!(audit["items"].as_array().unwrap().iter().any(|entry| entry["reason"] == "rent"), "{audit}");

    // Recording the first line (freed above) as a vendor payment: a 409, since its UTR is
    // recorded already (D30); once that payment is gone, the line records it anew.
    let record = json!({ "vendorId": vendor });
    let recorded_twice = app.line_action(id, &line(1), "record", &record).await.problem(409);
    assert_eq!(recorded_twice["existingTransactionId"], upi);
    app.delete(&format!("/api/transactions/{upi}")).await.expect(204);
    let recorded = app.line_action(id, &line(1), "record", &record).await.expect(200).json();
    assert_eq!((recorded["status"].clone(), recorded["matchedBy"].clone()), (json!("Matched"), json!("Hand")));
    let made = app.get(&format!("/api/vendor-payments/{}", recorded["vendorPaymentId"])).await.expect(200).json();
    assert_eq!(
        (
            made["amount"].clone(),
            made["transactionType"].clone(),
            made["reference"].clone(),
            made["transactionDate"].clone()
        ),
        (json!(2500), json!("UPI"), json!("512345678901"), json!("2024-05-05T00:00:00Z"))
    );
    app.line_action(id, &line(1), "record", &record).await.problem(400);
    let counts = app.get(&format!("/api/bank-statements/{id}")).await.expect(200).json();
    assert_eq!(
        [&counts["matched"], &counts["suggested"], &counts["unmatched"], &counts["ignored"]],
        [&json!(2), &json!(0), &json!(0), &json!(1)]
    );

    // Overlapping downloads are harmless; a delete frees the matches.
    let overlap = app.statement("?account=ICICI%205678", CSV, STATEMENT).await.expect(201).json();
    assert_eq!((overlap["lineCount"].clone(), overlap["duplicateLines"].clone()), (json!(0), json!(3)));
    let listed = app.get("/api/bank-statements").await.expect(200).json();
    assert_eq!(listed["items"][0]["id"], overlap["id"], "newest first");
    app.delete(&format!("/api/bank-statements/{id}")).await.expect(204);
    app.get(&format!("/api/bank-statements/{id}")).await.problem(404);
    app.get(&format!("/api/bank-statements/{id}/lines")).await.problem(404);
    app.line_action(id, &line(2), "unmatch", &json!({})).await.problem(404);
    let fresh = app.statement("?account=ICICI%205678", CSV, STATEMENT).await.expect(201).json();
    assert_eq!((fresh["matched"].clone(), fresh["suggested"].clone()), (json!(1), json!(1)), "{fresh}");
}

#[tokio::test]
async fn bad_statements_and_actions_answer_their_problem() {
    let app = spawn_app().await;
    let path_free = "?account=A";
    let not_a_file = app.statement(path_free, "application/json", "{}").await.problem(415);
    assert!(not_a_file["detail"].as_str().unwrap().contains("text/csv"), "{not_a_file}");
    app.statement("", CSV, STATEMENT).await.invalid("account");
    app.statement("?account=A&dateFormat=DDMM", CSV, STATEMENT).await.invalid("dateFormat");
    // One column cannot be both the date and the amount (a one-cell file `0` would read as a
    // header naming both).
    let twice = app.statement("?account=A&dateColumn=0&amountColumn=%200", CSV, "0").await.invalid("amountColumn");
    assert!(twice["errors"]["amountColumn"][0].as_str().unwrap().contains("dateColumn"), "{twice}");
    let no_debit = app.statement(path_free, CSV, "Date,Narration,Balance\n05/05/2024,X,1\n").await.invalid("file");
    assert!(no_debit["errors"]["file"][0].as_str().unwrap().contains("debit"), "{no_debit}");
    app.statement(path_free, CSV, b"Date,Debit\n\xff\xfe,1\n".to_vec()).await.invalid("file");
    let rows = app.statement(path_free, CSV, "Date,Narration,Debit\n05/05/2024,X,abc\n").await.problem(400);
    assert!(rows["errors"]["row2.amount"].is_array(), "{rows}");
    let too_big = vec![b'a'; 20 * 1024 * 1024 + 1];
    app.statement(path_free, CSV, too_big).await.problem(413);
    assert_eq!(app.get("/api/bank-statements").await.expect(200).json()["totalCount"], 0, "nothing was written");
    // D51: a CSV labelled as browsers on Windows label it is read as CSV.
    let labelled = app.statement("?account=MS", "application/vnd.ms-excel", STATEMENT).await.expect(201).json();
    assert_eq!(labelled["account"], "MS", "{labelled}");

    // Named columns and month-first dates.
    let named = app
        .statement(
            "?account=A&dateColumn=When&debitColumn=Paid%20Out&dateFormat=MDY",
            CSV,
            "When,Paid Out\n04/30/2024,10\n",
        )
        .await
        .expect(201)
        .json();
    assert_eq!(named["fromDate"], "2024-04-30");
    let id = named["id"].as_i64().unwrap();
    let line = app.get(&format!("/api/bank-statements/{id}/lines")).await.expect(200).json()["items"][0].clone();
    let other = app.statement("?account=B", CSV, "Date,Debit\n01/05/2024,5\n").await.expect(201).json();
    let foreign = app.get(&format!("/api/bank-statements/{}/lines", other["id"])).await.expect(200).json();
    app.line_action(id, &foreign["items"][0], "ignore", &json!({})).await.problem(404);
    app.line_action(id, &line, "record", &json!({ "vendorId": 999999 })).await.problem(404);
    app.line_action(id, &line, "record", &json!({ "transactionType": "Cheque" })).await.problem(400);

    // Bank statements are the admins' by default (D46).
    let (_, pharmacist) = app.user("pharmacist@example.com", 2).await;
    app.call(Method::GET, "/api/bank-statements", Some(&pharmacist), None).await.problem(403);
    let path = format!("/api/bank-statements/{id}/lines/{}/unmatch", line["id"]);
    app.call(Method::POST, &path, Some(&pharmacist), Some(&json!({}))).await.problem(403);
}

const TRANSACTION_READ: i64 = 9;
const TRANSACTION_CREATE: i64 = 10;
const STATEMENT_READ: i64 = 34;
const STATEMENT_UPDATE: i64 = 36;

/// D51 amending D46: the uncleared payments are a page of their own that also needs
/// `Transaction:Read`, as do a line's payment, `match` and `record`; `record` takes an
/// `Idempotency-Key`; deleting a payment a line holds sets the line back to `Unmatched`.
#[tokio::test]
async fn statements_show_payments_to_their_readers_and_deleted_payments_free_lines() {
    let app = spawn_app().await;
    let vendor = app.vendor("Shree Medicals").await;
    let invoice = app.invoice(vendor, "SM-1", "50000", "2024-06-30").await;
    let payment = |amount: &str, day: &str, reference: Value| upi_payment(invoice, amount, day, reference);
    let upi = app.post("/api/transactions", &payment("2500", "2024-05-05", json!("512345678901"))).await;
    let upi = upi.expect(201).json()["id"].clone();
    for (amount, day) in [("11", "2024-05-03"), ("22", "2024-05-04"), ("33", "2024-05-04")] {
        app.post("/api/transactions", &payment(amount, day, Value::Null)).await.expect(201);
    }
    let statement = app.statement("?account=ICICI%205678", CSV, STATEMENT).await.expect(201).json();
    let id = statement["id"].as_i64().unwrap();

    // The uncleared payments, a page at a time: by date, then id.
    let detail = app.get(&format!("/api/bank-statements/{id}")).await.expect(200).json();
    assert_eq!((detail["unclearedCount"].clone(), detail["unclearedAmount"].clone()), (json!(3), json!(66)));
    let second = app.get(&format!("/api/bank-statements/{id}/uncleared-payments?page=2&pageSize=2")).await;
    let second = second.expect(200).json();
    assert_eq!((second["totalCount"].clone(), second["items"][0]["amount"].clone()), (json!(3), json!(33)));
    app.get(&format!("/api/bank-statements/{id}/uncleared-payments?page=0")).await.invalid("page");
    app.get("/api/bank-statements/999/uncleared-payments").await.problem(404);

    // A clerk without Transaction:Read sees the counts, but no payment.
    let clerk = app.token_with("clerk@example.com", &[STATEMENT_READ, STATEMENT_UPDATE, TRANSACTION_CREATE]).await;
    let as_clerk = |method: Method, path: String, body: Option<Value>| {
        let (app, clerk) = (&app, clerk.clone());
        async move { app.call(method, &path, Some(&clerk), body.as_ref()).await }
    };
    let seen = as_clerk(Method::GET, format!("/api/bank-statements/{id}"), None).await.expect(200).json();
    assert_eq!(seen["unclearedCount"], 3);
    let refused = as_clerk(Method::GET, format!("/api/bank-statements/{id}/uncleared-payments"), None).await;
    assert!(refused.problem(403)["detail"].as_str().unwrap().contains("Transaction:Read"), "uncleared payments");
    let lines = as_clerk(Method::GET, format!("/api/bank-statements/{id}/lines"), None).await.expect(200).json();
    let line = |n: usize| lines["items"][n - 1].clone();
    assert_eq!((line(1)["status"].clone(), line(1)["transactionId"].clone()), (json!("Matched"), Value::Null));
    let path = |n: usize, action: &str| format!("/api/bank-statements/{id}/lines/{}/{action}", line(n)["id"]);
    let probe = as_clerk(Method::POST, path(3, "match"), Some(json!({ "transactionId": 999_999 }))).await;
    assert!(probe.problem(403)["detail"].as_str().unwrap().contains("Transaction:Read"), "match probes no id");
    let record = json!({ "vendorId": vendor });
    let refused = as_clerk(Method::POST, path(3, "record"), Some(record.clone())).await;
    assert!(refused.problem(403)["detail"].as_str().unwrap().contains("Transaction:Read"), "record");
    let auditor = app.token_with("auditor@example.com", &[STATEMENT_READ, TRANSACTION_READ]).await;
    let shown = app.call(Method::GET, &format!("/api/bank-statements/{id}/lines"), Some(&auditor), None).await;
    assert_eq!(shown.expect(200).json()["items"][0]["transactionId"], upi, "with Transaction:Read, the payment");
    let ignored = as_clerk(Method::POST, path(3, "ignore"), Some(json!({}))).await.expect(200).json();
    assert_eq!(ignored["status"], "Ignored");
    app.line_action(id, &line(3), "unmatch", &json!({})).await.expect(200);

    // record with a key: the retry answers the same line and records nothing again.
    let first = app.post_with_key(&path(3, "record"), &record, "record-line-3").await.expect(200).json();
    let retried = app.post_with_key(&path(3, "record"), &record, "record-line-3").await;
    assert_eq!(retried.header("idempotent-replayed"), Some("true"));
    assert_eq!(retried.json(), first);
    let paid = app.get(&format!("/api/vendors/{vendor}")).await.expect(200).json()["totalPaidAmount"].clone();
    assert_eq!(paid, json!(2500 + 66 + 4000), "the cheque's 4,000 recorded once");

    // Deleting the payment line 1 holds sets it back; restoring it matches nothing again.
    app.delete(&format!("/api/transactions/{upi}")).await.expect(204);
    let freed = app.get(&format!("/api/bank-statements/{id}/lines")).await.expect(200).json()["items"][0].clone();
    assert_eq!(
        (freed["status"].clone(), freed["matchedBy"].clone(), freed["transactionId"].clone()),
        (json!("Unmatched"), Value::Null, Value::Null)
    );
    let counts = app.get(&format!("/api/bank-statements/{id}")).await.expect(200).json();
    assert_eq!([&counts["matched"], &counts["unmatched"]], [&json!(1), &json!(2)], "line 3 still matched: {counts}");
    app.post_empty(&format!("/api/transactions/{upi}/restore")).await.expect(200);
    let still = app.get(&format!("/api/bank-statements/{id}/lines")).await.expect(200).json()["items"][0].clone();
    assert_eq!(still["status"], "Unmatched");
}
