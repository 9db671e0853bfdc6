//! `pharmapay import` (D45): the binary imports a file into the configured database without a
//! server, with the checks and the all-or-nothing write of the API, and says what it did.

mod process;

use std::process::{Command, Output};

use hyper::Method;
use process::{Http, ServerProcess};
use serde_json::json;

fn import(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pharmapay"))
        .args(["--database-url", url, "--log", "warn", "import"])
        .args(args)
        .output()
        .expect("the pharmapay binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_import_command_writes_a_file_all_or_nothing_without_a_server() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite:{}", dir.path().join("ledger.db").display());
    let vendors = dir.path().join("vendors.csv");
    std::fs::write(&vendors, "Name,Type,GSTIN\nCipla,Manufacturer,27AAPFU0939F1ZV\nSun Pharma,Wholesaler,\n").unwrap();

    // Before onboarding there is no admin to act as.
    let refused = import(&url, &["vendors", vendors.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("no active admin"), "{}", text(&refused.stderr));

    let server = ServerProcess::start(&url);
    let mut http = Http::new(&server.base);
    let setup = json!({ "pharmacy": { "name": "Import Pharmacy" }, "adminUser": { "firstName": "I", "lastName": "C", "email": "owner@example.com", "password": "owner-password" } });
    http.token =
        http.ok(Method::POST, "/api/onboarding/setup", Some(&setup)).await["token"].as_str().unwrap().to_owned();
    drop(server);

    let dry = import(&url, &["vendors", vendors.to_str().unwrap(), "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(text(&dry.stdout).contains("would create 2"), "{}", text(&dry.stdout));
    let done = import(&url, &["vendors", vendors.to_str().unwrap(), "--as", "OWNER@example.com"]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert!(text(&done.stdout).starts_with("2 rows read: created 2, 0 unchanged"), "{}", text(&done.stdout));

    let invoices = dir.path().join("bills.csv");
    std::fs::write(
        &invoices,
        "Invoice Number,Vendor,Amount,Invoice Date,Due Date\nB-1,Cipla,\"1,200.50\",01/04/2024,30/04/2024\nB-2,Nobody,5,01/04/2024,30/04/2024\n",
    )
    .unwrap();
    let bad = import(&url, &["invoices", invoices.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("row3.vendor: no active vendor is named Nobody"), "{}", text(&bad.stderr));
    assert!(text(&bad.stderr).contains("1 row of the file failed; nothing was imported"), "{}", text(&bad.stderr));
    let unknown = import(&url, &["invoices", "bills.txt"]);
    assert_eq!(unknown.status.code(), Some(1));

    // The server sees what the command wrote, audited as the admin's.
    let server = ServerProcess::start(&url);
    let mut http = Http::new(&server.base);
    let login = json!({ "email": "owner@example.com", "password": "owner-password" });
    http.token = http.ok(Method::POST, "/api/auth/login", Some(&login)).await["token"].as_str().unwrap().to_owned();
    let listed = http.ok(Method::GET, "/api/vendors?search=cipla", None).await;
    assert_eq!(listed["totalCount"], 1);
    assert_eq!(http.ok(Method::GET, "/api/invoices", None).await["totalCount"], 0, "the refused file wrote nothing");
    let audit = http.ok(Method::GET, "/api/audit-log?entity=Vendor", None).await;
    let by_the_admin = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["action"] == "create" && entry["userId"].is_i64())
        .count();
    assert_eq!(by_the_admin, 2, "each imported vendor is audited as the admin's create: {audit}");
}
