//! Building the document from the route table: each row's operation with what its guard
//! requires, a path's methods gathered, and every component the operations refer to, written
//! once (see the module's documentation).

use std::borrow::Cow;

use pharmapay_core::auth::MIN_SECRET_CHARS;
use pharmapay_core::money::MAX_AMOUNT;
use pharmapay_core::paging::MAX_PAGE_SIZE;

use super::json::{Component, Json, Section, object};
use crate::app::Route;
use crate::http::MAX_BODY_BYTES;

/// The API document of `table`, the route table: every route with what its guard requires, and every
/// component its operations refer to.
///
/// # Panics
/// When two methods of one path state different path parameters, or one component name is
/// built two ways, which the document's test meets first.
pub fn document<S>(table: &[Route<S>]) -> Json {
    let mut paths = Json::object();
    let mut tags: Vec<&'static str> = Vec::new();
    for route in table {
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
