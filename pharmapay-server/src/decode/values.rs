//! The values a body's fields are first decoded into: a [`Slot`] that tells an absent field
//! from `null` and from a value of the wrong kind, bounded [`List`]s, [`Objects`] and [`Nested`]
//! bodies, before the field readers turn them into core inputs.

use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Most items accepted in an array field.
pub const MAX_ARRAY_ITEMS: usize = 200;

/// Deepest nesting of arrays and objects accepted in a JSON body.
pub const MAX_JSON_DEPTH: usize = 32;

/// The kind of a JSON value, which is all a body keeps of a value it cannot use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl Kind {
    /// The kind of an already validated JSON value, told by its first character.
    pub(super) fn of(raw: &RawValue) -> Kind {
        match raw.get().trim_start().as_bytes().first() {
            Some(b'n') => Kind::Null,
            Some(b't' | b'f') => Kind::Boolean,
            Some(b'"') => Kind::String,
            Some(b'[') => Kind::Array,
            Some(b'{') => Kind::Object,
            _ => Kind::Number,
        }
    }

    /// The kind as error messages name it ("must be a string, not a number").
    pub fn described(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// One field's value, kept only as far as decoding needs it.
///
/// A field that is absent or `null` is a `None` `Option<Slot>`; inside an array, `null` is
/// `Other(Kind::Null)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Slot {
    /// A string, unescaped.
    String(String),
    /// A number, exactly as written (with a lower-case exponent marker).
    Number(String),
    /// Any other value: only its kind is kept, its content is skipped.
    Other(Kind),
}

impl<'de> Deserialize<'de> for Slot {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // The value is first taken as raw text borrowed from the body, which serde_json checks
        // without allocating; only a string or a number is then copied out.
        let raw = <&RawValue>::deserialize(deserializer)?;
        Ok(match Kind::of(raw) {
            Kind::String => Slot::String(serde_json::from_str(raw.get()).map_err(de::Error::custom)?),
            Kind::Number => Slot::Number(raw.get().trim().to_ascii_lowercase()),
            kind => Slot::Other(kind),
        })
    }
}

/// An array field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum List {
    /// Its items, at most [`MAX_ARRAY_ITEMS`].
    Items(Vec<Slot>),
    /// It has more than [`MAX_ARRAY_ITEMS`] items; they were counted, not kept.
    TooLong,
    /// Not an array: only its kind is kept.
    Other(Kind),
}

impl<'de> Deserialize<'de> for List {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        match Kind::of(raw) {
            Kind::Array => {
                let mut items = serde_json::Deserializer::from_str(raw.get());
                let items = items.deserialize_seq(ItemsVisitor::<Slot>::new()).map_err(de::Error::custom)?;
                Ok(items.map_or(List::TooLong, List::Items))
            }
            kind => Ok(List::Other(kind)),
        }
    }
}

/// Keeps the first [`MAX_ARRAY_ITEMS`] items of an array, each read as a `T`, and skips the
/// rest; answers the items, or `None` when there were more.
struct ItemsVisitor<T>(std::marker::PhantomData<T>);

impl<T> ItemsVisitor<T> {
    fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ItemsVisitor<T> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Vec<T>>, A::Error> {
        let mut items = Vec::new();
        while items.len() < MAX_ARRAY_ITEMS {
            match seq.next_element::<T>()? {
                Some(item) => items.push(item),
                None => return Ok(Some(items)),
            }
        }
        if seq.next_element::<IgnoredAny>()?.is_none() {
            return Ok(Some(items));
        }
        drop(items);
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// An array field of objects, each read as the body `B`, such as a vendor payment's
/// `allocations`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Objects<B> {
    /// Its items, at most [`MAX_ARRAY_ITEMS`].
    Items(Vec<Nested<B>>),
    /// It has more than [`MAX_ARRAY_ITEMS`] items; they were counted, not kept.
    TooLong,
    /// Not an array: only its kind is kept.
    Other(Kind),
}

impl<'de, B: DeserializeOwned> Deserialize<'de> for Objects<B> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        match Kind::of(raw) {
            Kind::Array => {
                let mut items = serde_json::Deserializer::from_str(raw.get());
                let items = items.deserialize_seq(ItemsVisitor::<Nested<B>>::new()).map_err(de::Error::custom)?;
                Ok(items.map_or(Objects::TooLong, Objects::Items))
            }
            kind => Ok(Objects::Other(kind)),
        }
    }
}

/// A nested object field, such as the onboarding body's `pharmacy`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Nested<B> {
    /// An object, read as the body `B`.
    Object(B),
    /// Not an object: only its kind is kept.
    Other(Kind),
}

impl<'de, B: DeserializeOwned> Deserialize<'de> for Nested<B> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        match Kind::of(raw) {
            Kind::Object => serde_json::from_str(raw.get()).map(Nested::Object).map_err(de::Error::custom),
            kind => Ok(Nested::Other(kind)),
        }
    }
}
