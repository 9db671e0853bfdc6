//! Hostile uploads (D51): each file is built here, read through `read_rows` (and the bank
//! statement reader), and must be refused, or read, without the heap growing past 256 MiB.
//! The peak growth of live heap bytes while each file is read is printed, for the record.

use std::io::Cursor;
use std::ops::ControlFlow;
use std::sync::Mutex;

use peak_alloc::PeakAlloc;
use pharmapay_core::bank::read::{ReadOptions, StatementError, read_statement};
use pharmapay_core::conformance::hostile::{
    cell_formats, comma_header, declared_trillion_strings, empty_shared_strings, formatted_empty_cells,
    huge_inline_cell, huge_shared_cell, repeated, workbook,
};
use pharmapay_core::imports::read_rows;
use pharmapay_core::imports::table::DEFAULT_LIMITS;
use pharmapay_core::imports::{Cell, FileError, FileFormat, ImportFile};
use zip::write::SimpleFileOptions;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Measurements share one heap: they run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// What reading may grow the heap by (D51).
const BOUND: usize = 256 * 1024 * 1024;

/// Runs `read`, prints and checks the peak growth of live heap bytes, and answers its result.
fn measured<T>(name: &str, read: impl FnOnce() -> T) -> T {
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let result = read();
    let grown = HEAP.peak_usage().saturating_sub(before);
    eprintln!("{name}: peak heap growth {:.1} MiB", grown as f64 / (1024.0 * 1024.0));
    assert!(grown < BOUND, "{name} grew the heap by {grown} bytes");
    result
}

/// Reads every row of `bytes`, answering how many there were.
fn count_rows(format: FileFormat, bytes: &[u8]) -> Result<usize, FileError> {
    let mut count = 0;
    read_rows(format, bytes, &DEFAULT_LIMITS, &mut |_, _| {
        count += 1;
        ControlFlow::Continue(())
    })?;
    Ok(count)
}

fn is_refused(result: &Result<usize, FileError>) -> bool {
    matches!(result, Err(FileError::Unreadable(_) | FileError::TooLarge(_)))
}

#[test]
fn a_declared_trillion_shared_strings_sizes_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let bytes = declared_trillion_strings();
    assert!(bytes.len() < 2048, "{}", bytes.len());
    let mut rows = Vec::new();
    let result = measured("sharedStrings uniqueCount=10^15", || {
        read_rows(FileFormat::Xlsx, &bytes, &DEFAULT_LIMITS, &mut |number, cells| {
            rows.push((number, cells.to_vec()));
            ControlFlow::Continue(())
        })
    });
    assert_eq!(result, Ok(()));
    assert_eq!(rows, vec![(1, vec![Cell::Text("Name".into())]), (2, vec![Cell::Text("Acme".into())])]);
}

#[test]
fn hundreds_of_thousands_of_cell_formats_are_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let bytes = cell_formats(400_000);
    let result = measured("400,000 <xf/> in styles.xml", || count_rows(FileFormat::Xlsx, &bytes));
    assert_eq!(result, Err(FileError::Unreadable("the workbook has more than 64000 cell formats".into())));
}

#[test]
fn a_row_of_hundreds_of_thousands_of_formatted_empty_cells_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let bytes = formatted_empty_cells(400_000);
    let result = measured("400,000 formatted empty cells in one row", || count_rows(FileFormat::Xlsx, &bytes));
    assert_eq!(result, Err(FileError::Unreadable("row 1 has more than 1000 cells".into())));
}

#[test]
fn hundreds_of_thousands_of_rows_of_formatted_empty_cells_build_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let row = |index: usize, out: &mut String| {
        use std::fmt::Write as _;
        let number = index + 1;
        let _ = write!(out, r#"<row r="{number}"><c r="A{number}" s="1"/><c r="ALL{number}" s="1"/></row>"#);
    };
    let bytes = workbook(vec![(
        "xl/worksheets/sheet1.xml",
        repeated("<worksheet><sheetData>", 400_000, row, "</sheetData></worksheet>"),
    )]);
    // Nothing to read: no row holds a value, and none is kept.
    let result = measured("400,000 rows of formatted empty cells", || count_rows(FileFormat::Xlsx, &bytes));
    assert_eq!(result, Ok(0));
    // A statement of nothing has no header row: a 400 on `file`.
    let file = ImportFile::xlsx(bytes);
    let result = measured("400,000 rows of formatted empty cells, as a statement", || {
        read_statement(&file, &ReadOptions::default())
    });
    assert!(matches!(result, Err(StatementError::File(_))), "{result:?}");
}

#[test]
fn millions_of_empty_shared_strings_are_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let bytes = empty_shared_strings(6_000_000);
    let result = measured("6,000,000 <si/> in sharedStrings.xml", || count_rows(FileFormat::Xlsx, &bytes));
    assert_eq!(result, Err(FileError::TooLarge("the workbook's shared strings take more than 64 MiB".into())));
}

#[test]
fn a_200_mib_cell_is_refused_as_a_shared_or_an_inline_string() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    const SIZE: usize = 200 * 1024 * 1024;
    let shared = huge_shared_cell(SIZE);
    let result = measured("a 200 MiB shared string", || count_rows(FileFormat::Xlsx, &shared));
    assert!(is_refused(&result), "{result:?}");
    drop(shared);
    let inline = huge_inline_cell(SIZE);
    let result = measured("a 200 MiB inline string", || count_rows(FileFormat::Xlsx, &inline));
    assert!(is_refused(&result), "{result:?}");
    let file = ImportFile::xlsx(inline);
    let result = measured("a 200 MiB inline string, as a statement", || read_statement(&file, &ReadOptions::default()));
    assert!(matches!(result, Err(StatementError::File(_))), "{result:?}");
}

#[test]
fn an_archive_of_too_many_entries_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for index in 0..20_000 {
        zip.start_file(format!("{index}"), options).unwrap();
    }
    let bytes = zip.finish().unwrap().into_inner();
    let result = measured("20,000 zip entries", || count_rows(FileFormat::Xlsx, &bytes));
    assert_eq!(result, Err(FileError::Unreadable("the workbook has more than 10000 parts".into())));
}

#[test]
fn a_csv_header_of_19_mib_of_commas_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let bytes = comma_header(19 * 1024 * 1024);
    let result = measured("a CSV header of 19 MiB of commas", || count_rows(FileFormat::Csv, &bytes));
    assert_eq!(result, Err(FileError::Unreadable("row 1 has more than 1000 cells".into())));
    let file = ImportFile::csv(bytes);
    let result =
        measured("a CSV header of 19 MiB of commas, as a statement", || read_statement(&file, &ReadOptions::default()));
    assert_eq!(result, Err(StatementError::File("row 1 has more than 1000 cells".into())));
}

#[test]
fn a_csv_cell_of_65_kib_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut bytes = b"Date,Debit,Narration\n05/04/2026,100,\"".to_vec();
    bytes.extend(std::iter::repeat_n(b'n', 65 * 1024));
    bytes.extend(b"\"\n");
    let result = measured("a CSV cell of 65 KiB", || count_rows(FileFormat::Csv, &bytes));
    assert_eq!(result, Err(FileError::Unreadable("row 2 has a cell of more than 64 KiB".into())));
    let file = ImportFile::csv(bytes);
    let result = measured("a CSV cell of 65 KiB, as a statement", || read_statement(&file, &ReadOptions::default()));
    assert_eq!(result, Err(StatementError::File("row 2 has a cell of more than 64 KiB".into())));
}

#[test]
fn a_csv_row_of_1001_cells_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let bytes = format!("Date,Debit\n\n{}\n", vec!["1"; 1_001].join(","));
    let result = measured("a CSV row of 1,001 cells", || count_rows(FileFormat::Csv, bytes.as_bytes()));
    assert_eq!(result, Err(FileError::Unreadable("row 3 has more than 1000 cells".into())));
}

#[test]
fn a_legitimate_workbook_of_100000_rows_reads_whole() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut book = rust_xlsxwriter::Workbook::new();
    let day = rust_xlsxwriter::Format::new().set_num_format("dd/mm/yyyy");
    let sheet = book.add_worksheet_with_constant_memory().unwrap();
    for (column, name) in ["Invoice Number", "Vendor", "Amount", "Invoice Date"].into_iter().enumerate() {
        sheet.write_string(0, column as u16, name).unwrap();
    }
    for row in 1..=100_000u32 {
        sheet.write_string(row, 0, format!("INV-{row}")).unwrap();
        sheet.write_string(row, 1, format!("Vendor {}", row % 500)).unwrap();
        sheet.write_number(row, 2, f64::from(row) * 1.25).unwrap();
        sheet.write_number_with_format(row, 3, 46_000.0 + f64::from(row % 365), &day).unwrap();
    }
    let bytes = book.save_to_buffer().unwrap();
    let mut last = None;
    let result = measured("a workbook of 100,000 rows", || {
        read_rows(FileFormat::Xlsx, &bytes, &DEFAULT_LIMITS, &mut |number, cells| {
            last = Some((number, cells.to_vec()));
            ControlFlow::Continue(())
        })
    });
    assert_eq!(result, Ok(()));
    let (number, cells) = last.unwrap();
    assert_eq!(number, 100_001);
    assert_eq!(cells[0], Cell::Text("INV-100000".into()));
    assert_eq!(cells[2], Cell::Number(125_000.0));
    assert!(matches!(cells[3], Cell::DateTime(_)), "{:?}", cells[3]);
}
