//! The JSON the API document is written in: values whose objects keep their keys in the order
//! they were set, and references to named components that the document collects as it finds
//! them.
//!
//! `serde_json::Value` sorts object keys (the workspace builds serde_json without
//! `preserve_order`, and turning it on would change every crate's maps), which would scatter an
//! operation's `operationId`, `summary` and `responses` across its object.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value of the API document.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as its exact text (`999999999999.9999`, `0.0001`).
    Number(Cow<'static, str>),
    /// A string.
    String(Cow<'static, str>),
    /// An array.
    Array(Vec<Json>),
    /// An object, its keys in the order they were set.
    Object(Vec<(Cow<'static, str>, Json)>),
    /// A reference to a component, written `{"$ref": "#/components/<kind>/<name>"}`; the
    /// document adds the component itself the first time it meets the reference.
    Ref(Component),
}

/// What kind of component a reference names: the section of `components` it lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// `components/parameters`.
    Parameters,
    /// `components/headers`.
    Headers,
    /// `components/responses`.
    Responses,
    /// `components/schemas`.
    Schemas,
}

impl Section {
    /// The section's key under `components`.
    pub fn key(self) -> &'static str {
        match self {
            Section::Parameters => "parameters",
            Section::Headers => "headers",
            Section::Responses => "responses",
            Section::Schemas => "schemas",
        }
    }
}

/// A named component: where it lives, its name, and how to build it.
#[derive(Clone, Copy, Debug)]
pub struct Component {
    /// Its section.
    pub section: Section,
    /// Its name in the section.
    pub name: &'static str,
    /// Builds its content.
    pub build: fn() -> Json,
}

impl PartialEq for Component {
    /// Two references are equal when they name the same component; the document checks that
    /// one name is never built two ways.
    fn eq(&self, other: &Self) -> bool {
        self.section == other.section && self.name == other.name
    }
}

impl Json {
    /// An empty object.
    pub fn object() -> Self {
        Json::Object(Vec::new())
    }

    /// This object with `key` set to `value`: in its place when the key is already there,
    /// else last. A value that is not an object is returned unchanged.
    #[must_use]
    pub fn with(mut self, key: impl Into<Cow<'static, str>>, value: impl Into<Json>) -> Self {
        self.set(key, value);
        self
    }

    /// Sets `key` to `value` in this object, in its place when the key is already there, else
    /// last; does nothing to a value that is not an object.
    pub fn set(&mut self, key: impl Into<Cow<'static, str>>, value: impl Into<Json>) {
        if let Json::Object(entries) = self {
            let key = key.into();
            let value = value.into();
            match entries.iter_mut().find(|(known, _)| *known == key) {
                Some((_, slot)) => *slot = value,
                None => entries.push((key, value)),
            }
        }
    }

    /// The value of `key` in this object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(known, _)| known == key).map(|(_, value)| value),
            _ => None,
        }
    }

    /// A number from its exact text.
    pub fn number(text: impl Into<Cow<'static, str>>) -> Self {
        Json::Number(text.into())
    }

    /// The document's text: two-space indents, `key: value`, and a final line break.
    pub fn to_pretty_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut serializer =
            serde_json::Serializer::with_formatter(&mut bytes, serde_json::ser::PrettyFormatter::new());
        // Writing to memory cannot fail, and every number is the text of a valid JSON number.
        self.serialize(&mut serializer).expect("the API document serialises");
        bytes.push(b'\n');
        bytes
    }
}

/// Builds an object from `"key": value` pairs, in order: `object! { "type": "string" }`.
macro_rules! object {
    ($($key:literal : $value:expr),* $(,)?) => {
        $crate::openapi::Json::Object(vec![$(($key.into(), ::core::convert::Into::<$crate::openapi::Json>::into($value))),*])
    };
}

pub(crate) use object;

impl From<&'static str> for Json {
    fn from(text: &'static str) -> Self {
        Json::String(Cow::Borrowed(text))
    }
}

impl From<String> for Json {
    fn from(text: String) -> Self {
        Json::String(Cow::Owned(text))
    }
}

impl From<bool> for Json {
    fn from(value: bool) -> Self {
        Json::Bool(value)
    }
}

macro_rules! integers {
    ($($integer:ty),*) => {$(
        impl From<$integer> for Json {
            fn from(value: $integer) -> Self {
                Json::Number(Cow::Owned(value.to_string()))
            }
        }
    )*};
}

integers!(i32, i64, u16, u32, u64, usize);

impl From<Vec<Json>> for Json {
    fn from(items: Vec<Json>) -> Self {
        Json::Array(items)
    }
}

impl From<Vec<&'static str>> for Json {
    fn from(items: Vec<&'static str>) -> Self {
        Json::Array(items.into_iter().map(Json::from).collect())
    }
}

impl<const N: usize> From<[&'static str; N]> for Json {
    fn from(items: [&'static str; N]) -> Self {
        Json::Array(items.into_iter().map(Json::from).collect())
    }
}

impl From<Component> for Json {
    fn from(component: Component) -> Self {
        Json::Ref(component)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(value) => serializer.serialize_bool(*value),
            Json::Number(text) => {
                let number: serde_json::Number = text.parse().map_err(serde::ser::Error::custom)?;
                number.serialize(serializer)
            }
            Json::String(text) => serializer.serialize_str(text),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key.as_ref(), value)?;
                }
                map.end()
            }
            Json::Ref(component) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("$ref", &format!("#/components/{}/{}", component.section.key(), component.name))?;
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_their_order_and_a_key_set_again_keeps_its_place() {
        let value = object! { "type": "string", "pattern": "^x$" }.with("description", "A.").with("type", "number");
        let text = String::from_utf8(value.to_pretty_bytes()).unwrap();
        assert_eq!(text, "{\n  \"type\": \"number\",\n  \"pattern\": \"^x$\",\n  \"description\": \"A.\"\n}\n");
    }

    #[test]
    fn numbers_are_written_as_their_exact_text() {
        let value = object! { "maximum": Json::number("999999999999.9999"), "multipleOf": Json::number("0.0001") };
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(text, r#"{"maximum":999999999999.9999,"multipleOf":0.0001}"#);
    }
}
