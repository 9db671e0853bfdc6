//! Excel downloads, read back with a real xlsx reader (spec, Reports; D26).

use std::io::Cursor;
use std::path::Path;

use calamine::{Data, Reader, Xlsx, open_workbook_from_rs};
use hyper::Method;
use pharmapay_core::jiff::ToSpan;
use pharmapay_core::jiff::civil::Date;
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse, spawn_app, spawn_app_with, test_config};

pub(crate) const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

pub(crate) fn sheet(response: &TestResponse, name: &str) -> Vec<Vec<Data>> {
    let mut workbook: Xlsx<_> =
        open_workbook_from_rs(Cursor::new(response.body.to_vec())).expect("a readable xlsx file");
    let range = workbook.worksheet_range(name).expect("the named sheet");
    range.rows().map(|row| row.to_vec()).collect()
}

pub(crate) fn text(cell: &Data) -> String {
    match cell {
        Data::String(text) => text.clone(),
        Data::Empty => String::new(),
        other => panic!("expected text, got {other:?}"),
    }
}

pub(crate) fn number(cell: &Data) -> f64 {
    match cell {
        Data::Float(value) => *value,
        Data::Int(value) => *value as f64,
        other => panic!("expected a number, got {other:?}"),
    }
}

pub(crate) fn date(cell: &Data) -> String {
    match cell {
        Data::DateTime(value) => {
            let days = value.as_f64().floor() as i64;
            let base = Date::new(1899, 12, 30).unwrap();
            base.checked_add(days.days()).unwrap().to_string()
        }
        other => panic!("expected a date, got {other:?}"),
    }
}

pub(crate) async fn download(app: &TestApp, path: &str) -> TestResponse {
    let response = app.get(path).await;
    response.expect(200);
    assert_eq!(response.header("content-type"), Some(XLSX), "{path}");
    response
}

#[tokio::test]
async fn the_three_reports_hold_active_records_with_typed_cells() {
    let app = spawn_app().await;
    let body = json!({ "name": "Cipla", "vendorType": "Wholesaler", "gstin": "27aapfu0939f1zv",
        "drugLicenseValidUntil": "2024-05-20" });
    let vendor = app.post("/api/vendors", &body).await.json()["id"].as_i64().unwrap();
    let gone = app.vendor("Gone Traders").await;
    let [invoice, canceled] =
        app.invoices(vendor, [("INV-1", "1000.5", "2024-06-01"), ("INV-2", "50", "2024-06-01")]).await;
    app.delete(&format!("/api/invoices/{canceled}")).await.expect(204);
    app.delete(&format!("/api/vendors/{gone}")).await.expect(204);
    let payment = app.pay(invoice, "200.25").await;
    let body = json!({ "invoiceId": invoice, "amount": 1, "transactionDate": "2024-05-09", "transactionType": "NetBanking",
        "description": "cheque cleared", "reference": " UTR-77 " });
    app.post("/api/transactions", &body).await.expect(201);
    let deleted = app.pay(invoice, "3").await;
    app.delete(&format!("/api/transactions/{deleted}")).await.expect(204);

    let vendors = download(&app, "/api/reports/vendors").await;
    assert_eq!(vendors.header("content-disposition"), Some(attachment("vendors_20240510.xlsx").as_str()), "D3 date");
    let rows = sheet(&vendors, "Vendors");
    let headers: Vec<String> = rows[0].iter().map(text).collect();
    assert_eq!(
        headers,
        [
            "ID",
            "Name",
            "Type",
            "Address",
            "Phone",
            "Email",
            "Drug License 1",
            "Drug License 2",
            "Outstanding Balance",
            "Total Invoice Value",
            "Total Paid",
            "Created At",
            "GSTIN",
            "License Valid Until",
            "License Status",
            "Credited",
            "Available Credit"
        ],
        "the spec's columns in their places, then D37's, D36's and D44's"
    );
    assert_eq!(rows.len(), 3, "the pharmacy and Cipla; the deleted vendor is absent");
    let cipla = &rows[2];
    let api: Value = app.get(&format!("/api/vendors/{vendor}")).await.json();
    assert_eq!(number(&cipla[0]), api["id"].as_f64().unwrap());
    assert_eq!(text(&cipla[1]), "Cipla");
    assert_eq!(text(&cipla[2]), "Wholesaler");
    assert_eq!(number(&cipla[8]), api["outstandingBalance"].as_f64().unwrap());
    assert_eq!(number(&cipla[9]), 1000.5);
    assert_eq!(number(&cipla[10]), 201.25);
    assert_eq!(date(&cipla[11]), "2024-05-10");
    assert_eq!(text(&cipla[12]), "27AAPFU0939F1ZV", "D37: stored upper-cased");
    assert_eq!(date(&cipla[13]), "2024-05-20");
    assert_eq!(text(&cipla[14]), "ExpiringSoon", "D36: within 30 days of today, 10 May");
    assert_eq!((number(&cipla[15]), number(&cipla[16])), (0.0, 0.0), "D44: no credit");
    assert_eq!((text(&rows[1][12]), text(&rows[1][14])), (String::new(), "Unknown".to_owned()), "no GSTIN, no date");

    let invoices = download(&app, "/api/reports/invoices").await;
    assert_eq!(invoices.header("content-disposition"), Some(attachment("invoices_20240510.xlsx").as_str()));
    let rows = sheet(&invoices, "Invoices");
    assert_eq!(
        rows[0].iter().map(text).collect::<Vec<_>>(),
        [
            "ID",
            "Invoice Number",
            "Vendor",
            "Amount",
            "Paid Amount",
            "Pending Amount",
            "Status",
            "Invoice Date",
            "Due Date",
            "Description",
            "Credited",
            "Branch"
        ]
    );
    assert_eq!(rows.len(), 2, "the canceled invoice is absent");
    assert_eq!(text(&rows[1][11]), "HO", "D49: the branch's code");
    let row = &rows[1];
    assert_eq!(
        (number(&row[0]) as i64, text(&row[1]), text(&row[2])),
        (invoice, "INV-1".to_owned(), "Cipla".to_owned())
    );
    assert_eq!((number(&row[3]), number(&row[4]), number(&row[5])), (1000.5, 201.25, 799.25));
    assert_eq!(text(&row[6]), "PartiallyPaid");
    assert_eq!((date(&row[7]), date(&row[8])), ("2024-05-01".to_owned(), "2024-06-01".to_owned()));

    let transactions = download(&app, "/api/reports/transactions").await;
    let rows = sheet(&transactions, "Transactions");
    assert_eq!(
        rows[0].iter().map(text).collect::<Vec<_>>(),
        ["ID", "Invoice Number", "Vendor", "Amount", "Type", "Transaction Date", "Description", "Reference", "Branch"]
    );
    assert_eq!(text(&rows[1][8]), "HO", "D49: the payment's invoice's branch");
    assert_eq!(rows.len(), 3, "the deleted payment is absent");
    assert_eq!(
        (number(&rows[1][0]) as i64, number(&rows[1][3]), text(&rows[1][4])),
        (payment, 200.25, "UPI".to_owned())
    );
    assert_eq!(
        (text(&rows[2][4]), date(&rows[2][5]), text(&rows[2][6])),
        ("Net Banking".to_owned(), "2024-05-09".to_owned(), "cheque cleared".to_owned())
    );
    assert_eq!((text(&rows[1][7]), text(&rows[2][7])), (String::new(), "UTR-77".to_owned()), "D30: trimmed");
}

#[tokio::test]
async fn reports_apply_their_lists_filters_and_permissions() {
    let app = spawn_app().await;
    let acme = app.vendor("Acme").await;
    let zen = app.vendor("Zenith").await;
    app.invoice(acme, "A-1", "100", "2024-05-02").await;
    let zen_invoice = app.invoice(zen, "Z-1", "300", "2024-06-01").await;
    app.pay(zen_invoice, "10").await;
    let rows = sheet(&download(&app, "/api/reports/invoices?status=Overdue").await, "Invoices");
    assert_eq!(rows.len(), 2);
    assert_eq!(text(&rows[1][1]), "A-1");
    let rows = sheet(&download(&app, &format!("/api/reports/invoices?vendorId={zen}&minAmount=200")).await, "Invoices");
    assert_eq!((rows.len(), text(&rows[1][1])), (2, "Z-1".to_owned()));
    let rows = sheet(&download(&app, "/api/reports/vendors?search=zen").await, "Vendors");
    assert_eq!((rows.len(), text(&rows[1][1])), (2, "Zenith".to_owned()));
    let rows = sheet(&download(&app, "/api/reports/transactions?transactionType=cash").await, "Transactions");
    assert_eq!(rows.len(), 1, "an empty export is the header row only");
    app.get("/api/reports/invoices?status=Late").await.invalid("status");

    let role = app.post("/api/roles", &json!({ "name": "Nobody" })).await.json()["id"].as_i64().unwrap();
    let (_, token) = app.user("nobody@example.com", role).await;
    for (path, permission) in [
        ("/api/reports/vendors", "Vendor:Read"),
        ("/api/reports/invoices", "Invoice:Read"),
        ("/api/reports/transactions", "Transaction:Read"),
    ] {
        let response = app.call(Method::GET, path, Some(&token), None).await;
        assert!(response.problem(403)["detail"].as_str().unwrap().contains(permission), "{path}");
    }
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    app.call(Method::GET, "/api/reports/invoices", Some(&pharmacist), None).await.expect(200);
}

#[tokio::test]
async fn the_currency_setting_shapes_the_amount_format() {
    let app = spawn_app().await;
    app.put("/api/settings/Currency", &json!({ "value": "$" })).await.expect(200);
    let vendor = app.vendor("Cipla").await;
    app.invoice(vendor, "A-1", "12.5", "2024-06-01").await;
    let response = download(&app, "/api/reports/invoices").await;
    let rows = sheet(&response, "Invoices");
    assert_eq!(number(&rows[1][3]), 12.5, "amounts stay numbers whatever the symbol");
    let mut archive = zip::ZipArchive::new(Cursor::new(response.body.to_vec())).expect("an xlsx is a zip archive");
    let mut styles = String::new();
    std::io::Read::read_to_string(&mut archive.by_name("xl/styles.xml").expect("a styles part"), &mut styles).unwrap();
    assert!(styles.contains("&quot;$&quot;#,##0.00"), "the amount format shows the Currency setting: {styles}");
    let mut sheet_xml = String::new();
    std::io::Read::read_to_string(&mut archive.by_name("xl/worksheets/sheet1.xml").expect("the sheet"), &mut sheet_xml)
        .unwrap();
    assert!(
        sheet_xml.contains("<autoFilter ref=\"A1:L2\""),
        "autofilter over header and rows (D49: Branch last): {sheet_xml}"
    );
    assert!(sheet_xml.contains("state=\"frozen\""), "the header row is frozen");
}

/// The `Content-Disposition` of a download saved as `file`.
pub(crate) fn attachment(file: &str) -> String {
    format!("attachment; filename=\"{file}\"")
}

/// The workbook `body` as LibreOffice reads it, converted to CSV in `dir` under `name`; fails
/// the test when `soffice` fails or complains.
pub(crate) fn as_csv(soffice: &Path, dir: &Path, name: &str, body: &[u8]) -> String {
    let profile = format!("-env:UserInstallation=file://{}", dir.join("profile").display());
    let xlsx = dir.join(format!("{name}.xlsx"));
    std::fs::write(&xlsx, body).unwrap();
    let output = std::process::Command::new(soffice)
        .args([profile.as_str(), "--headless", "--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76", "--outdir"])
        .arg(dir)
        .arg(&xlsx)
        .output()
        .expect("soffice runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{name}: soffice failed: {stderr}");
    assert!(!stderr.to_lowercase().contains("error"), "{name}: soffice complained: {stderr}");
    std::fs::read_to_string(dir.join(format!("{name}.csv"))).expect("a CSV was written")
}

/// The `soffice` binary, or `None` (after saying so) when LibreOffice is not installed. CI sets
/// `PHARMAPAY_REQUIRE_LIBREOFFICE` and installs it, so there the check always runs.
pub(crate) fn soffice() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join("soffice")).find(|path| path.is_file()));
    if found.is_none() {
        assert!(
            std::env::var_os("PHARMAPAY_REQUIRE_LIBREOFFICE").is_none(),
            "LibreOffice (soffice) is required here but missing"
        );
        eprintln!("skipping: LibreOffice (soffice) is not installed");
    }
    found
}

#[tokio::test]
async fn libreoffice_opens_every_report_and_reads_the_same_values() {
    let Some(soffice) = soffice() else { return };
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla, \"Mumbai\"").await;
    let invoice = app.invoice(vendor, "INV-1", "1234.5", "2024-06-01").await;
    app.pay(invoice, "234.25").await;
    let dir = tempfile::tempdir().unwrap();
    let mut expected_rows = Vec::new();
    for (report, rows) in [("vendors", 3), ("invoices", 2), ("transactions", 2)] {
        let response = download(&app, &format!("/api/reports/{report}")).await;
        let csv = as_csv(&soffice, dir.path(), report, &response.body);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), rows, "{report}: header and rows\n{csv}");
        expected_rows.push((report, csv));
    }
    let (_, vendors) = &expected_rows[0];
    assert!(vendors.starts_with("ID,Name,Type,Address,Phone,Email,Drug License 1,Drug License 2,Outstanding Balance,Total Invoice Value,Total Paid,Created At,GSTIN,License Valid Until,License Status"), "{vendors}");
    assert!(
        vendors.contains("\"Cipla, \"\"Mumbai\"\"\",Wholesaler"),
        "text with commas and quotes survives: {vendors}"
    );
    assert!(
        vendors.contains("\"₹1,000.25\",\"₹1,234.50\",₹234.25,2024-05-10 10:00"),
        "amounts and dates as LibreOffice shows them: {vendors}"
    );
    let (_, invoices) = &expected_rows[1];
    assert!(invoices.contains(&format!("{invoice},INV-1,\"Cipla, \"\"Mumbai\"\"\",\"₹1,234.50\",₹234.25,\"₹1,000.25\",PartiallyPaid,2024-05-01,2024-06-01")), "{invoices}");
    let (_, transactions) = &expected_rows[2];
    assert!(transactions.contains(",INV-1,\"Cipla, \"\"Mumbai\"\"\",₹234.25,UPI,2024-05-05"), "{transactions}");
}

/// `length` letters and digits that do not compress, from `seed`.
fn noise(seed: u64, length: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..length)
        .map(|_| {
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ALPHABET[(state % ALPHABET.len() as u64) as usize] as char
        })
        .collect()
}

/// A server started from `config` whose invoices report is several megabytes that do not
/// compress, far more than the socket buffers between server and client hold.
async fn app_with_a_large_report(config: pharmapay_server::config::Config) -> std::sync::Arc<crate::helpers::TestApp> {
    let app = std::sync::Arc::new(spawn_app_with(config).await);
    let vendor = app.vendor("Cipla").await;
    let n_invoices = 3000u64;
    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..8 {
        let app = std::sync::Arc::clone(&app);
        tasks.spawn(async move {
            for index in (worker..n_invoices).step_by(8) {
                let body = json!({ "vendorId": vendor, "invoiceNumber": noise(index, 100), "amount": 10,
                    "invoiceDate": "2024-05-01", "dueDate": "2024-06-01", "description": noise(index + n_invoices, 2000) });
                app.post("/api/invoices", &body).await.expect(201);
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("invoices are created");
    }
    app
}

/// Asks for the invoices report on a connection with a small receive buffer and reads the
/// answer's headers; answers the connection and what was read of it.
async fn open_the_invoices_report(app: &crate::helpers::TestApp) -> (tokio::net::TcpStream, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(app.addr().parse().unwrap()).await.unwrap();
    let request =
        format!("GET /api/reports/invoices HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n", app.admin_token);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 1024];
    while !received.windows(4).any(|window| window == b"\r\n\r\n") {
        let n = stream.read(&mut buffer).await.unwrap();
        assert!(n > 0, "the server answers with headers");
        received.extend_from_slice(&buffer[..n]);
    }
    let head = String::from_utf8_lossy(&received).to_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains(XLSX), "{head}");
    (stream, received)
}

#[tokio::test]
async fn a_download_the_client_stops_reading_is_cut_off_and_its_report_freed() {
    use tokio::io::AsyncReadExt;
    use tokio::time::{Duration, Instant, sleep, timeout};

    // Arrange: a one-second request timeout, and a report of several megabytes.
    let mut config = test_config();
    config.request_timeout_secs = 1;
    let app = app_with_a_large_report(config).await;

    // Act: ask for the report, read the headers, then stop reading.
    let (mut stream, mut received) = open_the_invoices_report(&app).await;
    let mut buffer = [0u8; 1024];
    assert_eq!(app.open_downloads(), 1, "the report is being written while the client holds it");

    // Assert: within a few timeouts the server lets go of the download (its blocking thread
    // and temporary files) although the client still holds the connection.
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.open_downloads() > 0 {
        assert!(Instant::now() < deadline, "the stalled download is still open");
        sleep(Duration::from_millis(50)).await;
    }
    // Reading again shows a cut-off answer: the chunked body never reaches its last chunk, and
    // the server closes the connection.
    let ended = timeout(Duration::from_secs(30), async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the server closes the connection");
    assert!(!received.ends_with(b"\r\n0\r\n\r\n"), "the body was cut off, after {} bytes", received.len());
}

/// D48: a few reports at once, the rest queued for a while and then answered 503; a client that
/// keeps reading, but more slowly than the minimum pace, is cut off all the same, which gives
/// its slot to the next report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_queue_for_a_slot_and_a_download_below_the_minimum_pace_is_cut_off() {
    use tokio::io::AsyncReadExt;
    use tokio::time::{Duration, Instant, sleep};

    // Arrange: one report at a time, a one-second wait for a slot, and a pace of at least 512
    // KiB a second over each one-second window.
    let mut config = test_config();
    config.request_timeout_secs = 1;
    config.reports_at_once = Some(1);
    config.report_wait_secs = 1;
    config.download_min_kib_per_sec = 512;
    let app = app_with_a_large_report(config).await;

    // Act: one client opens the report and reads 4 KiB every 100 ms (40 KiB a second).
    let (mut slow, mut received) = open_the_invoices_report(&app).await;
    let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = tokio::spawn({
        let cut = std::sync::Arc::clone(&cut);
        async move {
            let mut buffer = [0u8; 4096];
            loop {
                // Once the server has let go, what the socket buffers still hold is read at once.
                if !cut.load(std::sync::atomic::Ordering::Acquire) {
                    sleep(Duration::from_millis(100)).await;
                }
                match slow.read(&mut buffer).await {
                    Ok(0) | Err(_) => return received,
                    Ok(n) => received.extend_from_slice(&buffer[..n]),
                }
            }
        }
    });
    // Meanwhile another report waits a second for the only slot and is refused.
    let refused = app.get("/api/reports/vendors").await;
    let problem = refused.problem(503);
    assert!(refused.header("retry-after").is_some(), "{problem}");
    assert!(problem["detail"].as_str().unwrap_or_default().contains("waited its turn"), "{problem}");

    // Assert: the slow download is cut off although its client kept reading...
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.open_downloads() > 0 {
        assert!(Instant::now() < deadline, "the slow download is still open");
        sleep(Duration::from_millis(50)).await;
    }
    cut.store(true, std::sync::atomic::Ordering::Release);
    let received = tokio::time::timeout(Duration::from_secs(30), reader).await.expect("the connection ends").unwrap();
    assert!(!received.ends_with(b"\r\n0\r\n\r\n"), "the body was cut off, after {} bytes", received.len());
    // ...and its slot serves the next report, whole.
    let next = app.get("/api/reports/vendors").await;
    next.expect(200);
    assert!(next.body.starts_with(b"PK"), "an xlsx file is a zip archive");
}
