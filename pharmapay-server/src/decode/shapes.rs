//! The schema side of the field readers: for each reader of [`super::Fields`], a method of the
//! same name that states in the API document what that reader accepts.
//!
//! A reader decides whether its field is required and may be `null`, and, where its rules are
//! its own (an amount, an id, a date, a payment reference, a GSTIN), the whole schema. Where
//! core validates the value after reading (the length and characters of text, an enum's names,
//! how many items a list may hold), the field's declaration in `bodies!` supplies that part,
//! written with [`crate::openapi::schema`] from the constants core's validation reads.
//! Each method takes the field's slot type, unused, so that the reader and its schema agree on
//! the slot as they do on the name.

use pharmapay_core::transactions::reference::REFERENCE_MAX;

use super::fields::Body;
use super::values::{List, MAX_ARRAY_ITEMS, Nested, Objects, Slot};
use crate::openapi::{Json, Schema, object, schema, schema_ref};

/// The schema of a body, gathered field by field.
#[derive(Default)]
pub struct Shapes {
    properties: Vec<(&'static str, Json)>,
    required: Vec<&'static str>,
}

impl Shapes {
    /// The body's schema: an object of these fields; unknown fields are ignored (D7), so others
    /// are not refused.
    pub fn into_schema(self, description: &'static str) -> Json {
        let mut body = object! { "type": "object", "description": description };
        if !self.required.is_empty() {
            body.set("required", self.required);
        }
        let mut properties = Json::object();
        for (name, property) in self.properties {
            properties.set(name, property);
        }
        body.with("properties", properties)
    }

    fn add(&mut self, name: &'static str, required: bool, schema: Json) {
        if required {
            self.required.push(name);
        }
        self.properties.push((name, schema));
    }

    /// A required string: `text` is its schema, of core's rule for it.
    pub fn string(&mut self, name: &'static str, _: Option<Slot>, text: Json) {
        self.add(name, true, text.with("type", "string"));
    }

    /// An optional string, which may be `null`: `text` is its schema, of core's rule for it.
    pub fn optional_string(&mut self, name: &'static str, _: Option<Slot>, text: Json) {
        self.add(name, false, text.with("type", vec!["string", "null"]));
    }

    /// An optional boolean, which may be `null`: `description` says what absent means.
    pub fn flag_or(&mut self, name: &'static str, _: Option<bool>, description: &'static str) {
        self.add(name, false, object! { "type": ["boolean", "null"], "description": description });
    }

    /// An optional string read as empty when absent or `null`.
    pub fn string_or_empty(&mut self, name: &'static str, slot: Option<Slot>, text: Json) {
        self.optional_string(name, slot, text);
    }

    /// A required amount (D1).
    pub fn amount(&mut self, name: &'static str, _: Option<Slot>, description: &str) {
        self.add(name, true, schema::amount_input(description));
    }

    /// An optional amount (D1), which may be `null`.
    pub fn optional_amount(&mut self, name: &'static str, _: Option<Slot>, description: &str) {
        self.add(name, false, schema::amount_input(description).with("type", vec!["number", "null"]));
    }

    /// A required sum of money from zero up (D1).
    pub fn money(&mut self, name: &'static str, _: Option<Slot>, description: &str) {
        self.add(name, true, schema::money_input(description));
    }

    /// A required positive integer id.
    pub fn id(&mut self, name: &'static str, _: Option<Slot>, description: &str) {
        self.add(name, true, schema::id_input(description));
    }

    /// A required date (D2).
    pub fn datetime(&mut self, name: &'static str, _: Option<Slot>, description: &str) {
        self.add(name, true, schema::date_input(description));
    }

    /// An optional positive integer id, which may be `null`.
    pub fn optional_id(&mut self, name: &'static str, _: Option<Slot>, description: &str) {
        self.add(name, false, schema::id_input(description).with("type", vec!["integer", "null"]));
    }

    /// An optional date (D2), which may be `null`.
    pub fn optional_datetime(&mut self, name: &'static str, _: Option<Slot>, description: &str) {
        self.add(name, false, schema::date_input(description).with("type", vec!["string", "null"]));
    }

    /// A required enum value, one of `values` in any case (D7), described by `description`.
    pub fn choice(&mut self, name: &'static str, _: Option<Slot>, (values, description): (Vec<&'static str>, String)) {
        self.add(name, true, schema::choice(&values).with("description", description));
    }

    /// An optional enum value, one of `values` in any case (D7), which may be `null`.
    pub fn optional_choice(
        &mut self,
        name: &'static str,
        _: Option<Slot>,
        (values, description): (Vec<&'static str>, String),
    ) {
        let choice = schema::choice(&values).with("type", vec!["string", "null"]).with("description", description);
        self.add(name, false, choice);
    }

    /// A required new password (D29).
    pub fn password(&mut self, name: &'static str, _: Option<Slot>, description: &str) {
        self.add(name, true, schema::password(description));
    }

    /// An optional GSTIN (D37), which may be `null`.
    pub fn optional_gstin(&mut self, name: &'static str, _: Option<Slot>) {
        let gstin = object! {
            "type": ["string", "null"],
            "pattern": schema::gstin_pattern(),
            "description": "GSTIN (D37): optional; blank or null means none. 15 characters, matched case-insensitively \
                 and stored upper-cased: a state code 01-38 or 97, a PAN (five letters, four digits, a letter), an \
                 entity character 1-9 or A-Z, `Z`, and the GSTIN mod-36 check character; anything else is a 400 on \
                 `gstin`. Unique among active vendors: a taken GSTIN is a 409 (D5).",
        };
        self.add(name, false, gstin);
    }

    /// An optional payment reference (D30), which may be `null`.
    pub fn optional_reference(&mut self, name: &'static str, _: Option<Slot>) {
        let reference = object! {
            "type": ["string", "null"],
            "pattern": schema::reference_pattern(REFERENCE_MAX),
            "description": format!(
                "The UPI UTR, bank reference or cheque number (D30): optional, 1 to {REFERENCE_MAX} characters after \
                 trimming, single line, with at least one letter or digit. Stored trimmed. Its key (D48: the text in \
                 Unicode NFKC, upper-cased, keeping letters and digits only, so `UTR-1`, `utr.1` and a fullwidth \
                 `ＵＴＲ１` are one key) is unique per payment type among active payments: a payment on its own or \
                 all the payments of one vendor payment hold it; recording it again is a 409 naming \
                 `existingTransactionId`."
            ),
        };
        self.add(name, false, reference);
    }

    /// A required nested object, the body `B`, written in place.
    pub fn object<B: Body + Schema>(&mut self, name: &'static str, _: Option<Nested<B>>) {
        self.add(name, true, B::schema());
    }

    /// An optional array of the body `B`, which may be `null`; `rule` adds core's bounds and the
    /// description.
    pub fn optional_objects<B: Body + Schema>(&mut self, name: &'static str, _: Option<Objects<B>>, rule: Json) {
        self.add(name, false, list(schema_ref::<B>(), rule));
    }

    /// An optional array of strings, which may be `null`; `rule` adds each item's text rule, the
    /// bounds and the description.
    pub fn strings(&mut self, name: &'static str, _: Option<List>, rule: Json) {
        self.add(name, false, list(object! { "type": "string" }, rule));
    }

    /// A user's branches (D49): `null` for all, or a non-empty list of ids, each once.
    pub fn scope(&mut self, name: &'static str, _: Option<List>, description: &'static str) {
        let items = list(schema::id_input("A branch id."), object! { "minItems": 1, "uniqueItems": true });
        self.add(name, false, items.with("description", description));
    }

    /// An optional array of positive integer ids, which may be `null`; `rule` adds the bounds
    /// and the description.
    pub fn ids(&mut self, name: &'static str, _: Option<List>, (item, rule): (&str, Json)) {
        self.add(name, false, list(schema::id_input(item), rule));
    }
}

/// An optional array of `items`, at most [`MAX_ARRAY_ITEMS`] long, with `rule`'s keys on top.
fn list(items: Json, rule: Json) -> Json {
    let mut list = object! { "type": ["array", "null"], "maxItems": MAX_ARRAY_ITEMS, "items": items };
    if let Json::Object(entries) = rule {
        for (key, value) in entries {
            list.set(key, value);
        }
    }
    list
}
