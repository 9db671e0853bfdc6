//! Reading the rows of an imported file (D45): CSV or the first worksheet of an xlsx.
//!
//! The file comes from a request body, so it is hostile until read. [`read_rows`] hands each
//! non-empty row to a visitor as it is read, numbered as the person who made the file sees it,
//! and never holds the file twice: CSV fields are read one by one (`imports::csv`), xlsx cells
//! straight out of the archive by a reader of our own (`imports::xlsx`).
//!
//! Reading is bounded by what the reader builds, not by what a file says of itself (D51): an
//! xlsx's declared sizes are checked against [`Limits`] (a zip bomb is refused), and then no
//! cell holds more than [`MAX_CELL_BYTES`], no row more than [`MAX_ROW_CELLS`] cells, and the
//! header row no more than [`MAX_HEADER_BYTES`] of text ([`check_header`]). A file beyond any
//! bound is refused with a message naming it, so no upload grows memory by more than 256 MiB.
//!
//! Cells are handed over as the file holds them ([`Cell`]); reading one as a field (dates,
//! amounts) is [`super::cells`]' job.

use std::ops::ControlFlow;

/// The two file formats an import reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// Comma-separated values, UTF-8 with or without a byte order mark, RFC 4180 quoting.
    Csv,
    /// An Office Open XML workbook; its first worksheet is read.
    Xlsx,
}

const CSV_MEDIA_TYPE: &str = "text/csv";
const XLSX_MEDIA_TYPE: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

impl FileFormat {
    /// The format of a body by its media type: `text/csv` (parameters such as
    /// `; charset=utf-8` allowed, any case) or the xlsx media type; `None` for any other.
    pub fn from_media_type(value: &str) -> Option<Self> {
        let essence = value.split(';').next().unwrap_or_default().trim();
        if essence.eq_ignore_ascii_case(CSV_MEDIA_TYPE) {
            Some(Self::Csv)
        } else if essence.eq_ignore_ascii_case(XLSX_MEDIA_TYPE) {
            Some(Self::Xlsx)
        } else {
            None
        }
    }

    /// The format's media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Csv => CSV_MEDIA_TYPE,
            Self::Xlsx => XLSX_MEDIA_TYPE,
        }
    }
}

/// One cell as the file holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Nothing, or only white space.
    Empty,
    /// Text, as written (not trimmed). Every filled CSV cell is text.
    Text(String),
    /// An xlsx number (Excel keeps every number as a double).
    Number(f64),
    /// An xlsx `TRUE` or `FALSE`.
    Bool(bool),
    /// An xlsx date or date-time, to the second, in no time zone (Excel keeps none).
    DateTime(jiff::civil::DateTime),
}

/// Why a file could not be read; the message is for the user (no internals, no paths).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// Not a file of its format, damaged, or beyond a bound on what one cell, row or part may
    /// hold (D51): a 400 on `file`.
    #[error("{0}")]
    Unreadable(String),
    /// It would unpack, or build, beyond [`Limits`] or the bounds of D51: a 413.
    #[error("{0}")]
    TooLarge(String),
}

/// Bounds for reading a hostile file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most an xlsx may unpack to, summed over its zip entries' declared sizes.
    pub max_unpacked_bytes: u64,
}

/// The default bounds: an xlsx unpacks to at most 256 MiB.
pub const DEFAULT_LIMITS: Limits = Limits { max_unpacked_bytes: 256 * 1024 * 1024 };

/// The most text one cell may hold (D51): 64 KiB, in any row.
pub const MAX_CELL_BYTES: usize = 64 * 1024;

/// The most cells a row may hold (D51), empty ones included.
pub const MAX_ROW_CELLS: usize = 1_000;

/// The most text the header row may hold in all its cells (D51): 64 KiB.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// What [`read_rows`] hands each row to.
pub(crate) type Visit<'a> = &'a mut dyn FnMut(u32, &[Cell]) -> ControlFlow<()>;

/// Refuses a header row whose cells hold more than [`MAX_HEADER_BYTES`] of text in all (D51):
/// both imports (D45) and bank statements (D46) check the row they take as the header.
///
/// # Errors
/// [`FileError::Unreadable`] naming the limit.
pub fn check_header(cells: &[Cell]) -> Result<(), FileError> {
    let total = cells.iter().map(|cell| if let Cell::Text(text) = cell { text.len() } else { 0 }).sum::<usize>();
    if total > MAX_HEADER_BYTES {
        return Err(unreadable(format!(
            "the header row holds more than {} of text",
            size_text(MAX_HEADER_BYTES as u64)
        )));
    }
    Ok(())
}

pub(super) fn unreadable(message: impl Into<String>) -> FileError {
    FileError::Unreadable(message.into())
}

pub(super) fn text_cell(text: &str) -> Cell {
    if text.trim().is_empty() { Cell::Empty } else { Cell::Text(text.to_owned()) }
}

pub(super) fn is_blank(cells: &[Cell]) -> bool {
    cells.iter().all(|cell| *cell == Cell::Empty)
}

/// A byte count for a person: whole MiB or KiB when it is one, else bytes.
pub(super) fn size_text(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use crate::imports::read_rows;
    use std::io::{Cursor, Read, Write};

    use jiff::civil::date;
    use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};

    use super::super::xlsx::{check_archive, excel_datetime};
    use super::*;

    fn rows(format: FileFormat, bytes: &[u8]) -> Result<Vec<(u32, Vec<Cell>)>, FileError> {
        let mut rows = Vec::new();
        read_rows(format, bytes, &DEFAULT_LIMITS, &mut |number, cells| {
            rows.push((number, cells.to_vec()));
            ControlFlow::Continue(())
        })?;
        Ok(rows)
    }

    fn rows_of(bytes: &[u8]) -> Vec<u32> {
        rows(FileFormat::Csv, bytes).unwrap().into_iter().map(|(number, _)| number).collect()
    }

    fn text(value: &str) -> Cell {
        Cell::Text(value.to_owned())
    }

    #[test]
    fn media_types_name_the_formats() {
        assert_eq!(FileFormat::from_media_type("text/csv"), Some(FileFormat::Csv));
        assert_eq!(FileFormat::from_media_type("Text/CSV; charset=UTF-8"), Some(FileFormat::Csv));
        assert_eq!(FileFormat::from_media_type(XLSX_MEDIA_TYPE), Some(FileFormat::Xlsx));
        assert_eq!(FileFormat::from_media_type(&XLSX_MEDIA_TYPE.to_uppercase()), Some(FileFormat::Xlsx));
        assert_eq!(FileFormat::from_media_type("application/json"), None);
        assert_eq!(FileFormat::from_media_type("text/csvx"), None);
        assert_eq!(FileFormat::from_media_type(""), None);
        for format in [FileFormat::Csv, FileFormat::Xlsx] {
            assert_eq!(FileFormat::from_media_type(format.media_type()), Some(format));
        }
    }

    #[test]
    fn csv_rows_are_records_with_a_bom_stripped() {
        let file = "\u{feff}Name,Amount\r\nAcme,\"1,200\"\r\n\"Multi\nline\r\nname\",5\r\nLast, 7 \r\n";
        let rows = rows(FileFormat::Csv, file.as_bytes()).unwrap();
        assert_eq!(
            rows,
            vec![
                (1, vec![text("Name"), text("Amount")]),
                (2, vec![text("Acme"), text("1,200")]),
                (3, vec![text("Multi\nline\r\nname"), text("5")]),
                (4, vec![text("Last"), text(" 7 ")]),
            ]
        );
    }

    #[test]
    fn csv_blank_lines_and_rows_are_skipped_but_counted() {
        // Row 2 is a blank line, row 4 holds only empty or blank cells, row 5 has a quoted
        // newline, rows 6 and 7 are blank lines, and the file ends without a line end.
        let file = "a,b\n\nc,d\n, ,\"\"\n\"x\ny\",z\n\r\n\nlast,";
        let rows = rows(FileFormat::Csv, file.as_bytes()).unwrap();
        assert_eq!(
            rows,
            vec![
                (1, vec![text("a"), text("b")]),
                (3, vec![text("c"), text("d")]),
                (5, vec![text("x\ny"), text("z")]),
                (8, vec![text("last"), Cell::Empty]),
            ]
        );
    }

    #[test]
    fn csv_rows_may_be_ragged() {
        let rows = rows(FileFormat::Csv, b"a,b,c\n1\n1,2,3,4\n").unwrap();
        let widths: Vec<(u32, usize)> = rows.iter().map(|(number, cells)| (*number, cells.len())).collect();
        assert_eq!(widths, vec![(1, 3), (2, 1), (3, 4)]);
    }

    #[test]
    fn csv_counts_leading_blank_lines_and_any_line_end() {
        let rows = rows(FileFormat::Csv, b"\n\r\nh\n").unwrap();
        assert_eq!(rows, vec![(3, vec![text("h")])]);
        // Old Mac line ends (a lone carriage return) count the same.
        let rows = rows_of(b"a\rb\r\rc");
        assert_eq!(rows, vec![1, 2, 4]);
    }

    #[test]
    fn csv_that_is_not_utf8_is_refused_with_its_row() {
        let error = rows(FileFormat::Csv, b"name\n\"two\nlines\"\nCaf\xe9\n").unwrap_err();
        assert_eq!(error, FileError::Unreadable("row 3 is not UTF-8 text".into()));
        let error = rows(FileFormat::Csv, b"\xff\xfen\x00").unwrap_err();
        assert!(matches!(error, FileError::Unreadable(message) if message.contains("UTF-16")));
    }

    #[test]
    fn a_visitor_can_stop_the_reading() {
        let mut seen = Vec::new();
        let result = read_rows(FileFormat::Csv, b"1\n2\n3\n", &DEFAULT_LIMITS, &mut |number, _| {
            seen.push(number);
            if number == 2 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        });
        assert_eq!(result, Ok(()));
        assert_eq!(seen, vec![1, 2]);
    }

    fn workbook() -> Vec<u8> {
        let mut workbook = Workbook::new();
        let sheet = workbook.add_worksheet();
        let day = Format::new().set_num_format("dd/mm/yyyy");
        let stamp = Format::new().set_num_format("yyyy-mm-dd hh:mm:ss");
        // The used range starts at row 3 (index 2), in column B.
        sheet.write_string(2, 1, "Name").unwrap();
        sheet.write_string(2, 2, "Amount").unwrap();
        sheet.write_string(2, 3, "Date").unwrap();
        sheet.write_string(3, 1, "Acme").unwrap();
        sheet.write_number(3, 2, 1234.5).unwrap();
        sheet.write_datetime_with_format(3, 3, ExcelDateTime::from_ymd(2026, 3, 31).unwrap(), &day).unwrap();
        // Row 5 (index 4) holds only blank text; row 6 nothing.
        sheet.write_string(4, 1, "   ").unwrap();
        sheet.write_number(6, 2, 9_876_543_210.0).unwrap();
        let noon = ExcelDateTime::from_ymd(2026, 4, 1).unwrap().and_hms(13, 45, 30).unwrap();
        sheet.write_datetime_with_format(6, 3, noon, &stamp).unwrap();
        sheet.write_boolean(6, 4, true).unwrap();
        workbook.save_to_buffer().unwrap()
    }

    #[test]
    fn xlsx_rows_keep_their_worksheet_numbers_and_cell_types() {
        let rows = rows(FileFormat::Xlsx, &workbook()).unwrap();
        assert_eq!(
            rows,
            vec![
                (3, vec![Cell::Empty, text("Name"), text("Amount"), text("Date")]),
                (
                    4,
                    vec![
                        Cell::Empty,
                        text("Acme"),
                        Cell::Number(1234.5),
                        Cell::DateTime(date(2026, 3, 31).at(0, 0, 0, 0))
                    ]
                ),
                (
                    7,
                    vec![
                        Cell::Empty,
                        Cell::Empty,
                        Cell::Number(9_876_543_210.0),
                        Cell::DateTime(date(2026, 4, 1).at(13, 45, 30, 0)),
                        Cell::Bool(true),
                    ]
                ),
            ]
        );
    }

    #[test]
    fn xlsx_reads_the_first_worksheet_only() {
        let mut workbook = Workbook::new();
        workbook.add_worksheet().write_string(0, 0, "first").unwrap();
        workbook.add_worksheet().write_string(0, 0, "second").unwrap();
        let rows = rows(FileFormat::Xlsx, &workbook.save_to_buffer().unwrap()).unwrap();
        assert_eq!(rows, vec![(1, vec![text("first")])]);
    }

    #[test]
    fn xlsx_bigger_than_the_limit_is_refused() {
        let limits = Limits { max_unpacked_bytes: 1000 };
        let error =
            read_rows(FileFormat::Xlsx, &workbook(), &limits, &mut |_, _| ControlFlow::Continue(())).unwrap_err();
        assert_eq!(error, FileError::TooLarge("the workbook unpacks to more than 1000 bytes".into()));
        assert_eq!(size_text(256 * 1024 * 1024), "256 MiB");
    }

    #[test]
    fn bodies_that_are_no_workbook_are_refused() {
        for body in [&b"Name,Amount\nAcme,12\n"[..], b"", b"PK\x03\x04broken", b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1"] {
            let error = rows(FileFormat::Xlsx, body).unwrap_err();
            assert!(
                matches!(&error, FileError::Unreadable(message) if message.starts_with("not an xlsx workbook")),
                "{error:?}"
            );
        }
        // A zip that is not a workbook.
        let error = rows(FileFormat::Xlsx, &stored_zip(b"hello")).unwrap_err();
        assert_eq!(error, FileError::Unreadable("not an xlsx workbook".into()));
    }

    /// A zip holding one stored entry `a.txt` with `content`.
    fn stored_zip(content: &[u8]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        writer.start_file("a.txt", options).unwrap();
        writer.write_all(content).unwrap();
        writer.finish().unwrap().into_inner()
    }

    /// Rewrites the uncompressed size the central directory declares for the first entry.
    fn declare_size(zip: &mut [u8], size: u32) {
        let central = zip.windows(4).position(|window| window == b"PK\x01\x02").unwrap();
        zip[central + 24..central + 28].copy_from_slice(&size.to_le_bytes());
    }

    #[test]
    fn a_zip_bomb_is_refused_by_its_declared_ratio() {
        let mut zip = stored_zip(b"0123456789");
        declare_size(&mut zip, 10 * 1001);
        let limits = Limits { max_unpacked_bytes: u64::MAX };
        let error = check_archive(&zip, &limits).unwrap_err();
        assert!(matches!(error, FileError::TooLarge(message) if message.contains("zip bomb")));
        declare_size(&mut zip, 10 * 1000);
        assert_eq!(check_archive(&zip, &limits), Ok(()));
    }

    #[test]
    fn a_lying_size_stops_the_unpacking() {
        let mut zip = stored_zip(b"hello, world");
        declare_size(&mut zip, 5);
        assert_eq!(check_archive(&zip, &DEFAULT_LIMITS), Ok(()));
        let mut archive = zip::ZipArchive::new(Cursor::new(&zip[..])).unwrap();
        let mut out = Vec::new();
        let result = archive.by_index(0).unwrap().read_to_end(&mut out);
        assert!(result.is_err(), "read {out:?}");
        assert!(out.len() <= 6, "read {out:?}");
    }

    #[test]
    fn excel_serials_become_civil_datetimes() {
        assert_eq!(excel_datetime(46_112.0, false), Some(date(2026, 3, 31).at(0, 0, 0, 0)));
        assert_eq!(excel_datetime(45_943.541, false), Some(date(2025, 10, 13).at(12, 59, 2, 0)));
        assert_eq!(excel_datetime(45_943.999_999_9, false), Some(date(2025, 10, 14).at(0, 0, 0, 0)));
        assert_eq!(excel_datetime(61.0, false), Some(date(1900, 3, 1).at(0, 0, 0, 0)));
        assert_eq!(excel_datetime(46_112.0 - 1462.0, true), Some(date(2026, 3, 31).at(0, 0, 0, 0)));
        assert_eq!(excel_datetime(2_958_465.5, false), Some(date(9999, 12, 31).at(12, 0, 0, 0)));
        assert_eq!(excel_datetime(2_958_466.0, false), None);
        assert_eq!(excel_datetime(2_958_465.999_999_9, false), None);
        assert_eq!(excel_datetime(-1.0, false), None);
        assert_eq!(excel_datetime(f64::NAN, false), None);
    }
}
