//! The templates of D45: an xlsx per import with its headers (bold, frozen) and one example
//! row, whose cells are of the kinds the import reads (text, a number, real dates), so the
//! template imports cleanly once its example is replaced by real values.

use rust_xlsxwriter::{ExcelDateTime, Format, Workbook, XlsxError};

use super::{invoices, vendors};

/// Which import a template is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateKind {
    /// `POST /api/imports/invoices`.
    Invoices,
    /// `POST /api/imports/vendors`.
    Vendors,
}

/// A cell of the example row.
enum Example {
    Text(&'static str),
    Number(f64),
    Date(u16, u8, u8),
}

impl TemplateKind {
    /// The file name the download suggests.
    pub fn file_name(self) -> &'static str {
        match self {
            TemplateKind::Invoices => "invoices_template.xlsx",
            TemplateKind::Vendors => "vendors_template.xlsx",
        }
    }

    fn columns(self) -> Vec<(&'static str, Example)> {
        use Example::{Date, Number, Text};
        let headers: Vec<&'static str> = match self {
            TemplateKind::Invoices => invoices::COLUMNS.iter().map(|(name, _)| *name).collect(),
            TemplateKind::Vendors => vendors::COLUMNS.iter().map(|(name, _)| *name).collect(),
        };
        let examples = match self {
            TemplateKind::Invoices => vec![
                Text("INV-2026-0001"),
                Text("Example Distributors"),
                Text(""),
                Number(12_345.5),
                Date(2026, 4, 1),
                Date(2026, 5, 1),
                Text("Delete this example row; give the vendor's name or its GSTIN"),
                // D49: a branch's code; empty, the head office.
                Text(""),
            ],
            TemplateKind::Vendors => vec![
                Text("Example Distributors"),
                Text("Wholesaler"),
                Text("12 Example Road, Pune 411001"),
                Text("020 2612 3456"),
                Text("accounts@example.com"),
                Text("MH-PZ3-123456"),
                Text(""),
                Text("27AAPFU0939F1ZV"),
                Date(2027, 3, 31),
            ],
        };
        headers.into_iter().zip(examples).collect()
    }

    /// The template as xlsx bytes.
    ///
    /// # Errors
    /// Only if the workbook cannot be written.
    pub fn workbook(self) -> Result<Vec<u8>, XlsxError> {
        let mut workbook = Workbook::new();
        let bold = Format::new().set_bold();
        let date = Format::new().set_num_format("yyyy-mm-dd");
        let money = Format::new().set_num_format("#,##0.00");
        let sheet = workbook.add_worksheet();
        sheet.set_name(match self {
            TemplateKind::Invoices => "Invoices",
            TemplateKind::Vendors => "Vendors",
        })?;
        for (column, (header, example)) in self.columns().into_iter().enumerate() {
            let column = column as u16;
            sheet.set_column_width(column, 22)?;
            sheet.write_string_with_format(0, column, header, &bold)?;
            match example {
                Example::Text("") => {}
                Example::Text(text) => {
                    sheet.write_string(1, column, text)?;
                }
                Example::Number(value) => {
                    sheet.write_number_with_format(1, column, value, &money)?;
                }
                Example::Date(year, month, day) => {
                    sheet.write_datetime_with_format(1, column, ExcelDateTime::from_ymd(year, month, day)?, &date)?;
                }
            }
        }
        sheet.set_freeze_panes(1, 0)?;
        workbook.save_to_buffer()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::imports::ImportFile;

    fn file(kind: TemplateKind) -> ImportFile {
        ImportFile::xlsx(kind.workbook().unwrap())
    }

    #[test]
    fn the_vendor_template_reads_as_one_clean_vendor() {
        let (count, rows, errors) = vendors::read(&file(TemplateKind::Vendors), &|_| {}).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!((count, rows.len()), (1, 1));
        assert_eq!(rows[0].vendor.name, "Example Distributors");
        assert_eq!(rows[0].valid_until_day, Some(jiff::civil::Date::constant(2027, 3, 31)));
    }

    #[test]
    fn the_invoice_template_reads_as_one_clean_invoice() {
        let (count, rows, errors) = invoices::read(&file(TemplateKind::Invoices), &|_| {}).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!((count, rows.len()), (1, 1));
        let row = &rows[0];
        assert_eq!((row.row, row.vendor_name.as_deref()), (2, Some("Example Distributors")));
        assert_eq!(row.invoice.amount.get().to_string(), "12345.5");
        assert_eq!(row.invoice.due_date.to_string(), "2026-05-01T00:00:00Z");
        assert_eq!(row.branch_code, None, "the example leaves the branch to the default (D49)");
    }

    #[test]
    fn each_template_holds_every_column_of_its_import() {
        let names = |kind: TemplateKind| kind.columns().into_iter().map(|(name, _)| name).collect::<Vec<_>>();
        assert_eq!(names(TemplateKind::Invoices), invoices::COLUMNS.map(|(name, _)| name));
        assert_eq!(names(TemplateKind::Vendors), vendors::COLUMNS.map(|(name, _)| name));
    }
}
