//! The components many operations share: the error answers and their problem details (D6), the
//! headers of creates, sign-ins and unavailable stores, and the parameters of creates and lists.
//! Each is written once here and referenced by name; a component one resource alone uses sits
//! in that resource's file.

use pharmapay_core::idempotency::{KEY_LIFETIME, KEY_MAX};
use pharmapay_core::paging::SortDir;
use pharmapay_core::sessions::login;

use super::json::{Component, Section};
use super::{Json, object, schema};
use crate::http::MAX_BODY_BYTES;
use crate::problem::{self, UNAVAILABLE_RETRY_AFTER_SECS};

/// The longest `Location` a create answers: the longest collection path and the largest id.
const LOCATION_MAX: usize = "/api/vendor-payments/".len() + "9223372036854775807".len();

/// A bound on the text problem details write (`detail` and each message under `errors`): each
/// is one of the server's sentences, the longest (the unknown outcome of a write) under 300
/// characters, with at most a few ids or names in it.
const DETAIL_MAX: usize = 1_000;

/// The statuses of problem answers.
fn statuses() -> [hyper::StatusCode; problem::STATUSES.len()] {
    problem::STATUSES.map(|status| hyper::StatusCode::from_u16(status).expect("a problem's status is valid"))
}

const fn parameter(name: &'static str, build: fn() -> Json) -> Component {
    Component { section: Section::Parameters, name, build }
}

const fn header(name: &'static str, build: fn() -> Json) -> Component {
    Component { section: Section::Headers, name, build }
}

const fn response(name: &'static str, build: fn() -> Json) -> Component {
    Component { section: Section::Responses, name, build }
}

/// The `Idempotency-Key` of a create (D23).
pub const IDEMPOTENCY_KEY: Component = parameter("IdempotencyKey", || {
    let hours = KEY_LIFETIME.as_hours();
    object! {
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": format!(
            "Makes the create safe to retry (D23): the same key from the same user with the same body within {hours} \
             hours replays the first answer (status, body, `Location`) with `Idempotent-Replayed: true` and creates \
             nothing; the same key with a different body is a 422; while the first request is still running, a 409. 1 \
             to {KEY_MAX} visible ASCII characters, else 400."
        ),
        "schema": object! { "type": "string", "minLength": 1, "maxLength": KEY_MAX, "pattern": "^[!-~]+$" },
    }
});

/// A list's `page` (D8).
pub const PAGE: Component = parameter("Page", || {
    object! {
        "name": "page",
        "in": "query",
        "required": false,
        "description": "1-based page number; default 1. Below 1 or not an integer is a 400 (D8).",
        "schema": object! { "type": "integer", "minimum": 1 },
    }
});

/// A list's `sortDir` (D8).
pub const SORT_DIR: Component = parameter("SortDir", || {
    object! {
        "name": "sortDir",
        "in": "query",
        "required": false,
        "description": "`asc` or `desc`, matched case-insensitively; anything else is a 400 (D8).",
        "schema": schema::choice(&[SortDir::Asc.as_str(), SortDir::Desc.as_str()]),
    }
});

/// Where a created record lives (D9).
pub const LOCATION: Component = header("Location", || {
    object! {
        "description": "Where the new resource lives: `/api/<collection>/<id>` (D9).",
        "required": true,
        "schema": object! { "type": "string", "format": "uri-reference", "maxLength": LOCATION_MAX },
    }
});

/// The mark of a replayed create (D23).
pub const IDEMPOTENT_REPLAYED: Component = header("IdempotentReplayed", || {
    object! {
        "description": "Present, with the value `true`, when this answer replays an earlier create sent with the same \
             `Idempotency-Key` and body (D23); nothing was created.",
        "schema": object! { "type": "string", "enum": ["true"] },
    }
});

/// The challenge of a 401 (D6).
pub const WWW_AUTHENTICATE: Component = header("WWWAuthenticate", || {
    object! {
        "description": "Always `Bearer` (D6).",
        "required": true,
        "schema": object! { "type": "string", "enum": ["Bearer"] },
    }
});

/// When sign-ins for a throttled email are accepted again (D21).
pub const RETRY_AFTER: Component = header("RetryAfter", || {
    object! {
        "description": "Seconds until login attempts for this email are accepted again (D21).",
        "required": true,
        "schema": object! {
            "type": "integer",
            "format": "int32",
            "minimum": 1,
            "maximum": login::WINDOW.as_secs(),
        },
    }
});

/// When an unavailable store is worth asking again (D48).
pub const RETRY_AFTER_UNAVAILABLE: Component = header("RetryAfterUnavailable", || {
    object! {
        "description": "Seconds after which the request may be sent again: a busy connection pool frees up within them, \
             and a lost database is not retried faster than requests fail.",
        "required": true,
        "schema": object! {
            "type": "integer",
            "format": "int32",
            "minimum": 1,
            "maximum": UNAVAILABLE_RETRY_AFTER_SECS,
        },
    }
});

/// `no-store` on answers that carry tokens or files.
pub const CACHE_CONTROL: Component = header("CacheControl", || {
    object! {
        "description": "`no-store`: tokens are not to be cached.",
        "required": true,
        "schema": object! { "type": "string", "enum": ["no-store"] },
    }
});

/// RFC 9457 problem details (D6).
pub const PROBLEM: Component = Component { section: Section::Schemas, name: "Problem", build: problem };

fn problem() -> Json {
    object! {
        "type": "object",
        "description": "RFC 9457 problem details (D6), sent as `application/problem+json` for every error except the \
             login 401.",
        "required": ["type", "title", "status", "traceId"],
        "properties": object! {
            "type": object! {
                "type": "string",
                "format": "uri",
                "enum": statuses().map(problem::type_url).to_vec(),
                "description": "A URI naming the kind of problem (the RFC 9110 section of the status).",
            },
            "title": schema::one_of(
                &statuses().map(problem::title),
                "Short summary of the status, e.g. `Bad Request`.",
            ),
            "status": object! {
                "type": "integer",
                "format": "int32",
                "minimum": 400,
                "maximum": 599,
                "description": "The HTTP status code.",
            },
            "detail": schema::text(DETAIL_MAX, "A sentence about this occurrence; present on most problems."),
            "errors": object! {
                "type": "object",
                "description": "Validation (400) and duplicate (409) problems only: field path (camelCase, dotted for \
                     nested fields such as `adminUser.password`, query parameters by name, `body` for a body that is \
                     not an object) to its messages.",
                "additionalProperties": object! {
                    "type": "array",
                    "items": object! { "type": "string", "maxLength": DETAIL_MAX },
                },
            },
            "traceId": object! {
                "type": "string",
                "maxLength": 32,
                "pattern": "^[0-9a-f]{32}$",
                "description": "Identifies the request in the server log; also sent as the `X-Trace-Id` header.",
            },
        },
    }
}

/// The content of every problem answer.
fn problem_content() -> Json {
    object! { "application/problem+json": object! { "schema": PROBLEM } }
}

/// A problem answer described by `description`.
fn problem_response(description: impl Into<Json>) -> Json {
    object! { "description": description.into(), "content": problem_content() }
}

/// A problem answer with one header.
fn problem_response_with(description: &'static str, name: &'static str, value: Component) -> Json {
    object! {
        "description": description,
        "headers": Json::object().with(name, value),
        "content": problem_content(),
    }
}

/// Any error not listed on an operation.
pub const ERROR: Component = response("Error", || {
    problem_response(
        "Any other error, as problem details (e.g. 405 with `Allow`, 408 when the request is not received in time, 500).",
    )
});

/// The error answers operations list by status.
const ERRORS: [(u16, Component); 10] = [
    (
        400,
        response("BadRequest", || {
            problem_response(
                "The request is invalid: malformed JSON (a field named twice included), a body that is not an object, a \
                 missing or mistyped field, an unknown enum value, a bad path or query parameter, or a business rule \
                 refused it. Validation problems carry `errors` (D6, D7, D8).",
            )
        }),
    ),
    (
        401,
        response("Unauthorized", || {
            problem_response_with(
                "Missing, malformed, forged, expired or revoked bearer token, or the user is no longer active or \
                 changed their password since the token was issued (D20).",
                "WWW-Authenticate",
                WWW_AUTHENTICATE,
            )
        }),
    ),
    (
        403,
        response("Forbidden", || {
            problem_response(
                "The token lacks the required permission (`detail` names it). The permission is checked before any path \
                 parameter, query parameter or body is read, so a caller without it gets this answer, never a 400.",
            )
        }),
    ),
    (404, response("NotFound", || problem_response("The record does not exist or is soft-deleted."))),
    (
        409,
        response("Conflict", || {
            problem_response(
                "Duplicate unique value (D5; `errors` names the field), or a request with the same `Idempotency-Key` is \
                 still being processed (D23).",
            )
        }),
    ),
    (
        413,
        response("PayloadTooLarge", || {
            problem_response(format!("The request body is over {} MiB (D7).", MAX_BODY_BYTES / (1024 * 1024)))
        }),
    ),
    (
        415,
        response("UnsupportedMediaType", || {
            problem_response("A body was sent without a JSON content type (`application/json` or `*/*+json`) (D7).")
        }),
    ),
    (
        422,
        response("IdempotencyMismatch", || {
            problem_response(format!(
                "This `Idempotency-Key` was already used by the same user with a different request within {} hours \
                 (D23).",
                KEY_LIFETIME.as_hours()
            ))
        }),
    ),
    (
        429,
        response("TooManyRequests", || {
            let description =
                format!("Too many failed logins for this email within {} minutes (D21).", login::WINDOW.as_mins());
            object! {
                "description": description,
                "headers": object! { "Retry-After": RETRY_AFTER },
                "content": problem_content(),
            }
        }),
    ),
    (
        503,
        response("ServiceUnavailable", || {
            problem_response_with(
                "The database is busy (every connection in use for the acquire timeout; for a report that takes \
                 seconds, such as the aging of every vendor or a statement, every long read's turn taken for the \
                 long-read wait), every report slot stayed taken for the report wait (downloads under \
                 `/api/reports`), or the database cannot be reached right now; nothing of the request was kept (D48). \
                 The one exception is a write whose connection to the database was lost while it was being committed: \
                 its `detail` begins `The outcome of this write is unknown`, and it may have been kept; retrying it \
                 with the same `Idempotency-Key` is safe.",
                "Retry-After",
                RETRY_AFTER_UNAVAILABLE,
            )
        }),
    ),
];

/// The reference to the error answer with `status`.
///
/// # Panics
/// For a status no error answer describes, which the document's test would meet first.
pub fn error_response(status: u16) -> Json {
    let (_, component) = ERRORS
        .iter()
        .find(|(known, _)| *known == status)
        .unwrap_or_else(|| panic!("no error answer describes status {status}"));
    Json::Ref(*component)
}

/// What a report says of the list's `isActive` filter (D26).
pub const ACTIVE_ONLY: &str =
    "Validated (`true` or `false`, else 400) but ignored: reports hold active records only (D26).";

/// What a token is, in every session's description.
pub const TOKEN: &str = "Signed JWT (HS256) to send as `Authorization: Bearer <token>`.";
