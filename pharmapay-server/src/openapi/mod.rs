//! The OpenAPI 3.1 document of the API, built from the route table and the declarations that
//! decode and encode the API's JSON, once per process, and served at `GET /api/openapi.json`.
//!
//! Each row of [`crate::routes::table`] names its [`Operation`]; the document adds what the
//! row's guard requires, gathers a path's methods, and collects every component an operation
//! refers to, each written once: a body's schema comes from its `bodies!` declaration, where each
//! field's reader yields its part, a DTO's from its `describe!` beside the struct, and the
//! limits in both from the constants the validation reads.
//!
//! The decoding is hand-written (it collects every field error at once and keeps money exact
//! from the request's number text), so a schema derived from serde attributes would describe
//! other types than the ones requests are read into; the document is written in the small model
//! of `json.rs` instead. `pharmapay-server/openapi.json` keeps a copy, which `pharmapay openapi`
//! writes and a test compares with what the code builds.

mod components;
mod crud;
mod json;
mod operation;
pub mod schema;

use std::borrow::Cow;
use std::sync::OnceLock;

use pharmapay_core::auth::MIN_SECRET_CHARS;
use pharmapay_core::money::MAX_AMOUNT;
use pharmapay_core::paging::MAX_PAGE_SIZE;
use pharmapay_store_memory::MemoryStore;

pub use components::{CACHE_CONTROL, IDEMPOTENCY_KEY, PAGE, SORT_DIR};
pub use crud::{Crud, Link};
pub(crate) use json::object;
pub use json::{Component, Json, Section};
pub use operation::{
    Operation, Tag, created, get_link, id_links, json_content, json_response, link_by_id, no_content, page_size,
    path_id, positive_id, query, query_date, query_id, restore_link, search, sort_by,
};

use crate::http::MAX_BODY_BYTES;
use crate::routes;

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

/// The API document as its bytes, built on first use.
pub fn document_bytes() -> &'static [u8] {
    static DOCUMENT: OnceLock<Vec<u8>> = OnceLock::new();
    DOCUMENT.get_or_init(|| document().to_pretty_bytes())
}

/// The API document: every route of the table with what its guard requires, and every
/// component its operations refer to.
///
/// # Panics
/// When two methods of one path state different path parameters, or one component name is
/// built two ways, which the document's test meets first.
pub fn document() -> Json {
    let mut paths = Json::object();
    let mut tags: Vec<&'static str> = Vec::new();
    for route in routes::table::<MemoryStore>() {
        let operation = (route.operation)();
        if !tags.contains(&operation.tag()) {
            tags.push(operation.tag());
        }
        let method = route.method.as_str().to_lowercase();
        let mut item = paths.get(route.path).cloned().unwrap_or_else(|| {
            let item = Json::object();
            if operation.path_parameters().is_empty() {
                item
            } else {
                item.with("parameters", operation.path_parameters().to_vec())
            }
        });
        let stated = item.get("parameters").cloned().unwrap_or(Json::Array(Vec::new()));
        assert_eq!(
            stated,
            Json::Array(operation.path_parameters().to_vec()),
            "{} {} states other path parameters than the path's first method",
            route.method,
            route.path
        );
        item.set(method, operation.to_json(route.guard));
        paths.set(route.path, item);
    }
    let components = components_of(&paths);
    object! {
        "openapi": "3.1.0",
        "info": info(),
        "servers": vec![object! { "url": "/" }],
        "security": vec![object! { "bearerAuth": Json::Array(Vec::new()) }],
        "tags": tags.into_iter().map(|tag| object! { "name": tag }).collect::<Vec<_>>(),
        "paths": paths,
        "components": components,
    }
}

fn info() -> Json {
    let max_body_mib = MAX_BODY_BYTES / (1024 * 1024);
    object! {
        "title": "pharmapay",
        "version": env!("CARGO_PKG_VERSION"),
        "description": format!(
            "Accounts-payable API for a pharmacy: vendors, the invoices they send and the payments made against them, \
             with role-based access control, settings, a live dashboard, a user profile area and an audit log.\n\n\
             - Amounts are exact decimals written as JSON numbers (never strings) with at most 4 fractional digits, at \
             most {MAX_AMOUNT} (D1). Timestamps in responses are RFC 3339 UTC ending in `Z`; requests accept RFC 3339 \
             with any offset or a bare `YYYY-MM-DD` (D2).\n\
             - Every error is RFC 9457 problem details (`application/problem+json`: `type`, `title`, `status`, \
             `traceId`, `detail`, and `errors` by field for validation and duplicates), except the failed login (401), \
             which is `{{\"message\"}}` (D6). Every response carries an `X-Trace-Id` header.\n\
             - All routes except `POST /api/auth/login`, `/api/onboarding/*`, `GET /api/health` and `GET \
             /api/openapi.json` need `Authorization: Bearer <token>`; a missing or invalid token is a 401 with \
             `WWW-Authenticate: Bearer`, a missing permission a 403.\n\
             - JSON bodies need `Content-Type: application/json` (415), at most {max_body_mib} MiB (413); unknown \
             fields are ignored; enum values are matched case-insensitively and written in canonical case (D7). \
             Unknown paths answer 404 and known paths with another method 405 with `Allow`.\n\
             - Deletes are soft (`isActive = false`) and can be undone with `POST .../{{id}}/restore` (D15). Creates \
             accept an `Idempotency-Key` (D23). Lists are paginated: `pageSize` above {MAX_PAGE_SIZE} is clamped to \
             {MAX_PAGE_SIZE} (D8)."
        ),
    }
}

/// Every component `paths` refers to, and every one those refer to, by section, each in the
/// order it was first met.
fn components_of(paths: &Json) -> Json {
    let mut found: Vec<(Component, Json)> = Vec::new();
    let mut pending: Vec<Component> = Vec::new();
    references(paths, &mut pending);
    let mut next = 0;
    while next < pending.len() {
        let component = pending[next];
        next += 1;
        let built = (component.build)();
        if let Some((_, known)) = found.iter().find(|(known, _)| *known == component) {
            assert_eq!(*known, built, "the component {} is built two ways", component.name);
            continue;
        }
        references(&built, &mut pending);
        found.push((component, built));
    }
    let security = object! {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": format!(
            "HS256 JWT from `POST /api/auth/login`, `POST /api/onboarding/setup` or `PUT /api/profile/password`. \
             Tokens follow the JWT best current practices of RFC8725: the algorithm is pinned to HS256 and never read \
             from a token, `exp`, `iat`, `iss` and `aud` are required and checked, and the signing secret has at least \
             {MIN_SECRET_CHARS} characters."
        ),
    };
    let mut components = object! { "securitySchemes": object! { "bearerAuth": security } };
    for section in [Section::Parameters, Section::Headers, Section::Responses, Section::Schemas] {
        let mut entries = Json::object();
        for (component, built) in found.iter().filter(|(component, _)| component.section == section) {
            entries.set(Cow::Borrowed(component.name), built.clone());
        }
        components.set(section.key(), entries);
    }
    components
}

/// Appends every component `value` refers to.
fn references(value: &Json, found: &mut Vec<Component>) {
    match value {
        Json::Ref(component) => found.push(*component),
        Json::Array(items) => items.iter().for_each(|item| references(item, found)),
        Json::Object(entries) => entries.iter().for_each(|(_, item)| references(item, found)),
        Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
    }
}

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

    #[test]
    fn the_committed_document_is_the_one_the_code_builds() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json");
        let committed = std::fs::read(path).expect("pharmapay-server/openapi.json is readable");
        assert!(
            committed == document_bytes(),
            "pharmapay-server/openapi.json differs from the document the code builds; write it again with \
             `cargo run -p pharmapay-server -- openapi pharmapay-server/openapi.json`"
        );
    }
}
