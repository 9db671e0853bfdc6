//! What one route's row says in the API document: its operation (id, tag, summary, the text
//! after what its guard requires, parameters, body and answers), and the answers the shared
//! handlers of [`crate::routes::Call`] give, written once; [`super::Crud`] builds the operations of
//! the resources those handlers keep.

use std::borrow::Cow;

use pharmapay_core::paging::{MAX_PAGE_SIZE, SortKey};
use pharmapay_core::text::SEARCH_MAX;

use super::components::{self, IDEMPOTENT_REPLAYED, LOCATION, error_response};
use super::{Json, object, schema};
use crate::guard::Guard;
use crate::openapi::{Schema, schema_ref};

/// The tag a resource's operations are listed under, stated once by the resource: it makes
/// them.
#[derive(Clone, Copy, Debug)]
pub struct Tag(pub &'static str);

impl Tag {
    /// An operation `id` under this tag; `description` follows the guard's sentence.
    pub fn operation(
        self,
        id: impl Into<Cow<'static, str>>,
        summary: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Operation {
        Operation::new(id, self.0, summary, description)
    }
}

/// An operation of the API document, without what its route's guard says: the document adds
/// that from the guard itself.
#[derive(Clone, Debug)]
pub struct Operation {
    id: Cow<'static, str>,
    tag: &'static str,
    summary: Cow<'static, str>,
    /// The text after the guard's sentence ("Permission `Vendor:Read`"), such as `. Paginated
    /// (D8).`; the whole description of a public route.
    description: Cow<'static, str>,
    path_parameters: Vec<Json>,
    parameters: Vec<Json>,
    body: Option<Json>,
    responses: Vec<(&'static str, Json)>,
    errors: Vec<u16>,
}

impl Operation {
    /// An operation `id` under `tag`; `description` follows the guard's sentence.
    pub fn new(
        id: impl Into<Cow<'static, str>>,
        tag: &'static str,
        summary: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            id: id.into(),
            tag,
            summary: summary.into(),
            description: description.into(),
            path_parameters: Vec::new(),
            parameters: Vec::new(),
            body: None,
            responses: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// The same operation under another summary.
    #[must_use]
    pub fn with_summary(mut self, summary: impl Into<Cow<'static, str>>) -> Self {
        self.summary = summary.into();
        self
    }

    /// The operation's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The operation's tag.
    pub fn tag(&self) -> &'static str {
        self.tag
    }

    /// Adds a path parameter; the document states a path's parameters once, for all its
    /// methods.
    #[must_use]
    pub fn path_parameter(mut self, parameter: Json) -> Self {
        self.path_parameters.push(parameter);
        self
    }

    /// Adds a query or header parameter.
    #[must_use]
    pub fn parameter(mut self, parameter: impl Into<Json>) -> Self {
        self.parameters.push(parameter.into());
        self
    }

    /// Adds query or header parameters.
    #[must_use]
    pub fn parameters(mut self, parameters: impl IntoIterator<Item = Json>) -> Self {
        self.parameters.extend(parameters);
        self
    }

    /// A required JSON body of the schema `B`.
    #[must_use]
    pub fn body<B: Schema>(self) -> Self {
        self.request_body::<B>(true)
    }

    /// An optional JSON body of the schema `B`.
    #[must_use]
    pub fn optional_body<B: Schema>(self) -> Self {
        self.request_body::<B>(false)
    }

    /// A request body other than JSON, such as an uploaded file: `body` is the whole Request
    /// Body Object.
    #[must_use]
    pub fn file_body(mut self, body: Json) -> Self {
        self.body = Some(body);
        self
    }

    fn request_body<B: Schema>(mut self, required: bool) -> Self {
        self.body = Some(object! {
            "required": required,
            "content": object! { "application/json": object! { "schema": schema_ref::<B>() } },
        });
        self
    }

    /// Adds the answer with `status`.
    #[must_use]
    pub fn response(mut self, status: &'static str, response: Json) -> Self {
        self.responses.push((status, response));
        self
    }

    /// Adds a 200 with a JSON body of `schema`.
    #[must_use]
    pub fn ok(self, description: impl Into<Json>, schema: impl Into<Json>) -> Self {
        self.response("200", json_response(description, schema))
    }

    /// Adds the error answers with these statuses, each described once in `components`. The
    /// document lists them in ascending order, and 403 only under a guard that asks for a
    /// permission: a route any valid token (or none) may call never answers it.
    #[must_use]
    pub fn errors(mut self, statuses: &[u16]) -> Self {
        self.errors.extend_from_slice(statuses);
        self
    }

    /// The operation's path parameters.
    pub(super) fn path_parameters(&self) -> &[Json] {
        &self.path_parameters
    }

    /// The operation as the document writes it under a route guarded by `guard`: a public
    /// route has no security, any other route's description starts with what it requires.
    pub(super) fn to_json(&self, guard: Guard) -> Json {
        let requirement = match guard {
            Guard::Public => String::new(),
            Guard::Token => "A valid token is enough".to_owned(),
            Guard::Permission(access) => format!("Permission `{access}`"),
            Guard::AllOf(accesses) => {
                let named: Vec<String> = accesses.iter().map(|access| format!("`{access}`")).collect();
                match named.split_last() {
                    Some((last, rest)) if !rest.is_empty() => format!("Permissions {} and {last}", rest.join(", ")),
                    _ => format!("Permission {}", named.concat()),
                }
            }
        };
        let mut operation = object! {
            "operationId": self.id.clone().into_owned(),
            "tags": vec![self.tag],
            "summary": self.summary.clone().into_owned(),
            "description": format!("{requirement}{}", self.description),
        };
        if guard == Guard::Public {
            operation.set("security", Json::Array(Vec::new()));
        }
        if !self.parameters.is_empty() {
            operation.set("parameters", self.parameters.clone());
        }
        if let Some(body) = &self.body {
            operation.set("requestBody", body.clone());
        }
        let mut responses = Json::object();
        for (status, response) in &self.responses {
            responses.set(*status, response.clone());
        }
        let forbids = matches!(guard, Guard::Permission(_) | Guard::AllOf(_));
        let mut statuses = self.errors.clone();
        statuses.sort_unstable();
        statuses.dedup();
        for status in statuses.into_iter().filter(|status| *status != 403 || forbids) {
            responses.set(status.to_string(), error_response(status));
        }
        responses.set("default", components::ERROR);
        operation.with("responses", responses)
    }
}

/// An answer with a JSON body of `schema`.
pub fn json_response(description: impl Into<Json>, schema: impl Into<Json>) -> Json {
    object! { "description": description, "content": json_content(schema) }
}

/// The `content` of a JSON body of `schema`.
pub fn json_content(schema: impl Into<Json>) -> Json {
    object! { "application/json": object! { "schema": schema.into() } }
}

/// A 201 of a create: `Location`, `Idempotent-Replayed` on a replay (D9, D23), the new record
/// and `links` to where it can be read and changed.
pub fn created(description: &str, schema: impl Into<Json>, links: Json) -> Json {
    object! {
        "description": format!("{description} Also the answer to a replayed create (D23)."),
        "headers": object! { "Location": LOCATION, "Idempotent-Replayed": IDEMPOTENT_REPLAYED },
        "content": json_content(schema),
        "links": links,
    }
}

/// A 204 with no body.
pub fn no_content(description: &'static str) -> Json {
    object! { "description": description }
}

/// The links from a new record to its read, replacement and delete, by its `id`.
pub fn id_links(name: &str) -> Json {
    let mut links = Json::object();
    for verb in ["Get", "Update", "Delete"] {
        let link = object! {
            "operationId": format!("{}{name}", verb.to_lowercase()),
            "parameters": object! { "id": "$response.body#/id" },
            "description": "The `id` of the new record.",
        };
        links.set(format!("{verb}{name}"), link);
    }
    links
}

/// The link from a delete to the restore that undoes it (D15).
pub fn restore_link(name: &str) -> Json {
    let link = object! {
        "operationId": format!("restore{name}"),
        "parameters": object! { "id": "$request.path.id" },
        "description": "Undo this delete (D15).",
    };
    Json::object().with(format!("Restore{name}"), link)
}

/// The link from a restore to the read of the restored record.
pub fn get_link(name: &str) -> Json {
    link_by_id(&format!("get{name}"), "The restored record.")
}

/// A link to the operation `operation_id` with the `id` of the answer's body.
pub fn link_by_id(operation_id: &str, description: &'static str) -> Json {
    let mut name = operation_id.to_owned();
    name[..1].make_ascii_uppercase();
    let link = object! {
        "operationId": operation_id.to_owned(),
        "parameters": object! { "id": "$response.body#/id" },
        "description": description,
    };
    Json::object().with(name, link)
}

/// A positive integer path parameter.
pub fn path_id(name: &'static str, description: &str) -> Json {
    object! {
        "name": name,
        "in": "path",
        "required": true,
        "description": format!("{description} A positive integer; anything else is a 400."),
        "schema": positive_id(),
    }
}

/// An optional query parameter.
pub fn query(name: &'static str, description: impl Into<Json>, schema: Json) -> Json {
    object! { "name": name, "in": "query", "required": false, "description": description.into(), "schema": schema }
}

/// An optional query parameter naming a record by its positive integer id.
pub fn query_id(name: &'static str, description: &str) -> Json {
    query(name, format!("{description} A positive integer, else 400."), positive_id())
}

/// The repeatable `branchId` filter (D49): `?branchId=2&branchId=5` keeps only those branches
/// of the caller's scope; `what` says what it narrows.
pub fn branch_filter(what: &str) -> Json {
    let description = format!(
        "Only these branches' {what} (D49); repeat it for several (`branchId=2&branchId=5`). Each must be a branch \
         (a deleted one may be named; else 400) within the caller's branches (else 403 naming it). Omitted: every \
         branch the caller holds."
    );
    query("branchId", description, object! { "type": "array", "items": positive_id(), "maxItems": 100 })
        .with("style", "form")
        .with("explode", true)
}

/// A positive 64-bit integer, as ids are.
pub fn positive_id() -> Json {
    object! { "type": "integer", "format": "int64", "minimum": 1, "maximum": i64::MAX }
}

/// An optional query parameter holding a date (D2).
pub fn query_date(name: &'static str, description: &str) -> Json {
    query(name, format!("{description} {}", schema::DATE_NOTE), schema::date_input_rule())
}

/// A list's `pageSize` (D8), `default` when absent.
pub fn page_size(default: u32) -> Json {
    object! {
        "name": "pageSize",
        "in": "query",
        "required": false,
        "description": format!(
            "Items per page; default {default}. Below 1 or not an integer is a 400; above {MAX_PAGE_SIZE} is clamped to \
             {MAX_PAGE_SIZE} and the envelope reports {MAX_PAGE_SIZE} (D8)."
        ),
        "schema": object! { "type": "integer", "minimum": 1 },
    }
}

/// A list's `sortBy` (D8): one of the keys `K` names, `default` when absent.
pub fn sort_by<K: SortKey + PartialEq>(default: K) -> Json {
    let keys: Vec<&'static str> = K::NAMES.iter().map(|(name, _)| *name).collect();
    query(
        "sortBy",
        format!(
            "One of {} (matched case-insensitively; default `{}`); anything else is a 400 (D8). Ties are broken by id.",
            keys.join(", "),
            default.name()
        ),
        schema::choice(&keys),
    )
}

/// A search term in a query (a partial match, case-insensitive), at most [`SEARCH_MAX`]
/// characters.
pub fn search(name: &'static str, description: &str) -> Json {
    query(
        name,
        format!(
            "{description} At most {SEARCH_MAX} characters after trimming, no control characters; blank means no filter."
        ),
        object! { "type": "string", "pattern": schema::optional_line_pattern(SEARCH_MAX) },
    )
}
