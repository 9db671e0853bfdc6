//! The ways most routes answer, written once: a page of a list, one record by `{id}`, a create
//! (idempotent, D23), a replacement, a delete with an optional reason, a link between two
//! records; and the macro that writes a kept resource's rows.

use hyper::StatusCode;
use hyper::header::{self, HeaderName};
use pharmapay_core::idempotency::{Created, IdempotencyKey, IdempotencyRequest, Replay};
use pharmapay_core::paging::Page;
use pharmapay_core::{Error, FieldErrors, PharmaPay, Principal, Store};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::app::{App, Call};
use crate::decode::{self, Body, Input};
use crate::dto::PageDto;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// The header that marks a replayed create (D23).
pub const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The rows of a resource whose records the shared handlers keep, in the order the router
/// tries them and the document lists them: the list and the create on the collection's path,
/// the resource's own rows that must come before `{id}` (`before`), the read, replacement,
/// delete and restore of `{id}`, the rest of the resource's own rows (`after`), then the link
/// and unlink of `{id}` and the record the path `segment` names by the parameter `other`
/// (`links`: `POST` and `DELETE`, each needing the collection's Update permission).
///
/// The list and the read of one record need the guard `reads`; a create needs the collection's
/// Create permission, a replacement and a restore its Update and a delete its Delete. A create
/// answers 201 with `Location` under the collection; every record is answered as `dto`, but the
/// read of one as `one` where the resource names it. The operations are the resource's
/// functions `list`, `create`, `get`, `update`, `delete` and `restore`; `engine` names the
/// engine's methods from the create to the restore.
///
/// ```text
/// kept_routes! {
///     "/api/roles" as "roles", Role, reads: Guard::Token, dto: RoleDto;
///     list: |call| Box::pin(call.read(PharmaPay::list_roles, each(RoleDto::from)));
///     engine: create_role, get_role, update_role, delete_role, restore_role;
/// }
/// ```
macro_rules! kept_routes {
    (@one $first:ty $(, $rest:ty)*) => { $first };
    (
        $base:literal as $collection:literal, $kind:expr, reads: $reads:expr, dto: $dto:ty $(, one: $one:ty)?;
        list: $list:expr;
        engine: $create:ident, $get:ident, $update:ident, $delete:ident, $restore:ident;
        $(before: [$($before:expr),* $(,)?];)?
        $(after: [$($after:expr),* $(,)?];)?
        $(links: $segment:literal as $other:literal, $link:ident => $link_operation:ident,
            $unlink:ident => $unlink_operation:ident;)?
    ) => {
        vec![
            $crate::routes::Route::get($base, $reads, list, $list),
            $crate::routes::Route::post(
                $base,
                $crate::guard::needs($kind, ::pharmapay_core::Action::Create),
                create,
                |call| {
                    Box::pin(call.create(
                        $collection,
                        ::pharmapay_core::PharmaPay::$create,
                        |record| record.id.get(),
                        <$dto>::from,
                    ))
                },
            ),
            $($($before,)*)?
            $crate::routes::Route::get(concat!($base, "/{id}"), $reads, get, |call| {
                Box::pin(call.by_id(
                    ::pharmapay_core::PharmaPay::$get,
                    <$crate::routes::kept_routes!(@one $($one,)? $dto)>::from,
                ))
            }),
            $crate::routes::Route::put(
                concat!($base, "/{id}"),
                $crate::guard::needs($kind, ::pharmapay_core::Action::Update),
                update,
                |call| Box::pin(call.replace(::pharmapay_core::PharmaPay::$update, <$dto>::from)),
            ),
            $crate::routes::Route::delete(
                concat!($base, "/{id}"),
                $crate::guard::needs($kind, ::pharmapay_core::Action::Delete),
                delete,
                |call| Box::pin(call.delete(::pharmapay_core::PharmaPay::$delete)),
            ),
            $crate::routes::Route::post(
                concat!($base, "/{id}/restore"),
                $crate::guard::needs($kind, ::pharmapay_core::Action::Update),
                restore,
                |call| Box::pin(call.by_id(::pharmapay_core::PharmaPay::$restore, <$dto>::from)),
            ),
            $($($after,)*)?
            $(
                $crate::routes::Route::post(
                    concat!($base, "/{id}/", $segment),
                    $crate::guard::needs($kind, ::pharmapay_core::Action::Update),
                    $link_operation,
                    |call| Box::pin(call.link($other, ::pharmapay_core::PharmaPay::$link)),
                ),
                $crate::routes::Route::delete(
                    concat!($base, "/{id}/", $segment),
                    $crate::guard::needs($kind, ::pharmapay_core::Action::Update),
                    $unlink_operation,
                    |call| Box::pin(call.link($other, ::pharmapay_core::PharmaPay::$unlink)),
                ),
            )?
        ]
    };
}

pub(crate) use kept_routes;

/// Converts each record of a list with `to_dto`, for the reads that answer an array.
pub fn each<T, D>(to_dto: impl FnMut(T) -> D) -> impl FnOnce(Vec<T>) -> Vec<D> {
    move |records| records.into_iter().map(to_dto).collect()
}

/// The `Idempotency-Key` of a create, with a fingerprint of the request (D23).
///
/// The fingerprint hashes the method, the path and the typed body serialised field by field in
/// a fixed order, so the same JSON sent with other spacing or key order counts as the same
/// request; unknown fields, which are ignored (D7), do not count.
///
/// # Errors
/// 400 for a key that is empty, too long or not visible ASCII.
pub(crate) fn idempotency(req: &Req, body: &impl Serialize) -> Result<Option<IdempotencyRequest>, ApiError> {
    if req.headers.get("idempotency-key").is_none() {
        return Ok(None);
    }
    idempotency_of(req, &serde_json::to_vec(body).unwrap_or_default())
}

/// The request's `Idempotency-Key` with a fingerprint of its method, path and `body` (D23), or
/// `None` without a key.
///
/// # Errors
/// 400 on `Idempotency-Key` for a key that is not 1 to 255 visible ASCII characters.
pub(crate) fn idempotency_of(req: &Req, body: &[u8]) -> Result<Option<IdempotencyRequest>, ApiError> {
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
    hasher.update(body);
    let fingerprint = hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect();
    Ok(Some(IdempotencyRequest { key, fingerprint }))
}

/// The 201 answer to a create, or the replay of an earlier one (D9, D23).
///
/// A fresh create under a key records the response it sends, so later retries get the same
/// bytes.
pub(crate) async fn created<S: Store, T, D: Serialize>(
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
            let location = serde_json::from_slice::<RecordedId>(&body)
                .ok()
                .and_then(|recorded| recorded.id)
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

/// The 200 of an idempotent write that answers what it wrote rather than creating a resource
/// (an import, D45; a payment recorded from a bank line, D51), recording a keyed one's bytes for
/// its retries (D23), which are answered them, or the record as it now stands, marked replayed.
pub(crate) async fn answered<S: Store, T, D: Serialize>(
    app: &App<S>,
    principal: &Principal,
    request: Option<&IdempotencyRequest>,
    result: Created<T>,
    to_dto: impl Fn(T) -> D,
) -> Reply {
    match result {
        Created::New(value) => {
            let body = serde_json::to_vec(&to_dto(value)).unwrap_or_default();
            if let Some(request) = request
                && let Err(error) = app.engine.record_idempotent_response(principal, &request.key, body.clone()).await
            {
                tracing::warn!(%error, "could not record an idempotent response; retries will get the current record");
            }
            Reply::json_bytes(StatusCode::OK, body)
        }
        Created::Replayed(Replay::Recorded(body)) => {
            Reply::json_bytes(StatusCode::OK, body).with_header(REPLAYED, "true")
        }
        Created::Replayed(Replay::Current(value)) => {
            Reply::json(StatusCode::OK, &to_dto(value)).with_header(REPLAYED, "true")
        }
    }
}

/// The id of a recorded create's answer, the one field a replay needs from it.
#[derive(Deserialize)]
pub(crate) struct RecordedId {
    id: Option<i64>,
}

/// 200 with a JSON body.
pub fn ok(value: &impl Serialize) -> Reply {
    Reply::json(StatusCode::OK, value)
}

impl<'a, S: Store> Call<'a, S> {
    /// The caller a guarded route acts for.
    ///
    /// # Errors
    /// 401 on a public route, which has no caller.
    pub fn caller(&self) -> Result<&'a Principal, ApiError> {
        self.principal.ok_or(ApiError::Core(Error::Unauthenticated))
    }

    /// A page of a list: the query string read by `parse` (filter, sort and page, D8); 200.
    ///
    /// # Errors
    /// 400 for invalid parameters; the engine's errors.
    pub async fn page<Q, T, D: Serialize>(
        self,
        parse: impl FnOnce(&Vec<(String, String)>) -> Result<Q, FieldErrors>,
        list: impl AsyncFnOnce(&PharmaPay<S>, &Principal, &Q) -> Result<Page<T>, Error>,
        to_dto: impl FnMut(T) -> D,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let query = parse(&self.req.query)?;
        let page = list(&self.app.engine, principal, &query).await?;
        Ok(ok(&PageDto::from_page(page, to_dto)))
    }

    /// A read of one answer with parameters read from the query string by `parse`: 200.
    ///
    /// # Errors
    /// 400 for invalid parameters; the engine's errors.
    pub async fn page_like<Q, T, D: Serialize>(
        self,
        parse: impl FnOnce(&Vec<(String, String)>) -> Result<Q, FieldErrors>,
        read: impl AsyncFnOnce(&PharmaPay<S>, &Principal, &Q) -> Result<T, Error>,
        to_dto: impl FnOnce(T) -> D,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let query = parse(&self.req.query)?;
        let value = read(&self.app.engine, principal, &query).await?;
        Ok(ok(&to_dto(value)))
    }

    /// A read that takes nothing but the caller: 200.
    ///
    /// # Errors
    /// The engine's errors.
    pub async fn read<T, D: Serialize>(
        self,
        read: impl AsyncFnOnce(&PharmaPay<S>, &Principal) -> Result<T, Error>,
        to_dto: impl FnOnce(T) -> D,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let value = read(&self.app.engine, principal).await?;
        Ok(ok(&to_dto(value)))
    }

    /// A read or a restore of the record the path's `{id}` names: 200.
    ///
    /// # Errors
    /// 400 for an `{id}` that is not a positive integer; the engine's errors.
    pub async fn by_id<I: From<i64>, T, D: Serialize>(
        self,
        call: impl AsyncFnOnce(&PharmaPay<S>, &Principal, I) -> Result<T, Error>,
        to_dto: impl FnOnce(T) -> D,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let id = I::from(self.req.id("id")?);
        let value = call(&self.app.engine, principal, id).await?;
        Ok(ok(&to_dto(value)))
    }

    /// A create from the body its input is decoded from: 201 with `Location` under
    /// `/api/{collection}`, or the replay of an earlier create with the same `Idempotency-Key`
    /// (D9, D23).
    ///
    /// # Errors
    /// 415 or 400 for the body, 400 for the key; the engine's errors.
    pub async fn create<N: Input, T, D: Serialize>(
        mut self,
        collection: &str,
        create: impl AsyncFnOnce(&PharmaPay<S>, &Principal, N, Option<&IdempotencyRequest>) -> Result<Created<T>, Error>,
        id_of: impl Fn(&T) -> i64,
        to_dto: impl Fn(T) -> D,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let body: N::Body = self.req.json()?;
        let idempotency = idempotency(&self.req, &body)?;
        let input = body.decode()?;
        let result = create(&self.app.engine, principal, input, idempotency.as_ref()).await?;
        Ok(created(self.app, principal, idempotency.as_ref(), result, collection, id_of, to_dto).await)
    }

    /// A replacement of the record `{id}` from the body its input is decoded from (D14): 200.
    ///
    /// # Errors
    /// 400 for the `{id}`, then 415 or 400 for the body; the engine's errors.
    pub async fn replace<I: From<i64>, N: Input, T, D: Serialize>(
        mut self,
        update: impl AsyncFnOnce(&PharmaPay<S>, &Principal, I, N) -> Result<T, Error>,
        to_dto: impl FnOnce(T) -> D,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let id = I::from(self.req.id("id")?);
        let input = self.req.json::<N::Body>()?.decode()?;
        let value = update(&self.app.engine, principal, id, input).await?;
        Ok(ok(&to_dto(value)))
    }

    /// A soft delete of the record `{id}`, with an optional `{reason}` body (D16): 204.
    ///
    /// # Errors
    /// 400 for the `{id}`, then 415 or 400 for the body; the engine's errors.
    pub async fn delete<I: From<i64>>(
        mut self,
        delete: impl AsyncFnOnce(&PharmaPay<S>, &Principal, I, Option<String>) -> Result<(), Error>,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let id = I::from(self.req.id("id")?);
        let reason = decode::reason(self.req.optional_json()?)?;
        delete(&self.app.engine, principal, id, reason).await?;
        Ok(Reply::no_content())
    }

    /// A link between the record `{id}` and the one the path parameter `other` names, or its
    /// removal (a user's or a role's policies, a policy's permissions): 204.
    ///
    /// # Errors
    /// 400 for either parameter; the engine's errors.
    pub async fn link<I: From<i64>, J: From<i64>>(
        self,
        other: &str,
        link: impl AsyncFnOnce(&PharmaPay<S>, &Principal, I, J) -> Result<(), Error>,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let (id, other) = (I::from(self.req.id("id")?), J::from(self.req.id(other)?));
        link(&self.app.engine, principal, id, other).await?;
        Ok(Reply::no_content())
    }
}
