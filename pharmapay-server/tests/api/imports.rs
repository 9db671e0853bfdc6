//! Imports of files over HTTP (D45): CSV and xlsx bodies, dry runs, row errors, re-imports,
//! reports and templates importing back, idempotent retries and what bad files answer.

use hyper::Method;
use serde_json::json;

use crate::helpers::{TestApp, spawn_app};

const CSV: &str = "text/csv";
const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

impl TestApp {
    async fn upload(
        &self,
        path: &str,
        content_type: &str,
        body: impl Into<hyper::body::Bytes>,
    ) -> crate::helpers::TestResponse {
        self.call_raw(Method::POST, path, Some(&self.admin_token), Some(content_type), body).await
    }
}

#[tokio::test]
async fn vendor_and_invoice_files_import_with_dry_runs_and_re_imports() {
    let app = spawn_app().await;
    let vendors =
        "\u{feff}Name,Type,Phone,GSTIN\nCipla,Manufacturer,9876543210,27AAPFU0939F1ZV\nSun Pharma,wholesaler,,\n";
    let checked = app.upload("/api/imports/vendors?dryRun=true", CSV, vendors).await.expect(200).json();
    assert_eq!(checked, json!({ "dryRun": true, "rowCount": 2, "created": 2, "unchanged": 0 }));
    assert_eq!(
        app.get("/api/vendors?search=cipla").await.expect(200).json()["totalCount"],
        0,
        "a dry run writes nothing"
    );
    let done = app.upload("/api/imports/vendors", "text/csv; charset=utf-8", vendors).await.expect(200).json();
    assert_eq!(done, json!({ "dryRun": false, "rowCount": 2, "created": 2, "unchanged": 0 }));
    let again = app.upload("/api/imports/vendors", CSV, vendors).await.expect(200).json();
    assert_eq!((again["created"].clone(), again["unchanged"].clone()), (json!(0), json!(2)));

    let invoices = "Invoice Number,Vendor GSTIN,Vendor,Amount,Invoice Date,Due Date\n\
                    INV-1,27AAPFU0939F1ZV,,\"Rs. 1,23,456.50\",01/04/2024,30-04-2024\n\
                    INV-2,,SUN PHARMA,200,2024-04-02,2024-05-02\n";
    let done = app.upload("/api/imports/invoices", CSV, invoices).await.expect(200).json();
    assert_eq!(done, json!({ "dryRun": false, "rowCount": 2, "created": 2, "unchanged": 0 }));
    let list = app.get("/api/invoices?sortBy=invoiceNumber&sortDir=asc").await.expect(200).json();
    assert_eq!(list["items"][0]["amount"], json!(123456.5));
    assert_eq!(list["items"][0]["dueDate"], "2024-04-30T00:00:00Z");
    assert_eq!(list["items"][1]["vendorName"], "Sun Pharma");
    let audit = app.get("/api/audit-log?entity=Invoice").await.expect(200).json();
    assert_eq!(audit["totalCount"], 2, "each imported invoice is audited: {audit}");

    let bad = "Invoice Number,Vendor,Amount,Invoice Date,Due Date\n\
               INV-1,Sun Pharma,200,2024-04-02,2024-05-02\n\
               INV-3,Nobody,abc,2024-04-02,2024-05-02\n\
               INV-4,Sun Pharma,5,2024-04-02,2024-05-02\n";
    let problem = app.upload("/api/imports/invoices", CSV, bad).await.problem(400);
    let keys: Vec<&String> = problem["errors"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["row2.invoiceNumber", "row3.amount"], "{problem}");
    assert_eq!(problem["detail"], "2 rows of the file failed; nothing was imported.");
    let dry = app.upload("/api/imports/invoices?dryRun=true", CSV, bad).await.problem(400);
    assert_eq!(dry["errors"], problem["errors"], "a dry run answers the same errors");
    assert_eq!(app.get("/api/invoices").await.expect(200).json()["totalCount"], 2, "nothing was written");
}

#[tokio::test]
async fn bad_files_answer_their_problem_and_write_nothing() {
    let app = spawn_app().await;
    app.vendor("Cipla").await;
    let path = "/api/imports/invoices";
    let not_a_file = app.upload(path, "application/json", "{}").await.problem(415);
    assert!(not_a_file["detail"].as_str().unwrap().contains("text/csv"), "{not_a_file}");
    app.upload(path, "application/vnd.ms-excel", "a,b\n").await.invalid("file");
    app.upload("/api/imports/invoices?dryRun=maybe", CSV, "a\n").await.invalid("dryRun");
    let missing = app.upload(path, CSV, "Invoice Number,Vendor,Amount\nA,Cipla,1\n").await.invalid("file");
    assert!(missing["errors"]["file"][0].as_str().unwrap().contains("`Invoice Date`"), "{missing}");
    app.upload(path, CSV, "").await.invalid("file");
    app.upload(path, XLSX, "PK\u{3}\u{4} not really a workbook").await.invalid("file");
    app.upload(path, CSV, b"Invoice Number,Vendor\n\xff\xfe,x\n".to_vec()).await.invalid("file");

    // Bodies past 1 MiB are taken on these routes, up to 20 MiB (D45); rows past 100,000 are not.
    let header = "Invoice Number,Vendor,Amount,Invoice Date,Due Date\n";
    let rows: String = (0..100_001).map(|n| format!("N-{n},Cipla,1,2024-04-01,2024-04-30\n")).collect();
    assert!(rows.len() > 1 << 20);
    let too_many = app.upload(path, CSV, format!("{header}{rows}")).await.problem(413);
    assert!(too_many["detail"].as_str().unwrap().contains("100000"), "{too_many}");
    let too_big = vec![b'a'; 20 * 1024 * 1024 + 1];
    app.upload(path, CSV, too_big).await.problem(413);
    assert_eq!(app.get("/api/invoices").await.expect(200).json()["totalCount"], 0);
}

#[tokio::test]
async fn templates_and_reports_import_back() {
    let app = spawn_app().await;
    for kind in ["vendors", "invoices"] {
        let template = app.get(&format!("/api/imports/{kind}/template")).await;
        template.expect(200);
        assert_eq!(template.header("content-type"), Some(XLSX));
        let disposition = template.header("content-disposition").unwrap().to_owned();
        assert_eq!(disposition, format!("attachment; filename=\"{kind}_template.xlsx\""));
        // The invoice template names the vendor the vendor template creates.
        let done = app.upload(&format!("/api/imports/{kind}"), XLSX, template.body.clone()).await.expect(200).json();
        assert_eq!(done, json!({ "dryRun": false, "rowCount": 1, "created": 1, "unchanged": 0 }), "{kind}");
    }
    for kind in ["vendors", "invoices"] {
        let report = app.get(&format!("/api/reports/{kind}")).await;
        report.expect(200);
        let back = app.upload(&format!("/api/imports/{kind}"), XLSX, report.body.clone()).await.expect(200).json();
        assert_eq!(back["created"], 0, "{kind}: {back}");
        assert!(back["unchanged"].as_u64().unwrap() >= 1, "{kind}: {back}");
    }
}

/// D51: what browsers on Windows label a `.csv` upload, `application/vnd.ms-excel`, is read by
/// its content: a zip archive as xlsx, anything else as CSV.
#[tokio::test]
async fn files_labelled_ms_excel_are_read_by_their_content() {
    const MS_EXCEL: &str = "application/vnd.ms-excel";
    let app = spawn_app().await;
    let template = app.get("/api/imports/vendors/template").await;
    template.expect(200);
    let xlsx = app.upload("/api/imports/vendors?dryRun=true", MS_EXCEL, template.body.clone()).await.expect(200).json();
    assert_eq!(xlsx["created"], 1, "the template, a workbook, is read as one: {xlsx}");
    let csv = "Name,Type\nZydus,Manufacturer\n";
    let done = app.upload("/api/imports/vendors", MS_EXCEL, csv).await.expect(200).json();
    assert_eq!(done, json!({ "dryRun": false, "rowCount": 1, "created": 1, "unchanged": 0 }));
    let refused = app.upload("/api/imports/vendors", "application/vnd.ms-excel; x=1", "\u{1}").await;
    refused.invalid("file");
}

#[tokio::test]
async fn an_import_with_a_key_is_replayed_and_needs_the_create_permission() {
    let app = spawn_app().await;
    app.vendor("Cipla").await;
    let file = "Invoice Number,Vendor,Amount,Invoice Date,Due Date\nK-1,Cipla,10,2024-04-01,2024-04-30\n";
    let send = |key: &'static str, body: &'static str| {
        let request = hyper::Request::builder()
            .method(Method::POST)
            .uri(format!("{}/api/imports/invoices", app.base))
            .header("authorization", format!("Bearer {}", app.admin_token))
            .header("content-type", CSV)
            .header("idempotency-key", key)
            .body(http_body_util::Full::new(hyper::body::Bytes::from_static(body.as_bytes())))
            .unwrap();
        app.send(request)
    };
    let first = send("import-k1", file).await;
    first.expect(200);
    let retry = send("import-k1", file).await;
    retry.expect(200);
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(retry.body, first.body, "the same bytes");
    assert_eq!(app.get("/api/invoices").await.expect(200).json()["totalCount"], 1);
    send("import-k1", "Invoice Number,Vendor,Amount,Invoice Date,Due Date\n").await.problem(422);

    let token = app.user_without_permissions("clerk@example.com").await;
    let refused = app.call_raw(Method::POST, "/api/imports/invoices", Some(&token), Some(CSV), file).await;
    refused.problem(403);
    let refused = app.call_raw(Method::GET, "/api/imports/vendors/template", Some(&token), None, "").await;
    refused.problem(403);
}
