//! The vendor master and what a pharmacy reconciles with, over HTTP: GSTINs (D37), drug licence
//! validity, its alerts and its policy (D36), the payables aging (D34) and vendor statements
//! (D35), as JSON and as Excel files.

use hyper::Method;
use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};
use crate::reports::{as_csv, attachment, date, download, number, sheet, soffice, text};

const VENDOR_READ: i64 = 1;
const INVOICE_READ: i64 = 5;
const TRANSACTION_READ: i64 = 9;

async fn vendor_with(app: &TestApp, body: Value) -> Value {
    let response = app.post("/api/vendors", &body).await;
    response.expect(201);
    response.json()
}

async fn invoice_dated(app: &TestApp, vendor: i64, number: &str, amount: f64, dated: &str, due: &str) -> i64 {
    let body =
        json!({ "vendorId": vendor, "invoiceNumber": number, "amount": amount, "invoiceDate": dated, "dueDate": due });
    let response = app.post("/api/invoices", &body).await;
    response.expect(201);
    response.json()["id"].as_i64().unwrap()
}

async fn paid_on(app: &TestApp, invoice: i64, amount: f64, on: &str, reference: &str) -> i64 {
    let body = json!({ "invoiceId": invoice, "amount": amount, "transactionDate": on, "transactionType": "NetBanking",
        "reference": reference });
    let response = app.post("/api/transactions", &body).await;
    response.expect(201);
    response.json()["id"].as_i64().unwrap()
}

/// A user whose only permission is Vendor:Read, and their token.
async fn vendor_reader(app: &TestApp) -> String {
    reader_of(app, "reader@example.com", &[VENDOR_READ]).await
}

/// A user holding just the permissions `permission_ids`, and their token.
async fn reader_of(app: &TestApp, email: &str, permission_ids: &[i64]) -> String {
    app.token_with(email, permission_ids).await
}

#[tokio::test]
async fn vendors_carry_a_checked_gstin_unique_among_active_vendors() {
    let app = spawn_app().await;
    let body = json!({ "name": "Ajanta", "vendorType": "Wholesaler", "gstin": " 27aapfu0939f1zv " });
    let ajanta = vendor_with(&app, body).await;
    assert_eq!(ajanta["gstin"], "27AAPFU0939F1ZV", "D37: trimmed and upper-cased");
    let plain = vendor_with(&app, json!({ "name": "Plain", "vendorType": "Dealer" })).await;
    assert_eq!(plain["gstin"], Value::Null);

    for bad in [
        json!("27AAPFU0939F1ZW"),
        json!("27AAPFU0939F1Z"),
        json!("99AAPFU0939F1ZV"),
        json!("27AAPFU0939F1XV"),
        json!("27AAPF00939F1ZV"),
        json!(""),
        json!(27),
    ] {
        let body = json!({ "name": "Bad", "vendorType": "Dealer", "gstin": bad });
        app.post("/api/vendors", &body).await.invalid("gstin");
    }
    let twin = json!({ "name": "Twin", "vendorType": "Dealer", "gstin": "27AAPFU0939F1ZV" });
    let conflict = app.post("/api/vendors", &twin).await.problem(409);
    assert!(conflict["errors"]["gstin"].is_array(), "{conflict}");
    let id = ajanta["id"].as_i64().unwrap();
    app.delete(&format!("/api/vendors/{id}")).await.expect(204);
    let twin = app.post("/api/vendors", &twin).await.expect(201).json();
    assert_eq!(twin["gstin"], "27AAPFU0939F1ZV", "a deleted vendor frees its GSTIN");
    app.post_empty(&format!("/api/vendors/{id}/restore")).await.problem(409);
    let listed = app.get("/api/vendors?search=Twin").await.json();
    assert_eq!(listed["items"][0]["gstin"], "27AAPFU0939F1ZV");
}

#[tokio::test]
async fn licence_validity_shows_filters_alerts_and_can_block_invoices() {
    let app = spawn_app().await;
    // Today is 10 May 2024.
    let lapsed = vendor_with(
        &app,
        json!({ "name": "Lapsed", "vendorType": "Wholesaler", "drugLicenseNumber1": "DL-1", "drugLicenseValidUntil": "2024-05-01" }),
    )
    .await;
    assert_eq!(lapsed["drugLicenseValidUntil"], "2024-05-01T00:00:00Z");
    assert_eq!(lapsed["licenseStatus"], "Expired");
    let soon =
        vendor_with(&app, json!({ "name": "Soon", "vendorType": "Agency", "drugLicenseValidUntil": "2024-06-09" }))
            .await;
    assert_eq!(soon["licenseStatus"], "ExpiringSoon", "today + 30 is still soon");
    let valid =
        vendor_with(&app, json!({ "name": "Valid", "vendorType": "Agency", "drugLicenseValidUntil": "2024-06-10" }))
            .await;
    assert_eq!(valid["licenseStatus"], "Valid");
    let unknown = vendor_with(&app, json!({ "name": "Unknown", "vendorType": "Agency" })).await;
    assert_eq!((unknown["licenseStatus"].as_str(), &unknown["drugLicenseValidUntil"]), (Some("Unknown"), &Value::Null));
    app.post("/api/vendors", &json!({ "name": "Bad", "vendorType": "Agency", "drugLicenseValidUntil": "soon" }))
        .await
        .invalid("drugLicenseValidUntil");

    let expiring = app.get("/api/vendors?licenseStatus=expiringsoon").await.json();
    assert_eq!((expiring["totalCount"].as_i64(), &expiring["items"][0]["name"]), (Some(1), &json!("Soon")));
    app.get("/api/vendors?licenseStatus=Lapsed").await.invalid("licenseStatus");

    let alerts = app.get("/api/dashboard/license-alerts").await.expect(200).json();
    assert_eq!(
        alerts,
        json!([
            { "vendorId": lapsed["id"], "vendorName": "Lapsed", "drugLicenseNumber1": "DL-1",
              "drugLicenseValidUntil": "2024-05-01T00:00:00Z", "licenseStatus": "Expired", "daysLeft": -9 },
            { "vendorId": soon["id"], "vendorName": "Soon", "drugLicenseNumber1": null,
              "drugLicenseValidUntil": "2024-06-09T00:00:00Z", "licenseStatus": "ExpiringSoon", "daysLeft": 30 }
        ]),
        "D36: within 30 days by default, soonest first"
    );
    let wider = app.get("/api/dashboard/license-alerts?withinDays=31").await.json();
    assert_eq!(wider.as_array().map(Vec::len), Some(3));
    for bad in ["367", "-1", "x"] {
        app.get(&format!("/api/dashboard/license-alerts?withinDays={bad}")).await.invalid("withinDays");
    }
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    app.call(Method::GET, "/api/dashboard/license-alerts", Some(&pharmacist), None).await.expect(200);
    let reader = vendor_reader(&app).await;
    let refused = app.call(Method::GET, "/api/dashboard/license-alerts?withinDays=x", Some(&reader), None).await;
    assert!(refused.problem(403)["detail"].as_str().unwrap().contains("Dashboard:Read"), "403 before 400");

    // D36: the policy. Warn (the default) accepts; Block refuses on vendorId.
    let lapsed_id = lapsed["id"].as_i64().unwrap();
    invoice_dated(&app, lapsed_id, "W-1", 10.0, "2024-05-02", "2024-06-01").await;
    app.put("/api/settings/ExpiredLicensePolicy", &json!({ "value": "Sometimes" })).await.invalid("value");
    let block = app.put("/api/settings/ExpiredLicensePolicy", &json!({ "value": "block" })).await.expect(200).json();
    assert_eq!(block["value"], "Block");
    let body = json!({ "vendorId": lapsed_id, "invoiceNumber": "B-1", "amount": 5, "invoiceDate": "2024-05-02", "dueDate": "2024-06-01" });
    app.post("/api/invoices", &body).await.invalid("vendorId");
    invoice_dated(&app, lapsed_id, "B-2", 5.0, "2024-05-01", "2024-06-01").await;
    invoice_dated(&app, unknown["id"].as_i64().unwrap(), "U-1", 5.0, "2024-05-02", "2024-06-01").await;
}

#[tokio::test]
async fn the_aging_buckets_what_was_owed_then_as_json_and_xlsx() {
    let app = spawn_app().await;
    let acme = app.vendor("Acme").await;
    let zen = app.vendor("Zen").await;
    invoice_dated(&app, acme, "A-0", 100.5, "2024-05-02", "2024-05-10").await;
    let late = invoice_dated(&app, acme, "A-45", 200.0, "2024-03-01", "2024-03-26").await;
    invoice_dated(&app, acme, "A-old", 1000.0, "2023-09-01", "2023-10-01").await;
    let zen_invoice = invoice_dated(&app, zen, "Z-1", 50.25, "2024-04-20", "2024-05-05").await;
    paid_on(&app, late, 20.0, "2024-04-01", "UTR-1").await;
    paid_on(&app, late, 30.0, "2024-05-09", "UTR-2").await;
    paid_on(&app, zen_invoice, 50.25, "2024-05-09", "UTR-3").await;

    let today = app.get("/api/payables/aging").await.expect(200).json();
    assert_eq!(
        today,
        json!({
            "asOf": "2024-05-10",
            "vendors": [{ "vendorId": acme, "vendorName": "Acme", "notDue": 100.5, "days1To30": 0, "days31To60": 150,
                "days61To90": 0, "days91To180": 0, "over180": 1000, "total": 1250.5, "invoiceCount": 3 }],
            "totals": { "notDue": 100.5, "days1To30": 0, "days31To60": 150, "days61To90": 0, "days91To180": 0,
                "over180": 1000, "total": 1250.5, "invoiceCount": 3 }
        }),
        "D34: Zen owes nothing and has no row; A-45 is 45 days late"
    );
    let past = app.get("/api/payables/aging?asOf=2024-05-01").await.expect(200).json();
    assert_eq!(past["asOf"], "2024-05-01");
    assert_eq!(past["vendors"][0]["vendorId"], acme, "1180 owed by Acme then");
    assert_eq!(past["vendors"][0]["days31To60"], 180, "the 9 May payment came later; A-45 was 36 days late");
    assert_eq!(past["vendors"][0]["over180"], 1000, "A-old was 213 days late: over 180");
    assert_eq!(past["vendors"][0]["days91To180"], 0);
    assert_eq!(past["vendors"][0]["total"], 1180, "A-0 was not yet invoiced");
    assert_eq!(
        past["vendors"][1],
        json!({ "vendorId": zen, "vendorName": "Zen", "notDue": 50.25, "days1To30": 0,
        "days31To60": 0, "days61To90": 0, "days91To180": 0, "over180": 0, "total": 50.25, "invoiceCount": 1 })
    );
    let just_zen = app.get(&format!("/api/payables/aging?asOf=2024-05-01&vendorId={zen}")).await.json();
    assert_eq!(just_zen["vendors"].as_array().map(Vec::len), Some(1));
    app.get("/api/payables/aging?asOf=2024-05-11").await.invalid("asOf");
    app.get("/api/payables/aging?asOf=10/05/2024").await.invalid("asOf");
    app.get("/api/payables/aging?vendorId=999").await.problem(404);
    let reader = vendor_reader(&app).await;
    let refused = app.call(Method::GET, "/api/payables/aging?asOf=bad", Some(&reader), None).await;
    assert!(refused.problem(403)["detail"].as_str().unwrap().contains("Invoice:Read"));

    let report = download(&app, "/api/reports/aging?asOf=2024-05-01").await;
    assert_eq!(
        report.header("content-disposition"),
        Some(attachment("aging_20240501.xlsx").as_str()),
        "named after asOf"
    );
    let rows = sheet(&report, "Aging");
    assert_eq!(
        rows[0].iter().map(text).collect::<Vec<_>>(),
        [
            "Vendor ID",
            "Vendor",
            "Not Due",
            "1-30 Days",
            "31-60 Days",
            "61-90 Days",
            "91-180 Days",
            "Over 180 Days",
            "Total",
            "Invoices"
        ]
    );
    assert_eq!(rows.len(), 4, "header, two vendors, totals");
    assert_eq!((number(&rows[1][0]) as i64, text(&rows[1][1])), (acme, "Acme".to_owned()));
    assert_eq!((number(&rows[1][4]), number(&rows[1][8]), number(&rows[1][9])), (180.0, 1180.0, 2.0));
    assert_eq!(text(&rows[3][1]), "Total");
    assert_eq!((number(&rows[3][2]), number(&rows[3][8])), (50.25, 1230.25));
    // D51: a download is the whole aging whatever page its JSON twin would answer.
    let paged = download(&app, "/api/reports/aging?asOf=2024-05-01&page=1&pageSize=1").await;
    assert_eq!(sheet(&paged, "Aging"), rows, "page and pageSize are ignored");
    let bad_page = download(&app, "/api/reports/aging?asOf=2024-05-01&page=0&pageSize=x").await;
    assert_eq!(sheet(&bad_page, "Aging"), rows, "not even read");
    let today_report = download(&app, "/api/reports/aging").await;
    assert_eq!(today_report.header("content-disposition"), Some(attachment("aging_20240510.xlsx").as_str()));
    app.get("/api/reports/aging?asOf=2024-05-11").await.invalid("asOf");
}

#[tokio::test]
async fn a_statement_opens_runs_and_closes_as_json_and_xlsx() {
    let app = spawn_app().await;
    let vendor = vendor_with(
        &app,
        json!({ "name": "Stated", "vendorType": "Wholesaler", "gstin": "29AAGCR4375J1ZU", "drugLicenseNumber1": "KA-1" }),
    )
    .await;
    let id = vendor["id"].as_i64().unwrap();
    let april = invoice_dated(&app, id, "S-APR", 500.0, "2024-04-10", "2024-05-10").await;
    let may = invoice_dated(&app, id, "S-MAY", 300.5, "2024-05-03", "2024-06-03").await;
    paid_on(&app, april, 100.0, "2024-04-20", "UTR-A").await;
    let in_may = paid_on(&app, april, 150.25, "2024-05-03", "UTR-B").await;
    paid_on(&app, may, 0.5, "2024-05-06", "UTR-C").await;

    let statement = app.get(&format!("/api/vendors/{id}/statement")).await.expect(200).json();
    assert_eq!(
        statement["vendor"],
        json!({ "id": id, "name": "Stated", "vendorType": "Wholesaler", "gstin": "29AAGCR4375J1ZU", "drugLicenseNumber1": "KA-1" })
    );
    assert_eq!(
        (&statement["fromDate"], &statement["toDate"]),
        (&json!("2024-05-01"), &json!("2024-05-10")),
        "D35 defaults"
    );
    assert_eq!(statement["openingBalance"], 400);
    assert_eq!(
        statement["lines"][0],
        json!({ "date": "2024-05-03", "kind": "Invoice", "invoiceId": may, "invoiceNumber": "S-MAY", "transactionId": null,
            "reference": null, "creditId": null, "creditNumber": null, "description": null, "invoiced": 300.5, "paid": 0,
            "credited": 0, "balance": 700.5 })
    );
    assert_eq!(
        statement["lines"][1],
        json!({ "date": "2024-05-03", "kind": "Payment", "invoiceId": april, "invoiceNumber": "S-APR", "transactionId": in_may,
            "reference": "UTR-B", "creditId": null, "creditNumber": null, "description": null, "invoiced": 0, "paid": 150.25,
            "credited": 0, "balance": 550.25 })
    );
    assert_eq!(statement["lines"][2]["balance"], 549.75);
    assert_eq!(
        (&statement["totalInvoiced"], &statement["totalPaid"], &statement["closingBalance"]),
        (&json!(300.5), &json!(150.75), &json!(549.75))
    );
    let everything =
        app.get(&format!("/api/vendors/{id}/statement?fromDate=2020-01-01&toDate=2024-05-10")).await.json();
    let balance = app.get(&format!("/api/vendors/{id}")).await.json()["outstandingBalance"].clone();
    assert_eq!(everything["closingBalance"], balance, "a statement of everything closes at the balance");
    assert_eq!(everything["lines"].as_array().map(Vec::len), Some(5));

    app.get(&format!("/api/vendors/{id}/statement?fromDate=2024-05-10&toDate=2024-05-01")).await.invalid("fromDate");
    app.get(&format!("/api/vendors/{id}/statement?fromDate=2024-13-01")).await.invalid("fromDate");
    app.get("/api/vendors/999/statement").await.problem(404);
    let reader = vendor_reader(&app).await;
    let refused = app.call(Method::GET, &format!("/api/vendors/{id}/statement"), Some(&reader), None).await;
    assert!(refused.problem(403)["detail"].as_str().unwrap().contains("Invoice:Read"), "both permissions are needed");
    // D48: the statement shows payments and their references, so it needs Transaction:Read too.
    let no_payments = reader_of(&app, "no-payments@example.com", &[VENDOR_READ, INVOICE_READ]).await;
    for path in [format!("/api/vendors/{id}/statement"), format!("/api/reports/vendor-statement?vendorId={id}")] {
        let refused = app.call(Method::GET, &path, Some(&no_payments), None).await;
        assert!(refused.problem(403)["detail"].as_str().unwrap().contains("Transaction:Read"), "{path}");
    }
    let all_three = reader_of(&app, "statements@example.com", &[VENDOR_READ, INVOICE_READ, TRANSACTION_READ]).await;
    app.call(Method::GET, &format!("/api/vendors/{id}/statement"), Some(&all_three), None).await.expect(200);

    let report = download(&app, &format!("/api/reports/vendor-statement?vendorId={id}&fromDate=2024-05-01")).await;
    assert_eq!(
        report.header("content-disposition"),
        Some(attachment(&format!("statement_{id}_20240510.xlsx")).as_str()),
        "dated today (D26)"
    );
    let rows = sheet(&report, "Statement");
    assert_eq!(
        rows[0].iter().map(text).collect::<Vec<_>>(),
        [
            "Date",
            "Kind",
            "Invoice Number",
            "Transaction ID",
            "Reference",
            "Description",
            "Invoiced",
            "Paid",
            "Balance",
            "Credited",
            "Credit Number"
        ],
        "D44 adds its columns after the others"
    );
    assert_eq!(rows.len(), 6, "header, opening, three lines, closing");
    assert_eq!((date(&rows[1][0]), text(&rows[1][1])), ("2024-05-01".to_owned(), "Opening balance".to_owned()));
    assert_eq!(text(&rows[1][5]), "Stated, GSTIN 29AAGCR4375J1ZU", "whose statement it is");
    assert_eq!(number(&rows[1][8]), 400.0);
    assert_eq!(
        (text(&rows[3][1]), number(&rows[3][3]) as i64, text(&rows[3][4])),
        ("Payment".to_owned(), in_may, "UTR-B".to_owned())
    );
    assert_eq!((text(&rows[5][1]), number(&rows[5][8])), ("Closing balance".to_owned(), 549.75));
    // D51: the download holds every line whatever page is named.
    let paged =
        download(&app, &format!("/api/reports/vendor-statement?vendorId={id}&fromDate=2024-05-01&page=1&pageSize=2"))
            .await;
    assert_eq!(sheet(&paged, "Statement"), rows, "page and pageSize are ignored");
    app.get("/api/reports/vendor-statement").await.invalid("vendorId");
    app.get("/api/reports/vendor-statement?vendorId=999").await.problem(404);

    app.delete(&format!("/api/vendors/{id}")).await.expect(204);
    let after = app.get(&format!("/api/vendors/{id}/statement")).await.expect(200).json();
    assert_eq!(after["closingBalance"], 549.75, "an inactive vendor's statement is still served");
}

#[tokio::test]
async fn libreoffice_opens_the_aging_and_the_statement() {
    let Some(soffice) = soffice() else { return };
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla, \"Goa\"").await;
    let invoice = invoice_dated(&app, vendor, "C-1", 1234.5, "2024-03-01", "2024-03-20").await;
    paid_on(&app, invoice, 234.25, "2024-05-02", "UTR/9").await;
    let dir = tempfile::tempdir().unwrap();
    let mut csvs = Vec::new();
    for (name, path) in [
        ("aging", "/api/reports/aging".to_owned()),
        ("statement", format!("/api/reports/vendor-statement?vendorId={vendor}")),
    ] {
        let response = download(&app, &path).await;
        csvs.push(as_csv(&soffice, dir.path(), name, &response.body));
    }
    let aging = &csvs[0];
    assert!(aging.contains(&format!("{vendor},\"Cipla, \"\"Goa\"\"\",₹0.00,₹0.00,\"₹1,000.25\"")), "{aging}");
    assert_eq!(aging.lines().count(), 3, "header, Cipla, totals: {aging}");
    let statement = &csvs[1];
    assert!(statement.contains("2024-05-01,Opening balance,,,,\"Cipla, \"\"Goa\"\"\",,,\"₹1,234.50\""), "{statement}");
    assert!(statement.contains("2024-05-02,Payment,C-1,"), "{statement}");
    assert!(statement.contains(",UTR/9,,₹0.00,₹234.25,\"₹1,000.25\""), "{statement}");
    assert!(statement.contains("2024-05-10,Closing balance,"), "{statement}");
}

#[tokio::test]
async fn the_aging_and_a_statement_answer_a_page_with_the_whole_totals() {
    let app = spawn_app().await;
    let mut invoices = Vec::new();
    for owed in 1..=3 {
        let vendor = app.vendor(&format!("Paged {owed}")).await;
        let amount = f64::from(owed) * 10.0;
        invoices.push((
            vendor,
            invoice_dated(&app, vendor, &format!("P-{owed}"), amount, "2024-05-02", "2024-05-05").await,
        ));
    }
    let whole = app.get("/api/payables/aging").await.expect(200).json();
    assert!(whole.get("page").is_none() && whole.get("totalCount").is_none(), "D43: whole without page or pageSize");
    let second = app.get("/api/payables/aging?page=2&pageSize=2").await.expect(200).json();
    assert_eq!(second["vendors"], json!([whole["vendors"][2]]), "the third vendor, on the second page of two");
    assert_eq!(second["totals"], whole["totals"], "totals cover every vendor");
    assert_eq!((&second["page"], &second["pageSize"], &second["totalCount"]), (&json!(2), &json!(2), &json!(3)));
    let alone = app.get("/api/payables/aging?page=1").await.expect(200).json();
    assert_eq!((&alone["pageSize"], &alone["vendors"]), (&json!(25), &whole["vendors"]), "page alone: 25 rows");
    let clamped = app.get("/api/payables/aging?pageSize=500").await.expect(200).json();
    assert_eq!((&clamped["page"], &clamped["pageSize"]), (&json!(1), &json!(100)), "D8 clamps pageSize");
    app.get("/api/payables/aging?page=0").await.invalid("page");
    app.get("/api/payables/aging?pageSize=x").await.invalid("pageSize");

    let (vendor, invoice) = invoices[2];
    for (amount, on, reference) in
        [(1.0, "2024-05-03", "UTR-P1"), (2.5, "2024-05-04", "UTR-P2"), (3.0, "2024-05-06", "UTR-P3")]
    {
        paid_on(&app, invoice, amount, on, reference).await;
    }
    let path = format!("/api/vendors/{vendor}/statement?fromDate=2024-05-01");
    let whole = app.get(&path).await.expect(200).json();
    assert!(whole.get("page").is_none());
    let mut lines = Vec::new();
    for page in 1..=3 {
        let part = app.get(&format!("{path}&page={page}&pageSize=2")).await.expect(200).json();
        for key in ["openingBalance", "totalInvoiced", "totalPaid", "closingBalance", "fromDate", "toDate", "vendor"] {
            assert_eq!(part[key], whole[key], "page {page}: {key} covers the whole range");
        }
        assert_eq!(part["totalCount"], 4, "page {page}");
        lines.extend(part["lines"].as_array().unwrap().iter().cloned());
    }
    assert_eq!(Value::Array(lines), whole["lines"], "the pages put together, running balances and all");
    let second = app.get(&format!("{path}&page=2&pageSize=2")).await.json();
    assert_eq!(second["lines"][0]["balance"], 26.5, "30 invoiced, 1 and 2.5 paid before this page's first line");
    let alone = app.get(&format!("{path}&page=1")).await.json();
    assert_eq!(alone["pageSize"], 100, "page alone: 100 lines");
    app.get(&format!("{path}&pageSize=-1")).await.invalid("pageSize");
}
