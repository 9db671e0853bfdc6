//! An uploaded file and what reading it gives (D45): the file with its format, the summary and plan
//! of an import, and the rows read with their errors.

use super::table::{Cell, FileError, FileFormat, Limits};
use crate::base::faults::RowErrors;
use crate::error::FieldErrors;
use std::ops::ControlFlow;

/// The largest file body an import takes (D45): 20 MiB.
pub const MAX_FILE_BYTES: usize = 20 * 1024 * 1024;

/// The most data rows (the header aside) an import takes (D45); more is refused whole.
pub const MAX_ROWS: usize = 100_000;

/// How far an xlsx may unpack: a 20 MiB workbook of text unpacks to about ten times that.
pub const FILE_LIMITS: Limits = Limits { max_unpacked_bytes: 256 * 1024 * 1024 };

/// How many rows a reading reads between two reports of its progress.
pub const PROGRESS_EVERY: usize = 5_000;

/// A file to import, as it came.
#[derive(Clone, Debug)]
pub struct ImportFile {
    /// CSV or xlsx.
    pub format: FileFormat,
    /// The whole body.
    pub bytes: Vec<u8>,
}

/// What browsers on Windows label a `.csv` file (and old `.xls` workbooks) with.
pub(super) const MS_EXCEL_MEDIA_TYPE: &str = "application/vnd.ms-excel";

/// How every zip archive (and so every xlsx workbook) begins.
pub(super) const ZIP_MAGIC: &[u8] = b"PK\x03\x04";

impl ImportFile {
    /// An uploaded body labelled `media_type`: CSV or xlsx by [`FileFormat::from_media_type`],
    /// or, labelled `application/vnd.ms-excel` (as browsers on Windows send a `.csv` file), by
    /// its content: a zip archive as xlsx, anything else as CSV (D51 amending D45). `None` for
    /// any other media type.
    pub fn from_upload(media_type: &str, bytes: Vec<u8>) -> Option<Self> {
        let format = FileFormat::from_media_type(media_type).or_else(|| {
            let essence = media_type.split(';').next().unwrap_or_default().trim();
            essence
                .eq_ignore_ascii_case(MS_EXCEL_MEDIA_TYPE)
                .then(|| if bytes.starts_with(ZIP_MAGIC) { FileFormat::Xlsx } else { FileFormat::Csv })
        })?;
        Some(Self { format, bytes })
    }

    /// A CSV file of `bytes`.
    pub fn csv(bytes: impl Into<Vec<u8>>) -> Self {
        Self { format: FileFormat::Csv, bytes: bytes.into() }
    }

    /// An xlsx workbook of `bytes`.
    pub fn xlsx(bytes: impl Into<Vec<u8>>) -> Self {
        Self { format: FileFormat::Xlsx, bytes: bytes.into() }
    }
}

/// What an import did, or would do (D45).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// True when nothing was written.
    pub dry_run: bool,
    /// Data rows read.
    pub row_count: usize,
    /// Records created (or that a dry run would create).
    pub created: usize,
    /// Rows that matched an active record exactly and were not written again.
    pub unchanged: usize,
}

impl ImportSummary {
    /// The summary packed into the id an idempotency claim keeps (D23), so a retry whose
    /// answer was not recorded can still be told what the import did: `unchanged` in the high
    /// half, `created` in the low.
    pub fn to_claim_id(self) -> i64 {
        ((self.unchanged as i64) << 32) | (self.created as i64 & 0xFFFF_FFFF)
    }

    /// The summary [`ImportSummary::to_claim_id`] packed.
    pub fn from_claim_id(id: i64) -> Self {
        let (created, unchanged) = ((id & 0xFFFF_FFFF) as usize, (id >> 32) as usize);
        Self { dry_run: false, row_count: created + unchanged, created, unchanged }
    }
}

/// What a stored-facts check found for a file's rows: counts of what to create and what is
/// already there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportPlan<T> {
    /// The records to create, in file order, each with its row number.
    pub create: Vec<(u32, T)>,
    /// Rows matching an active record exactly.
    pub unchanged: usize,
}

impl<T> ImportPlan<T> {
    /// What the plan does to a file of `row_count` rows, in a dry run or not.
    pub fn summary(&self, dry_run: bool, row_count: usize) -> ImportSummary {
        ImportSummary { dry_run, row_count, created: self.create.len(), unchanged: self.unchanged }
    }
}

/// One data row's cells, found by the index of the wanted column they stand under.
pub(crate) struct RowCells<'a> {
    columns: &'a [Option<usize>],
    cells: &'a [Cell],
}

impl RowCells<'_> {
    /// The cell under the `index`th wanted column; empty where the file has no such column or
    /// the row stops before it.
    pub(crate) fn get(&self, index: usize) -> &Cell {
        self.columns.get(index).copied().flatten().and_then(|column| self.cells.get(column)).unwrap_or(&Cell::Empty)
    }
}

/// What reading a file gave: how many data rows it had, the column of each wanted header
/// (or `None`), the rows that passed and the errors of the others.
pub(crate) struct ReadRows<R> {
    pub(crate) count: usize,
    pub(crate) columns: Vec<Option<usize>>,
    pub(crate) rows: Vec<R>,
    pub(crate) errors: RowErrors,
}

/// The data rows of a file: the first non-empty row is the header (at most
/// [`super::table::MAX_HEADER_BYTES`] of text, D51), matched by
/// [`super::cells::header_key`] against `wanted` (each header's name and whether it is required), and
/// `read_row` turns each later row into an `R` or records its errors; `progress` is told the
/// rows read every [`PROGRESS_EVERY`]. A file without the required headers, or unreadable, is
/// an error on `file`; more than [`MAX_ROWS`] data rows stops the reading and answers
/// [`ReadError::TooManyRows`].
pub(crate) fn read_data_rows<R>(
    file: &ImportFile,
    wanted: &[(&str, bool)],
    progress: &dyn Fn(usize),
    mut read_row: impl FnMut(u32, &RowCells<'_>, &mut RowErrors) -> Option<R>,
) -> Result<ReadRows<R>, ReadError> {
    let mut columns: Option<Vec<Option<usize>>> = None;
    let mut missing = Vec::new();
    let (mut count, mut rows, mut errors) = (0usize, Vec::new(), RowErrors::new());
    let (mut too_many, mut header_error) = (false, None);
    read_rows(file.format, &file.bytes, &FILE_LIMITS, &mut |number, cells| {
        let Some(columns) = &columns else {
            if let Err(error) = super::table::check_header(cells) {
                header_error = Some(error);
                return std::ops::ControlFlow::Break(());
            }
            let keys: Vec<String> = cells
                .iter()
                .map(|cell| super::cells::text(cell).map(|t| super::cells::header_key(&t)))
                .map(Option::unwrap_or_default)
                .collect();
            let found: Vec<Option<usize>> = wanted
                .iter()
                .map(|(name, _)| keys.iter().position(|header| *header == super::cells::header_key(name)))
                .collect();
            missing = wanted
                .iter()
                .zip(&found)
                .filter(|((_, required), column)| *required && column.is_none())
                .map(|((name, _), _)| format!("`{name}`"))
                .collect();
            columns = Some(found);
            return if missing.is_empty() {
                std::ops::ControlFlow::Continue(())
            } else {
                std::ops::ControlFlow::Break(())
            };
        };
        count += 1;
        if count > MAX_ROWS {
            too_many = true;
            return std::ops::ControlFlow::Break(());
        }
        if let Some(row) = read_row(number, &RowCells { columns, cells }, &mut errors) {
            rows.push(row);
        }
        if count.is_multiple_of(PROGRESS_EVERY) {
            progress(count);
        }
        std::ops::ControlFlow::Continue(())
    })
    .and_then(|()| header_error.map_or(Ok(()), Err))
    .map_err(|error| match error {
        FileError::Unreadable(message) => ReadError::File(message),
        FileError::TooLarge(message) => ReadError::TooLarge(message),
    })?;
    if too_many {
        return Err(ReadError::TooManyRows);
    }
    let Some(columns) = columns else {
        return Err(ReadError::File("the file is empty: its first row must name the columns".into()));
    };
    if !missing.is_empty() {
        return Err(ReadError::File(format!(
            "the header row lacks the column{} {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        )));
    }
    Ok(ReadRows { count, columns, rows, errors })
}

/// The value of a required cell, or an error on `field` of row `row` when it is empty or
/// unreadable.
pub(crate) fn required<T>(row: u32, field: &str, cell: Result<Option<T>, String>, errors: &mut RowErrors) -> Option<T> {
    match cell {
        Ok(None) => {
            errors.add(row, field, "is required");
            None
        }
        other => optional(row, field, other, errors),
    }
}

/// The value of an optional cell (`None` when empty), or an error on `field` of row `row` when
/// it is unreadable.
pub(crate) fn optional<T>(row: u32, field: &str, cell: Result<Option<T>, String>, errors: &mut RowErrors) -> Option<T> {
    cell.unwrap_or_else(|message| {
        errors.add(row, field, message);
        None
    })
}

/// The row the checks of its create passed (`checked`), kept when nothing else of the row
/// `row` failed either; otherwise its errors are recorded and the row is left out.
pub(crate) fn passed<T>(row: u32, checked: Result<T, FieldErrors>, errors: &mut RowErrors) -> Option<T> {
    match checked {
        Ok(value) if !errors.has_row(row) => Some(value),
        Ok(_) => None,
        Err(fields) => {
            errors.add_fields(row, &fields);
            None
        }
    }
}

/// Why a file was not read through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// Unreadable, or without its required headers: a 400 on `file`.
    File(String),
    /// More than [`MAX_ROWS`] data rows.
    TooManyRows,
    /// It unpacks beyond [`FILE_LIMITS`].
    TooLarge(String),
}

/// Calls `visit` with each row that has at least one non-empty cell, in file order, with its
/// number (1-based: a spreadsheet's row number as Excel shows it; a CSV's record number,
/// however many newlines its quoted cells hold, counting blank lines as Excel does when it
/// opens the file) and its cells. `visit` answers [`ControlFlow::Break`] to stop early (the
/// caller enforces row limits).
///
/// A CSV row holds as many cells as its record has fields; an xlsx row spans column A to the
/// last non-empty cell the row holds.
///
/// # Errors
/// [`FileError::Unreadable`] when the file is not of its format, not UTF-8 (CSV) or damaged,
/// or when a cell holds more than [`MAX_CELL_BYTES`] or a row more than [`MAX_ROW_CELLS`]
/// cells (D51); [`FileError::TooLarge`] when an xlsx would unpack beyond `limits`, looks like a
/// zip bomb, or would build more than its reader keeps (D51).
pub fn read_rows(
    format: FileFormat,
    bytes: &[u8],
    limits: &Limits,
    visit: &mut dyn FnMut(u32, &[Cell]) -> ControlFlow<()>,
) -> Result<(), FileError> {
    match format {
        FileFormat::Csv => super::csv::read(bytes, visit),
        FileFormat::Xlsx => super::xlsx::read(bytes, limits, visit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::imports::MAX_ERROR_KEYS;

    #[test]
    fn row_errors_cap_their_keys_but_count_every_row() {
        let mut errors = RowErrors::new();
        for row in 2..(MAX_ERROR_KEYS as u32 + 12) {
            errors.add(row, "amount", "must be positive");
        }
        errors.add(2, "amount", "a second message on a kept key");
        assert_eq!(errors.failed_rows(), MAX_ERROR_KEYS + 10);
        assert_eq!(errors.errors().iter().count(), MAX_ERROR_KEYS);
        assert_eq!(errors.errors().iter().find(|(key, _)| *key == "row2.amount").map(|(_, m)| m.len()), Some(2));
        assert_eq!(errors.to_string(), format!("{} rows of the file failed", MAX_ERROR_KEYS + 10));
    }

    #[test]
    fn uploads_labelled_ms_excel_are_read_by_their_content() {
        let format =
            |media_type: &str, bytes: &[u8]| ImportFile::from_upload(media_type, bytes.to_vec()).map(|f| f.format);
        assert_eq!(format("text/csv", b"PK\x03\x04"), Some(FileFormat::Csv), "a named format is taken as named");
        assert_eq!(format(FileFormat::Xlsx.media_type(), b"a,b"), Some(FileFormat::Xlsx));
        assert_eq!(format("application/vnd.ms-excel", b"Name,Amount\n"), Some(FileFormat::Csv));
        assert_eq!(format("Application/VND.MS-Excel; charset=utf-8", b"PK\x03\x04rest"), Some(FileFormat::Xlsx));
        assert_eq!(format("application/vnd.ms-excel", b""), Some(FileFormat::Csv));
        assert_eq!(format("application/json", b"{}"), None);
        assert_eq!(ImportFile::from_upload("text/csv", b"x".to_vec()).map(|file| file.bytes), Some(b"x".to_vec()));
    }

    #[test]
    fn a_header_row_over_64_kib_of_text_is_a_file_error() {
        let read = |body: String| {
            read_data_rows(&ImportFile::csv(body), &[("Name", true)], &|_| {}, |_, _, _| Some(()))
                .map(|read| read.count)
        };
        // Each cell is within the 64 KiB a cell may hold; together they pass what a header may.
        let (a, b) = ("a".repeat(40_000), "b".repeat(30_000));
        let error = read(format!("\n{a},Name,{b}\nAcme,x,y\n")).err();
        assert_eq!(error, Some(ReadError::File("the header row holds more than 64 KiB of text".into())));
        assert_eq!(read(format!("{a},Name\nAcme,x\n")), Ok(1));
    }

    #[test]
    fn a_summary_survives_its_claim_id() {
        let summary = ImportSummary { dry_run: false, row_count: 100_000, created: 99_000, unchanged: 1_000 };
        assert_eq!(ImportSummary::from_claim_id(summary.to_claim_id()), summary);
    }
}
