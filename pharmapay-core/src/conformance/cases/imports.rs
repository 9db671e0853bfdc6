//! Imported files (D45): vendors and invoices from CSV and xlsx, all or nothing, with every
//! row error, dry runs, safe re-imports, reports and templates importing back, idempotent
//! retries and imports racing each other.

use std::sync::Arc;

use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};

use super::params;
use crate::conformance::{Fixture, dec};
use crate::error::Error;
use crate::idempotency::{Created, IdempotencyKey, IdempotencyRequest, Replay};
use crate::imports::ImportRequest;
use crate::imports::template::TemplateKind;
use crate::imports::{ImportFile, ImportSummary};
use crate::invoices::{InvoiceFilter, InvoiceQuery};
use crate::reports::audit::AuditQuery;
use crate::store::Store;
use crate::vendors::gstin::Gstin;
use crate::vendors::licence::EXPIRED_LICENSE_POLICY;
use crate::vendors::{NewVendor, VendorFilter, VendorQuery, VendorType};

const CIPLA_GSTIN: &str = "27AAPFU0939F1ZV";

fn csv(text: &str) -> ImportFile {
    ImportFile::csv(text)
}

fn xlsx(bytes: Vec<u8>) -> ImportFile {
    ImportFile::xlsx(bytes)
}

fn dry(file: ImportFile) -> ImportRequest<'static> {
    ImportRequest { dry_run: true, ..ImportRequest::new(file) }
}

fn summary(result: Result<Created<ImportSummary>, Error>) -> ImportSummary {
    match result {
        Ok(Created::New(summary)) => summary,
        other => panic!("expected an import's summary, got {other:?}"),
    }
}

fn counts(summary: ImportSummary) -> (bool, usize, usize, usize) {
    (summary.dry_run, summary.row_count, summary.created, summary.unchanged)
}

/// The `row<N>.<field>` keys of a refused import, and how many rows failed.
fn row_errors(result: Result<Created<ImportSummary>, Error>) -> (Vec<String>, usize) {
    match result {
        Err(Error::Rows(errors)) => {
            (errors.errors().iter().map(|(key, _)| key.to_owned()).collect(), errors.failed_rows())
        }
        other => panic!("expected row errors, got {other:?}"),
    }
}

impl<S: Store> Fixture<S> {
    async fn invoice_count(&self) -> u64 {
        let query = InvoiceQuery::from_params(&params(&[])).expect("the default query");
        self.engine.list_invoices(&self.admin, &query).await.expect("invoices listed").total_count
    }

    async fn import_invoices(&self, request: ImportRequest<'_>) -> Result<Created<ImportSummary>, Error> {
        self.engine.import_invoices(&self.admin, request).await
    }
}

/// D45: invoice rows find their vendor by GSTIN or by name, are checked as creates are, and are
/// written all together or not at all; a dry run writes nothing and a re-import is unchanged.
pub async fn invoice_files_import_all_or_nothing<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let mut cipla = NewVendor::new("Cipla", VendorType::Manufacturer);
    cipla.gstin = Some(Gstin::parse(CIPLA_GSTIN).unwrap());
    let cipla = crate::conformance::created(fx.engine.create_vendor(&fx.admin, cipla, None).await.unwrap());
    let sun = fx.vendor("Sun Pharma").await;
    let file = "Invoice Number,Vendor,Vendor GSTIN,Amount,Invoice Date,Due Date,Description\n\
                INV-1,,27aapfu0939f1zv,\"₹ 1,23,456.50\",01/04/2024,2024-05-01,\"two lines,\nof text\"\n\
                INV-2, sun pharma ,,Rs. 200,02-04-2024,30/04/2024,\n";

    let checked = summary(fx.import_invoices(dry(csv(file))).await);
    assert_eq!(counts(checked), (true, 2, 2, 0));
    assert_eq!(fx.invoice_count().await, 0, "a dry run writes nothing");

    let done = summary(fx.import_invoices(ImportRequest::new(csv(file))).await);
    assert_eq!(counts(done), (false, 2, 2, 0));
    let query = InvoiceQuery::from_params(&params(&[("sortBy", "invoiceNumber"), ("sortDir", "asc")])).unwrap();
    let page = fx.engine.list_invoices(&fx.admin, &query).await.unwrap();
    let rows: Vec<_> = page.items.iter().map(|i| (i.invoice_number.as_str(), i.vendor_id, i.amount.get())).collect();
    assert_eq!(rows, [("INV-1", cipla.id, dec("123456.5")), ("INV-2", sun.id, dec("200"))]);
    assert_eq!(page.items[0].description.as_deref(), Some("two lines,\nof text"));
    assert_eq!(page.items[1].due_date.to_string(), "2024-04-30T00:00:00Z", "day first");
    // D41: the kept figures moved with the rows.
    let cipla_now = fx.engine.get_vendor(&fx.admin, cipla.id).await.unwrap();
    assert_eq!(cipla_now.totals.total_invoice_value, dec("123456.5"));
    assert_eq!(fx.engine.dashboard_summary(&fx.admin).await.unwrap().total_due, dec("123656.5"));
    // D22: each created invoice is audited as a create.
    let audit = fx.engine.list_audit(&fx.admin, &audit_query("Invoice")).await.unwrap();
    assert_eq!(audit.items.iter().filter(|entry| entry.action == "create").count(), 2);

    let again = summary(fx.import_invoices(ImportRequest::new(csv(file))).await);
    assert_eq!(counts(again), (false, 2, 0, 2), "a re-import is unchanged");
    assert_eq!(fx.invoice_count().await, 2);

    // One bad row refuses the whole file, even with good rows before it.
    let mixed = "Invoice Number,Vendor,Amount,Invoice Date,Due Date\n\
                 NEW-1,Cipla,10,2024-04-01,2024-04-30\n\
                 NEW-2,Nobody,10,2024-04-01,2024-04-30\n";
    assert_eq!(row_errors(fx.import_invoices(ImportRequest::new(csv(mixed))).await), (vec!["row3.vendor".into()], 1));
    assert_eq!(row_errors(fx.import_invoices(dry(csv(mixed))).await).1, 1, "a dry run answers the same errors");
    assert_eq!(fx.invoice_count().await, 2, "nothing of a refused file is written");
}

fn audit_query(entity: &str) -> AuditQuery {
    AuditQuery::from_params(&params(&[("entity", entity), ("pageSize", "100")])).expect("an audit query")
}

/// D45: every kind of row error is reported at once, keyed `row<N>.<field>`, with the count of
/// failed rows; a file without its required headers is an error on `file`.
pub async fn every_row_error_is_reported_at_once<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let cipla = fx.vendor("Cipla").await;
    fx.vendor("Twin").await;
    fx.vendor(" twin").await;
    let mut expired = NewVendor::new("Lapsed", VendorType::Dealer);
    expired.drug_license_valid_until = Some("2024-01-31T00:00:00Z".parse().unwrap());
    crate::conformance::created(fx.engine.create_vendor(&fx.admin, expired, None).await.unwrap());
    fx.engine.update_setting(&fx.admin, EXPIRED_LICENSE_POLICY, "Block").await.unwrap();
    fx.invoice(cipla.id, "TAKEN-1", "100", "2024-05-01T00:00:00Z").await;

    let file = "Invoice Number,Vendor,Vendor GSTIN,Amount,Invoice Date,Due Date\n\
                OK-1,Cipla,,10,2024-04-01,2024-04-30\n\
                OK-1,Cipla,,10,2024-04-01,2024-04-30\n\
                A-3,Nobody,,10,2024-04-01,2024-04-30\n\
                A-4,Twin,,10,2024-04-01,2024-04-30\n\
                A-5,,27AAPFU0939F1ZX,10,2024-04-01,2024-04-30\n\
                TAKEN-1,Cipla,,99,2024-04-01,2024-04-30\n\
                A-7,Cipla,,12.34567,2024-04-01,2024-04-30\n\
                A-8,Cipla,,10,31/02/2024,2024-04-30\n\
                A-9,Cipla,,10,2024-04-30,2024-04-01\n\
                ,Cipla,,10,2024-04-01,2024-04-30\n\
                A-11,Lapsed,,10,2024-04-01,2024-04-30\n\
                A-12,,,10,2024-04-01,2024-04-30\n\
                A-13,Cipla,,-5,2024-04-01,\n";
    let (keys, failed) = row_errors(fx.import_invoices(ImportRequest::new(csv(file))).await);
    let mut expected = vec![
        "row3.invoiceNumber",
        "row4.vendor",
        "row5.vendor",
        "row6.vendor",
        "row7.invoiceNumber",
        "row8.amount",
        "row9.invoiceDate",
        "row10.dueDate",
        "row11.invoiceNumber",
        "row12.vendor",
        "row13.vendor",
        "row14.amount",
        "row14.dueDate",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(failed, 12);
    assert_eq!(fx.invoice_count().await, 1, "nothing was written");

    let missing = fx.import_invoices(ImportRequest::new(csv("Invoice Number,Vendor,Amount\nA,B,1\n"))).await;
    assert!(matches!(missing, Err(Error::Validation(errors)) if errors.contains("file")), "missing headers");
    let unreadable = fx.import_invoices(ImportRequest::new(xlsx(b"not a workbook".to_vec()))).await;
    assert!(matches!(unreadable, Err(Error::Validation(errors)) if errors.contains("file")), "an unreadable file");
}

/// D45: vendor rows obey the checks of `POST /api/vendors`; a vendor matching an active one by
/// name or GSTIN is unchanged when the same, an error otherwise; the vendors report and the
/// invoices report import back unchanged.
pub async fn vendor_files_and_reports_import_back<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let file = "Name,Type,Address,Phone,Email,Drug License 1,GSTIN,License Valid Until\n\
                Cipla,manufacturer,\"1 Road\nMumbai\",9876543210,a@cipla.in,DL-1,27AAPFU0939F1ZV,31/03/2027\n\
                Sun Pharma,Wholesaler,,,,,,\n";
    let done = summary(fx.engine.import_vendors(&fx.admin, ImportRequest::new(csv(file))).await);
    assert_eq!(counts(done), (false, 2, 2, 0));
    let query = VendorQuery::from_params(&params(&[("sortBy", "name")])).unwrap();
    let vendors = fx.engine.list_vendors(&fx.admin, &query).await.unwrap().items;
    let cipla = vendors.iter().find(|vendor| vendor.name == "Cipla").expect("Cipla imported");
    assert_eq!((cipla.vendor_type, cipla.phone.as_deref()), (VendorType::Manufacturer, Some("9876543210")));
    assert_eq!(cipla.drug_license_valid_until.map(|until| until.to_string()).as_deref(), Some("2027-03-31T00:00:00Z"));
    assert_eq!(cipla.gstin.as_deref(), Some(CIPLA_GSTIN));

    let again = summary(fx.engine.import_vendors(&fx.admin, ImportRequest::new(csv(file))).await);
    assert_eq!(counts(again), (false, 2, 0, 2));
    let refused = "Name,Type,GSTIN\n\
                   Renamed,Dealer,27AAPFU0939F1ZV\n\
                   Sun Pharma,Dealer,\n\
                   Own,OwnPharmacy,\n\
                   New,Dealer,\n\
                   NEW ,Dealer,\n";
    let (keys, failed) = row_errors(fx.engine.import_vendors(&fx.admin, ImportRequest::new(csv(refused))).await);
    assert_eq!(keys, ["row2.gstin", "row3.name", "row4.vendorType", "row6.name"]);
    assert_eq!(failed, 4);

    let cipla_id = cipla.id;
    fx.invoice(cipla_id, "INV-7", "1500.25", "2024-05-01T00:00:00Z").await;
    let mut report = Vec::new();
    fx.engine.vendors_report(&fx.admin, VendorFilter::default()).await.unwrap().save_to(&mut report).unwrap();
    let back = summary(fx.engine.import_vendors(&fx.admin, ImportRequest::new(xlsx(report))).await);
    assert_eq!(counts(back), (false, 3, 0, 3), "the vendors report imports back unchanged");
    let mut report = Vec::new();
    let filter = InvoiceFilter { is_active: Some(true), ..InvoiceFilter::default() };
    fx.engine.invoices_report(&fx.admin, filter).await.unwrap().save_to(&mut report).unwrap();
    let back = summary(fx.import_invoices(ImportRequest::new(xlsx(report))).await);
    assert_eq!(counts(back), (false, 1, 0, 1), "the invoices report imports back unchanged");
}

/// D45: the templates import cleanly, and an xlsx's real dates and numbers are read as they are.
pub async fn templates_and_workbooks_import<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendors = xlsx(TemplateKind::Vendors.workbook().unwrap());
    assert_eq!(
        counts(summary(fx.engine.import_vendors(&fx.admin, ImportRequest::new(vendors)).await)),
        (false, 1, 1, 0)
    );
    let invoices = xlsx(TemplateKind::Invoices.workbook().unwrap());
    assert_eq!(counts(summary(fx.import_invoices(ImportRequest::new(invoices)).await)), (false, 1, 1, 0));

    // Rows are the sheet's own numbers: the header on row 3, the data on rows 4 and 6.
    let bytes = invoice_sheet(2, &[(3, "X-1", 1234.56), (5, "X-2", -1.0)]);
    assert_eq!(row_errors(fx.import_invoices(ImportRequest::new(xlsx(bytes))).await), (vec!["row6.amount".into()], 1));
    let good = xlsx(invoice_sheet(0, &[(1, "X-1", 1234.56)]));
    assert_eq!(counts(summary(fx.import_invoices(ImportRequest::new(good)).await)), (false, 1, 1, 0));
    let query = InvoiceQuery::from_params(&params(&[("invoiceNumber", "X-1")])).unwrap();
    let invoice = fx.engine.list_invoices(&fx.admin, &query).await.unwrap().items.remove(0);
    assert_eq!(invoice.amount.get(), dec("1234.56"), "the number as it was");
    assert_eq!(invoice.invoice_date.to_string(), "2024-03-01T00:00:00Z");
}

/// A workbook of invoices of Example Distributors: the headers on the 0-based row `header`, and
/// each `(row, number, amount)` dated 1 March 2024, due 31 March, in real date cells.
fn invoice_sheet(header: u32, rows: &[(u32, &str, f64)]) -> Vec<u8> {
    let date = Format::new().set_num_format("dd/mm/yyyy");
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    for (column, title) in ["Invoice Number", "Vendor", "Amount", "Invoice Date", "Due Date"].iter().enumerate() {
        sheet.write_string(header, column as u16, *title).unwrap();
    }
    for &(row, number, amount) in rows {
        sheet.write_string(row, 0, number).unwrap();
        sheet.write_string(row, 1, "Example Distributors").unwrap();
        sheet.write_number(row, 2, amount).unwrap();
        sheet.write_datetime_with_format(row, 3, ExcelDateTime::from_ymd(2024, 3, 1).unwrap(), &date).unwrap();
        sheet.write_datetime_with_format(row, 4, ExcelDateTime::from_ymd(2024, 3, 31).unwrap(), &date).unwrap();
    }
    workbook.save_to_buffer().unwrap()
}

/// D23 and D45: a retry with the same key replays the first import's counts and writes nothing
/// again; imports of one file racing each other create each invoice once.
pub async fn imports_are_idempotent_and_race_safely<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let cipla = fx.vendor("Cipla").await;
    let file = (1..=40).fold(String::from("Invoice Number,Vendor,Amount,Invoice Date,Due Date\n"), |mut file, n| {
        file.push_str(&format!("R-{n},Cipla,{n}.25,2024-04-01,2024-04-30\n"));
        file
    });
    let key = IdempotencyRequest { key: IdempotencyKey::parse("import-1").unwrap(), fingerprint: "one file".into() };
    let request = || ImportRequest {
        idempotency: Some(&key),
        ..ImportRequest::new(csv(
            "Invoice Number,Vendor,Amount,Invoice Date,Due Date\nK-1,Cipla,5,2024-04-01,2024-04-30\n",
        ))
    };
    assert_eq!(counts(summary(fx.import_invoices(request()).await)), (false, 1, 1, 0));
    match fx.import_invoices(request()).await {
        Ok(Created::Replayed(Replay::Current(replayed))) => assert_eq!((replayed.created, replayed.unchanged), (1, 0)),
        other => panic!("expected a replay, got {other:?}"),
    }

    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (fx, file) = (fx.clone(), file.clone());
            tokio::spawn(async move { summary(fx.import_invoices(ImportRequest::new(csv(&file))).await) })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        let done = task.await.expect("the import task ends");
        assert_eq!(done.created + done.unchanged, 40, "each import accounts for every row");
        created += done.created;
    }
    assert_eq!(created, 40, "each invoice is created once across racing imports");
    assert_eq!(fx.invoice_count().await, 41);
    let vendor = fx.engine.get_vendor(&fx.admin, cipla.id).await.unwrap();
    assert_eq!(vendor.totals.total_invoice_value, dec("835"), "5 + the sum of n + 0.25 for n in 1..=40");
}

/// D51 amending D45: two imports of one file of new vendors (without GSTINs, so nothing but
/// the lock serialises them) running at once never create a vendor twice: the later one waits
/// and answers those rows `unchanged`, or answers a conflict that may be retried. Three rounds
/// over, each of a new file of 2,000 vendors.
pub async fn racing_vendor_imports_create_each_vendor_once<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let active = async |fx: &Fixture<S>| {
        let query = VendorQuery::from_params(&params(&[])).expect("the default query");
        fx.engine.list_vendors(&fx.admin, &query).await.expect("vendors listed").total_count
    };
    let before = active(&fx).await;
    for round in 1..=3u64 {
        let file = (1..=2_000).fold(String::from("Name,Type\n"), |mut file, n| {
            file.push_str(&format!("Round {round} Vendor {n},Wholesaler\n"));
            file
        });
        let tasks: Vec<_> = (0..2)
            .map(|_| {
                let (fx, file) = (fx.clone(), file.clone());
                tokio::spawn(async move { fx.engine.import_vendors(&fx.admin, ImportRequest::new(csv(&file))).await })
            })
            .collect();
        let mut created = 0;
        for task in tasks {
            match task.await.expect("the import task ends") {
                Ok(Created::New(done)) => {
                    assert_eq!(done.created + done.unchanged, 2_000, "each import accounts for every row");
                    created += done.created;
                }
                Err(Error::Conflict(_)) => {}
                other => panic!("round {round}: expected a summary or a conflict, got {other:?}"),
            }
        }
        assert_eq!(created, 2_000, "round {round}: each vendor is created once");
        assert_eq!(active(&fx).await, before + 2_000 * round, "round {round}");
    }
}
