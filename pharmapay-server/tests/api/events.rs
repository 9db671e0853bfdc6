//! The event feed over HTTP (D47): every write of the ledger announces itself with the record
//! as its read answers, refused writes announce nothing, and the feed pages by `after`.

use hyper::Method;
use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};

impl TestApp {
    /// Every event after `after`, read 1,000 at a time.
    async fn events_after(&self, mut after: i64) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let page = self.get(&format!("/api/events?after={after}&limit=1000")).await.expect(200).json();
            let items = page["items"].as_array().unwrap().clone();
            if items.is_empty() {
                assert_eq!(page["nextAfter"], after, "an empty read stays where it was");
                return events;
            }
            after = page["nextAfter"].as_i64().unwrap();
            assert_eq!(items.last().unwrap()["id"], after);
            events.extend(items);
        }
    }

    /// The last event id now.
    async fn last_event(&self) -> i64 {
        self.events_after(0).await.last().map_or(0, |event| event["id"].as_i64().unwrap())
    }

    /// The types of the events after `after`, and their data.
    async fn announced(&self, after: i64) -> Vec<(String, Value)> {
        let events = self.events_after(after).await;
        events.into_iter().map(|event| (event["type"].as_str().unwrap().to_owned(), event["data"].clone())).collect()
    }
}

fn kinds(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(kind, _)| kind.as_str()).collect()
}

#[tokio::test]
async fn every_write_of_the_ledger_announces_its_record_as_read() {
    let app = spawn_app().await;
    let start = app.last_event().await;

    let vendor = app.vendor("Shree Medicals").await;
    let invoice = app.invoice(vendor, "SM-1", "1000", "2024-06-30").await;
    let announced = app.announced(start).await;
    assert_eq!(kinds(&announced), ["vendor.created", "invoice.created"]);
    // The vendor's totals moved with the invoice since: its event shows it as it was then.
    assert_eq!(announced[0].1["id"], vendor);
    assert_eq!(announced[0].1["totalInvoiceValue"], 0);
    assert_eq!(announced[1].1, app.get(&format!("/api/invoices/{invoice}")).await.expect(200).json());

    let mark = app.last_event().await;
    let partial = app.pay(invoice, "400").await;
    let announced = app.announced(mark).await;
    assert_eq!(kinds(&announced), ["transaction.created"]);
    assert_eq!(announced[0].1, app.get(&format!("/api/transactions/{partial}")).await.expect(200).json());

    let mark = app.last_event().await;
    let rest = app.pay(invoice, "600").await;
    let announced = app.announced(mark).await;
    assert_eq!(kinds(&announced), ["transaction.created", "invoice.paid"], "D47: paid in full");
    assert_eq!(announced[0].1["id"], rest);
    let read = app.get(&format!("/api/invoices/{invoice}")).await.expect(200).json();
    assert_eq!(announced[1].1, read);
    assert_eq!(read["status"], "FullyPaid");

    // Refused writes announce nothing.
    let mark = app.last_event().await;
    app.invoice_refused(vendor, "SM-1").await;
    app.post(
        "/api/transactions",
        &json!({ "invoiceId": 999_999, "amount": 1, "transactionDate": "2024-05-05",
        "transactionType": "Cash" }),
    )
    .await
    .invalid("invoiceId");
    assert_eq!(app.announced(mark).await, []);

    let mark = app.last_event().await;
    app.delete_with(&format!("/api/transactions/{rest}"), &json!({ "reason": "entered twice" })).await.expect(204);
    app.post_empty(&format!("/api/transactions/{rest}/restore")).await.expect(200);
    let restored = app.get(&format!("/api/transactions/{rest}")).await.expect(200).json();
    let body = json!({ "name": "Shree Medicals Pvt", "vendorType": "Wholesaler" });
    let updated = app.put(&format!("/api/vendors/{vendor}"), &body).await.expect(200).json();
    let announced = app.announced(mark).await;
    assert_eq!(
        kinds(&announced),
        ["transaction.deleted", "transaction.restored", "invoice.paid", "vendor.updated"],
        "a restore that pays the invoice in full again announces it"
    );
    assert_eq!(announced[0].1["isActive"], false, "a deleted record as it stands soft-deleted");
    assert_eq!(announced[1].1, restored);
    assert_eq!(announced[3].1, updated);

    // A vendor payment: one event with its transactions inside, none of its own for them.
    let second = app.invoice(vendor, "SM-2", "300", "2024-07-30").await;
    let mark = app.last_event().await;
    let body = json!({ "amount": 300, "transactionDate": "2024-05-06", "transactionType": "NetBanking",
        "reference": "UTR-77" });
    let paid = app.post(&format!("/api/vendors/{vendor}/payments"), &body).await.expect(201).json();
    let announced = app.announced(mark).await;
    assert_eq!(kinds(&announced), ["vendorPayment.created", "invoice.paid"]);
    assert_eq!(announced[0].1, paid);
    assert_eq!(announced[0].1["transactions"][0]["invoiceId"], second);
    let mark = app.last_event().await;
    let id = paid["id"].as_i64().unwrap();
    app.delete(&format!("/api/vendor-payments/{id}")).await.expect(204);
    let announced = app.announced(mark).await;
    assert_eq!(kinds(&announced), ["vendorPayment.deleted"]);

    // Vendor credits: created, decided, applied (paying an invoice in full), updated by an undo.
    let third = app.invoice(vendor, "SM-3", "50", "2024-08-30").await;
    let mark = app.last_event().await;
    let claim = json!({ "vendorId": vendor, "creditNumber": "CN-1", "kind": "ExpiryReturn", "claimedAmount": 50,
        "claimDate": "2024-05-09" });
    let credit = app.post("/api/vendor-credits", &claim).await.expect(201).json()["id"].as_i64().unwrap();
    let decision = json!({ "acceptedAmount": 50, "decisionDate": "2024-05-10" });
    app.post(&format!("/api/vendor-credits/{credit}/decision"), &decision).await.expect(200);
    let apply = json!({ "allocations": [{ "invoiceId": third, "amount": 50 }] });
    let applied = app.post(&format!("/api/vendor-credits/{credit}/applications"), &apply).await;
    let applied = applied.expect(201).json();
    let application = applied["applications"][0]["id"].as_i64().unwrap();
    app.delete(&format!("/api/vendor-credits/{credit}/applications/{application}")).await.expect(204);
    let announced = app.announced(mark).await;
    assert_eq!(
        kinds(&announced),
        [
            "vendorCredit.created",
            "vendorCredit.decided",
            "vendorCredit.applied",
            "invoice.paid",
            "vendorCredit.updated"
        ]
    );
    assert_eq!(announced[2].1, applied);
    assert_eq!(announced[3].1["id"], third);
    assert_eq!(announced[4].1, app.get(&format!("/api/vendor-credits/{credit}")).await.expect(200).json());

    // Invoices and vendors deleted and restored.
    let mark = app.last_event().await;
    app.delete(&format!("/api/invoices/{third}")).await.expect(204);
    app.post_empty(&format!("/api/invoices/{third}/restore")).await.expect(200);
    let announced = app.announced(mark).await;
    assert_eq!(kinds(&announced), ["invoice.deleted", "invoice.restored"]);
    assert_eq!(announced[0].1["status"], "Canceled");
    assert_eq!(announced[1].1, app.get(&format!("/api/invoices/{third}")).await.expect(200).json());
}

impl TestApp {
    async fn invoice_refused(&self, vendor: i64, number: &str) {
        let body = json!({ "vendorId": vendor, "invoiceNumber": number, "amount": 5, "invoiceDate": "2024-05-01",
            "dueDate": "2024-06-01" });
        self.post("/api/invoices", &body).await.problem(409);
    }
}

#[tokio::test]
async fn the_feed_pages_by_after_and_refuses_bad_parameters() {
    let app = spawn_app().await;
    let start = app.last_event().await;
    for n in 0..5 {
        app.vendor(&format!("Vendor {n}")).await;
    }
    let first = app.get(&format!("/api/events?after={start}&limit=2")).await.expect(200).json();
    let ids: Vec<i64> = first["items"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 2);
    assert!(ids[0] > start && ids[1] > ids[0], "{ids:?}");
    assert_eq!(first["nextAfter"], ids[1]);
    let rest = app.get(&format!("/api/events?after={}", ids[1])).await.expect(200).json();
    let names: Vec<&str> =
        rest["items"].as_array().unwrap().iter().map(|e| e["data"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Vendor 2", "Vendor 3", "Vendor 4"]);
    let event = &rest["items"][0];
    assert_eq!(event["type"], "vendor.created");
    assert!(event["occurredAt"].as_str().unwrap().ends_with('Z'), "{event}");

    for query in ["limit=0", "limit=1001", "limit=x", "after=-1", "after=1.5"] {
        let field = query.split('=').next().unwrap();
        app.get(&format!("/api/events?{query}")).await.invalid(field);
    }
    let nobody = app.user_without_permissions("clerk@example.com").await;
    app.call(Method::GET, "/api/events", Some(&nobody), None).await.problem(403);
    app.call(Method::GET, "/api/events", None, None).await.problem(401);
}

#[tokio::test]
async fn imports_and_bank_statements_announce_each_record_and_each_line_action() {
    let app = spawn_app().await;
    let start = app.last_event().await;
    let upload = |path: &'static str, body: &'static str| {
        app.call_raw(Method::POST, path, Some(&app.admin_token), Some("text/csv"), body)
    };
    upload("/api/imports/vendors?dryRun=true", "Name,Type\nCipla,Manufacturer\nSun Pharma,Wholesaler\n")
        .await
        .expect(200);
    assert_eq!(app.announced(start).await, [], "a dry run announces nothing");
    upload("/api/imports/vendors", "Name,Type\nCipla,Manufacturer\nSun Pharma,Wholesaler\n").await.expect(200);
    let invoices = "Invoice Number,Vendor,Amount,Invoice Date,Due Date\nINV-1,Cipla,2500,2024-05-01,2024-06-01\n";
    upload("/api/imports/invoices", invoices).await.expect(200);
    let announced = app.announced(start).await;
    assert_eq!(kinds(&announced), ["vendor.created", "vendor.created", "invoice.created"], "one per record");
    assert_eq!((announced[0].1["name"].clone(), announced[1].1["name"].clone()), (json!("Cipla"), json!("Sun Pharma")));
    let invoice = announced[2].1["id"].as_i64().unwrap();
    assert_eq!(announced[2].1, app.get(&format!("/api/invoices/{invoice}")).await.expect(200).json());
    let vendor = announced[0].1["id"].as_i64().unwrap();

    let mark = app.last_event().await;
    let statement = "Date,Narration,Debit\n05/05/2024,UPI/512345678901/Paid to Cipla,2500.00\n\
                     06/05/2024,RENT MAY,9000.00\n";
    let created = app
        .call_raw(
            Method::POST,
            "/api/bank-statements?account=HDFC",
            Some(&app.admin_token),
            Some("text/csv"),
            statement,
        )
        .await;
    let created = created.expect(201).json();
    let id = created["id"].as_i64().unwrap();
    let lines = app.get(&format!("/api/bank-statements/{id}/lines")).await.expect(200).json();
    let line = |n: usize| lines["items"][n - 1]["id"].as_i64().unwrap();
    let path = |n: usize, action: &str| format!("/api/bank-statements/{id}/lines/{}/{action}", line(n));
    app.post(&path(2, "ignore"), &json!({ "reason": "rent" })).await.expect(200);
    let recorded = app.post(&path(1, "record"), &json!({ "vendorId": vendor })).await.expect(200).json();
    let announced = app.announced(mark).await;
    assert_eq!(
        kinds(&announced),
        [
            "bankStatement.created",
            "bankStatement.updated",
            "bankStatement.updated",
            "vendorPayment.created",
            "invoice.paid"
        ]
    );
    assert_eq!(announced[0].1, created, "the statement as its upload answered");
    assert_eq!(announced[1].1["ignored"], 1);
    assert_eq!((announced[2].1["matched"].clone(), announced[2].1["ignored"].clone()), (json!(1), json!(1)));
    let payment = recorded["vendorPaymentId"].as_i64().unwrap();
    assert_eq!(announced[3].1, app.get(&format!("/api/vendor-payments/{payment}")).await.expect(200).json());
    assert_eq!(announced[4].1["id"], invoice);

    let mark = app.last_event().await;
    app.delete(&format!("/api/bank-statements/{id}")).await.expect(204);
    let announced = app.announced(mark).await;
    assert_eq!(kinds(&announced), ["bankStatement.deleted"]);
    assert_eq!(announced[0].1["isActive"], false);
}

/// D51 amending D47: the feed answers only the events the caller may read, `nextAfter` moving
/// past the rest; a webhook may take only such events; the replay of a webhook's create shows
/// its secret only while it is still the webhook's.
#[tokio::test]
async fn the_feed_and_webhooks_show_only_what_the_caller_may_read() {
    const VENDOR_READ: i64 = 1;
    const WEBHOOK_READ: i64 = 38;
    const WEBHOOK_CREATE: i64 = 39;
    let app = spawn_app().await;
    let start = app.get("/api/events?limit=1000").await.expect(200).json()["nextAfter"].as_i64().unwrap();
    let vendor = app.vendor("Cipla").await;
    app.invoice(vendor, "F-1", "100", "2024-06-01").await;
    let watcher = app.token_with("watcher@example.com", &[WEBHOOK_READ, WEBHOOK_CREATE, VENDOR_READ]).await;
    let feed = app.call(Method::GET, &format!("/api/events?after={start}"), Some(&watcher), None).await;
    let feed = feed.expect(200).json();
    let kinds: Vec<&str> = feed["items"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["vendor.created"], "{feed}");
    let all = app.get(&format!("/api/events?after={start}")).await.expect(200).json();
    assert_eq!(feed["nextAfter"], all["nextAfter"], "past the invoice's event it may not read");

    let everything = json!({ "url": "https://books.example.com/hooks", "events": ["*"] });
    let refused = app.call(Method::POST, "/api/webhooks", Some(&watcher), Some(&everything)).await.problem(403);
    let detail = refused["detail"].as_str().unwrap();
    assert!(detail.contains("Invoice:Read") && detail.contains("BankStatement:Read"), "{detail}");
    let vendors = json!({ "url": "https://books.example.com/hooks", "events": ["vendor.created"] });
    app.call(Method::POST, "/api/webhooks", Some(&watcher), Some(&vendors)).await.expect(201);

    // A replay shows the secret while it is the webhook's, then answers 409.
    let first = app.post_with_key("/api/webhooks", &everything, "hook-1").await.expect(201).json();
    let replayed = app.post_with_key("/api/webhooks", &everything, "hook-1").await;
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    assert_eq!(replayed.expect(201).json()["secret"], first["secret"]);
    app.post_empty(&format!("/api/webhooks/{}/rotate-secret", first["id"])).await.expect(200);
    let stale = app.post_with_key("/api/webhooks", &everything, "hook-1").await.problem(409);
    assert!(stale["detail"].as_str().unwrap().contains("rotated"), "{stale}");
    let second = app.post_with_key("/api/webhooks", &everything, "hook-2").await.expect(201).json();
    app.delete(&format!("/api/webhooks/{}", second["id"])).await.expect(204);
    app.post_with_key("/api/webhooks", &everything, "hook-2").await.problem(409);
}
