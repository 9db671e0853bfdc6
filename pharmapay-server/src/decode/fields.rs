//! The readers of body fields: each turns a field's slot into a value, or records why it
//! cannot under the field's path, and reading goes on (D6, D7).

use pharmapay_core::Amount;
use pharmapay_core::FieldErrors;
use pharmapay_core::branches::Scope;
use pharmapay_core::clock::parse_datetime;
use pharmapay_core::ids::BranchId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::rust_decimal::prelude::ToPrimitive;
use pharmapay_core::text::Password;
use pharmapay_core::transactions::reference::PaymentReference;
use pharmapay_core::vendors::gstin::Gstin;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::values::{Kind, List, MAX_ARRAY_ITEMS, Nested, Objects, Slot};
use crate::problem::ApiError;

/// Reads slots into values, recording errors under each field's path.
///
/// Every reader answers `None` once it has recorded an error, so a body builds its input only
/// when all of its fields were read.
pub struct Fields<'a> {
    pub(super) prefix: String,
    pub(super) errors: &'a mut FieldErrors,
}

impl Fields<'_> {
    fn path(&self, name: &str) -> String {
        if self.prefix.is_empty() { name.to_owned() } else { format!("{}.{name}", self.prefix) }
    }

    fn fail<T>(&mut self, name: &str, message: impl Into<String>) -> Option<T> {
        let path = self.path(name);
        self.errors.add(path, message);
        None
    }

    /// Records that the field holds a value of the kind `found` where `expected` belongs.
    fn wrong_type<T>(&mut self, name: &str, expected: &str, found: Kind) -> Option<T> {
        self.fail(name, format!("must be {expected}, not {}", found.described()))
    }

    /// The value of a parse, or its error under `name`.
    fn parsed<T>(&mut self, name: &str, parsed: Result<T, impl std::fmt::Display>) -> Option<T> {
        match parsed {
            Ok(value) => Some(value),
            Err(error) => self.fail(name, error.to_string()),
        }
    }

    /// The slot of a required field: absent and `null` are errors.
    fn required(&mut self, name: &str, slot: Option<Slot>) -> Option<Slot> {
        match slot {
            None | Some(Slot::Other(Kind::Null)) => self.fail(name, "is required"),
            present => present,
        }
    }

    /// The nested object `name`, required; its fields' paths are prefixed with `name.`.
    pub fn object<B: Body>(&mut self, name: &str, slot: Option<Nested<B>>) -> Option<B::Input> {
        match slot {
            Some(Nested::Object(body)) => body.read(&mut Fields { prefix: self.path(name), errors: &mut *self.errors }),
            None | Some(Nested::Other(Kind::Null)) => self.fail(name, "is required"),
            Some(Nested::Other(kind)) => self.wrong_type(name, "an object", kind),
        }
    }

    /// An optional array of objects `name`, absent or `null` being `None`; each item's fields'
    /// paths are prefixed with `name[i].`, so every error names its item (`allocations[3].amount`).
    pub fn optional_objects<B: Body>(&mut self, name: &str, slot: Option<Objects<B>>) -> Option<Option<Vec<B::Input>>> {
        let items = match slot {
            None | Some(Objects::Other(Kind::Null)) => return Some(None),
            Some(Objects::Items(items)) => items,
            Some(Objects::TooLong) => return self.fail(name, format!("must have at most {MAX_ARRAY_ITEMS} items")),
            Some(Objects::Other(kind)) => return self.wrong_type(name, "an array of objects", kind),
        };
        let n_items = items.len();
        let mut inputs = Vec::with_capacity(n_items);
        for (index, item) in items.into_iter().enumerate() {
            let path = format!("{name}[{index}]");
            let input = match item {
                Nested::Object(body) => body.read(&mut Fields { prefix: self.path(&path), errors: &mut *self.errors }),
                Nested::Other(kind) => self.wrong_type(&path, "an object", kind),
            };
            inputs.extend(input);
        }
        (inputs.len() == n_items).then_some(Some(inputs))
    }

    /// An optional timestamp (D2): RFC 3339 with an offset, or `YYYY-MM-DD`; absent and `null`
    /// are `Some(None)`.
    pub fn optional_datetime(&mut self, name: &str, slot: Option<Slot>) -> Option<Option<Timestamp>> {
        match self.optional_string(name, slot)? {
            None => Some(None),
            Some(text) => self.parsed(name, parse_datetime(&text)).map(Some),
        }
    }

    /// An optional GSTIN (D37), upper-cased and checked; absent and `null` are `Some(None)`,
    /// and blank text is refused like any other text that is not a GSTIN.
    pub fn optional_gstin(&mut self, name: &str, slot: Option<Slot>) -> Option<Option<Gstin>> {
        match self.optional_string(name, slot)? {
            None => Some(None),
            Some(text) => self.parsed(name, Gstin::parse(&text)).map(Some),
        }
    }

    /// An optional payment reference (D30): trimmed, 1 to 64 characters; absent and `null` are
    /// `Some(None)`.
    pub fn optional_reference(&mut self, name: &str, slot: Option<Slot>) -> Option<Option<PaymentReference>> {
        match self.optional_string(name, slot)? {
            None => Some(None),
            Some(text) => self.parsed(name, PaymentReference::parse(&text)).map(Some),
        }
    }

    /// A required string.
    pub fn string(&mut self, name: &str, slot: Option<Slot>) -> Option<String> {
        match self.required(name, slot)? {
            Slot::String(text) => Some(text),
            other => self.wrong_type(name, "a string", kind_of(&other)),
        }
    }

    /// An optional string; `null` and absent are `Some(None)`.
    pub fn optional_string(&mut self, name: &str, slot: Option<Slot>) -> Option<Option<String>> {
        match slot {
            None | Some(Slot::Other(Kind::Null)) => Some(None),
            Some(Slot::String(text)) => Some(Some(text)),
            Some(other) => self.wrong_type(name, "a string", kind_of(&other)),
        }
    }

    /// An optional boolean; `null` and absent are `default`.
    pub fn flag_or(&mut self, _name: &str, slot: Option<bool>, default: bool) -> Option<bool> {
        Some(slot.unwrap_or(default))
    }

    /// An optional string; `null` and absent are empty.
    pub fn string_or_empty(&mut self, name: &str, slot: Option<Slot>) -> Option<String> {
        self.optional_string(name, slot).map(Option::unwrap_or_default)
    }

    /// A required positive amount, written as a JSON number (D1: strings are refused).
    pub fn amount(&mut self, name: &str, slot: Option<Slot>) -> Option<Amount> {
        match self.required(name, slot)? {
            Slot::Number(text) => self.parsed(name, Amount::parse(&text)),
            other => self.wrong_type(name, "a number", kind_of(&other)),
        }
    }

    /// An optional positive amount, written as a JSON number (D1); absent and `null` are
    /// `Some(None)`.
    pub fn optional_amount(&mut self, name: &str, slot: Option<Slot>) -> Option<Option<Amount>> {
        match slot {
            None | Some(Slot::Other(Kind::Null)) => Some(None),
            slot => self.amount(name, slot).map(Some),
        }
    }

    /// A required sum of money that may be zero, written as a JSON number (D1): at most
    /// four fractional digits and within the largest amount; core says whether a sign is allowed.
    pub fn money(&mut self, name: &str, slot: Option<Slot>) -> Option<Decimal> {
        match self.required(name, slot)? {
            Slot::Number(text) => self.parsed(name, pharmapay_core::money::parse_decimal(&text)),
            other => self.wrong_type(name, "a number", kind_of(&other)),
        }
    }

    /// A required positive integer id.
    pub fn id<I: From<i64>>(&mut self, name: &str, slot: Option<Slot>) -> Option<I> {
        match self.required(name, slot)? {
            Slot::Number(text) => match positive_id(&text) {
                Some(id) => Some(I::from(id)),
                None => self.fail(name, "must be a positive integer"),
            },
            other => self.wrong_type(name, "an integer", kind_of(&other)),
        }
    }

    /// An optional positive integer id; absent and `null` are `Some(None)`.
    pub fn optional_id<I: From<i64>>(&mut self, name: &str, slot: Option<Slot>) -> Option<Option<I>> {
        match slot {
            None | Some(Slot::Other(Kind::Null)) => Some(None),
            slot => self.id(name, slot).map(Some),
        }
    }

    /// A required timestamp (D2): RFC 3339 with an offset, or `YYYY-MM-DD`.
    pub fn datetime(&mut self, name: &str, slot: Option<Slot>) -> Option<Timestamp> {
        let text = self.string(name, slot)?;
        self.parsed(name, parse_datetime(&text))
    }

    /// A required enum value, parsed by `parse` (any case, D7).
    pub fn choice<T>(
        &mut self,
        name: &str,
        slot: Option<Slot>,
        parse: fn(&str) -> Option<T>,
        expected: &str,
    ) -> Option<T> {
        let text = self.string(name, slot)?;
        parse(&text).or_else(|| self.fail(name, expected))
    }

    /// An optional enum value, parsed by `parse` (any case, D7); absent and `null` are
    /// `Some(None)`.
    pub fn optional_choice<T>(
        &mut self,
        name: &str,
        slot: Option<Slot>,
        parse: fn(&str) -> Option<T>,
        expected: &str,
    ) -> Option<Option<T>> {
        match self.optional_string(name, slot)? {
            None => Some(None),
            Some(text) => parse(&text).map(Some).or_else(|| self.fail(name, expected)),
        }
    }

    /// A required password meeting D29.
    pub fn password(&mut self, name: &str, slot: Option<Slot>) -> Option<Password> {
        let text = self.string(name, slot)?;
        self.parsed(name, Password::parse(&text))
    }

    /// An optional array of `what`, absent or `null` being empty: each item read by `item`,
    /// or its message recorded under the item's path.
    fn list<T>(
        &mut self,
        name: &str,
        list: Option<List>,
        what: &str,
        item: impl Fn(Slot) -> Result<T, String>,
    ) -> Option<Vec<T>> {
        let items = match list {
            None | Some(List::Other(Kind::Null)) => Vec::new(),
            Some(List::Items(items)) => items,
            Some(List::TooLong) => return self.fail(name, format!("must have at most {MAX_ARRAY_ITEMS} items")),
            Some(List::Other(kind)) => return self.wrong_type(name, &format!("an array of {what}"), kind),
        };
        let n_items = items.len();
        let values: Vec<T> = items
            .into_iter()
            .enumerate()
            .filter_map(|(index, slot)| match item(slot) {
                Ok(value) => Some(value),
                Err(message) => self.fail(&format!("{name}[{index}]"), message),
            })
            .collect();
        (values.len() == n_items).then_some(values)
    }

    /// An optional array of strings; absent or `null` is empty.
    pub fn strings(&mut self, name: &str, list: Option<List>) -> Option<Vec<String>> {
        self.list(name, list, "strings", |item| match item {
            Slot::String(text) => Ok(text),
            other => Err(format!("must be a string, not {}", kind_of(&other).described())),
        })
    }

    /// A user's branches (D49): absent is `None` (the default of the write), `null` all
    /// branches, else a non-empty list of ids, each once
    /// ([`pharmapay_core::branches::scope::check_listed`]). The body's field keeps `null`
    /// apart from absent with [`super::present`].
    pub fn scope(&mut self, name: &str, list: Option<List>) -> Option<Option<Scope>> {
        match list {
            None => Some(None),
            Some(List::Other(Kind::Null)) => Some(Some(Scope::All)),
            list => {
                let ids: Vec<BranchId> = self.ids(name, list)?;
                match pharmapay_core::branches::scope::check_listed(&ids) {
                    Ok(scope) => Some(Some(scope)),
                    Err(errors) => {
                        let message = errors.iter().next().map(|(_, messages)| messages.join("; ")).unwrap_or_default();
                        self.fail(name, message)
                    }
                }
            }
        }
    }

    /// An optional array of positive integer ids; absent or `null` is empty.
    pub fn ids<I: From<i64>>(&mut self, name: &str, list: Option<List>) -> Option<Vec<I>> {
        self.list(name, list, "integers", |item| {
            let id = if let Slot::Number(text) = item { positive_id(&text) } else { None };
            id.map(I::from).ok_or_else(|| "must be a positive integer".to_owned())
        })
    }
}

fn kind_of(slot: &Slot) -> Kind {
    match slot {
        Slot::String(_) => Kind::String,
        Slot::Number(_) => Kind::Number,
        Slot::Other(kind) => *kind,
    }
}

/// The id a JSON number denotes: a positive integer.
fn positive_id(number: &str) -> Option<i64> {
    integer(number).filter(|id| *id >= 1)
}

/// The integer a JSON number denotes, also when written with a fraction or exponent (`7.0`,
/// `7e0`), as JSON Schema counts those as integers; `None` when it has a fractional part or
/// does not fit an `i64`.
fn integer(number: &str) -> Option<i64> {
    if let Ok(value) = number.parse::<i64>() {
        return Some(value);
    }
    let value = if number.contains(['e', 'E']) {
        Decimal::from_scientific(number).ok()?
    } else {
        number.parse::<Decimal>().ok()?
    };
    if value.fract().is_zero() { value.to_i64() } else { None }
}

/// A request body: a JSON object decoded into a typed struct of [`Slot`]s, then read field by
/// field into a core input.
///
/// Bodies also serialise, field by field in a fixed order, which gives idempotent creates a
/// fingerprint that ignores spacing, key order and unknown fields (D23).
pub trait Body: DeserializeOwned + Serialize {
    /// The core input the body becomes.
    type Input;

    /// Reads every field, recording an error for each one that is missing or invalid; `None`
    /// when the input cannot be built.
    fn read(self, fields: &mut Fields<'_>) -> Option<Self::Input>;

    /// The core input, or a 400 listing every field error.
    ///
    /// # Errors
    /// [`ApiError::Invalid`] with a message per invalid field.
    fn decode(self) -> Result<Self::Input, ApiError> {
        let mut errors = FieldErrors::new();
        let input = self.read(&mut Fields { prefix: String::new(), errors: &mut errors });
        match input {
            Some(input) if errors.is_empty() => Ok(input),
            _ => Err(ApiError::Invalid(errors)),
        }
    }
}

/// A core input read from a request body: the one body it is decoded from, so a handler that
/// names the engine method to call need not name the body too.
pub trait Input: Sized {
    /// The body.
    type Body: Body<Input = Self>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_numbers_are_ids_whatever_their_spelling() {
        for (text, expected) in
            [("7", Some(7)), ("7.0", Some(7)), ("7e0", Some(7)), ("7E0", Some(7)), ("7.5", None), ("1e30", None)]
        {
            assert_eq!(integer(text), expected, "{text}");
        }
    }
}
