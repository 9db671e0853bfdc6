//! Writing a report's workbook: its kinds, file names and formats, and the sheet writer that
//! streams rows into sheets of at most a million rows (D26).

use crate::clock::BusinessCalendar;
use crate::invoices::Invoice;
use crate::reports::aging::{AgingBucket, AgingFigures, AgingRow};
use crate::reports::statement::StatementLine;
use crate::transactions::Transaction;
use crate::vendors::Vendor;
use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;
use rust_xlsxwriter::{ExcelDateTime, Format, Workbook, Worksheet, XlsxError};
use std::io::Write;

/// Which report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// Vendors with their totals.
    Vendors,
    /// Invoices with their computed figures.
    Invoices,
    /// Payment transactions.
    Transactions,
    /// The payables aging, by vendor, with a totals row (D34).
    Aging,
    /// A vendor's statement, with its opening and closing rows (D35).
    Statement,
}

impl ReportKind {
    /// The file name stem and sheet name.
    pub fn name(self) -> &'static str {
        match self {
            ReportKind::Vendors => "vendors",
            ReportKind::Invoices => "invoices",
            ReportKind::Transactions => "transactions",
            ReportKind::Aging => "aging",
            ReportKind::Statement => "statement",
        }
    }

    /// The column headers, in order: the spec's (Reports) in their places, then the columns later
    /// decisions add (D30 Reference, D36 licence, D37 GSTIN, D44 credits, D49 branch), so a reader
    /// that goes by position keeps working.
    pub fn headers(self) -> &'static [&'static str] {
        match self {
            ReportKind::Vendors => &[
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
                "Available Credit",
            ],
            ReportKind::Invoices => &[
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
                "Branch",
            ],
            ReportKind::Transactions => &[
                "ID",
                "Invoice Number",
                "Vendor",
                "Amount",
                "Type",
                "Transaction Date",
                "Description",
                "Reference",
                "Branch",
            ],
            ReportKind::Aging => &[
                "Vendor ID",
                "Vendor",
                "Not Due",
                "1-30 Days",
                "31-60 Days",
                "61-90 Days",
                "91-180 Days",
                "Over 180 Days",
                "Total",
                "Invoices",
            ],
            ReportKind::Statement => &[
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
                "Credit Number",
            ],
        }
    }

    pub(super) fn widths(self) -> &'static [f64] {
        match self {
            ReportKind::Vendors => {
                &[8.0, 30.0, 14.0, 36.0, 16.0, 28.0, 18.0, 18.0, 20.0, 20.0, 16.0, 20.0, 18.0, 18.0, 14.0, 16.0, 16.0]
            }
            ReportKind::Invoices => &[8.0, 20.0, 30.0, 16.0, 16.0, 16.0, 14.0, 14.0, 14.0, 40.0, 16.0, 12.0],
            ReportKind::Transactions => &[8.0, 20.0, 30.0, 16.0, 14.0, 18.0, 40.0, 24.0, 12.0],
            ReportKind::Aging => &[10.0, 30.0, 16.0, 16.0, 16.0, 16.0, 16.0, 16.0, 18.0, 10.0],
            ReportKind::Statement => &[12.0, 16.0, 20.0, 14.0, 24.0, 40.0, 16.0, 16.0, 18.0, 16.0, 20.0],
        }
    }
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
#[error("could not write the spreadsheet: {0}")]
pub struct ReportError(#[from] XlsxError);

/// A finished sheet, ready to be saved as an `.xlsx` file.
pub struct Report {
    pub(super) kind: ReportKind,
    pub(super) file_name: String,
    pub(super) rows: u64,
    pub(super) workbook: Workbook,
}

impl std::fmt::Debug for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Report")
            .field("kind", &self.kind)
            .field("file_name", &self.file_name)
            .field("rows", &self.rows)
            .finish()
    }
}

impl Report {
    /// Which report this is.
    pub fn kind(&self) -> ReportKind {
        self.kind
    }

    /// The download name, such as `invoices_20240510.xlsx` (date in the business zone, D26).
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// How many records it holds (the header row not counted).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes the `.xlsx` file. The writer needs no `Seek`, so it can stream to a client.
    ///
    /// # Errors
    /// [`ReportError`] when writing fails.
    pub fn save_to<W: Write + Send>(mut self, writer: W) -> Result<(), ReportError> {
        self.workbook.save_to_writer(writer)?;
        Ok(())
    }
}

/// A download name: `stem_YYYYMMDD.xlsx` (D26, D34, D35).
pub(crate) fn file_name(stem: &str, day: Date) -> String {
    format!("{stem}_{:04}{:02}{:02}.xlsx", day.year(), day.month(), day.day())
}

/// The data rows one worksheet holds under its header row: Excel's 1,048,576 rows less the
/// header (D42).
pub const ROWS_PER_SHEET: u32 = 1_048_575;

/// Writes rows into constant-memory worksheets: the first named after the report, and, once a
/// sheet is full, continuation sheets named after it with ` (2)`, ` (3)`... appended, each with
/// the same header (D42).
pub(crate) struct SheetWriter {
    pub(super) kind: ReportKind,
    pub(super) workbook: Workbook,
    pub(super) calendar: BusinessCalendar,
    /// The sheet being written, counting from 0.
    pub(super) sheet_index: usize,
    /// The next row of that sheet (row 0 is its header).
    pub(super) next_row: u32,
    /// Data rows per sheet ([`ROWS_PER_SHEET`]; smaller in tests).
    pub(super) rows_per_sheet: u32,
    /// Every data row written so far.
    pub(super) rows: u64,
    pub(super) formats: Formats,
    pub(super) file_name: String,
}

/// The number formats of a sheet's amounts and dates.
pub(super) struct Formats {
    pub(super) money: Format,
    pub(super) date: Format,
    pub(super) date_time: Format,
}

/// One row being written, a cell at a time from the first column, so the cells follow the
/// order of [`ReportKind::headers`].
pub(super) struct Row<'a> {
    pub(super) sheet: &'a mut Worksheet,
    pub(super) formats: &'a Formats,
    pub(super) row: u32,
    pub(super) column: u16,
}

impl Row<'_> {
    /// The column of the next cell.
    pub(super) fn next_column(&mut self) -> u16 {
        let column = self.column;
        self.column += 1;
        column
    }

    /// A record id, as a number.
    pub(super) fn id(&mut self, id: i64) -> Result<(), ReportError> {
        let column = self.next_column();
        self.sheet.write_number(self.row, column, id as f64)?;
        Ok(())
    }

    /// Text.
    pub(super) fn text(&mut self, value: &str) -> Result<(), ReportError> {
        let column = self.next_column();
        self.sheet.write_string(self.row, column, value)?;
        Ok(())
    }

    /// An empty cell.
    pub(super) fn empty(&mut self) -> Result<(), ReportError> {
        self.next_column();
        Ok(())
    }

    /// Text that may be missing; missing or empty text leaves the cell empty.
    pub(super) fn optional_text(&mut self, value: Option<&str>) -> Result<(), ReportError> {
        match value.filter(|value| !value.is_empty()) {
            Some(value) => self.text(value),
            None => self.empty(),
        }
    }

    /// An amount, in the money format.
    pub(super) fn money(&mut self, value: Decimal) -> Result<(), ReportError> {
        let column = self.next_column();
        self.sheet.write_number_with_format(self.row, column, excel_number(value), &self.formats.money)?;
        Ok(())
    }

    /// A date.
    pub(super) fn date(&mut self, value: ExcelDateTime) -> Result<(), ReportError> {
        let column = self.next_column();
        self.sheet.write_datetime_with_format(self.row, column, value, &self.formats.date)?;
        Ok(())
    }

    /// A date that may be missing; a missing one leaves the cell empty.
    pub(super) fn optional_date(&mut self, value: Option<ExcelDateTime>) -> Result<(), ReportError> {
        match value {
            Some(value) => self.date(value),
            None => self.empty(),
        }
    }

    /// A date and time of day.
    pub(super) fn date_time(&mut self, value: ExcelDateTime) -> Result<(), ReportError> {
        let column = self.next_column();
        self.sheet.write_datetime_with_format(self.row, column, value, &self.formats.date_time)?;
        Ok(())
    }
}

/// The six bucket sums, their total and the invoice count of an aging row.
pub(super) fn aging_cells(cells: &mut Row<'_>, figures: &AgingFigures) -> Result<(), ReportError> {
    for bucket in AgingBucket::ALL {
        cells.money(figures.get(bucket))?;
    }
    cells.money(figures.total())?;
    cells.id(i64::try_from(figures.invoice_count).unwrap_or(i64::MAX))
}

/// A calendar day as an Excel date.
pub(super) fn excel_day(day: Date) -> Result<ExcelDateTime, ReportError> {
    Ok(ExcelDateTime::from_ymd(day.year() as u16, day.month() as u8, day.day() as u8)?)
}

pub(super) fn money_format(currency: &str) -> String {
    // The symbol is quoted so any character shows literally; quotes inside it are dropped.
    let symbol: String = currency.chars().filter(|c| *c != '"' && !c.is_control()).take(8).collect();
    if symbol.is_empty() { "#,##0.00;-#,##0.00".into() } else { format!("\"{symbol}\"#,##0.00;-\"{symbol}\"#,##0.00") }
}

pub(super) fn excel_number(value: Decimal) -> f64 {
    // Going through the decimal text gives the double nearest to the exact value.
    value.to_string().parse().unwrap_or(0.0)
}

impl SheetWriter {
    /// A sheet of `kind`, named after `today` in the business calendar.
    pub(crate) fn new(
        kind: ReportKind,
        currency: &str,
        calendar: BusinessCalendar,
        now: Timestamp,
    ) -> Result<Self, ReportError> {
        Self::with_rows_per_sheet(kind, currency, calendar, now, ROWS_PER_SHEET)
    }

    /// A sheet of `kind` saved as `file_name`, such as an aging named after its day (D34).
    pub(crate) fn named(
        kind: ReportKind,
        currency: &str,
        calendar: BusinessCalendar,
        file_name: String,
    ) -> Result<Self, ReportError> {
        Self::build(kind, currency, calendar, file_name, ROWS_PER_SHEET)
    }

    pub(super) fn with_rows_per_sheet(
        kind: ReportKind,
        currency: &str,
        calendar: BusinessCalendar,
        now: Timestamp,
        rows_per_sheet: u32,
    ) -> Result<Self, ReportError> {
        let today = calendar.date_of(now);
        Self::build(kind, currency, calendar, file_name(kind.name(), today), rows_per_sheet)
    }

    pub(super) fn build(
        kind: ReportKind,
        currency: &str,
        calendar: BusinessCalendar,
        file_name: String,
        rows_per_sheet: u32,
    ) -> Result<Self, ReportError> {
        let mut writer = Self {
            kind,
            workbook: Workbook::new(),
            calendar,
            sheet_index: 0,
            next_row: 1,
            rows_per_sheet: rows_per_sheet.max(1),
            rows: 0,
            formats: Formats {
                money: Format::new().set_num_format(money_format(currency)),
                date: Format::new().set_num_format("yyyy-mm-dd"),
                date_time: Format::new().set_num_format("yyyy-mm-dd hh:mm"),
            },
            file_name,
        };
        writer.add_sheet()?;
        Ok(writer)
    }

    /// The name of the sheet numbered `index` from 0: the report's title, then `Title (2)`...
    pub(super) fn sheet_name(&self, index: usize) -> String {
        let mut chars = self.kind.name().chars();
        let title: String = chars.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(chars).collect();
        if index == 0 { title } else { format!("{title} ({})", index + 1) }
    }

    /// Adds the next sheet, with its column widths and its bold, frozen header row.
    pub(super) fn add_sheet(&mut self) -> Result<(), ReportError> {
        let index = self.workbook.worksheets().len();
        let name = self.sheet_name(index);
        let bold = Format::new().set_bold();
        let sheet = self.workbook.add_worksheet_with_constant_memory()?;
        sheet.set_name(name)?;
        for (column, width) in self.kind.widths().iter().enumerate() {
            sheet.set_column_width(column as u16, *width)?;
        }
        for (column, header) in self.kind.headers().iter().enumerate() {
            sheet.write_string_with_format(0, column as u16, *header, &bold)?;
        }
        sheet.set_freeze_panes(1, 0)?;
        Ok(())
    }

    /// Adds the autofilter over the header and the rows of the sheet being written.
    pub(super) fn close_sheet(&mut self) -> Result<(), ReportError> {
        let last_row = self.next_row - 1;
        let last_column = self.kind.headers().len() as u16 - 1;
        let sheet = self.workbook.worksheet_from_index(self.sheet_index)?;
        sheet.autofilter(0, 0, last_row, last_column)?;
        Ok(())
    }

    pub(super) fn excel_date(&self, instant: Timestamp) -> Result<ExcelDateTime, ReportError> {
        let date = self.calendar.date_of(instant);
        Ok(ExcelDateTime::from_ymd(date.year() as u16, date.month() as u8, date.day() as u8)?)
    }

    pub(super) fn excel_date_time(&self, instant: Timestamp) -> Result<ExcelDateTime, ReportError> {
        let local = instant.to_zoned(self.calendar.zone().clone()).datetime();
        let date = ExcelDateTime::from_ymd(local.year() as u16, local.month() as u8, local.day() as u8)?;
        Ok(date.and_hms(local.hour() as u16, local.minute() as u8, f64::from(local.second()))?)
    }

    /// Writes the next row with `write`, which fills its cells in column order, on a
    /// continuation sheet once the current one is full (D42).
    pub(super) fn row(
        &mut self,
        write: impl FnOnce(&mut Row<'_>) -> Result<(), ReportError>,
    ) -> Result<(), ReportError> {
        if self.next_row > self.rows_per_sheet {
            self.close_sheet()?;
            self.add_sheet()?;
            self.sheet_index += 1;
            self.next_row = 1;
        }
        let Self { workbook, formats, sheet_index, next_row, .. } = self;
        let sheet = workbook.worksheet_from_index(*sheet_index)?;
        write(&mut Row { sheet, formats, row: *next_row, column: 0 })?;
        self.next_row += 1;
        self.rows += 1;
        Ok(())
    }

    /// Writes one vendor row.
    pub(crate) fn vendor(&mut self, vendor: &Vendor) -> Result<(), ReportError> {
        let created = self.excel_date_time(vendor.created_at)?;
        let valid_until = vendor.drug_license_valid_until.map(|until| self.excel_date(until)).transpose()?;
        self.row(|row| {
            row.id(vendor.id.get())?;
            row.text(&vendor.name)?;
            row.text(vendor.vendor_type.name())?;
            row.optional_text(vendor.address.as_deref())?;
            row.optional_text(vendor.phone.as_deref())?;
            row.optional_text(vendor.email.as_deref())?;
            row.optional_text(vendor.drug_license_number1.as_deref())?;
            row.optional_text(vendor.drug_license_number2.as_deref())?;
            row.money(vendor.totals.outstanding_balance)?;
            row.money(vendor.totals.total_invoice_value)?;
            row.money(vendor.totals.total_paid_amount)?;
            row.date_time(created)?;
            row.optional_text(vendor.gstin.as_deref())?;
            row.optional_date(valid_until)?;
            row.text(vendor.license_status.name())?;
            row.money(vendor.totals.total_credited_amount)?;
            row.money(vendor.totals.available_credit)
        })
    }

    /// Writes one invoice row.
    pub(crate) fn invoice(&mut self, invoice: &Invoice) -> Result<(), ReportError> {
        let (invoice_date, due_date) = (self.excel_date(invoice.invoice_date)?, self.excel_date(invoice.due_date)?);
        self.row(|row| {
            row.id(invoice.id.get())?;
            row.text(&invoice.invoice_number)?;
            row.text(&invoice.vendor_name)?;
            row.money(invoice.amount.get())?;
            row.money(invoice.paid_amount)?;
            row.money(invoice.pending_amount())?;
            row.text(invoice.status.name())?;
            row.date(invoice_date)?;
            row.date(due_date)?;
            row.optional_text(invoice.description.as_deref())?;
            row.money(invoice.credited_amount)?;
            row.text(&invoice.branch_code)
        })
    }

    /// Writes one payment row.
    pub(crate) fn transaction(&mut self, transaction: &Transaction) -> Result<(), ReportError> {
        let paid_on = self.excel_date(transaction.transaction_date)?;
        self.row(|row| {
            row.id(transaction.id.get())?;
            row.text(&transaction.invoice.invoice_number)?;
            row.text(&transaction.invoice.vendor_name)?;
            row.money(transaction.amount.get())?;
            row.text(transaction.transaction_type.label())?;
            row.date(paid_on)?;
            row.optional_text(transaction.description.as_deref())?;
            row.optional_text(transaction.reference.as_deref())?;
            row.text(&transaction.invoice.branch_code)
        })
    }

    /// Writes one vendor's aging row (D34).
    pub(crate) fn aging_row(&mut self, row: &AgingRow) -> Result<(), ReportError> {
        self.row(|cells| {
            cells.id(row.vendor_id.get())?;
            cells.text(&row.vendor_name)?;
            aging_cells(cells, &row.figures)
        })
    }

    /// Writes the aging's totals row, last (D34).
    pub(crate) fn aging_totals(&mut self, totals: &AgingFigures) -> Result<(), ReportError> {
        self.row(|cells| {
            cells.next_column();
            cells.text("Total")?;
            aging_cells(cells, totals)
        })
    }

    /// Writes a statement's opening or closing row: a label, a note in the Description column
    /// and a balance (D35).
    pub(crate) fn statement_balance(
        &mut self,
        day: Date,
        label: &str,
        note: Option<&str>,
        balance: Decimal,
    ) -> Result<(), ReportError> {
        let day = excel_day(day)?;
        self.row(|cells| {
            cells.date(day)?;
            cells.text(label)?;
            for _ in 0..3 {
                cells.next_column();
            }
            cells.optional_text(note)?;
            for _ in 0..2 {
                cells.next_column();
            }
            cells.money(balance)
        })
    }

    /// Writes one line of a statement (D35).
    pub(crate) fn statement_line(&mut self, line: &StatementLine) -> Result<(), ReportError> {
        let day = excel_day(line.entry.date)?;
        self.row(|cells| {
            cells.date(day)?;
            cells.text(line.entry.kind.name())?;
            cells.optional_text(line.entry.invoice_number.as_deref())?;
            match line.entry.transaction_id {
                Some(id) => cells.id(id.get())?,
                None => {
                    cells.next_column();
                }
            }
            cells.optional_text(line.entry.reference.as_deref())?;
            cells.optional_text(line.entry.description.as_deref())?;
            cells.money(line.invoiced)?;
            cells.money(line.paid)?;
            cells.money(line.balance)?;
            cells.money(line.credited)?;
            cells.optional_text(line.entry.credit_number.as_deref())
        })
    }

    /// Adds the autofilter over the last sheet's rows, and hands the workbook over.
    pub(crate) fn finish(mut self) -> Result<Report, ReportError> {
        self.close_sheet()?;
        Ok(Report { kind: self.kind, file_name: self.file_name, rows: self.rows, workbook: self.workbook })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_formats_quote_the_currency_symbol() {
        assert_eq!(money_format("₹"), "\"₹\"#,##0.00;-\"₹\"#,##0.00");
        assert_eq!(money_format("\"$\""), "\"$\"#,##0.00;-\"$\"#,##0.00");
        assert_eq!(money_format(""), "#,##0.00;-#,##0.00");
    }

    #[test]
    fn amounts_become_the_nearest_double() {
        assert_eq!(excel_number(Decimal::new(1, 1)), 0.1);
        assert_eq!(excel_number(Decimal::new(-12345, 2)), -123.45);
    }

    fn payment(id: i64) -> Transaction {
        let at: Timestamp = "2024-05-10T10:00:00Z".parse().unwrap();
        Transaction {
            id: crate::ids::TransactionId(id),
            invoice_id: crate::ids::InvoiceId(1),
            amount: crate::money::Amount::try_from(Decimal::new(id, 0)).unwrap(),
            transaction_date: at,
            transaction_type: crate::transactions::TransactionType::Cash,
            reference: None,
            description: None,
            vendor_payment_id: None,
            is_active: true,
            created_at: at,
            updated_at: at,
            invoice: crate::invoices::InvoiceBrief {
                id: crate::ids::InvoiceId(1),
                invoice_number: "INV-1".into(),
                vendor_id: crate::ids::VendorId(2),
                vendor_name: "Acme".into(),
                branch_id: crate::branches::HEAD_OFFICE_ID,
                branch_code: "HO".into(),
                amount: crate::money::Amount::try_from(Decimal::new(100, 0)).unwrap(),
                pending_amount: Decimal::ZERO,
            },
        }
    }

    /// A transactions report of the payments 1 to `count` in the money format of `symbol`,
    /// three rows to a sheet.
    fn payments_by_three(symbol: &str, count: i64) -> Report {
        let now = "2024-05-10T10:00:00Z".parse().unwrap();
        let mut writer =
            SheetWriter::with_rows_per_sheet(ReportKind::Transactions, symbol, BusinessCalendar::utc(), now, 3)
                .unwrap();
        for id in 1..=count {
            writer.transaction(&payment(id)).unwrap();
        }
        writer.finish().unwrap()
    }

    fn sheet_names(report: &mut Report) -> Vec<String> {
        report.workbook.worksheets().iter().map(|sheet| sheet.name()).collect()
    }

    #[test]
    fn d42_a_full_sheet_continues_on_numbered_sheets_with_the_same_header() {
        let mut report = payments_by_three("₹", 7);
        assert_eq!(report.rows(), 7, "every row is counted, whichever sheet holds it");
        assert_eq!(sheet_names(&mut report), ["Transactions", "Transactions (2)", "Transactions (3)"]);
        let mut bytes = Vec::new();
        report.save_to(&mut bytes).unwrap();
        assert!(bytes.starts_with(b"PK"), "an xlsx file is a zip archive");
    }

    #[test]
    fn exactly_full_sheets_need_no_empty_continuation() {
        let mut report = payments_by_three("", 6);
        assert_eq!(sheet_names(&mut report), ["Transactions", "Transactions (2)"]);
    }

    #[test]
    fn headers_and_widths_line_up() {
        for kind in [
            ReportKind::Vendors,
            ReportKind::Invoices,
            ReportKind::Transactions,
            ReportKind::Aging,
            ReportKind::Statement,
        ] {
            assert_eq!(kind.headers().len(), kind.widths().len(), "{kind:?}");
        }
    }
}
