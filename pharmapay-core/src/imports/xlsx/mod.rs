//! Reading the first worksheet of an xlsx upload (D45), bounded by what the reader builds and
//! never by what the file declares about itself (D51).
//!
//! An xlsx is a zip archive of XML parts. Before anything is unpacked, `parts.rs` (which
//! also reads each part as XML events) refuses an archive whose end record declares an absurd
//! number of entries, whose entries declare more than [`Limits`] unpacked, or more than
//! [`MAX_RATIO`] bytes unpacked per byte packed. Each part is then read as a stream of XML events straight out of its zip entry,
//! never unpacked whole, and no single event may take more than [`MAX_EVENT_BYTES`] (a wrapper
//! around the entry's reader fails once an event has consumed that much, so a 200 MiB text
//! node never sits in a buffer). The parts are read in this order:
//!
//! - `xl/_rels/workbook.xml.rels`: which part each sheet is, which parts are the shared
//!   strings and the styles (by relationship type; `xl/sharedStrings.xml` and `xl/styles.xml`
//!   when not named).
//! - `xl/workbook.xml`: the date system (`date1904`) and the sheets in order; the first whose
//!   relationship is a worksheet (not a chartsheet) is read.
//! - The shared strings, kept in one buffer with their offsets ([`SharedStrings`]); the count
//!   the part declares is ignored, and the text kept is capped at [`MAX_SHARED_BYTES`].
//! - The styles: which cell formats (at most [`MAX_FORMATS`], as Excel allows) show dates.
//! - The worksheet, one row at a time: no cell over [`MAX_CELL_BYTES`] of text, no row over
//!   [`MAX_ROW_CELLS`] cells (empty ones included) nor a column past it.
//!
//! Elements are matched by local name, so strict OOXML's namespaces read as transitional ones.

use jiff::Span;
use jiff::civil::{DateTime, Time};
use quick_xml::events::{BytesStart, Event};
use std::collections::HashMap;
use std::io::Read;

mod parts;

use super::table::{
    Cell, FileError, Limits, MAX_CELL_BYTES, MAX_ROW_CELLS, Visit, is_blank, size_text, text_cell, unreadable,
};
#[cfg(test)]
pub(super) use parts::check_archive;
#[cfg(test)]
use parts::too_many_entries;
use parts::{Archive, Part, attributes, damaged, not_a_workbook, open_checked, open_part, start, text_of};

/// The most the shared strings may take, counted as their text plus [`SHARED_ENTRY_COST`] per
/// string (D51).
const MAX_SHARED_BYTES: usize = 64 * 1024 * 1024;

/// What one shared string costs beside its text: its offset, with room to grow.
const SHARED_ENTRY_COST: usize = 16;

/// The most cell formats a workbook may hold, as in Excel (D51).
const MAX_FORMATS: usize = 64_000;

/// The most text the kept relationships (ids and targets) may take.
const MAX_RELATIONSHIP_BYTES: usize = 1024 * 1024;

/// Excel's last row.
const MAX_ROWS: u32 = 1_048_576;

/// Reads the first worksheet of the workbook `bytes`, handing each non-empty row to `visit`.
pub(super) fn read(bytes: &[u8], limits: &Limits, visit: Visit<'_>) -> Result<(), FileError> {
    let mut archive = open_checked(bytes, limits)?;
    let relationships = read_relationships(&mut archive)?;
    let (sheet, is_1904) = read_workbook(&mut archive, &relationships)?;
    let shared = relationships.shared_strings.as_deref().unwrap_or("xl/sharedStrings.xml");
    let strings = match open_part(&mut archive, shared)? {
        Some(part) => SharedStrings::read(part)?,
        None => SharedStrings::default(),
    };
    let styles = relationships.styles.as_deref().unwrap_or("xl/styles.xml");
    let formats = match open_part(&mut archive, styles)? {
        Some(part) => read_formats(part)?,
        None => Vec::new(),
    };
    let part = open_part(&mut archive, &sheet)?.ok_or_else(damaged)?;
    Sheet { strings: &strings, formats: &formats, is_1904 }.read(part, visit)
}

// ---------------------------------------------------------------------------------------------
// The workbook and its relationships

/// What `xl/_rels/workbook.xml.rels` says: the worksheets by relationship id, and where the
/// shared strings and styles are.
#[derive(Debug, Default)]
struct Relationships {
    worksheets: HashMap<String, String>,
    shared_strings: Option<String>,
    styles: Option<String>,
}

fn read_relationships(archive: &mut Archive<'_>) -> Result<Relationships, FileError> {
    let mut part = open_part(archive, "xl/_rels/workbook.xml.rels")?.ok_or_else(not_a_workbook)?;
    let mut found = Relationships::default();
    let mut kept = 0usize;
    loop {
        let event = part.next()?;
        if matches!(event, Event::Eof) {
            return Ok(found);
        }
        let Some((element, _)) = start(&event) else { continue };
        if element.local_name().as_ref() != "Relationship" {
            continue;
        }
        let (mut id, mut kind, mut target, mut external) = (String::new(), String::new(), String::new(), false);
        attributes(element, |name, value| match name {
            "Id" => id = value.into_owned(),
            "Type" => kind = value.rsplit('/').next().unwrap_or_default().to_owned(),
            "Target" => target = value.into_owned(),
            "TargetMode" => external = value.eq_ignore_ascii_case("External"),
            _ => {}
        })?;
        if external {
            continue;
        }
        kept += id.len() + target.len();
        if kept > MAX_RELATIONSHIP_BYTES {
            return Err(unreadable("the workbook names too many parts"));
        }
        let target = resolve_target(&target);
        match kind.as_str() {
            "worksheet" => {
                found.worksheets.insert(id, target);
            }
            "sharedStrings" => found.shared_strings = found.shared_strings.or(Some(target)),
            "styles" => found.styles = found.styles.or(Some(target)),
            _ => {}
        }
    }
}

/// A relationship's target as a part name: relative to `xl/`, or absolute from the archive's
/// root when it starts with `/`; `.` and `..` resolved.
fn resolve_target(target: &str) -> String {
    let (base, path) = match target.strip_prefix('/') {
        Some(absolute) => ("", absolute),
        None => ("xl", target),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in base.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

/// The part of the first sheet of `xl/workbook.xml` that is a worksheet, and whether the
/// workbook counts dates from 1904.
fn read_workbook(archive: &mut Archive<'_>, relationships: &Relationships) -> Result<(String, bool), FileError> {
    let mut part = open_part(archive, "xl/workbook.xml")?.ok_or_else(not_a_workbook)?;
    let mut is_1904 = false;
    loop {
        let event = part.next()?;
        if matches!(event, Event::Eof) {
            return Err(unreadable("the workbook has no worksheet"));
        }
        let Some((element, _)) = start(&event) else { continue };
        match element.local_name().as_ref() {
            "workbookPr" => attributes(element, |name, value| {
                if name == "date1904" {
                    is_1904 = matches!(value.as_ref(), "1" | "true");
                }
            })?,
            "sheet" => {
                let mut sheet = None;
                attributes(element, |name, value| {
                    if name == "id" {
                        sheet = relationships.worksheets.get(value.as_ref()).cloned();
                    }
                })?;
                if let Some(sheet) = sheet {
                    return Ok((sheet, is_1904));
                }
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Shared strings and styles

/// The workbook's shared strings, in one buffer: string `i` is `text[ends[i - 1]..ends[i]]`.
/// Their cost is capped at [`MAX_SHARED_BYTES`]; the count the part declares sizes nothing
/// (D51).
#[derive(Debug, Default)]
struct SharedStrings {
    text: String,
    ends: Vec<u32>,
}

impl SharedStrings {
    /// Reads a shared strings part: each `<si>`'s text, plain (`<t>`) or rich (runs `<r><t>`),
    /// without its phonetic guide (`<rPh>`).
    fn read(mut part: Part<impl Read>) -> Result<Self, FileError> {
        let mut strings = Self::default();
        let (mut in_item, mut in_text, mut phonetic, mut start) = (false, false, 0u32, 0usize);
        loop {
            let event = part.next()?;
            match &event {
                Event::Eof => return Ok(strings),
                Event::Start(element) | Event::Empty(element) => {
                    let empty = matches!(event, Event::Empty(_));
                    match element.local_name().as_ref() {
                        "si" => {
                            start = strings.text.len();
                            in_item = !empty;
                            if empty {
                                strings.push_end(start)?;
                            }
                        }
                        "rPh" if !empty => phonetic += 1,
                        "t" if in_item && !empty => in_text = phonetic == 0,
                        _ => {}
                    }
                }
                Event::End(element) => match element.local_name().as_ref() {
                    "si" if in_item => {
                        in_item = false;
                        strings.push_end(start)?;
                    }
                    "rPh" => phonetic = phonetic.saturating_sub(1),
                    "t" => in_text = false,
                    _ => {}
                },
                _ if in_text => {
                    if let Some(text) = text_of(&event)? {
                        if strings.text.len() - start + text.len() > MAX_CELL_BYTES {
                            return Err(unreadable(format!(
                                "a shared string holds more than {}",
                                size_text(MAX_CELL_BYTES as u64)
                            )));
                        }
                        strings.push_text(&text)?;
                    }
                }
                _ => {}
            }
        }
    }

    /// The bytes the strings are counted as taking.
    fn cost(&self, more_text: usize, more_strings: usize) -> usize {
        self.text.len() + more_text + (self.ends.len() + more_strings) * SHARED_ENTRY_COST
    }

    fn too_large() -> FileError {
        FileError::TooLarge(format!(
            "the workbook's shared strings take more than {}",
            size_text(MAX_SHARED_BYTES as u64)
        ))
    }

    fn push_text(&mut self, text: &str) -> Result<(), FileError> {
        if self.cost(text.len(), 1) > MAX_SHARED_BYTES {
            return Err(Self::too_large());
        }
        // Grow by doubling, but never past the cap, so the buffer itself stays within it.
        if self.text.capacity() - self.text.len() < text.len() {
            let wanted = (self.text.len() * 2).max(self.text.len() + text.len()).clamp(4096, MAX_SHARED_BYTES);
            self.text.reserve_exact(wanted.max(self.text.len() + text.len()) - self.text.len());
        }
        self.text.push_str(text);
        Ok(())
    }

    fn push_end(&mut self, start: usize) -> Result<(), FileError> {
        if self.cost(0, 1) > MAX_SHARED_BYTES {
            return Err(Self::too_large());
        }
        debug_assert!(start <= self.text.len());
        // The cap keeps every offset within `u32`.
        self.ends.push(self.text.len() as u32);
        Ok(())
    }

    /// String `index`, if there is one.
    fn get(&self, index: usize) -> Option<&str> {
        let end = *self.ends.get(index)? as usize;
        let start = if index == 0 { 0 } else { self.ends[index - 1] as usize };
        self.text.get(start..end)
    }
}

/// Whether each cell format (`cellXfs`' `<xf>`, by index) shows dates: its number format is a
/// built-in date or time, or a custom code that shows one ([`is_date_code`]). At most
/// [`MAX_FORMATS`] formats are kept (D51).
fn read_formats(mut part: Part<impl Read>) -> Result<Vec<bool>, FileError> {
    let mut custom: HashMap<u32, bool> = HashMap::new();
    let mut format_ids: Vec<u32> = Vec::new();
    let (mut in_codes, mut in_cell_formats) = (false, false);
    loop {
        let event = part.next()?;
        match &event {
            Event::Eof => break,
            Event::End(element) => match element.local_name().as_ref() {
                "numFmts" => in_codes = false,
                "cellXfs" => in_cell_formats = false,
                _ => {}
            },
            _ => {
                let Some((element, empty)) = start(&event) else { continue };
                match element.local_name().as_ref() {
                    "numFmts" => in_codes = !empty,
                    "cellXfs" => in_cell_formats = !empty,
                    "numFmt" if in_codes => {
                        let (mut id, mut is_date) = (None, false);
                        attributes(element, |name, value| match name {
                            "numFmtId" => id = value.trim().parse::<u32>().ok(),
                            "formatCode" => is_date = is_date_code(&value),
                            _ => {}
                        })?;
                        if custom.len() >= MAX_FORMATS {
                            return Err(too_many_formats());
                        }
                        custom.insert(id.ok_or_else(damaged)?, is_date);
                    }
                    "xf" if in_cell_formats => {
                        if format_ids.len() >= MAX_FORMATS {
                            return Err(too_many_formats());
                        }
                        let mut id = 0;
                        attributes(element, |name, value| {
                            if name == "numFmtId" {
                                id = value.trim().parse::<u32>().unwrap_or(0);
                            }
                        })?;
                        format_ids.push(id);
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(format_ids.into_iter().map(|id| custom.get(&id).copied().unwrap_or_else(|| is_builtin_date(id))).collect())
}

fn too_many_formats() -> FileError {
    unreadable(format!("the workbook has more than {MAX_FORMATS} cell formats"))
}

/// Whether a built-in number format shows a date or time. 46 (`[h]:mm:ss`) is an elapsed
/// duration, which stays a number of days.
fn is_builtin_date(id: u32) -> bool {
    matches!(id, 14..=22 | 27..=36 | 45 | 47 | 50..=58)
}

/// Whether a custom number format code shows a date or time: its first section holds a `d`,
/// `m`, `y`, `h` or `s` outside quotes, escapes (`\x`, `_x`, `*x`) and `[...]` (colours,
/// conditions, locales). One with an elapsed part (`[h]`, `[mm]`, `[ss]`) is a duration and
/// stays a number of days, as a number of days is what it holds.
fn is_date_code(code: &str) -> bool {
    let mut chars = code.chars();
    let mut date = false;
    while let Some(char) = chars.next() {
        match char {
            ';' => break,
            '"' => {
                chars.by_ref().find(|&c| c == '"');
            }
            '\\' | '_' | '*' => {
                chars.next();
            }
            '[' => {
                let (mut first, mut elapsed) = (None, true);
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    let c = c.to_ascii_lowercase();
                    elapsed &= matches!(c, 'h' | 'm' | 's') && first.is_none_or(|first| first == c);
                    first = Some(c);
                }
                if elapsed && first.is_some() {
                    return false;
                }
            }
            c if matches!(c.to_ascii_lowercase(), 'd' | 'm' | 'y' | 'h' | 's') => date = true,
            _ => {}
        }
    }
    date
}

// ---------------------------------------------------------------------------------------------
// The worksheet

/// A cell's type, as its `t` attribute names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `n` (or none): a number, a date when its format shows one.
    Number,
    /// `s`: an index into the shared strings.
    Shared,
    /// `b`: `1` or `0`.
    Bool,
    /// `str`, `inlineStr` or `d` (an ISO 8601 date, kept as the text it is): text.
    Text,
    /// `e`: an error such as `#DIV/0!`, kept as its text.
    Error,
}

/// What the worksheet is read with.
struct Sheet<'a> {
    strings: &'a SharedStrings,
    formats: &'a [bool],
    is_1904: bool,
}

/// The cell being read.
struct CellState {
    column: usize,
    kind: Kind,
    style: Option<usize>,
    text: String,
    in_value: bool,
    in_inline: bool,
    in_text: bool,
    phonetic: u32,
}

impl Sheet<'_> {
    fn read(&self, mut part: Part<impl Read>, visit: Visit<'_>) -> Result<(), FileError> {
        let mut row: Vec<Cell> = Vec::new();
        // The row being read (1-based), the last one read, and the cells of this one so far.
        let (mut number, mut last, mut count, mut next_column) = (None::<u32>, 0u32, 0usize, 0usize);
        let mut in_data = false;
        let mut cell: Option<CellState> = None;
        loop {
            let event = part.next()?;
            match &event {
                Event::Eof => return Ok(()),
                Event::Start(element) | Event::Empty(element) => {
                    let empty = matches!(event, Event::Empty(_));
                    match element.local_name().as_ref() {
                        "sheetData" => in_data = !empty,
                        "row" if in_data => {
                            let mut declared = None;
                            attributes(element, |name, value| {
                                if name == "r" {
                                    declared = Some(value.trim().parse::<u32>());
                                }
                            })?;
                            let current = declared.unwrap_or(Ok(last + 1)).map_err(|_| damaged())?;
                            if current == 0 || current > MAX_ROWS {
                                return Err(unreadable("the worksheet has a cell beyond Excel's last row or column"));
                            }
                            if current <= last {
                                return Err(unreadable("the worksheet is damaged: its rows are out of order"));
                            }
                            (last, count, next_column) = (current, 0, 0);
                            number = (!empty).then_some(current);
                        }
                        "c" if number.is_some() => {
                            let row_number = number.unwrap_or_default();
                            count += 1;
                            if count > MAX_ROW_CELLS {
                                return Err(unreadable(format!(
                                    "row {row_number} has more than {MAX_ROW_CELLS} cells"
                                )));
                            }
                            let state = self.start_cell(element, next_column, row_number)?;
                            next_column = state.column + 1;
                            if empty {
                                self.place(state, &mut row)?;
                            } else {
                                cell = Some(state);
                            }
                        }
                        name if !empty => {
                            if let Some(cell) = &mut cell {
                                match name {
                                    "v" => cell.in_value = true,
                                    "is" => cell.in_inline = true,
                                    "rPh" => cell.phonetic += 1,
                                    "t" => cell.in_text = cell.in_inline && cell.phonetic == 0,
                                    _ => {}
                                }
                            }
                        }
                        _ => {}
                    }
                }
                Event::End(element) => match element.local_name().as_ref() {
                    "sheetData" => return Ok(()),
                    "row" => {
                        if let Some(current) = number.take()
                            && !is_blank(&row)
                            && visit(current, &row).is_break()
                        {
                            return Ok(());
                        }
                        row.clear();
                    }
                    "c" => {
                        if let Some(state) = cell.take() {
                            self.place(state, &mut row)?;
                        }
                    }
                    name => {
                        if let Some(cell) = &mut cell {
                            match name {
                                "v" => cell.in_value = false,
                                "is" => cell.in_inline = false,
                                "rPh" => cell.phonetic = cell.phonetic.saturating_sub(1),
                                "t" => cell.in_text = false,
                                _ => {}
                            }
                        }
                    }
                },
                _ => {
                    if let Some(state) = &mut cell
                        && (state.in_value || state.in_text)
                        && let Some(text) = text_of(&event)?
                    {
                        if state.text.len() + text.len() > MAX_CELL_BYTES {
                            return Err(unreadable(format!(
                                "row {} has a cell of more than {}",
                                number.unwrap_or_default(),
                                size_text(MAX_CELL_BYTES as u64)
                            )));
                        }
                        state.text.push_str(&text);
                    }
                }
            }
        }
    }

    /// A cell's state from its `<c>` element: its column (from `r`, else the one after the
    /// previous cell's), type and format.
    fn start_cell(&self, element: &BytesStart<'_>, next_column: usize, row: u32) -> Result<CellState, FileError> {
        let (mut column, mut kind, mut style, mut bad) = (next_column, Kind::Number, None, false);
        attributes(element, |name, value| match name {
            "r" => match column_of(&value) {
                Some(found) => column = found,
                None => bad = true,
            },
            "t" => {
                kind = match value.as_ref() {
                    "s" => Kind::Shared,
                    "b" => Kind::Bool,
                    "str" | "inlineStr" | "d" => Kind::Text,
                    "e" => Kind::Error,
                    _ => Kind::Number,
                }
            }
            "s" => match value.trim().parse::<usize>() {
                Ok(found) => style = Some(found),
                Err(_) => bad = true,
            },
            _ => {}
        })?;
        if bad {
            return Err(damaged());
        }
        if column >= MAX_ROW_CELLS {
            return Err(unreadable(format!("row {row} has a cell beyond column {MAX_ROW_CELLS}")));
        }
        Ok(CellState {
            column,
            kind,
            style,
            text: String::new(),
            in_value: false,
            in_inline: false,
            in_text: false,
            phonetic: 0,
        })
    }

    /// Puts a read cell in its column of `row`, when it holds something.
    fn place(&self, state: CellState, row: &mut Vec<Cell>) -> Result<(), FileError> {
        let value = self.value(&state)?;
        if value != Cell::Empty {
            if row.len() <= state.column {
                row.resize(state.column + 1, Cell::Empty);
            }
            row[state.column] = value;
        }
        Ok(())
    }

    /// A read cell as a [`Cell`].
    fn value(&self, state: &CellState) -> Result<Cell, FileError> {
        let text = state.text.as_str();
        let trimmed = text.trim();
        if trimmed.is_empty() && state.kind != Kind::Text {
            return Ok(Cell::Empty);
        }
        Ok(match state.kind {
            Kind::Text => text_cell(text),
            Kind::Error => Cell::Text(text.to_owned()),
            Kind::Shared => {
                let index = trimmed.parse::<usize>().map_err(|_| damaged())?;
                text_cell(self.strings.get(index).ok_or_else(damaged)?)
            }
            Kind::Bool => match trimmed {
                "1" | "true" => Cell::Bool(true),
                "0" | "false" => Cell::Bool(false),
                _ => return Err(damaged()),
            },
            Kind::Number => {
                let number = trimmed.parse::<f64>().map_err(|_| damaged())?;
                let is_date = state.style.and_then(|style| self.formats.get(style)).copied().unwrap_or(false);
                if is_date {
                    excel_datetime(number, self.is_1904).map_or(Cell::Number(number), Cell::DateTime)
                } else {
                    Cell::Number(number)
                }
            }
        })
    }
}

/// The 0-based column of a cell reference such as `B3` (its letters); `None` when it has none
/// or they name a column past Excel's last (`XFD`).
fn column_of(reference: &str) -> Option<usize> {
    let letters = reference.trim().bytes().take_while(u8::is_ascii_alphabetic);
    let mut column = 0usize;
    let mut any = false;
    for letter in letters {
        column = column * 26 + usize::from(letter.to_ascii_uppercase() - b'A' + 1);
        any = true;
        if column > 16_384 {
            return None;
        }
    }
    any.then(|| column - 1)
}

/// The civil date-time of an Excel serial number: whole days since 1899-12-30 (since
/// 1904-01-01 in a workbook of the 1904 date system), the fraction being the time of day,
/// rounded to the second. Serials before 61 (March 1900) are a day off, as Excel's 1900
/// leap-year bug has them; no business date is that old. `None` outside Excel's range
/// (negative, or past 9999-12-31).
pub(super) fn excel_datetime(serial: f64, is_1904: bool) -> Option<DateTime> {
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
mod tests;
