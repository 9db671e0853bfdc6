//! Reading one cell of an imported file as a field (D45), shared by every import.
//!
//! Headers are matched ignoring case, spaces, `_`, `-` and `.` ([`header_key`]). Cells are read
//! as pharmacies write them: xlsx numbers and dates as they are; text amounts with Indian or
//! Western thousands separators and an optional leading `₹`, `Rs` or `Rs.`
//! ([`amount_text`]); text dates `YYYY-MM-DD`, `DD/MM/YYYY`, `DD-MM-YYYY` (day first, as Indian
//! documents write them) or RFC 3339 ([`date`]). What comes out is the text the API itself
//! reads (an amount's plain decimal, a date through [`crate::clock::parse_datetime`]), so an
//! imported row and a request body are judged by the same rules (D1, D2).

use jiff::Timestamp;
use jiff::civil::{Date, DateTime, Time};

use super::table::Cell;
use crate::clock::{self, DateError};

const AMOUNT_MESSAGE: &str = "must be a number such as 1,23,456.50";
const DATE_MESSAGE: &str = "must be a date such as 31/03/2026 or 2026-03-31";

/// A header as D45 matches it: lower case, without white space, `_`, `-` and `.`
/// (`"Invoice_Number"` and `"invoice number"` are both `"invoicenumber"`).
pub fn header_key(header: &str) -> String {
    header
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '_' | '-' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// A cell as text, or `None` when it is empty: text trimmed; a number in its shortest form (an
/// integral value without `.0`, so a phone number typed as a number, 9876543210, reads
/// `"9876543210"`; 1234.5 reads `"1234.5"`); a boolean as `TRUE` or `FALSE`; a date-time as
/// `YYYY-MM-DD` when its time is midnight, else `YYYY-MM-DDTHH:MM:SS`.
pub fn text(cell: &Cell) -> Option<String> {
    match cell {
        Cell::Empty => None,
        Cell::Text(text) => {
            let text = text.trim();
            (!text.is_empty()).then(|| text.to_owned())
        }
        Cell::Number(number) => Some(number_text(*number)),
        Cell::Bool(value) => Some(if *value { "TRUE" } else { "FALSE" }.to_owned()),
        Cell::DateTime(value) => Some(datetime_text(*value)),
    }
}

/// A number's shortest round-trip text (Rust's `Display`: never an exponent, no `.0`), with
/// negative zero read as zero.
fn number_text(number: f64) -> String {
    (number + 0.0).to_string()
}

fn datetime_text(value: DateTime) -> String {
    if value.time() == Time::midnight() {
        value.date().to_string()
    } else {
        value.strftime("%Y-%m-%dT%H:%M:%S").to_string()
    }
}

/// An amount cell as the plain decimal text the API reads (digits, an optional leading `-`,
/// an optional `.` and fraction), or `None` when the cell is empty.
///
/// A number gives its shortest round-trip text. A text may start with `₹`, `Rs` or `Rs.` (any
/// case), a space may follow, then the number, with optional thousands separators `,` in
/// Indian (`1,23,456.50`) or Western (`123,456.50`) grouping: the last group before the point
/// has 3 digits, earlier ones 2 or 3, the first 1 to 3. Whether the amount is positive and
/// small enough is the API's reader's to say ([`crate::money::Amount::parse`]).
///
/// # Errors
/// A message for the user when the cell holds no such number.
pub fn amount_text(cell: &Cell) -> Result<Option<String>, String> {
    let amount = match cell {
        Cell::Empty => return Ok(None),
        Cell::Text(text) if text.trim().is_empty() => return Ok(None),
        Cell::Text(text) => text_amount(text.trim()),
        Cell::Number(number) => number_amount(*number),
        Cell::Bool(_) | Cell::DateTime(_) => None,
    };
    amount.map(Some).ok_or_else(|| AMOUNT_MESSAGE.to_owned())
}

fn number_amount(number: f64) -> Option<String> {
    if !number.is_finite() {
        return None;
    }
    let text = number_text(number);
    is_plain_decimal(&text).then_some(text)
}

/// True for `-?digits(.digits)?`.
fn is_plain_decimal(text: &str) -> bool {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, "0"));
    all_digits(integer) && all_digits(fraction)
}

fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

fn text_amount(text: &str) -> Option<String> {
    // A minus sign may stand before the currency or after it: `-₹500`, `₹ -500`.
    let (mut negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, text),
    };
    rest = strip_currency(rest);
    if !negative && let Some(unsigned) = rest.strip_prefix('-') {
        (negative, rest) = (true, unsigned);
    }
    let (integer, fraction) = match rest.split_once('.') {
        Some((integer, fraction)) => (integer, Some(fraction)),
        None => (rest, None),
    };
    if fraction.is_some_and(|fraction| !all_digits(fraction)) {
        return None;
    }
    let digits = ungrouped(integer)?;
    let sign = if negative { "-" } else { "" };
    Some(match fraction {
        Some(fraction) => format!("{sign}{digits}.{fraction}"),
        None => format!("{sign}{digits}"),
    })
}

/// `text` without a leading `₹`, `Rs` or `Rs.` (any case) and the white space after it.
fn strip_currency(text: &str) -> &str {
    let rest = if let Some(rest) = text.strip_prefix('₹') {
        rest
    } else if text.get(..2).is_some_and(|prefix| prefix.eq_ignore_ascii_case("rs")) {
        let rest = &text[2..];
        rest.strip_prefix('.').unwrap_or(rest)
    } else {
        text
    };
    rest.trim_start()
}

/// The digits of an integer part written with or without thousands separators, or `None`
/// when its grouping is neither Indian nor Western.
fn ungrouped(integer: &str) -> Option<String> {
    let groups: Vec<&str> = integer.split(',').collect();
    if !groups.iter().all(|group| all_digits(group)) {
        return None;
    }
    if let [first, middle @ .., last] = groups.as_slice() {
        let grouped = first.len() <= 3 && last.len() == 3 && middle.iter().all(|group| (2..=3).contains(&group.len()));
        if !grouped {
            return None;
        }
    }
    Some(groups.concat())
}

/// A date cell (D45): the instant as the API would read it and, when the cell names a day
/// without a time, that day.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileDate {
    /// The instant: midnight UTC of the day a cell names (D2), or the date-time it holds.
    pub instant: Timestamp,
    /// The day, when the cell names one without a time.
    pub day: Option<Date>,
}

/// A date cell, or `None` when it is empty.
///
/// An xlsx date-time names its day when its time is midnight (the instant is then midnight
/// UTC of that day), else it is read as a UTC date-time. Text `YYYY-MM-DD`, `DD/MM/YYYY` or
/// `DD-MM-YYYY` (day first; a 1- or 2-digit day and month) names a day; any other text is
/// read as RFC 3339. Every instant comes from [`crate::clock::parse_datetime`], as a request's
/// would, so the years are bounded alike (1900 to 9999).
///
/// # Errors
/// A message for the user when the cell holds a number, a boolean, an impossible day
/// (`31/02/2026`) or text that is no date.
pub fn date(cell: &Cell) -> Result<Option<FileDate>, String> {
    match cell {
        Cell::Empty => Ok(None),
        Cell::Number(_) | Cell::Bool(_) => Err(DATE_MESSAGE.to_owned()),
        Cell::DateTime(value) if value.time() == Time::midnight() => on_day(value.date()).map(Some),
        Cell::DateTime(value) => {
            let instant = parse(&value.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())?;
            Ok(Some(FileDate { instant, day: None }))
        }
        Cell::Text(text) => {
            let text = text.trim();
            if text.is_empty() {
                return Ok(None);
            }
            match day_of_text(text) {
                Some(Some(day)) => on_day(day).map(Some),
                Some(None) => Err(DATE_MESSAGE.to_owned()),
                None => Ok(Some(FileDate { instant: parse(text)?, day: None })),
            }
        }
    }
}

fn on_day(day: Date) -> Result<FileDate, String> {
    let text = format!("{:04}-{:02}-{:02}", day.year(), day.month(), day.day());
    Ok(FileDate { instant: parse(&text)?, day: Some(day) })
}

fn parse(text: &str) -> Result<Timestamp, String> {
    clock::parse_datetime(text).map_err(|error| match error {
        DateError::Format => DATE_MESSAGE.to_owned(),
        DateError::OutOfRange => error.to_string(),
    })
}

/// The day of a text shaped as three groups of digits split by `/` or `-` (the same twice):
/// `None` for any other shape, `Some(None)` when the groups make no possible day in
/// `YYYY-MM-DD` or day-first `DD-MM-YYYY` order.
fn day_of_text(text: &str) -> Option<Option<Date>> {
    let separator = text.chars().find(|c| !c.is_ascii_digit())?;
    if separator != '/' && separator != '-' {
        return None;
    }
    let parts: Vec<&str> = text.split(separator).collect();
    let [first, second, third] = parts.as_slice() else { return None };
    if ![first, second, third].iter().all(|part| all_digits(part)) {
        return None;
    }
    let short = |part: &str| (1..=2).contains(&part.len());
    let (year, month, day) = if first.len() == 4 && short(second) && short(third) {
        (first, second, third)
    } else if third.len() == 4 && short(first) && short(second) {
        (third, second, first)
    } else {
        return Some(None);
    };
    let (Ok(year), Ok(month), Ok(day)) = (year.parse::<i16>(), month.parse::<i8>(), day.parse::<i8>()) else {
        return Some(None);
    };
    Some(Date::new(year, month, day).ok())
}

#[cfg(test)]
mod tests {
    use jiff::civil::date as day;

    use super::*;

    fn text_cell(value: &str) -> Cell {
        Cell::Text(value.to_owned())
    }

    #[test]
    fn headers_match_ignoring_case_spaces_and_punctuation() {
        assert_eq!(header_key("Invoice_Number"), "invoicenumber");
        assert_eq!(header_key(" invoice number "), "invoicenumber");
        assert_eq!(header_key("Drug-License.1"), "druglicense1");
        assert_eq!(header_key("Vendor\u{a0}GSTIN"), "vendorgstin");
        assert_ne!(header_key("Vendor/GSTIN"), "vendorgstin");
    }

    #[test]
    fn cells_read_as_text() {
        assert_eq!(text(&Cell::Empty), None);
        assert_eq!(text(&text_cell("  Acme Pharma \t")), Some("Acme Pharma".into()));
        assert_eq!(text(&text_cell("   ")), None);
        assert_eq!(text(&Cell::Number(9_876_543_210.0)), Some("9876543210".into()));
        assert_eq!(text(&Cell::Number(1234.5)), Some("1234.5".into()));
        assert_eq!(text(&Cell::Number(0.1)), Some("0.1".into()));
        assert_eq!(text(&Cell::Number(-0.0)), Some("0".into()));
        assert_eq!(text(&Cell::Bool(true)), Some("TRUE".into()));
        assert_eq!(text(&Cell::Bool(false)), Some("FALSE".into()));
        assert_eq!(text(&Cell::DateTime(day(2026, 3, 31).at(0, 0, 0, 0))), Some("2026-03-31".into()));
        assert_eq!(text(&Cell::DateTime(day(2026, 3, 31).at(9, 5, 7, 0))), Some("2026-03-31T09:05:07".into()));
    }

    fn amount(cell: Cell) -> Result<Option<String>, String> {
        amount_text(&cell)
    }

    #[test]
    fn amounts_read_with_currency_and_separators() {
        let cases = [
            ("1,23,456.50", "123456.50"),
            ("₹ 1,200", "1200"),
            ("₹1,00,00,000", "10000000"),
            ("Rs.500", "500"),
            ("rs 12.5", "12.5"),
            ("RS. 7", "7"),
            ("123,456.78", "123456.78"),
            ("1,234,567", "1234567"),
            (" 999 ", "999"),
            ("-₹500", "-500"),
            ("₹ -500", "-500"),
            ("0.5", "0.5"),
        ];
        for (input, expected) in cases {
            assert_eq!(amount(text_cell(input)), Ok(Some(expected.into())), "{input}");
        }
        assert_eq!(amount(Cell::Number(1234.5)), Ok(Some("1234.5".into())));
        assert_eq!(amount(Cell::Number(1200.0)), Ok(Some("1200".into())));
        assert_eq!(amount(Cell::Number(0.1 + 0.2)), Ok(Some("0.30000000000000004".into())));
        assert_eq!(amount(Cell::Number(1e20)), Ok(Some("100000000000000000000".into())));
        assert_eq!(amount(Cell::Empty), Ok(None));
        assert_eq!(amount(text_cell("  ")), Ok(None));
    }

    #[test]
    fn malformed_amounts_are_refused() {
        let refused = [
            "12,34",
            "1,2345",
            "abc",
            "₹",
            "Rs",
            "1,23,4567",
            "1234,567",
            ",123",
            "123,",
            "1.2.3",
            "12.",
            ".5",
            "1e5",
            "₹₹5",
            "--5",
            "5-",
            "1 234",
            "$5",
            "12,34,5",
        ];
        for input in refused {
            assert_eq!(amount(text_cell(input)), Err(AMOUNT_MESSAGE.into()), "{input}");
        }
        for cell in [
            Cell::Number(f64::NAN),
            Cell::Number(f64::INFINITY),
            Cell::Bool(true),
            Cell::DateTime(day(2026, 3, 31).at(0, 0, 0, 0)),
        ] {
            assert_eq!(amount(cell.clone()), Err(AMOUNT_MESSAGE.into()), "{cell:?}");
        }
    }

    fn midnight(year: i16, month: i8, date: i8) -> Timestamp {
        clock::parse_datetime(&format!("{year:04}-{month:02}-{date:02}")).unwrap()
    }

    #[test]
    fn text_dates_name_days_in_each_format() {
        let expected = FileDate { instant: midnight(2026, 3, 5), day: Some(day(2026, 3, 5)) };
        for input in ["2026-03-05", "2026-3-5", "05/03/2026", "5/3/2026", "05-03-2026", "5-3-2026", " 05/03/2026 "] {
            assert_eq!(date(&text_cell(input)), Ok(Some(expected)), "{input}");
        }
        assert_eq!(expected.instant.to_string(), "2026-03-05T00:00:00Z");
    }

    #[test]
    fn other_text_dates_are_rfc3339() {
        let read = date(&text_cell("2026-03-31T10:30:00+05:30")).unwrap().unwrap();
        assert_eq!(read.instant.to_string(), "2026-03-31T05:00:00Z");
        assert_eq!(read.day, None);
    }

    #[test]
    fn impossible_or_foreign_dates_are_refused() {
        let refused = [
            "31/02/2026",
            "29/02/2025",
            "2026-13-01",
            "00/01/2026",
            "05/03/26",
            "2026/03-05",
            "31.03.2026",
            "March 31, 2026",
            "2026-03-31T10:30:00",
            "123/1/2026",
        ];
        for input in refused {
            assert_eq!(date(&text_cell(input)), Err(DATE_MESSAGE.into()), "{input}");
        }
        assert_eq!(date(&Cell::Number(46112.0)), Err(DATE_MESSAGE.into()));
        assert_eq!(date(&Cell::Bool(false)), Err(DATE_MESSAGE.into()));
        assert_eq!(date(&text_cell("01/01/1850")), Err("must be between the years 1900 and 9999".into()));
        assert_eq!(
            date(&text_cell("29/02/2024")).map(|read| read.and_then(|read| read.day)),
            Ok(Some(day(2024, 2, 29)))
        );
    }

    #[test]
    fn xlsx_datetimes_are_days_at_midnight_and_instants_otherwise() {
        let at_midnight = date(&Cell::DateTime(day(2026, 3, 31).at(0, 0, 0, 0))).unwrap().unwrap();
        assert_eq!(at_midnight, FileDate { instant: midnight(2026, 3, 31), day: Some(day(2026, 3, 31)) });
        let with_time = date(&Cell::DateTime(day(2026, 3, 31).at(13, 45, 30, 0))).unwrap().unwrap();
        assert_eq!(with_time.instant.to_string(), "2026-03-31T13:45:30Z");
        assert_eq!(with_time.day, None);
        assert_eq!(
            date(&Cell::DateTime(day(1899, 12, 30).at(0, 0, 0, 0))),
            Err("must be between the years 1900 and 9999".into())
        );
        assert_eq!(date(&Cell::Empty), Ok(None));
        assert_eq!(date(&text_cell(" ")), Ok(None));
    }
}
