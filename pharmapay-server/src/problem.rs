//! The one mapping from errors to HTTP: RFC 9457 problem details (D6).
//!
//! Engine errors and request-shape errors (bad JSON, wrong types, 415, 413, 404 routes, 405)
//! all become an [`ApiError`], and [`ApiError::into_reply`] renders every one of them the same
//! way: `application/problem+json` with `type`, `title`, `status`, `traceId`, `detail` where
//! useful and `errors` for validation. The login 401 keeps its `{message}` body (spec). Server
//! failures are logged once here, with their whole cause chain and the trace id, and answered
//! with a generic message; a store that is unavailable (503) is logged at `error` at most once a
//! second, with how many such answers went unlogged since, and each one at `debug`.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hyper::StatusCode;
use hyper::header::{self, HeaderName};
use pharmapay_core::access::Requirement;
use pharmapay_core::error::IdempotencyClash;
use pharmapay_core::{Entity, Error, FieldErrors, StoreError, UniqueKey};
use serde_json::{Map, Value, json};

use crate::http::{Reply, TraceId};

/// The `Retry-After` of a 503: a busy pool frees a connection within a request's time, and a
/// database that went away is retried no faster than the acquire timeout lets a request fail.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 1;

/// Picks, out of many like events, the ones to log in full: the first of each second, with how
/// many went by unlogged since the last one. A database that is down, or a pool that stays
/// busy, fails every request at once; a line a second with that count tells an operator what
/// a line per request would, without a flood of them (each is still logged at `debug`).
struct OncePerSecond {
    /// The second (counted from 1) of the last event logged in full; 0 before the first.
    second: AtomicU64,
    /// Events not logged in full since then.
    unlogged: AtomicU64,
}

impl OncePerSecond {
    const fn new() -> Self {
        Self { second: AtomicU64::new(0), unlogged: AtomicU64::new(0) }
    }

    /// For an event in second `now` (counted from 1): `Some(events unlogged since the last one
    /// logged)` when this one is to be logged in full, `None` otherwise.
    fn admit(&self, now: u64) -> Option<u64> {
        let last = self.second.load(Ordering::Relaxed);
        if now > last && self.second.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            Some(self.unlogged.swap(0, Ordering::Relaxed))
        } else {
            self.unlogged.fetch_add(1, Ordering::Relaxed);
            None
        }
    }

    /// [`OncePerSecond::admit`] for this moment, in seconds of this process's monotonic clock.
    fn admit_now(&self) -> Option<u64> {
        static STARTED: LazyLock<Instant> = LazyLock::new(Instant::now);
        self.admit(STARTED.elapsed().as_secs() + 1)
    }
}

/// The one message of a failed sign-in (spec, Auth; D21).
pub const INVALID_CREDENTIALS: &str = "Invalid email or password.";

/// The store-unavailable answers (503) logged in full.
static UNAVAILABLE_LOGGED: OncePerSecond = OncePerSecond::new();

/// Everything that can make a request fail.
#[derive(Debug)]
pub enum ApiError {
    /// An engine error.
    Core(Error),
    /// The request's fields or parameters are invalid (400).
    Invalid(FieldErrors),
    /// The body is not readable JSON (400).
    Malformed(String),
    /// A body without a JSON content type (415).
    UnsupportedMediaType,
    /// A body over 1 MiB (413).
    PayloadTooLarge,
    /// An import's body that is neither CSV nor xlsx (415, D45).
    NotAFile,
    /// The client took too long to send its request (408).
    Timeout,
    /// No route has this path (404).
    RouteNotFound,
    /// The path exists, the method does not (405); the methods it has.
    MethodNotAllowed(String),
    /// Every report slot stayed taken for the report wait (503, D48): the server generates a
    /// few reports at once and the rest queue.
    ReportsBusy,
    /// Every upload turn stayed taken for the upload wait (503, D51): the server reads a few
    /// uploaded files at once and the rest queue.
    UploadsBusy,
    /// A unique value is taken (409): the kind of record holding it and the field's path in
    /// the request.
    Taken {
        /// The record kind holding the value.
        entity: Entity,
        /// The field path, such as `invoiceNumber` or `adminUser.email`.
        field: String,
    },
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        ApiError::Core(error)
    }
}

impl From<FieldErrors> for ApiError {
    fn from(errors: FieldErrors) -> Self {
        ApiError::Invalid(errors)
    }
}

impl ApiError {
    /// A 400 for one field or parameter.
    pub fn invalid(field: &str, message: &str) -> Self {
        ApiError::Invalid(FieldErrors::single(field, message))
    }

    /// A 400 for a body that cannot be read.
    pub fn malformed(detail: impl Into<String>) -> Self {
        ApiError::Malformed(detail.into())
    }

    /// An onboarding's error: a taken value is named by its path in the setup body, under
    /// `adminUser` or `pharmacy` (D6).
    pub fn in_setup(error: Error) -> Self {
        match error {
            Error::Conflict(key) => {
                let section = if key.entity() == Entity::User { "adminUser" } else { "pharmacy" };
                ApiError::Taken { entity: key.entity(), field: format!("{section}.{}", unique_field(key)) }
            }
            other => ApiError::Core(other),
        }
    }

    /// The status this error answers with.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Core(error) => match error {
                Error::Validation(_) | Error::Rule(_) | Error::Rows(_) => StatusCode::BAD_REQUEST,
                Error::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
                Error::NotFound { .. } => StatusCode::NOT_FOUND,
                Error::Conflict { .. } => StatusCode::CONFLICT,
                Error::InvalidCredentials | Error::Unauthenticated => StatusCode::UNAUTHORIZED,
                Error::Forbidden { .. } => StatusCode::FORBIDDEN,
                Error::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
                Error::Idempotency(IdempotencyClash::DifferentRequest) => StatusCode::UNPROCESSABLE_ENTITY,
                Error::Idempotency(IdempotencyClash::InProgress | IdempotencyClash::Superseded) => StatusCode::CONFLICT,
                Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
                Error::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
            },
            ApiError::Invalid(_) | ApiError::Malformed(_) => StatusCode::BAD_REQUEST,
            ApiError::UnsupportedMediaType | ApiError::NotAFile => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Timeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::RouteNotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::ReportsBusy | ApiError::UploadsBusy => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Taken { .. } => StatusCode::CONFLICT,
        }
    }

    /// Renders the error for the request with `trace_id`.
    pub fn into_reply(self, trace_id: TraceId) -> Reply {
        let status = self.status();
        if let ApiError::Core(Error::InvalidCredentials) = self {
            // Spec, Auth: a failed login answers 401 with a single `message` field.
            return Reply::json(status, &json!({ "message": INVALID_CREDENTIALS }))
                .with_header(header::CACHE_CONTROL, "no-store")
                .with_header(header::WWW_AUTHENTICATE, "Bearer");
        }
        let mut extra_headers: Vec<(HeaderName, String)> = Vec::new();
        let mut body = Map::new();
        body.insert("type".into(), Value::String(type_url(status).into()));
        body.insert("title".into(), Value::String(title(status).into()));
        body.insert("status".into(), json!(status.as_u16()));
        let detail: Option<String> = match self {
            ApiError::Core(error) => match error {
                Error::Validation(errors) => {
                    body.insert("errors".into(), errors_json(&errors));
                    Some("One or more fields are invalid.".into())
                }
                Error::Rows(errors) => {
                    // D45: every refused row's errors (at most 1,000 keys), and how many rows failed.
                    body.insert("errors".into(), errors_json(errors.errors()));
                    let rows = errors.failed_rows();
                    Some(format!(
                        "{rows} row{} of the file failed; nothing was imported.",
                        if rows == 1 { "" } else { "s" }
                    ))
                }
                Error::TooLarge(reason) => Some(format!("The file is too large to import: {reason}.")),
                Error::NotFound { entity } => Some(format!("{entity} not found.")),
                Error::Conflict(UniqueKey::PaymentReference { existing }) => {
                    // D30: the reference is already recorded; name a payment that holds it.
                    body.insert("existingTransactionId".into(), json!(existing.get()));
                    body.insert(
                        "errors".into(),
                        errors_json(&FieldErrors::single(
                            "reference",
                            "is already recorded for another payment of this type",
                        )),
                    );
                    Some(format!("Payment {} already carries this reference for this payment type.", existing.get()))
                }
                Error::Conflict(UniqueKey::BankMatch { line, vendor_payment }) => {
                    // D46: a payment is held by one line of the active statements.
                    body.insert("existingLineId".into(), json!(line.get()));
                    let field = unique_field(UniqueKey::BankMatch { line, vendor_payment });
                    body.insert(
                        "errors".into(),
                        errors_json(&FieldErrors::single(field, "is already matched to another line")),
                    );
                    Some(format!("Line {} of an active statement already holds this payment.", line.get()))
                }
                Error::Conflict(key) => Some(taken(&mut body, key.entity(), unique_field(key))),
                Error::Rule(rule) => Some(rule.message()),
                Error::Unauthenticated => {
                    tracing::info!(trace_id = %trace_id, "authentication failed");
                    extra_headers.push((header::WWW_AUTHENTICATE, "Bearer".into()));
                    Some("A valid bearer token is required.".into())
                }
                Error::Forbidden { required: Requirement::Grant(missing) } => {
                    tracing::warn!(trace_id = %trace_id, %missing, "refused to give more than the caller holds");
                    Some(format!("You cannot give what you do not hold yourself: {missing}."))
                }
                Error::Forbidden { required: Requirement::Scope(missing) } => {
                    tracing::warn!(trace_id = %trace_id, %missing, "outside the caller's branches");
                    Some(format!("This needs a scope of {missing}, beyond the branches you hold."))
                }
                Error::Forbidden { required } => {
                    tracing::warn!(trace_id = %trace_id, %required, "permission denied");
                    Some(format!("This needs the {required} permission."))
                }
                Error::Throttled { retry_after } => {
                    extra_headers.push((header::RETRY_AFTER, retry_after.as_secs().max(1).to_string()));
                    Some("Too many failed logins for this email; try again later.".into())
                }
                Error::Idempotency(IdempotencyClash::DifferentRequest) => {
                    Some("This Idempotency-Key was used with a different request.".into())
                }
                Error::Idempotency(IdempotencyClash::InProgress) => {
                    Some("A request with this Idempotency-Key is still being processed.".into())
                }
                Error::Idempotency(IdempotencyClash::Superseded) => Some(
                    "What the request with this Idempotency-Key answered is no longer true (the webhook's secret was \
                     rotated, or the webhook deleted), so it is not shown again."
                        .into(),
                ),
                Error::Unavailable(cause @ StoreError::OutcomeUnknown(_)) => {
                    // D48: the one error a write may be kept under. Rare, and worth a line each.
                    tracing::error!(
                        trace_id = %trace_id,
                        error = %crate::with_causes(&cause),
                        "the connection to the database was lost during a commit; the write's outcome is unknown"
                    );
                    extra_headers.push((header::RETRY_AFTER, UNAVAILABLE_RETRY_AFTER_SECS.to_string()));
                    Some(
                        "The outcome of this write is unknown: the connection to the database was lost while it was \
                         being committed, so it may or may not have been kept. Retrying with the same \
                         Idempotency-Key is safe; without one, look for the record before sending it again."
                            .into(),
                    )
                }
                Error::Unavailable(cause) => {
                    // The cause chain is written out only for a line the filter keeps: under an
                    // overload most of these are `debug` lines a server usually filters out.
                    match UNAVAILABLE_LOGGED.admit_now() {
                        Some(unlogged) => tracing::error!(
                            trace_id = %trace_id,
                            error = %crate::with_causes(&cause),
                            unlogged_since_last = unlogged,
                            "the store is unavailable"
                        ),
                        None => tracing::debug!(
                            trace_id = %trace_id,
                            error = %crate::with_causes(&cause),
                            "the store is unavailable"
                        ),
                    }
                    // The store cannot tell a busy pool from a lost database (both end in its
                    // acquire timeout), so the answer names both and says when to try again.
                    extra_headers.push((header::RETRY_AFTER, UNAVAILABLE_RETRY_AFTER_SECS.to_string()));
                    Some("The database is busy or cannot be reached right now; try again shortly.".into())
                }
                Error::Store(cause) => {
                    tracing::error!(trace_id = %trace_id, error = %crate::with_causes(&cause), "store failure");
                    Some("Something went wrong on our side; the trace id identifies it in the logs.".into())
                }
                Error::InvalidCredentials => None,
            },
            ApiError::Invalid(errors) => {
                body.insert("errors".into(), errors_json(&errors));
                Some("One or more fields or parameters are invalid.".into())
            }
            ApiError::Malformed(detail) => Some(detail),
            ApiError::UnsupportedMediaType => Some("Request bodies must be sent as application/json.".into()),
            ApiError::PayloadTooLarge => {
                Some("Request bodies may be at most 1 MiB, and imported files at most 20 MiB.".into())
            }
            ApiError::NotAFile => Some(
                "Send the file as text/csv or as an xlsx workbook \
                 (application/vnd.openxmlformats-officedocument.spreadsheetml.sheet); application/vnd.ms-excel is \
                 read by its content."
                    .into(),
            ),
            ApiError::Timeout => Some("The request was not received in time.".into()),
            ApiError::RouteNotFound => Some("No route matches this path.".into()),
            ApiError::MethodNotAllowed(allow) => {
                let detail = format!("This path supports {allow}.");
                extra_headers.push((header::ALLOW, allow));
                Some(detail)
            }
            ApiError::Taken { entity, field } => Some(taken(&mut body, entity, &field)),
            ApiError::ReportsBusy => {
                tracing::info!(trace_id = %trace_id, "a report waited for a free slot in vain");
                extra_headers.push((header::RETRY_AFTER, UNAVAILABLE_RETRY_AFTER_SECS.to_string()));
                Some("Other reports are being generated right now and this one waited its turn in vain; try again shortly.".into())
            }
            ApiError::UploadsBusy => {
                tracing::info!(trace_id = %trace_id, "an upload waited for a free turn in vain");
                extra_headers.push((header::RETRY_AFTER, UNAVAILABLE_RETRY_AFTER_SECS.to_string()));
                Some(
                    "Other files are being read right now and this one waited its turn in vain; try again shortly."
                        .into(),
                )
            }
        };
        if let Some(detail) = detail {
            body.insert("detail".into(), Value::String(detail));
        }
        body.insert("traceId".into(), Value::String(trace_id.to_string()));
        let bytes = serde_json::to_vec(&Value::Object(body)).unwrap_or_default();
        let mut reply = Reply::bytes(status, "application/problem+json", bytes);
        for (name, value) in extra_headers {
            reply = reply.with_header(name, &value);
        }
        reply
    }
}

/// The request field holding a unique value (D5): the one place unique keys get their wire
/// names. The OwnPharmacy vendor is answered as a rule by the engine and never reaches here as
/// a conflict; its field is named for completeness.
fn unique_field(key: UniqueKey) -> &'static str {
    match key {
        UniqueKey::InvoiceNumber => "invoiceNumber",
        UniqueKey::UserEmail => "email",
        UniqueKey::RoleName | UniqueKey::PolicyName => "name",
        UniqueKey::Gstin => "gstin",
        UniqueKey::PaymentReference { .. } => "reference",
        UniqueKey::OwnPharmacy => "vendorType",
        UniqueKey::CreditNumber => "creditNumber",
        UniqueKey::BranchCode => "code",
        UniqueKey::BankMatch { vendor_payment: false, .. } => "transactionId",
        UniqueKey::BankMatch { vendor_payment: true, .. } => "vendorPaymentId",
    }
}

/// Fills a 409's `errors` for `field` and answers its detail.
fn taken(body: &mut Map<String, Value>, entity: Entity, field: &str) -> String {
    body.insert("errors".into(), errors_json(&FieldErrors::single(field, "is already taken")));
    match entity {
        // D44: numbers are unique per vendor.
        Entity::VendorCredit => format!("Another active credit of this vendor already uses this {field}."),
        _ => format!("Another {} already uses this {field}.", entity.name().to_lowercase()),
    }
}

fn errors_json(errors: &FieldErrors) -> Value {
    let mut map = Map::new();
    for (field, messages) in errors.iter() {
        map.insert(field.to_owned(), json!(messages));
    }
    Value::Object(map)
}

/// Every status a problem answer has, its title and type named below; any other is answered as
/// a 500.
pub const STATUSES: [u16; 13] = [400, 401, 403, 404, 405, 408, 409, 413, 415, 422, 429, 500, 503];

/// The URI of a problem's `type`: the RFC section of its status.
pub fn type_url(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1",
        401 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.2",
        403 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4",
        404 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5",
        405 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6",
        408 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.9",
        409 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.10",
        413 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.14",
        415 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16",
        422 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.21",
        429 => "https://www.rfc-editor.org/rfc/rfc6585#section-4",
        503 => "https://www.rfc-editor.org/rfc/rfc9110#section-15.6.4",
        _ => "https://www.rfc-editor.org/rfc/rfc9110#section-15.6.1",
    }
}

/// A problem's `title`: its status's reason phrase.
pub fn title(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;
    use pharmapay_core::{Entity, Error, UniqueKey};
    use serde_json::Value;

    use super::{ApiError, OncePerSecond};
    use crate::http::TraceId;

    #[test]
    fn the_first_unavailable_answer_of_each_second_is_logged_with_the_count_of_the_rest() {
        let log = OncePerSecond::new();
        assert_eq!(log.admit(1), Some(0), "the first is logged");
        assert_eq!(log.admit(1), None);
        assert_eq!(log.admit(1), None);
        assert_eq!(log.admit(2), Some(2), "the next second's first says two went unlogged");
        assert_eq!(log.admit(2), None);
        assert_eq!(log.admit(7), Some(1), "a quiet spell in between changes nothing");
        assert_eq!(log.admit(7), None);
    }

    async fn body(error: ApiError) -> (u16, Value) {
        let reply = error.into_reply(TraceId::next());
        let status = reply.status.as_u16();
        let bytes = reply.body.collect().await.expect("a whole body").to_bytes();
        (status, serde_json::from_slice(&bytes).expect("a JSON body"))
    }

    #[tokio::test]
    async fn a_taken_value_names_its_field_and_its_record() {
        for (key, field, detail) in [
            (UniqueKey::InvoiceNumber, "invoiceNumber", "Another invoice already uses this invoiceNumber."),
            (UniqueKey::UserEmail, "email", "Another user already uses this email."),
            (UniqueKey::RoleName, "name", "Another role already uses this name."),
            (UniqueKey::PolicyName, "name", "Another policy already uses this name."),
        ] {
            let (status, problem) = body(ApiError::Core(Error::Conflict(key))).await;
            assert_eq!(status, 409, "{key:?}");
            assert_eq!(problem["errors"][field][0], "is already taken", "{key:?}");
            assert_eq!(problem["detail"], detail, "{key:?}");
        }
    }

    #[tokio::test]
    async fn a_write_whose_commit_may_have_gone_through_says_so_and_any_other_503_does_not() {
        let lost = || Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        let unknown = ApiError::Core(Error::Unavailable(pharmapay_core::StoreError::OutcomeUnknown(lost())));
        let (status, problem) = body(unknown).await;
        assert_eq!(status, 503);
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(detail.starts_with("The outcome of this write is unknown"), "{detail}");
        assert!(detail.contains("Idempotency-Key"), "{detail}");
        let busy = ApiError::Core(Error::Unavailable(pharmapay_core::StoreError::Unavailable(lost())));
        let (status, problem) = body(busy).await;
        assert_eq!(status, 503);
        assert!(!problem["detail"].as_str().unwrap_or_default().contains("unknown"), "{problem}");
    }

    #[tokio::test]
    async fn a_taken_admin_email_at_setup_is_named_by_its_path_in_the_body() {
        let (status, problem) = body(ApiError::in_setup(Error::Conflict(UniqueKey::UserEmail))).await;
        assert_eq!(status, 409);
        assert_eq!(problem["errors"]["adminUser.email"][0], "is already taken");
        assert_eq!(problem["detail"], "Another user already uses this adminUser.email.");
        let (status, _) = body(ApiError::in_setup(Error::not_found(Entity::User))).await;
        assert_eq!(status, 404, "other errors pass through unchanged");
    }
}
