//! Reading the rows of an imported file (D45): CSV or the first worksheet of an xlsx.
//!
//! The file comes from a request body, so it is hostile until read. [`read_rows`] hands each
//! non-empty row to a visitor as it is read, numbered as the person who made the file sees it,
//! and never holds the file twice: CSV records are streamed by the `csv` crate, xlsx cells by
//! calamine's cell reader. An xlsx is a zip archive, so before calamine unpacks anything the
//! sizes its entries declare are checked against [`Limits`] (a zip bomb is refused); the `zip`
//! crate then enforces those declared sizes while unpacking.
//!
//! Cells are handed over as the file holds them ([`Cell`]); reading one as a field (dates,
//! amounts) is [`super::cells`]' job.

use std::io::Cursor;
use std::ops::ControlFlow;

use calamine::{DataRef, Reader, SheetType, Xlsx, XlsxError};
use jiff::Span;
use jiff::civil::{DateTime, Time};

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
    DateTime(DateTime),
}

/// Why a file could not be read; the message is for the user (no internals, no paths).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// Not a file of its format, or damaged.
    #[error("{0}")]
    Unreadable(String),
    /// It would unpack beyond [`Limits`].
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

/// The most an xlsx entry may unpack to per byte it takes in the archive. Deflate itself
/// cannot exceed about 1032 to 1; a real workbook stays far below.
const MAX_RATIO: u64 = 1000;

/// Excel's last row and column (1,048,576 rows, 16,384 columns).
const MAX_ROWS: u32 = 1_048_576;
const MAX_COLUMNS: u32 = 16_384;

/// Calls `visit` with each row that has at least one non-empty cell, in file order, with its
/// number (1-based: a spreadsheet's row number as Excel shows it; a CSV's record number,
/// however many newlines its quoted cells hold, counting blank lines as Excel does when it
/// opens the file) and its cells. `visit` answers [`ControlFlow::Break`] to stop early (the
/// caller enforces row limits).
///
/// A CSV row holds as many cells as its record has fields; an xlsx row spans column A to the
/// last cell the row holds.
///
/// # Errors
/// [`FileError::Unreadable`] when the file is not of its format, not UTF-8 (CSV) or damaged;
/// [`FileError::TooLarge`] when an xlsx would unpack beyond `limits` or looks like a zip bomb.
pub fn read_rows(
    format: FileFormat,
    bytes: &[u8],
    limits: &Limits,
    visit: &mut dyn FnMut(u32, &[Cell]) -> ControlFlow<()>,
) -> Result<(), FileError> {
    match format {
        FileFormat::Csv => read_csv(bytes, visit),
        FileFormat::Xlsx => read_xlsx(bytes, limits, visit),
    }
}

fn unreadable(message: impl Into<String>) -> FileError {
    FileError::Unreadable(message.into())
}

fn text_cell(text: &str) -> Cell {
    if text.trim().is_empty() { Cell::Empty } else { Cell::Text(text.to_owned()) }
}

fn is_blank(cells: &[Cell]) -> bool {
    cells.iter().all(|cell| *cell == Cell::Empty)
}

// ---------------------------------------------------------------------------------------------
// CSV

fn read_csv(bytes: &[u8], visit: &mut dyn FnMut(u32, &[Cell]) -> ControlFlow<()>) -> Result<(), FileError> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(unreadable("the file is UTF-16 text; save it as CSV UTF-8"));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(bytes);
    let mut record = csv::ByteRecord::new();
    let mut cells = Vec::new();
    // Where the previous record's text ended, and its row number.
    let (mut previous_end, mut number) = (0usize, 0u64);
    loop {
        let before = reader.position().byte();
        match reader.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(error) => {
                let line = error.position().map_or(number + 1, csv::Position::line);
                return Err(unreadable(format!("line {line} could not be read")));
            }
        }
        let after = usize::try_from(reader.position().byte()).unwrap_or(bytes.len()).min(bytes.len());
        let before = usize::try_from(before).unwrap_or(bytes.len()).min(after);
        // csv skips blank lines; Excel shows them as empty rows, so they count. Between two
        // records lie only line ends: the first ends the previous record, each other one a
        // blank line. A record's own text never starts or ends with a line end (a quoted one
        // ends with its quote).
        let start = before + bytes[before..after].iter().take_while(|b| matches!(b, b'\r' | b'\n')).count();
        let line_ends = count_line_ends(&bytes[previous_end..start]);
        number += if number == 0 { line_ends + 1 } else { line_ends.max(1) };
        previous_end = after - bytes[start..after].iter().rev().take_while(|b| matches!(b, b'\r' | b'\n')).count();
        let row = u32::try_from(number).map_err(|_| unreadable("the file has too many rows"))?;
        cells.clear();
        for field in &record {
            let text = std::str::from_utf8(field).map_err(|_| unreadable(format!("row {row} is not UTF-8 text")))?;
            cells.push(text_cell(text));
        }
        if !is_blank(&cells) && visit(row, &cells).is_break() {
            return Ok(());
        }
    }
}

/// Counts the line ends (`\r\n`, `\n` or a lone `\r`) in `bytes`.
fn count_line_ends(bytes: &[u8]) -> u64 {
    let mut count = 0;
    let mut iter = bytes.iter().peekable();
    while let Some(byte) = iter.next() {
        match byte {
            b'\n' => count += 1,
            b'\r' => {
                count += 1;
                iter.next_if_eq(&&b'\n');
            }
            _ => {}
        }
    }
    count
}

// ---------------------------------------------------------------------------------------------
// xlsx

fn read_xlsx(
    bytes: &[u8],
    limits: &Limits,
    visit: &mut dyn FnMut(u32, &[Cell]) -> ControlFlow<()>,
) -> Result<(), FileError> {
    check_archive(bytes, limits)?;
    let mut workbook: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(|error| match error {
        XlsxError::Password => unreadable("the workbook is password-protected; save it without a password"),
        _ => unreadable("not an xlsx workbook"),
    })?;
    let is_1904 = workbook.has_1904_epoch();
    let Some(name) = workbook
        .sheets_metadata()
        .iter()
        .find(|sheet| sheet.typ == SheetType::WorkSheet)
        .map(|sheet| sheet.name.clone())
    else {
        return Err(unreadable("the workbook has no worksheet"));
    };
    let damaged = |_| unreadable("the worksheet is damaged and could not be read");
    let mut reader = workbook.worksheet_cells_reader(&name).map_err(damaged)?;
    // Cells come in the order the sheet holds them, row by row; they are gathered into one
    // row at a time (placed by column), so the sheet is never held whole.
    let mut row: Vec<Cell> = Vec::new();
    let mut current: Option<u32> = None;
    while let Some(cell) = reader.next_cell().map_err(damaged)? {
        let (row_index, column) = cell.get_position();
        if row_index >= MAX_ROWS || column >= MAX_COLUMNS {
            return Err(unreadable("the worksheet has a cell beyond Excel's last row or column"));
        }
        let value = convert(cell.get_value(), is_1904);
        if current != Some(row_index) {
            if current.is_some_and(|current| row_index < current) {
                return Err(unreadable("the worksheet is damaged: its rows are out of order"));
            }
            if current.is_some_and(|previous| flush(previous, &mut row, visit).is_break()) {
                return Ok(());
            }
            current = Some(row_index);
        }
        if value != Cell::Empty {
            let column = column as usize;
            if row.len() <= column {
                row.resize(column + 1, Cell::Empty);
            }
            row[column] = value;
        }
    }
    if let Some(current) = current {
        let _ = flush(current, &mut row, visit);
    }
    Ok(())
}

/// Hands a gathered row (0-based `row_index`) to `visit` unless it is blank, and empties it.
fn flush(
    row_index: u32,
    row: &mut Vec<Cell>,
    visit: &mut dyn FnMut(u32, &[Cell]) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let flow = if is_blank(row) { ControlFlow::Continue(()) } else { visit(row_index + 1, row) };
    row.clear();
    flow
}

/// Refuses an archive that would unpack beyond `limits`, judged by the sizes its central
/// directory declares, or whose entries declare more than [`MAX_RATIO`] bytes unpacked per
/// byte packed.
///
/// Declared sizes bound what is really unpacked: the `zip` crate (9.x, checked in 9.8.1) reads
/// an entry's packed bytes through a reader limited to its declared compressed size, and wraps
/// the decompressor in a reader (`Crc32Reader` with the declared uncompressed size as its
/// limit) that fails with "File is larger than its declared uncompressed size" as soon as more
/// comes out. calamine opens entries through `ZipArchive::by_name`/`by_index`, which take the
/// sizes from the central directory checked here, so an entry whose header lies about its size
/// fails to read (the workbook is then refused as damaged) instead of unpacking more. The test
/// `a_lying_size_stops_the_unpacking` pins this down.
fn check_archive(bytes: &[u8], limits: &Limits) -> Result<(), FileError> {
    // Compound files (magic bytes 0xD0 0xCF 0x11 0xE0) are old .xls workbooks, or xlsx ones encrypted by a password.
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(unreadable("not an xlsx workbook (an .xls or password-protected file); save it as .xlsx"));
    }
    let archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| unreadable("not an xlsx workbook"))?;
    let mut total = 0u64;
    for index in 0..archive.len() {
        let entry = archive.by_index_data(index).map_err(|_| unreadable("not an xlsx workbook"))?;
        let (packed, unpacked) = (entry.compressed_size(), entry.size());
        if unpacked > packed.saturating_mul(MAX_RATIO) {
            return Err(FileError::TooLarge(format!(
                "the workbook looks like a zip bomb: a part of it unpacks to more than {MAX_RATIO} times its size"
            )));
        }
        total = total.saturating_add(unpacked);
        if total > limits.max_unpacked_bytes {
            return Err(FileError::TooLarge(format!(
                "the workbook unpacks to more than {}",
                size_text(limits.max_unpacked_bytes)
            )));
        }
    }
    Ok(())
}

/// A byte count for a person: whole MiB when it is one, else bytes.
fn size_text(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) { format!("{} MiB", bytes / MIB) } else { format!("{bytes} bytes") }
}

/// A calamine value as a [`Cell`].
fn convert(value: &DataRef<'_>, is_1904: bool) -> Cell {
    match value {
        DataRef::Empty => Cell::Empty,
        DataRef::String(text) | DataRef::DateTimeIso(text) | DataRef::DurationIso(text) => text_cell(text),
        DataRef::SharedString(text) => text_cell(text),
        DataRef::Float(number) => Cell::Number(*number),
        DataRef::Int(number) => Cell::Number(*number as f64),
        DataRef::Bool(value) => Cell::Bool(*value),
        // A duration (`[h]:mm` and the like) is no date: it stays the number of days it holds.
        DataRef::DateTime(value) if value.is_datetime() => {
            let serial = value.as_f64();
            excel_datetime(serial, is_1904).map_or(Cell::Number(serial), Cell::DateTime)
        }
        DataRef::DateTime(value) => Cell::Number(value.as_f64()),
        DataRef::Error(error) => Cell::Text(error.to_string()),
    }
}

/// The civil date-time of an Excel serial number: whole days since 1899-12-30 (since
/// 1904-01-01 in a workbook of the 1904 date system), the fraction being the time of day,
/// rounded to the second. Serials before 61 (March 1900) are a day off, as Excel's 1900
/// leap-year bug has them; no business date is that old. `None` outside Excel's range
/// (negative, or past 9999-12-31).
fn excel_datetime(serial: f64, is_1904: bool) -> Option<DateTime> {
    const LAST: f64 = 2_958_466.0; // 10000-01-01 in the 1900 system
    let serial = if is_1904 { serial + 1462.0 } else { serial };
    if !serial.is_finite() || !(0.0..LAST).contains(&serial) {
        return None;
    }
    // Whole days and the second of the day, a time that rounds up to midnight being the next
    // day. Civil arithmetic on the date alone reaches 9999-12-31 (instants stop short of it).
    let (mut days, mut seconds) = (serial.floor() as i64, ((serial - serial.floor()) * 86_400.0).round() as i64);
    if seconds >= 86_400 {
        (days, seconds) = (days + 1, seconds - 86_400);
    }
    let day = jiff::civil::date(1899, 12, 30).checked_add(Span::new().try_days(days).ok()?).ok()?;
    let time = Time::new((seconds / 3600) as i8, (seconds / 60 % 60) as i8, (seconds % 60) as i8, 0).ok()?;
    Some(day.to_datetime(time))
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use jiff::civil::date;
    use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};

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
