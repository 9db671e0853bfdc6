//! The words schemas are written in: text with the bounds and characters core's validation
//! allows, exact money, instants and days, ids, enum values. Each bound is read from the
//! constant the validation uses (`pharmapay_core::text`, `pharmapay_core::money`), so the
//! document cannot promise other limits than the server keeps.
//!
//! Text rules are written as patterns that say what the server accepts before it trims:
//! surrounding whitespace (Rust's `char::is_whitespace`, the Unicode White_Space set) is
//! allowed, the rest must not be blank where required, stays within its length in characters
//! and holds no control characters (`char::is_control`), except line breaks and tabs in free
//! text. Such request text has no `maxLength`: the server counts characters after trimming, so
//! it accepts a name of 200 characters with spaces around it, which `maxLength: 200` would call
//! invalid (and the fuzzer's negative tests would send). Text in answers, which the server
//! wrote, states its `maxLength`.

use pharmapay_core::money::{MAX_AMOUNT, MAX_FRACTION_DIGITS};
use pharmapay_core::paging::MAX_DAYS;
use pharmapay_core::text::{CODE_MAX, EMAIL_MAX, NAME_MAX, PASSWORD_MAX_BYTES, PASSWORD_MIN, TEXT_MAX};

use super::{Json, object};

/// Control characters (`char::is_control`), as a character class body.
const CONTROL: &str = r"\u0000-\u001F\u007F-\u009F";
/// The characters `str::trim` removes (`char::is_whitespace`, Unicode White_Space), as a
/// character class body.
const SPACE: &str = r"\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000";
/// The characters of free text between its first and last: anything but control characters
/// other than tab, line feed and carriage return.
const TEXT_INNER: &str = r"[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]";
/// What a request date starts with: a year from 1900 to 9999 (D2).
pub const YEAR_PATTERN: &str = "^(?:19|[2-9][0-9])[0-9]{2}-";

/// The longest instant an answer writes: RFC 3339 in UTC, years 1900 to 9999, at most
/// nanoseconds (D2).
pub const INSTANT_MAX: usize = "9999-12-31T23:59:59.999999999Z".len();

/// The length of a calendar day, `YYYY-MM-DD` (D34).
pub const DAY_LEN: usize = "9999-12-31".len();

/// What text descriptions say about trimming.
pub const TRIM_NOTE: &str = "Surrounding whitespace is trimmed first; the rest may not contain control characters";

/// What every money description ends with (D1).
pub const MONEY_NOTE: &str =
    "Exact decimal written as a JSON number (never a string), with at most 4 fractional digits (D1).";

/// What request dates accept (D2).
pub const DATE_NOTE: &str = "RFC 3339 timestamp with any offset (normalised to UTC) or a bare date `YYYY-MM-DD` meaning \
     midnight UTC (D2); years 1900 to 9999.";

/// Whitespace, one character.
pub fn space() -> String {
    format!("[{SPACE}]")
}

/// Anything but whitespace, one character.
pub fn not_space() -> String {
    format!("[^{SPACE}]")
}

/// Trimmed text of 1 to `max` characters whose inner characters match `inner`.
fn trimmed(inner: &str, max: usize) -> String {
    let edge = format!("[^{SPACE}{CONTROL}]");
    format!("{edge}(?:{inner}{{0,{}}}{edge})?", max - 2)
}

/// Required single-line text of at most `max` characters.
pub fn line_pattern(max: usize) -> String {
    let space = space();
    format!("^{space}*{}{space}*$", trimmed(&format!("[^{CONTROL}]"), max))
}

/// Optional single-line text of at most `max` characters: blank is allowed.
pub fn optional_line_pattern(max: usize) -> String {
    let space = space();
    format!("^{space}*(?:{})?{space}*$", trimmed(&format!("[^{CONTROL}]"), max))
}

/// Optional free text of at most `max` characters: line breaks and tabs allowed.
fn optional_text_pattern(max: usize) -> String {
    let space = space();
    format!("^{space}*(?:{})?{space}*$", trimmed(TEXT_INNER, max))
}

/// An email shaped like `local@domain` (D29): no whitespace or control characters, one `@`, a
/// domain that neither starts nor ends with a dot, at most [`EMAIL_MAX`] characters.
fn email_core() -> String {
    let character = format!("[^{SPACE}@{CONTROL}]");
    format!(r"(?={}{{1,{EMAIL_MAX}}}{}*$){character}+@(?!\.){character}+(?<!\.)", not_space(), space())
}

/// A case-insensitive (ASCII) match of one of `values`, surrounding whitespace trimmed, as the
/// server parses enum values (D7).
pub fn choice_pattern(values: &[&str]) -> String {
    let words: Vec<String> = values
        .iter()
        .map(|word| {
            word.chars()
                .map(|c| {
                    if c.is_alphabetic() {
                        format!("[{}{}]", c.to_lowercase(), c.to_uppercase())
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        })
        .collect();
    let space = space();
    format!("^{space}*(?:{}){space}*$", words.join("|"))
}

/// A payment reference (D30): 1 to `max` characters after trimming, single line, with at least
/// one letter or digit.
pub fn reference_pattern(max: usize) -> String {
    let space = space();
    format!(r"^{space}*(?=[\s\S]*[^{SPACE}/-])(?:{})?{space}*$", trimmed(&format!("[^{CONTROL}]"), max))
}

/// A GSTIN (D37), any case, surrounding whitespace trimmed: a state code 01-38 or 97, a PAN
/// (five letters, four digits, a letter), an entity character, `Z` and a check character.
pub fn gstin_pattern() -> String {
    let space = space();
    format!(
        "^{space}*(?:(?:0[1-9]|[12][0-9]|3[0-8]|97)[A-Za-z]{{5}}[0-9]{{4}}[A-Za-z][1-9A-Za-z][Zz][0-9A-Za-z]){space}*$"
    )
}

/// Request text the server trims before reading, bounded by what reads it, not by a length of
/// its own (see the module's note).
pub fn trimmed_text(description: impl Into<Json>) -> Json {
    object! { "type": "string", "description": description.into() }
}

/// A string of at most `max` characters.
pub fn text(max: usize, description: impl Into<Json>) -> Json {
    object! { "type": "string", "maxLength": max, "description": description.into() }
}

/// A string of at most `max` characters, or `null`.
pub fn nullable_text(max: usize, description: impl Into<Json>) -> Json {
    text(max, description).with("type", vec!["string", "null"])
}

/// A boolean.
pub fn boolean(description: impl Into<Json>) -> Json {
    object! { "type": "boolean", "description": description.into() }
}

/// A count, zero or more. Counts are of stored rows, which every store counts in 64 bits.
pub fn count(description: impl Into<Json>) -> Json {
    object! {
        "type": "integer",
        "format": "int64",
        "minimum": 0,
        "maximum": i64::MAX,
        "description": description.into(),
    }
}

/// An id in an answer: a positive 64-bit integer.
pub fn id(description: impl Into<Json>) -> Json {
    object! {
        "type": "integer",
        "format": "int64",
        "minimum": 1,
        "maximum": i64::MAX,
        "description": description.into(),
    }
}

/// An id or `null` in an answer.
pub fn nullable_id(description: impl Into<Json>) -> Json {
    id(description).with("type", vec!["integer", "null"])
}

/// An id in a request: a positive integer that fits 64 bits.
pub fn id_input(description: &str) -> Json {
    id(format!("{description} A positive integer."))
}

/// A whole number of days from 0 to [`MAX_DAYS`] (D32, D36).
pub fn days() -> Json {
    object! { "type": "integer", "format": "int32", "minimum": 0, "maximum": MAX_DAYS }
}

/// The largest amount, as its exact text.
pub fn max_amount() -> Json {
    Json::number(MAX_AMOUNT.to_string())
}

/// The smallest step of money: one unit of its last fractional digit.
fn money_step() -> Json {
    let zeros = "0".repeat(MAX_FRACTION_DIGITS as usize - 1);
    Json::number(format!("0.{zeros}1"))
}

/// A sum or balance in an answer, which may be zero or negative.
pub fn money(description: &str) -> Json {
    object! { "type": "number", "description": format!("{description} {MONEY_NOTE}") }
}

/// A sum or `null` in an answer.
pub fn nullable_money(description: &str) -> Json {
    money(description).with("type", vec!["number", "null"])
}

/// An amount in an answer: positive, at most [`MAX_AMOUNT`].
pub fn amount(description: &str) -> Json {
    object! {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": max_amount(),
        "description": format!("{description} Positive. {MONEY_NOTE}"),
    }
}

/// An amount in a request (D1): a JSON number, positive, at most [`MAX_AMOUNT`], with at most
/// [`MAX_FRACTION_DIGITS`] fractional digits.
pub fn amount_input(description: &str) -> Json {
    object! {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": max_amount(),
        "multipleOf": money_step(),
        "description": format!(
            "{description} Must be a JSON number (a string is refused), positive, at most {MAX_AMOUNT}, with at most \
             {MAX_FRACTION_DIGITS} fractional digits (D1); anything else is a 400."
        ),
    }
}

/// A sum of money in a request that may be zero (D1): a JSON number from 0 to [`MAX_AMOUNT`]
/// with at most [`MAX_FRACTION_DIGITS`] fractional digits.
pub fn money_input(description: &str) -> Json {
    object! {
        "type": "number",
        "minimum": 0,
        "maximum": max_amount(),
        "multipleOf": money_step(),
        "description": format!(
            "{description} Must be a JSON number (a string is refused), from 0 to {MAX_AMOUNT}, with at most \
             {MAX_FRACTION_DIGITS} fractional digits (D1); anything else is a 400."
        ),
    }
}

/// A bound on amounts in a query: a decimal of either sign within [`MAX_AMOUNT`].
pub fn amount_bound() -> Json {
    object! {
        "type": "number",
        "minimum": Json::number(format!("-{MAX_AMOUNT}")),
        "maximum": max_amount(),
        "multipleOf": money_step(),
    }
}

/// An instant in an answer (D2).
pub fn instant(description: &str) -> Json {
    object! {
        "type": "string",
        "format": "date-time",
        "maxLength": INSTANT_MAX,
        "description": format!("{description} RFC 3339 UTC timestamp ending in `Z` (D2)."),
    }
}

/// An instant or `null` in an answer (D2).
pub fn nullable_instant(description: &str) -> Json {
    instant(description).with("type", vec!["string", "null"])
}

/// What request dates accept, without a description.
pub fn date_input_rule() -> Json {
    object! {
        "type": "string",
        "pattern": YEAR_PATTERN,
        "anyOf": vec![object! { "format": "date-time" }, object! { "format": "date" }],
    }
}

/// A date in a request (D2).
pub fn date_input(description: &str) -> Json {
    date_input_rule().with("description", format!("{description} {DATE_NOTE}"))
}

/// A calendar day in an answer (D34).
pub fn day() -> Json {
    object! {
        "type": "string",
        "format": "date",
        "maxLength": DAY_LEN,
        "description": "A calendar day `YYYY-MM-DD` in the business time zone (D34).",
    }
}

/// A required name of at most [`NAME_MAX`] characters.
pub fn name(description: &str) -> Json {
    required_line(description, NAME_MAX)
}

/// Required single-line text of at most `max` characters.
pub fn required_line(description: &str, max: usize) -> Json {
    object! {
        "type": "string",
        "pattern": line_pattern(max),
        "description": format!("{description} Required, not blank, at most {max} characters. {TRIM_NOTE}."),
    }
}

/// An optional code (a phone, a licence) of at most [`CODE_MAX`] characters.
pub fn code(description: &str) -> Json {
    object! {
        "type": ["string", "null"],
        "pattern": optional_line_pattern(CODE_MAX),
        "description": format!(
            "{description} Optional; blank or null means none. At most {CODE_MAX} characters, single line. {TRIM_NOTE}."
        ),
    }
}

/// Optional free text of at most [`TEXT_MAX`] characters.
pub fn free_text(description: &str) -> Json {
    object! {
        "type": ["string", "null"],
        "pattern": optional_text_pattern(TEXT_MAX),
        "description": format!(
            "{description} Optional; blank or null means none. At most {TEXT_MAX} characters; line breaks and tabs are \
             allowed, other control characters are not. Surrounding whitespace is trimmed."
        ),
    }
}

/// A required email address (D29).
pub fn email(description: &str) -> Json {
    let space = space();
    object! {
        "type": "string",
        "pattern": format!("^{space}*{}{space}*$", email_core()),
        "description": format!(
            "{description} Shaped like `local@domain` (D29): exactly one `@`, no whitespace or control characters, the \
             domain neither starts nor ends with a dot; at most {EMAIL_MAX} characters after trimming. Compared \
             case-insensitively."
        ),
    }
}

/// An optional email address (D29).
pub fn optional_email(description: &str) -> Json {
    let space = space();
    object! {
        "type": ["string", "null"],
        "pattern": format!("^{space}*(?:{})?{space}*$", email_core()),
        "description": format!(
            "{description} Optional; blank or null means none. When given, shaped like `local@domain` (D29), at most \
             {EMAIL_MAX} characters."
        ),
    }
}

/// A new password (D29).
pub fn password(description: &str) -> Json {
    object! {
        "type": "string",
        "minLength": PASSWORD_MIN,
        "maxLength": PASSWORD_MAX_BYTES,
        "description": format!(
            "{description} At least {PASSWORD_MIN} characters and at most {PASSWORD_MAX_BYTES} bytes (D29); never \
             returned by any endpoint."
        ),
    }
}

/// An enum value in a request: one of `values`, in any case (D7).
pub fn choice(values: &[&'static str]) -> Json {
    object! { "type": "string", "pattern": choice_pattern(values), "examples": values.to_vec() }
}

/// An enum value in an answer: one of `values`, in canonical case.
pub fn one_of(values: &[&'static str], description: impl Into<Json>) -> Json {
    object! { "type": "string", "enum": values.to_vec(), "description": description.into() }
}

/// The names of every value of an enum, in order.
pub fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().copied().map(name).collect()
}

/// `names` as a sentence lists them: `A, B or C`.
pub fn either(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// An array of `items`.
pub fn array(items: impl Into<Json>) -> Json {
    object! { "type": "array", "items": items.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_patterns_match_any_ascii_case() {
        let space = space();
        assert_eq!(choice_pattern(&["UPI", "asc"]), format!("^{space}*(?:[uU][pP][iI]|[aA][sS][cC]){space}*$"));
    }

    #[test]
    fn the_money_step_has_the_last_fractional_digit() {
        assert_eq!(money_step(), Json::number("0.0001"));
        assert_eq!(max_amount(), Json::number("999999999999.9999"));
    }
}
