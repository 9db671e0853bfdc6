//! What every DTO shares: how amounts, instants and days are written, and the page envelope of
//! lists. The DTOs themselves, core records as the spec's JSON objects (`VendorDto`,
//! `InvoiceDto` ...), sit with their resources in `routes/`.
//!
//! Amounts are written as exact JSON numbers from their decimal text, never through a float
//! (D1); instants as RFC 3339 UTC strings ending in `Z` (D2); enums in their canonical case (D7).

use pharmapay_core::Page;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::paging::{MAX_PAGE_SIZE, PagePlace};
use pharmapay_core::rust_decimal::Decimal;
use serde::Serialize;
use serde::ser::{Error as _, Serializer};

use crate::openapi::{Json, Property, Schema, describe, dto_schema, object, schema, schema_ref};

/// Writes a decimal as an exact JSON number, without trailing fractional zeros.
pub(crate) fn money<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
    let number: serde_json::Number = value.normalize().to_string().parse().map_err(S::Error::custom)?;
    number.serialize(serializer)
}

/// Writes an optional decimal as [`money`] does, or `null`.
pub(crate) fn optional_money<S: Serializer>(value: &Option<Decimal>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => money(value, serializer),
        None => serializer.serialize_none(),
    }
}

/// Writes an amount as an exact JSON number (D1).
pub(crate) fn amount<S: Serializer>(value: &pharmapay_core::Amount, serializer: S) -> Result<S::Ok, S::Error> {
    money(&value.get(), serializer)
}

/// Writes an instant as RFC 3339 UTC text ending in `Z` (D2).
pub(crate) fn instant<S: Serializer>(value: &Timestamp, serializer: S) -> Result<S::Ok, S::Error> {
    short_text(value, serializer)
}

/// Writes an optional instant as [`instant`] does, or `null`.
pub(crate) fn optional_instant<S: Serializer>(value: &Option<Timestamp>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => short_text(value, serializer),
        None => serializer.serialize_none(),
    }
}

/// A calendar day, written `YYYY-MM-DD` (D34).
pub(crate) fn day<S: Serializer>(value: &Date, serializer: S) -> Result<S::Ok, S::Error> {
    short_text(value, serializer)
}

/// A calendar day or `null`, written `YYYY-MM-DD` (D46).
pub(crate) fn optional_day<S: Serializer>(value: &Option<Date>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => short_text(value, serializer),
        None => serializer.serialize_none(),
    }
}

/// Writes `value`'s text as one JSON string, formatted on the stack first. `collect_str` hands
/// each piece a formatter writes (a timestamp is a dozen of them) to the JSON escaper on its
/// own, which cost a thousand-row answer (the licence alerts) a tenth of its serialising.
fn short_text<S: Serializer>(value: &impl std::fmt::Display, serializer: S) -> Result<S::Ok, S::Error> {
    use std::fmt::Write as _;
    let mut text = ShortText::default();
    match write!(text, "{value}") {
        Ok(()) => serializer.serialize_str(text.as_str()),
        // Longer than an instant or a day ever is: written piece by piece after all.
        Err(_) => serializer.collect_str(value),
    }
}

/// Text of at most [`ShortText::CAPACITY`] bytes, kept on the stack.
struct ShortText {
    bytes: [u8; Self::CAPACITY],
    len: usize,
}

impl ShortText {
    /// Room for the longest instant jiff writes (`-009999-01-02T01:59:59.999999999Z`, 33 bytes).
    const CAPACITY: usize = 48;

    fn as_str(&self) -> &str {
        // Only whole `&str`s are ever appended, so the bytes are UTF-8.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl Default for ShortText {
    fn default() -> Self {
        Self { bytes: [0; Self::CAPACITY], len: 0 }
    }
}

impl std::fmt::Write for ShortText {
    fn write_str(&mut self, piece: &str) -> std::fmt::Result {
        let end = self.len + piece.len();
        let into = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        into.copy_from_slice(piece.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The paginated list envelope.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageDto<T> {
    items: Vec<T>,
    total_count: u64,
    page: u32,
    page_size: u32,
}

impl<T> PageDto<T> {
    /// Converts a core page.
    pub fn from_page<U>(page: Page<U>, convert: impl FnMut(U) -> T) -> Self {
        Self {
            total_count: page.total_count,
            page: page.page,
            page_size: page.page_size,
            items: page.items.into_iter().map(convert).collect(),
        }
    }
}

/// The schema of a page of `T`, which each list names and describes (`VendorPage`).
pub fn page_schema<T: Schema>(description: &'static str) -> Json {
    let _every_field_once = |page: &PageDto<T>| {
        let PageDto { items: _, total_count: _, page: _, page_size: _ } = page;
    };
    let fields = [
        (
            "items",
            object! {
                "type": "array",
                "items": schema_ref::<T>(),
                "maxItems": MAX_PAGE_SIZE,
                "description": "This page's items.",
            },
        ),
        ("totalCount", schema::count("How many items the whole filtered list holds.")),
        ("page", page_number()),
        ("pageSize", page_size_applied("Items")),
    ];
    dto_schema(description, fields.into_iter().map(|(name, schema)| (name.to_owned(), Property::One(schema))).collect())
}

/// The 1-based number of a page in an answer (D8).
fn page_number() -> Json {
    object! {
        "type": "integer",
        "format": "int64",
        "minimum": 1,
        "maximum": u32::MAX,
        "description": "The 1-based page number.",
    }
}

/// The size of a page in an answer, of `what` (D8).
fn page_size_applied(what: &str) -> Json {
    object! {
        "type": "integer",
        "format": "int32",
        "minimum": 1,
        "maximum": MAX_PAGE_SIZE,
        "description": format!(
            "{what} per page as applied: a requested size above {MAX_PAGE_SIZE} reports {MAX_PAGE_SIZE} (D8)."
        ),
    }
}

/// Where a page of an answer that can also be whole sits in it (D43): written into the answer
/// beside its rows when a page was asked for.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PagePlaceDto {
    page: u32,
    page_size: u32,
    total_count: u64,
}

impl From<PagePlace> for PagePlaceDto {
    fn from(place: PagePlace) -> Self {
        Self { page: place.page, page_size: place.page_size, total_count: place.total_count }
    }
}

describe! {
    PagePlaceDto as "PagePlace": "Where a page sits in the whole answer; only on answers asked for a page (D43)." {
        page: page_number(),
        page_size: page_size_applied("Rows"),
        total_count: schema::count("How many rows the whole answer holds."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(write: impl FnOnce(&mut serde_json::Serializer<&mut Vec<u8>>)) -> String {
        let mut out = Vec::new();
        write(&mut serde_json::Serializer::new(&mut out));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn instants_and_days_are_written_as_their_text() {
        let instants = [Timestamp::MIN, Timestamp::MAX, "2026-09-27T18:22:41.484272Z".parse().unwrap()];
        for value in instants {
            let json = written(|out| instant(&value, out).unwrap());
            assert_eq!(json, serde_json::to_string(&value.to_string()).unwrap());
        }
        let json = written(|out| day(&Date::constant(2024, 2, 29), out).unwrap());
        assert_eq!(json, r#""2024-02-29""#);
    }

    #[test]
    fn text_longer_than_the_stack_buffer_is_written_whole_and_escaped() {
        let long = format!("{}\"{}", "a".repeat(ShortText::CAPACITY), "ü".repeat(10));
        let json = written(|out| short_text(&long, out).unwrap());
        assert_eq!(json, serde_json::to_string(&long).unwrap());
    }
}
