//! Reading a CSV upload row by row (D45), field by field so that no record is built past the
//! bounds of D51.
//!
//! A record is read one field at a time with `csv-core`, each field through a small buffer: a
//! field past [`MAX_CELL_BYTES`] stops the reading as soon as its bytes pass the bound, and a
//! record stops at its first field past [`MAX_ROW_CELLS`], so a header of millions of commas
//! or one enormous cell costs no more than the bound. Rows are numbered as Excel shows the file
//! when it opens it: blank lines count, a quoted cell's newlines do not.

use csv_core::{ReadFieldResult, Reader};

use super::table::{Cell, FileError, MAX_CELL_BYTES, MAX_ROW_CELLS, Visit, is_blank, size_text, text_cell, unreadable};

/// Reads `bytes` as CSV (UTF-8, an optional byte order mark, RFC 4180 quoting), handing each
/// non-empty record to `visit` with its row number.
///
/// # Errors
/// [`FileError::Unreadable`] for UTF-16 text, a field that is not UTF-8, a field over
/// [`MAX_CELL_BYTES`] or a record over [`MAX_ROW_CELLS`] fields (D51), each naming its row.
pub(super) fn read(bytes: &[u8], visit: Visit<'_>) -> Result<(), FileError> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(unreadable("the file is UTF-16 text; save it as CSV UTF-8"));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = Reader::new();
    let mut chunk = [0u8; 8 * 1024];
    let mut field: Vec<u8> = Vec::new();
    let mut cells: Vec<Cell> = Vec::new();
    // How far the reader has read; where the current record's text starts; where the previous
    // one's ended; the current row number, and whether the next field starts a record.
    let (mut position, mut record_start, mut previous_end) = (0usize, 0usize, 0usize);
    let (mut number, mut row, mut at_record_start) = (0u64, 0u32, true);
    loop {
        if at_record_start {
            // csv-core skips blank lines; Excel shows them as empty rows, so they count.
            // Between two records lie only line ends: the first ends the previous record, each
            // other one a blank line. A record's own text never starts or ends with a line end
            // (a quoted one ends with its quote).
            record_start = position + bytes[position..].iter().take_while(|b| matches!(b, b'\r' | b'\n')).count();
            if record_start == bytes.len() {
                return Ok(());
            }
            let line_ends = count_line_ends(&bytes[previous_end..record_start]);
            number += if number == 0 { line_ends + 1 } else { line_ends.max(1) };
            row = u32::try_from(number).map_err(|_| unreadable("the file has too many rows"))?;
            cells.clear();
            at_record_start = false;
        }
        // Past the end of `bytes` the reader is handed no input, which it takes as the end.
        let (result, read, written) = reader.read_field(&bytes[position..], &mut chunk);
        position += read;
        if field.len() + written > MAX_CELL_BYTES {
            return Err(unreadable(format!("row {row} has a cell of more than {}", size_text(MAX_CELL_BYTES as u64))));
        }
        field.extend_from_slice(&chunk[..written]);
        match result {
            ReadFieldResult::InputEmpty | ReadFieldResult::OutputFull => {}
            ReadFieldResult::End => return Ok(()),
            ReadFieldResult::Field { record_end } => {
                if cells.len() == MAX_ROW_CELLS {
                    return Err(unreadable(format!("row {row} has more than {MAX_ROW_CELLS} cells")));
                }
                let text =
                    std::str::from_utf8(&field).map_err(|_| unreadable(format!("row {row} is not UTF-8 text")))?;
                cells.push(text_cell(text));
                field.clear();
                if record_end {
                    let end = position.min(bytes.len());
                    previous_end =
                        end - bytes[record_start..end].iter().rev().take_while(|b| matches!(b, b'\r' | b'\n')).count();
                    at_record_start = true;
                    if !is_blank(&cells) && visit(row, &cells).is_break() {
                        return Ok(());
                    }
                }
            }
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

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::*;

    fn rows(bytes: &[u8]) -> Result<Vec<(u32, Vec<Cell>)>, FileError> {
        let mut rows = Vec::new();
        read(bytes, &mut |number, cells| {
            rows.push((number, cells.to_vec()));
            ControlFlow::Continue(())
        })?;
        Ok(rows)
    }

    #[test]
    fn a_cell_of_64_kib_is_read_and_one_byte_more_is_refused() {
        let mut file = b"name,note\nAcme,".to_vec();
        file.extend(std::iter::repeat_n(b'x', MAX_CELL_BYTES));
        let read = rows(&file).unwrap();
        assert_eq!(read.len(), 2);
        assert!(matches!(&read[1].1[1], Cell::Text(text) if text.len() == MAX_CELL_BYTES));
        // Quoted, with doubled quotes, one byte over: the error names the row and the bound.
        let mut file = b"name,note\n\n\"".to_vec();
        file.extend(std::iter::repeat_n(b'y', MAX_CELL_BYTES));
        file.extend(b"\"\"\"\n");
        assert_eq!(rows(&file).unwrap_err(), FileError::Unreadable("row 3 has a cell of more than 64 KiB".into()));
    }

    #[test]
    fn a_row_of_1000_cells_is_read_and_one_more_is_refused() {
        let header = vec!["h"; MAX_ROW_CELLS].join(",");
        let read = rows(format!("{header}\n1\n").as_bytes()).unwrap();
        assert_eq!(read[0].1.len(), MAX_ROW_CELLS);
        assert_eq!(read[1], (2, vec![Cell::Text("1".into())]));
        let wide = ",".repeat(MAX_ROW_CELLS);
        let error = rows(format!("a\n\"q\nq\"\n{wide}\n").as_bytes()).unwrap_err();
        assert_eq!(error, FileError::Unreadable("row 3 has more than 1000 cells".into()));
    }

    #[test]
    fn records_end_at_any_line_end_or_at_the_end_of_the_file() {
        assert_eq!(count_line_ends(b"\r\n\n\r\r\n"), 4);
        let read = rows(b"a,\"b\r\nc\"\r\n\r\n\"d\"").unwrap();
        assert_eq!(
            read,
            vec![(1, vec![Cell::Text("a".into()), Cell::Text("b\r\nc".into())]), (3, vec![Cell::Text("d".into())])]
        );
        assert_eq!(rows(b"").unwrap(), vec![]);
        assert_eq!(rows(b"\r\n\n").unwrap(), vec![]);
    }
}
