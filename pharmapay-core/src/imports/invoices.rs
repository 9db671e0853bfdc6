//! An invoice file's rows (D45): the columns `Invoice Number`, `Vendor` and/or `Vendor GSTIN`,
//! `Amount`, `Invoice Date`, `Due Date`, `Description` and `Branch` (a branch's code, D49),
//! matched by [`cells::header_key`], so the invoices report (D26) imports back. Each row becomes the [`NewInvoice`] of
//! `POST /api/invoices`, checked by [`NewInvoice::validate`] (D2, D4) and by the API's own
//! readers of amounts ([`Amount::parse`], D1) and dates; the vendor it names is found under the
//! store's lock by [`crate::imports::rules::plan_invoices`].

use jiff::civil::Date;

use super::cells;
use super::{ImportFile, ReadError, RowCells, RowErrors};
use crate::ids::VendorId;
use crate::invoices::NewInvoice;
use crate::money::Amount;
use crate::vendors::gstin::Gstin;

/// The columns an invoice file is read by, each with whether it is required (D45).
pub const COLUMNS: [(&str, bool); 8] = [
    ("Invoice Number", true),
    ("Vendor", false),
    ("Vendor GSTIN", false),
    ("Amount", true),
    ("Invoice Date", true),
    ("Due Date", true),
    ("Description", false),
    ("Branch", false),
];

/// One data row of an invoice file, its cells read and checked as `POST /api/invoices` checks
/// a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoiceRow {
    /// Its row number (the header is row 1).
    pub row: u32,
    /// The `Vendor` cell: an active vendor's name, matched ignoring case and surrounding spaces.
    pub vendor_name: Option<String>,
    /// The `Vendor GSTIN` cell, which wins over the name when filled.
    pub vendor_gstin: Option<Gstin>,
    /// The `Branch` cell: an active branch's code, upper-cased (D49); empty, the default of a
    /// create.
    pub branch_code: Option<String>,
    /// The invoice; its `vendor_id` (and `branch_id`) are set once the vendor (and branch) are
    /// found.
    pub invoice: NewInvoice,
    /// The invoice date's day, when the cell named a day rather than an instant.
    pub invoice_day: Option<Date>,
    /// The due date's day, likewise.
    pub due_day: Option<Date>,
}

/// Reads every data row of `file`: the rows that pass the checks of the matching create, the
/// errors of those that do not, and how many data rows there were.
pub(crate) fn read(
    file: &ImportFile,
    progress: &dyn Fn(usize),
) -> Result<(usize, Vec<InvoiceRow>, RowErrors), ReadError> {
    let read = super::read_data_rows(file, &COLUMNS, progress, read_row)?;
    if read.columns[1].is_none() && read.columns[2].is_none() {
        return Err(ReadError::File("the header row needs a `Vendor` or a `Vendor GSTIN` column".into()));
    }
    Ok((read.count, read.rows, read.errors))
}

fn read_row(row: u32, found: &RowCells<'_>, errors: &mut RowErrors) -> Option<InvoiceRow> {
    let cell = |index| found.get(index);
    let invoice_number = cells::text(cell(0)).unwrap_or_default();
    let vendor_name = cells::text(cell(1));
    let gstin = cells::text(cell(2)).map(|text| Gstin::parse(&text).map_err(|error| error.to_string()));
    let vendor_gstin = super::optional(row, "vendor", gstin.transpose(), errors);
    if vendor_name.is_none() && cells::text(cell(2)).is_none() {
        errors.add(row, "vendor", "needs the vendor's name or GSTIN");
    }
    let amount = super::required(row, "amount", cells::amount_text(cell(3)), errors)
        .and_then(|text| Amount::parse(&text).map_err(|error| errors.add(row, "amount", error.to_string())).ok());
    let invoice_date = super::required(row, "invoiceDate", cells::date(cell(4)), errors);
    let due_date = super::required(row, "dueDate", cells::date(cell(5)), errors);
    let description = cells::text(cell(6));
    let branch_code = cells::text(cell(7)).map(|code| code.trim().to_ascii_uppercase());
    // A cell that failed stands in with a value no check refuses, so the checks of the create
    // still report the row's other fields.
    let stand_in = invoice_date.as_ref().or(due_date.as_ref()).map_or(jiff::Timestamp::UNIX_EPOCH, |date| date.instant);
    let amount = match amount {
        Some(amount) => amount,
        None => Amount::from_scaled(1).ok()?,
    };
    let invoice = NewInvoice {
        vendor_id: VendorId(0),
        branch_id: None,
        invoice_number,
        amount,
        invoice_date: invoice_date.as_ref().map_or(stand_in, |date| date.instant),
        due_date: due_date.as_ref().map_or(stand_in, |date| date.instant),
        description,
    };
    // A stand-in was used only where a cell failed, which the row's errors already hold.
    let invoice = super::passed(row, invoice.validate(), errors)?;
    let (invoice_day, due_day) = (invoice_date.and_then(|date| date.day), due_date.and_then(|date| date.day));
    Some(InvoiceRow { row, vendor_name, vendor_gstin, branch_code, invoice, invoice_day, due_day })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> ImportFile {
        ImportFile::csv(text)
    }

    #[test]
    fn rows_are_read_by_their_headers_and_checked_as_the_api_checks_a_body() {
        let file = csv("ID,invoice_number,VENDOR,Amount,Invoice Date,due-date,Extra\n\
             7,INV-1,Acme Pharma,\"₹ 1,23,456.50\",31/03/2026,2026-04-30,x\n\
             8,INV-2,Acme Pharma,0,01/04/2026,31/03/2026,x\n\
             9,,,abc,32/01/2026,,x\n");
        let (count, rows, errors) = read(&file, &|_| {}).unwrap();
        assert_eq!(count, 3);
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!((row.row, row.invoice.invoice_number.as_str()), (2, "INV-1"));
        assert_eq!(row.vendor_name.as_deref(), Some("Acme Pharma"));
        assert_eq!(row.invoice.amount.get().to_string(), "123456.5");
        assert_eq!(row.invoice.invoice_date.to_string(), "2026-03-31T00:00:00Z");
        assert_eq!(row.invoice_day, Some(Date::constant(2026, 3, 31)));
        let keys: Vec<&str> = errors.errors().iter().map(|(key, _)| key).collect();
        assert_eq!(
            keys,
            [
                "row3.amount",
                "row3.dueDate",
                "row4.amount",
                "row4.dueDate",
                "row4.invoiceDate",
                "row4.invoiceNumber",
                "row4.vendor"
            ],
            "every field's error at once, D2's among them"
        );
        assert_eq!(errors.failed_rows(), 2);
    }

    #[test]
    fn a_due_date_before_the_invoice_date_is_the_apis_error() {
        let (_, rows, errors) = read(
            &csv("Invoice Number,Vendor GSTIN,Amount,Invoice Date,Due Date\nA-1,,10,05/04/2026,04/04/2026\n"),
            &|_| {},
        )
        .unwrap();
        assert!(rows.is_empty());
        assert!(errors.errors().contains("row2.dueDate"));
        assert!(errors.errors().contains("row2.vendor"));
    }

    #[test]
    fn missing_headers_and_a_missing_vendor_column_are_errors_on_the_file() {
        let missing = read(&csv("Invoice Number,Vendor,Invoice Date\nA,B,2026-01-01\n"), &|_| {}).unwrap_err();
        assert!(
            matches!(&missing, ReadError::File(message) if message.contains("`Amount`") && message.contains("`Due Date`"))
        );
        let no_vendor = read(&csv("Invoice Number,Amount,Invoice Date,Due Date\nA,1,2026-01-01,2026-01-02\n"), &|_| {})
            .unwrap_err();
        assert!(matches!(no_vendor, ReadError::File(message) if message.contains("Vendor")));
        assert!(matches!(read(&csv(""), &|_| {}).unwrap_err(), ReadError::File(_)));
    }
}
