//! The handlers, one file per resource. Each decodes the request into a core input, calls one
//! engine method and encodes the result; the rules live in the engine.

pub mod audit;
pub mod auth;
pub mod dashboard;
pub mod invoices;
pub mod onboarding;
pub mod permissions;
pub mod policies;
pub mod profile;
pub mod reports;
pub mod roles;
pub mod settings;
pub mod system;
pub mod transactions;
pub mod users;
pub mod vendors;

use hyper::StatusCode;
use hyper::header::{self, HeaderName};
use pharmapay_core::idempotency::{Created, IdempotencyKey, IdempotencyRequest, Replay};
use pharmapay_core::{Access, Action, Collection, Error, Principal, Store};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::app::App;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// The header that marks a replayed create (D23).
pub const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

impl<S: Store> App<S> {
    /// The caller proven by the request's bearer token.
    ///
    /// # Errors
    /// 401 when the token is missing, malformed, forged, expired or revoked.
    pub async fn principal(&self, req: &Req) -> Result<Principal, ApiError> {
        let token = req.bearer_token().ok_or(ApiError::Core(Error::Unauthenticated))?;
        Ok(self.engine.authenticate(token).await?)
    }
}

/// Checks `collection:action` before a body is decoded, so a caller without the permission
/// learns nothing from validation errors (403 comes before 400). The engine checks again.
///
/// # Errors
/// 403 naming the permission.
pub fn need(principal: &Principal, collection: Collection, action: Action) -> Result<(), ApiError> {
    Ok(principal.require(Access::new(collection, action))?)
}

/// The `Idempotency-Key` of a create, with a fingerprint of the request (D23).
///
/// The fingerprint hashes the method, the path and the body re-serialised with sorted keys, so
/// the same JSON sent with other spacing or key order counts as the same request.
///
/// # Errors
/// 400 for a key that is empty, too long or not visible ASCII.
pub fn idempotency(req: &Req, body: &serde_json::Value) -> Result<Option<IdempotencyRequest>, ApiError> {
    let Some(raw) = req.headers.get("idempotency-key") else { return Ok(None) };
    let key = raw
        .to_str()
        .ok()
        .and_then(|text| IdempotencyKey::parse(text).ok())
        .ok_or_else(|| ApiError::invalid("Idempotency-Key", "must be 1 to 255 visible ASCII characters"))?;
    let mut hasher = Sha256::new();
    hasher.update(req.method.as_str().as_bytes());
    hasher.update(b" ");
    hasher.update(req.path.as_bytes());
    hasher.update(b"\n");
    hasher.update(serde_json::to_vec(body).unwrap_or_default());
    let fingerprint = hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect();
    Ok(Some(IdempotencyRequest { key, fingerprint }))
}

/// The 201 answer to a create, or the replay of an earlier one (D9, D23).
///
/// A fresh create under a key records the response it sends, so later retries get the same
/// bytes.
pub async fn created<S: Store, T, D: Serialize>(
    app: &App<S>,
    principal: &Principal,
    request: Option<&IdempotencyRequest>,
    result: Created<T>,
    collection: &str,
    id_of: impl Fn(&T) -> i64,
    to_dto: impl Fn(T) -> D,
) -> Reply {
    match result {
        Created::New(value) => {
            let location = format!("/api/{collection}/{}", id_of(&value));
            let body = serde_json::to_vec(&to_dto(value)).unwrap_or_default();
            if let Some(request) = request
                && let Err(error) = app.engine.record_idempotent_response(principal, &request.key, body.clone()).await
            {
                tracing::warn!(%error, "could not record an idempotent response; retries will get the current record");
            }
            Reply::json_bytes(StatusCode::CREATED, body).with_header(header::LOCATION, &location)
        }
        Created::Replayed(Replay::Recorded(body)) => {
            let location = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|value| value.get("id").and_then(serde_json::Value::as_i64))
                .map(|id| format!("/api/{collection}/{id}"));
            let reply = Reply::json_bytes(StatusCode::CREATED, body).with_header(REPLAYED, "true");
            match location {
                Some(location) => reply.with_header(header::LOCATION, &location),
                None => reply,
            }
        }
        Created::Replayed(Replay::Current(value)) => {
            let location = format!("/api/{collection}/{}", id_of(&value));
            Reply::json(StatusCode::CREATED, &to_dto(value))
                .with_header(header::LOCATION, &location)
                .with_header(REPLAYED, "true")
        }
    }
}

/// 200 with a JSON body.
pub fn ok(value: &impl Serialize) -> Reply {
    Reply::json(StatusCode::OK, value)
}
