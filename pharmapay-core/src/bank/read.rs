//! Reading a bank statement as Indian banks export it (D46): CSV or the first worksheet of an
//! xlsx, into the lines of money that left the account.
//!
//! Banks put a preamble (account holder, account number, period) above the table and a footer
//! (totals, "END OF STATEMENT") below it, name their columns each their own way and write
//! dates in several shapes. [`read_statement`] finds the header row among the first
//! [`HEADER_ROWS`] rows by the names D46 recognises (or those the caller gives), keeps every
//! later row with a date and money out as a [`StatementLine`], counts deposits, and skips the
//! rest. Rows are streamed by [`crate::imports::read_rows`] within the import limits, and
//! amounts go from the cell's text to an exact decimal, never through a float (D1).

use std::ops::ControlFlow;

use jiff::civil::Date;
use rust_decimal::Decimal;

use crate::imports::{Cell, FILE_LIMITS, FileError, ImportFile, MAX_ROWS, RowErrors, cells, table};
use crate::money::{self, Amount};
use crate::text::TEXT_MAX;

/// How many rows from the top of the file may hold the header row (D46).
pub const HEADER_ROWS: u32 = 30;

/// The field a row error of an unreadable amount is keyed under: `row<N>.amount`.
pub const AMOUNT_FIELD: &str = "amount";

// The headers D46 recognises, by kind; where a file has several of one kind, the first of its
// list wins. They are matched by `bank_header_key`.
const DATE: &[&str] = &["Date", "Txn Date", "Transaction Date", "Value Date"];
const NARRATION: &[&str] = &["Narration", "Description", "Particulars", "Remarks", "Transaction Remarks"];
const REFERENCE: &[&str] = &["Reference", "Ref No", "Chq/Ref No", "Ref No/Cheque No", "Cheque Number", "UTR"];
const DEBIT: &[&str] = &["Debit", "Withdrawal", "Withdrawal Amt", "Withdrawal Amount (INR)", "Debit Amount"];
const CREDIT: &[&str] = &["Credit", "Deposit", "Deposit Amt", "Deposit Amount (INR)", "Credit Amount"];
const AMOUNT: &[&str] = &["Amount"];
// Beside an unsigned `Amount`, some banks (Kotak among them) say the direction in a column of
// its own; its first occurrence wins, as with the others.
const DIRECTION: &[&str] = &["Dr/Cr", "Cr/Dr", "Debit/Credit", "Credit/Debit"];

/// The order of day, month and year in a numeric date such as `05/04/2026` (D46's
/// `dateFormat`). Indian banks write the day first, hence the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DateOrder {
    /// Day, month, year: `05/04/2026` is 5 April 2026.
    #[default]
    Dmy,
    /// Month, day, year: `04/05/2026` is 5 April 2026.
    Mdy,
    /// Year, month, day: `26/04/05` is 5 April 2026.
    Ymd,
}

impl DateOrder {
    /// The names `dateFormat` takes, in the order of the variants.
    pub const NAMES: [&str; 3] = ["DMY", "MDY", "YMD"];

    /// The order a `dateFormat` value names (`DMY`, `MDY` or `YMD`, any case), or `None` for
    /// any other text.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        [Self::Dmy, Self::Mdy, Self::Ymd].into_iter().find(|order| order.name().eq_ignore_ascii_case(text))
    }

    /// The order's `dateFormat` name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dmy => Self::NAMES[0],
            Self::Mdy => Self::NAMES[1],
            Self::Ymd => Self::NAMES[2],
        }
    }
}

/// How to read a statement: D46's query parameters. A named column replaces the headers D46
/// recognises for its kind (matched by [`bank_header_key`]), and a header row must hold it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// `dateColumn`: the header of the transaction dates.
    pub date_column: Option<String>,
    /// `narrationColumn`: the header of the narrations.
    pub narration_column: Option<String>,
    /// `referenceColumn`: the header of the cheque numbers or transfer references.
    pub reference_column: Option<String>,
    /// `debitColumn`: the header of the money out. Named with `amount_column` too, it wins.
    pub debit_column: Option<String>,
    /// `amountColumn`: the header of one signed amount, negative for money out.
    pub amount_column: Option<String>,
    /// `dateFormat`: how to read numeric dates whose first group is not a 4-digit year.
    pub date_order: DateOrder,
}

/// One line of money out (D46).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementLine {
    /// The row's number as the file shows it (1-based).
    pub row: u32,
    /// The transaction's day.
    pub date: Date,
    /// The narration, trimmed; `None` when the cell is empty.
    pub narration: Option<String>,
    /// The cheque number or reference, trimmed; `None` when empty or a bare `-`.
    pub reference: Option<String>,
    /// The money that left the account, positive.
    pub amount: Amount,
}

/// What a statement held (D46): its money-out lines, in file order, and how many other rows
/// there were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadStatement {
    /// The rows of money out.
    pub lines: Vec<StatementLine>,
    /// The rows of money in, counted and dropped.
    pub deposit_lines: usize,
    /// `skippedRows`: the non-empty rows after the header without a date, or with a date and
    /// no money moved.
    pub skipped_rows: usize,
}

/// Why a statement was not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StatementError {
    /// Unreadable, or without a header row among the first [`HEADER_ROWS`]: a 400 on `file`.
    #[error("{0}")]
    File(String),
    /// It unpacks beyond [`FILE_LIMITS`].
    #[error("{0}")]
    TooLarge(String),
    /// More than [`MAX_ROWS`] rows after the header.
    #[error("the statement has more than {} rows after its header", MAX_ROWS)]
    TooManyRows,
    /// Dated rows whose amounts could not be read, keyed `row<N>.amount`: a 400 listing them.
    #[error("{0}")]
    Rows(RowErrors),
}

/// A header as D46 matches it: only its letters and digits, lower-cased, so `Chq./Ref.No.` and
/// `Chq/Ref No` are both `chqrefno` and `Withdrawal Amount (INR)` is `withdrawalamountinr`.
pub fn bank_header_key(text: &str) -> String {
    text.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// Reads a statement into its money-out lines (D46).
///
/// The header row is the first of the rows numbered up to [`HEADER_ROWS`] that holds a date
/// column and a debit or a signed amount column. After it, a row without a readable date
/// (preamble, `Opening Balance`, totals, `END OF STATEMENT`) is skipped and counted. A dated
/// row of a statement with debit and credit columns is money out when its debit is neither
/// empty nor zero, a deposit when its credit is; with one signed amount, negative (a `Dr`
/// suffix, parentheses, or `Dr` in a `Dr/Cr` column) is money out and positive (`Cr`) a
/// deposit. Other dated rows are skipped and counted.
///
/// # Errors
/// [`StatementError::File`] when the file is unreadable or has no header row,
/// [`StatementError::TooLarge`] when it unpacks beyond [`FILE_LIMITS`],
/// [`StatementError::TooManyRows`] past [`MAX_ROWS`] rows after the header, and
/// [`StatementError::Rows`] when a dated row's amount is not a number of at most 4 decimals.
pub fn read_statement(file: &ImportFile, options: &ReadOptions) -> Result<ReadStatement, StatementError> {
    let mut header: Option<Columns> = None;
    let mut read = ReadStatement::default();
    let mut errors = RowErrors::new();
    let (mut count, mut too_many, mut header_error) = (0usize, false, None);
    crate::imports::read_rows(file.format, &file.bytes, &FILE_LIMITS, &mut |number, row| {
        let Some(columns) = &header else {
            if number > HEADER_ROWS {
                return ControlFlow::Break(());
            }
            header = Columns::find(row, options);
            // The row taken as the header holds at most 64 KiB of text (D51).
            if header.is_some()
                && let Err(error) = table::check_header(row)
            {
                header_error = Some(error);
                return ControlFlow::Break(());
            }
            return ControlFlow::Continue(());
        };
        count += 1;
        if count > MAX_ROWS {
            too_many = true;
            return ControlFlow::Break(());
        }
        read_row(number, row, columns, options.date_order, &mut read, &mut errors);
        ControlFlow::Continue(())
    })
    .and_then(|()| header_error.map_or(Ok(()), Err))
    .map_err(|error| match error {
        FileError::Unreadable(message) => StatementError::File(message),
        FileError::TooLarge(message) => StatementError::TooLarge(message),
    })?;
    if too_many {
        return Err(StatementError::TooManyRows);
    }
    if header.is_none() {
        return Err(StatementError::File(no_header_message(options)));
    }
    errors.into_result().map_err(StatementError::Rows)?;
    Ok(read)
}

fn no_header_message(options: &ReadOptions) -> String {
    let mut message = format!(
        "no row among the first {HEADER_ROWS} names a date column and a debit or amount column; \
         name them with dateColumn and debitColumn"
    );
    let named: Vec<String> = [
        ("dateColumn", &options.date_column),
        ("narrationColumn", &options.narration_column),
        ("referenceColumn", &options.reference_column),
        ("debitColumn", &options.debit_column),
        ("amountColumn", &options.amount_column),
    ]
    .into_iter()
    .filter_map(|(parameter, name)| name.as_ref().map(|name| format!("{parameter} `{name}`")))
    .collect();
    if !named.is_empty() {
        message.push_str(&format!(" (the header row must hold every column named: {})", named.join(", ")));
    }
    message
}

/// Where a statement keeps its money.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Money {
    /// Money out in one column, money in (optionally) in another.
    Split { debit: usize, credit: Option<usize> },
    /// One signed amount, with perhaps a `Dr/Cr` column giving its direction.
    Signed { amount: usize, direction: Option<usize> },
}

/// The columns of a statement, found in its header row.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Columns {
    date: usize,
    narration: Option<usize>,
    reference: Option<usize>,
    money: Money,
    /// The header row's cells as text, to name a column in an error.
    names: Vec<String>,
}

impl Columns {
    /// The columns of `row` if it is a header row: one with a date column and a debit or
    /// amount column, holding every column `options` names.
    fn find(row: &[Cell], options: &ReadOptions) -> Option<Self> {
        let names: Vec<String> = row.iter().map(|cell| cells::text(cell).unwrap_or_default()).collect();
        let keys: Vec<String> = names.iter().map(|name| bank_header_key(name)).collect();
        let date = locate(&keys, options.date_column.as_deref(), DATE)??;
        let narration = locate(&keys, options.narration_column.as_deref(), NARRATION)?;
        let reference = locate(&keys, options.reference_column.as_deref(), REFERENCE)?;
        let debit = locate(&keys, options.debit_column.as_deref(), DEBIT)?;
        let amount = locate(&keys, options.amount_column.as_deref(), AMOUNT)?;
        let signed = |amount| Money::Signed { amount, direction: locate(&keys, None, DIRECTION).flatten() };
        let split = |debit| Money::Split { debit, credit: locate(&keys, None, CREDIT).flatten() };
        // A named amount column means the caller wants it, unless a debit column is named too.
        let money = if options.amount_column.is_some() && options.debit_column.is_none() {
            amount.map(signed)
        } else {
            debit.map(split).or_else(|| amount.map(signed))
        }?;
        Some(Self { date, narration, reference, money, names })
    }

    /// The header of column `column` as the file writes it.
    fn name(&self, column: usize) -> &str {
        self.names.get(column).map_or("", String::as_str)
    }
}

/// The column of one kind among a header row's `keys`: the column `named` when the caller
/// named one (`None` when the row lacks it, so the row is no header), else the first of the
/// `recognised` headers the row holds (`Some(None)` when it holds none).
fn locate(keys: &[String], named: Option<&str>, recognised: &[&str]) -> Option<Option<usize>> {
    let position = |name: &str| {
        let wanted = bank_header_key(name);
        keys.iter().position(|key| !wanted.is_empty() && *key == wanted)
    };
    match named {
        Some(name) => position(name).map(Some),
        None => Some(recognised.iter().find_map(|name| position(name))),
    }
}

/// The cell of `row` in `column`; empty where there is no such column or the row stops short.
fn cell_at(row: &[Cell], column: Option<usize>) -> &Cell {
    column.and_then(|column| row.get(column)).unwrap_or(&Cell::Empty)
}

/// What a dated row did to the account.
enum Flow {
    Out(Amount),
    In,
    Nothing,
}

/// Reads one row after the header into `read`, or its amount's error into `errors`.
fn read_row(
    number: u32,
    row: &[Cell],
    columns: &Columns,
    order: DateOrder,
    read: &mut ReadStatement,
    errors: &mut RowErrors,
) {
    let Some(date) = read_date(cell_at(row, Some(columns.date)), order) else {
        read.skipped_rows += 1;
        return;
    };
    let money_at = |column: usize| {
        signed_amount(cell_at(row, Some(column)))
            .map_err(|message| format!("{message} (column {})", columns.name(column)))
    };
    let flow = match columns.money {
        Money::Split { debit, credit } => match money_at(debit) {
            Ok(Some(value)) => out(value),
            Ok(None) => match credit.map(money_at).transpose() {
                Ok(Some(Some(_))) => Ok(Flow::In),
                Ok(_) => Ok(Flow::Nothing),
                Err(message) => Err(message),
            },
            Err(message) => Err(message),
        },
        Money::Signed { amount, direction } => money_at(amount).and_then(|value| {
            let Some(value) = value else { return Ok(Flow::Nothing) };
            let value = match direction.map(|column| direction_of(cell_at(row, Some(column)))) {
                Some(Ok(Some(Direction::Out))) => -value.abs(),
                Some(Ok(Some(Direction::In))) => value.abs(),
                Some(Ok(None)) | None => value,
                Some(Err(message)) => return Err(message),
            };
            if value.is_sign_negative() { out(value) } else { Ok(Flow::In) }
        }),
    };
    match flow {
        Ok(Flow::Out(amount)) => read.lines.push(StatementLine {
            row: number,
            date,
            narration: line_text(cell_at(row, columns.narration)),
            reference: line_text(cell_at(row, columns.reference)).filter(|text| !is_dash(text)),
            amount,
        }),
        Ok(Flow::In) => read.deposit_lines += 1,
        Ok(Flow::Nothing) => read.skipped_rows += 1,
        Err(message) => errors.add(number, AMOUNT_FIELD, message),
    }
}

/// A narration or reference cell as a line keeps it: trimmed, its control characters (a NUL, a
/// line break inside a quoted cell) turned into spaces, at most [`TEXT_MAX`] characters, so what
/// a hostile file holds is text every store can keep and every screen can show; `None` when
/// nothing is left.
fn line_text(cell: &Cell) -> Option<String> {
    let text = cells::text(cell)?;
    let clean: String =
        text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(TEXT_MAX).collect::<String>().trim().to_owned();
    (!clean.is_empty()).then_some(clean)
}

/// Money out of `value`'s size.
fn out(value: Decimal) -> Result<Flow, String> {
    Amount::try_from(value.abs()).map(Flow::Out).map_err(|error| error.to_string())
}

/// True for a placeholder of dashes (`-`, `--`) that banks write for "none".
fn is_dash(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty() && text.chars().all(|c| c == '-')
}

/// Which way a `Dr`/`Cr` marker says money went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Out,
    In,
}

/// The direction a marker names: `Dr`, `D` or `Debit` is money out, `Cr`, `C` or `Credit` money
/// in (any case, punctuation ignored).
fn marker(text: &str) -> Option<Direction> {
    match bank_header_key(text).as_str() {
        "dr" | "d" | "debit" => Some(Direction::Out),
        "cr" | "c" | "credit" => Some(Direction::In),
        _ => None,
    }
}

/// The direction in a `Dr/Cr` cell, `None` when it is empty.
fn direction_of(cell: &Cell) -> Result<Option<Direction>, String> {
    match cells::text(cell) {
        None => Ok(None),
        Some(text) if is_dash(&text) => Ok(None),
        Some(text) => marker(&text).map(Some).ok_or_else(|| "the Dr/Cr column must read Dr or Cr".to_owned()),
    }
}

/// A money cell as a signed decimal, `None` when it is empty, a dash or zero. Besides what
/// [`cells::amount_text`] reads, a trailing `Dr` makes it negative, a trailing `Cr` positive,
/// and parentheses negative (`(1,200.00)`), as accounting exports write them.
fn signed_amount(cell: &Cell) -> Result<Option<Decimal>, String> {
    let (text, direction, bracketed) = match cell {
        Cell::Text(text) => {
            let text = text.trim();
            if is_dash(text) {
                return Ok(None);
            }
            let (text, direction) = split_marker(text);
            let inner =
                text.strip_prefix('(').and_then(|rest| rest.strip_suffix(')')).filter(|inner| !inner.trim().is_empty());
            (cells::amount_text(&Cell::Text(inner.unwrap_or(text).to_owned()))?, direction, inner.is_some())
        }
        other => (cells::amount_text(other)?, None, false),
    };
    let Some(text) = text else { return Ok(None) };
    let value = money::parse_decimal(&text).map_err(|error| error.to_string())?;
    let value = match direction {
        Some(Direction::Out) => -value.abs(),
        Some(Direction::In) => value.abs(),
        None if bracketed => -value.abs(),
        None => value,
    };
    Ok((!value.is_zero()).then_some(value))
}

/// `text` without a trailing `Dr` or `Cr` marker (any case, after a space or straight after
/// the number), and the direction it named.
fn split_marker(text: &str) -> (&str, Option<Direction>) {
    let split = text.len().checked_sub(2).filter(|&at| at > 0 && text.is_char_boundary(at));
    if let Some((rest, tail)) = split.map(|at| text.split_at(at))
        && let Some(direction) = marker(tail).filter(|_| tail.chars().all(|c| c.is_ascii_alphabetic()))
        && rest.ends_with(|c: char| c.is_ascii_digit() || c.is_whitespace() || c == ')')
    {
        return (rest.trim_end(), Some(direction));
    }
    (text, None)
}

/// The day a date cell names (D46), or `None` when it names none.
///
/// An xlsx date-time gives its day (the time is ignored). A text is three groups (day, month,
/// year in some order) split by `/`, `-`, `.` or spaces, optionally followed by a time that is
/// ignored (`05/04/2026 10:23:45`, `05/04/2026 10:23 AM`, `2026-04-05T10:23:45`):
/// - numbers in `order`, except that a 4-digit first group is always the year
///   (`2026-04-05`, `2026/04/05`);
/// - or an English month name, 3 letters or full, any case, in the middle (`05 Apr 2026`,
///   `05-APR-26`, `5 April 2026`) or first (`Apr 05, 2026`).
///
/// A 2-digit year is 20YY. Impossible days (`31/02/2026`), years before 1900, numbers and any
/// other text are `None`, so a footer or preamble row in the date column is simply no date.
pub fn read_date(cell: &Cell, order: DateOrder) -> Option<Date> {
    match cell {
        Cell::DateTime(value) => Some(value.date()).filter(|day| day.year() >= 1900),
        Cell::Text(text) => date_of_text(text, order),
        Cell::Empty | Cell::Number(_) | Cell::Bool(_) => None,
    }
}

fn date_of_text(text: &str, order: DateOrder) -> Option<Date> {
    let text = text.trim();
    if text.len() > 64 {
        return None;
    }
    // An ISO date-time's `T` splits the date from the time like a space.
    let bytes = text.as_bytes();
    let spaced: String = text
        .char_indices()
        .map(|(at, c)| {
            let digit_at = |at: Option<usize>| at.and_then(|at| bytes.get(at)).is_some_and(u8::is_ascii_digit);
            let iso_t = matches!(c, 'T' | 't') && digit_at(at.checked_sub(1)) && digit_at(Some(at + 1));
            if iso_t { ' ' } else { c }
        })
        .collect();
    let mut tokens = spaced
        .split(|c: char| c.is_whitespace() || matches!(c, '/' | '-' | '.'))
        .filter(|token| !token.is_empty())
        .map(|token| token.strip_suffix(',').unwrap_or(token));
    let (first, second, third) = (tokens.next()?, tokens.next()?, tokens.next()?);
    // Whatever follows the date must start with a time.
    if tokens.next().is_some_and(|time| !time.contains(':')) {
        return None;
    }
    let (year, month, day) = match (month_of(first), month_of(second)) {
        (Some(month), None) => (year_of(third)?, month, number(second, 2)?),
        (None, Some(month)) if first.len() == 4 => (year_of(first)?, month, number(third, 2)?),
        (None, Some(month)) => (year_of(third)?, month, number(first, 2)?),
        (None, None) if first.len() == 4 => (year_of(first)?, number(second, 2)?, number(third, 2)?),
        (None, None) => match order {
            DateOrder::Dmy => (year_of(third)?, number(second, 2)?, number(first, 2)?),
            DateOrder::Mdy => (year_of(third)?, number(first, 2)?, number(second, 2)?),
            DateOrder::Ymd => (year_of(first)?, number(second, 2)?, number(third, 2)?),
        },
        (Some(_), Some(_)) => return None,
    };
    let (Ok(month), Ok(day)) = (i8::try_from(month), i8::try_from(day)) else { return None };
    Date::new(year, month, day).ok().filter(|day| day.year() >= 1900)
}

/// The value of 1 to `most` ASCII digits.
fn number(text: &str, most: usize) -> Option<u16> {
    let digits = (1..=most).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse().ok()).flatten()
}

/// A year of 4 digits, or of 2 meaning 20YY.
fn year_of(text: &str) -> Option<i16> {
    let value = match text.len() {
        2 => 2000 + number(text, 2)?,
        4 => number(text, 4)?,
        _ => return None,
    };
    i16::try_from(value).ok()
}

/// The month an English name gives: its first 3 letters or the full name (`Sept` too), any
/// case.
fn month_of(text: &str) -> Option<u16> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let name = text.to_ascii_lowercase();
    let index = MONTHS.iter().position(|month| {
        *month == name || (name.len() == 3 && month.starts_with(&name)) || (name == "sept" && *month == "september")
    })?;
    u16::try_from(index + 1).ok()
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
