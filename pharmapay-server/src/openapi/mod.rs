//! The OpenAPI 3.1 document of the API, built from the route table and the declarations that
//! decode and encode the API's JSON, once per process, and served at `GET /api/openapi.json`.
//!
//! Each row of [`crate::routes::table`] names its [`Operation`]; the document ([`document`],
//! given the table) adds what the
//! row's guard requires, gathers a path's methods, and collects every component an operation
//! refers to, each written once: a body's schema comes from its `bodies!` declaration, where each
//! field's reader yields its part, a DTO's from its `describe!` beside the struct, and the
//! limits in both from the constants the validation reads.
//!
//! The decoding is hand-written (it collects every field error at once and keeps money exact
//! from the request's number text), so a schema derived from serde attributes would describe
//! other types than the ones requests are read into; the document is written in the small model
//! of `json.rs` instead; `describe.rs` holds how a type describes itself, `document.rs` the
//! building of the whole document from the table it is given. `pharmapay-server/openapi.json` keeps a copy, which `pharmapay openapi`
//! writes and a test compares with what the code builds.

mod components;
mod crud;
mod describe;
mod document;
mod json;
mod operation;
pub mod schema;

pub use components::{ACTIVE_ONLY, CACHE_CONTROL, IDEMPOTENCY_KEY, PAGE, SORT_DIR, TOKEN};
pub use crud::{Crud, Link};
pub(crate) use describe::describe;
pub use describe::{Property, Schema, dto_schema, flatten, flatten_sometimes, named_schema, schema_ref, wire_name};
pub use document::document;
pub(crate) use json::object;
pub use json::{Component, Json, Section};
pub use operation::{
    Operation, Tag, branch_filter, created, get_link, id_links, json_content, json_response, link_by_id, no_content,
    page_size, path_id, positive_id, query, query_date, query_id, restore_link, search, sort_by,
};
