//! How a type describes itself in the document: the [`Schema`] trait, references to schemas,
//! a DTO's properties by their wire names, and the `describe!` macro that writes a DTO's schema
//! beside its struct.

use super::json::{Component, Json, Section, object};

/// A type the document describes: a body, a DTO, an answer of the API.
pub trait Schema {
    /// Its name under `components/schemas`.
    const NAME: &'static str;

    /// Its schema.
    fn schema() -> Json;
}

/// A reference to `T`'s schema, which the document adds to `components/schemas` once.
pub fn schema_ref<T: Schema>() -> Json {
    Json::Ref(Component { section: Section::Schemas, name: T::NAME, build: T::schema })
}

/// A named schema that no Rust type stands for, such as an answer written with `json!`.
pub const fn named_schema(name: &'static str, build: fn() -> Json) -> Component {
    Component { section: Section::Schemas, name, build }
}

/// One property of a DTO's schema, or the properties of a DTO it flattens.
pub enum Property {
    /// A property of its own.
    One(Json),
    /// Every property of `T`, flattened into the DTO (`#[serde(flatten)]`).
    Flatten(fn() -> Json),
    /// Every property of `T`, flattened into the DTO from an `Option` and so written on some
    /// answers only: none of them required.
    FlattenSometimes(fn() -> Json),
}

impl<T: Into<Json>> From<T> for Property {
    fn from(schema: T) -> Self {
        Property::One(schema.into())
    }
}

/// The properties of `T`, for a field that `#[serde(flatten)]` writes into its DTO.
pub fn flatten<T: Schema>() -> Property {
    Property::Flatten(T::schema)
}

/// The properties of `T`, for an `Option<T>` field that `#[serde(flatten)]` writes into its DTO
/// when it holds a value.
pub fn flatten_sometimes<T: Schema>() -> Property {
    Property::FlattenSometimes(T::schema)
}

/// The schema of a DTO: every property required but those flattened from an `Option`, none
/// other allowed.
pub fn dto_schema(description: &'static str, fields: Vec<(String, Property)>) -> Json {
    let mut properties = Json::object();
    let mut required: Vec<Json> = Vec::new();
    for (name, property) in fields {
        match &property {
            Property::One(schema) => {
                required.push(Json::from(name.clone()));
                properties.set(name, schema.clone());
            }
            Property::Flatten(build) | Property::FlattenSometimes(build) => {
                let always = matches!(property, Property::Flatten(_));
                let inner = build();
                if let (true, Some(Json::Array(names))) = (always, inner.get("required")) {
                    required.extend(names.iter().cloned());
                }
                if let Some(Json::Object(entries)) = inner.get("properties") {
                    for (key, value) in entries {
                        properties.set(key.clone(), value.clone());
                    }
                }
            }
        }
    }
    object! {
        "type": "object",
        "description": description,
        "required": required,
        "properties": properties,
        "additionalProperties": false,
    }
}

/// The JSON name serde gives a field under `#[serde(rename_all = "camelCase")]`: each `_`
/// dropped and the character after it upper-cased.
pub fn wire_name(field: &str) -> String {
    // A raw identifier (`r#type`) is named without its prefix, as serde names it.
    let field = field.strip_prefix("r#").unwrap_or(field);
    let mut name = String::with_capacity(field.len());
    let mut capitalize = false;
    for character in field.chars() {
        if character == '_' {
            capitalize = !name.is_empty();
        } else if capitalize {
            name.push(character.to_ascii_uppercase());
            capitalize = false;
        } else {
            name.push(character);
        }
    }
    name
}

/// Describes a DTO beside its struct: its schema's name and description, and each field's
/// schema by the field's name, which serde writes in camelCase (see [`wire_name`]); a field
/// that serde flattens is described by [`flatten`].
///
/// ```text
/// describe! {
///     UserDto as "User": "UserDto; the password hash is never returned." {
///         id: schema::id("User id."),
///         ...
///     }
/// }
/// ```
///
/// Every field of the struct is named once, in the order the document lists them: the compiler
/// refuses a field that is left out or that the struct does not have.
macro_rules! describe {
    ($dto:ident $(<$generic:ty>)? as $name:literal : $description:literal {
        $($field:ident : $schema:expr),* $(,)?
    }) => {
        impl $crate::openapi::Schema for $dto $(<$generic>)? {
            const NAME: &'static str = $name;

            fn schema() -> $crate::openapi::Json {
                let _every_field_once = |dto: &$dto $(<$generic>)?| {
                    let $dto { $($field: _),* } = dto;
                };
                $crate::openapi::dto_schema($description, vec![
                    $(($crate::openapi::wire_name(stringify!($field)), $crate::openapi::Property::from($schema)),)*
                ])
            }
        }
    };
}

pub(crate) use describe;

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::*;

    #[test]
    fn wire_names_are_the_ones_serde_writes() {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Names {
            id: u8,
            drug_license_number1: u8,
            due_in7_days: u8,
            days_1_to_30: u8,
            over_180: u8,
            r#type: u8,
        }
        let names = Names { id: 0, drug_license_number1: 0, due_in7_days: 0, days_1_to_30: 0, over_180: 0, r#type: 0 };
        let written = serde_json::to_value(&names).unwrap();
        for field in ["id", "drug_license_number1", "due_in7_days", "days_1_to_30", "over_180", "r#type"] {
            let name = wire_name(field);
            assert!(written.get(&name).is_some(), "{field} is written as {name}: {written}");
        }
    }
}
