//! The engine's handle, [`PharmaPay`]: opening it, the clock and the business calendar, the write
//! contexts, how store errors become [`Error`]s, signing sessions and idempotent creates (D23).

use crate::access::user::User;
use crate::access::{ADMIN_ROLE_ID, Authority, Permission, Principal, Requirement};
use crate::auth::{IssuedToken, PasswordOptions, Passwords, Secret, TokenConfigError, TokenSettings, Tokens};
use crate::clock::{BusinessCalendar, Clock, to_micros};
use crate::error::{Entity, Error, IdempotencyClash, Result, RuleBroken};
use crate::events::{Announcer, Render};
use crate::idempotency::{
    ClaimOutcome, Created, IdempotencyClaim, IdempotencyKey, IdempotencyRequest, IdempotencyTicket, Replay,
};
use crate::ids::UserId;
use crate::invoices::InvoiceFilter;
use crate::reports::setting::TIME_ZONE;
use crate::store::{SignIn, Store, StoreError, StoreResult, UniqueKey, WriteContext};
use crate::text::{self, Lines, TEXT_MAX};
use crate::vendors::Vendor;
use crate::vendors::licence::{LicenceBounds, LicenseStatus};
use jiff::{SignedDuration, Timestamp};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracing::warn;

/// How long the business time zone read from the settings is trusted before it is read again.
/// Changes made through this engine apply at once; changes made through another server sharing
/// the database apply within this time.
pub const TIME_ZONE_REFRESH: Duration = Duration::from_secs(5);
/// The dashboard's window for recent payments: today and the 29 days before it (D12).
pub const RECENT_DAYS: i64 = 30;

/// How the engine signs tokens and hashes passwords.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// The signing secret; `None` takes the one kept in the store, generating it on first use
    /// so every server sharing the store agrees (D28).
    pub jwt_secret: Option<Secret>,
    /// The `iss` claim (default `pharmapay`).
    pub jwt_issuer: String,
    /// The `aud` claim (default `pharmapay`).
    pub jwt_audience: String,
    /// Token lifetime (default 24 hours).
    pub token_lifetime: SignedDuration,
    /// Argon2id costs and concurrency.
    pub passwords: PasswordOptions,
    /// What renders the `data` of events (D47): each write of the ledger then records its
    /// events in its own transaction. `None` (the default) records none, and the feed stays
    /// empty; the server passes the renderer of its API's answers.
    pub events: Option<Arc<dyn Render>>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            jwt_secret: None,
            jwt_issuer: "pharmapay".into(),
            jwt_audience: "pharmapay".into(),
            token_lifetime: SignedDuration::from_hours(24),
            passwords: PasswordOptions::default(),
            events: None,
        }
    }
}

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The token settings are invalid.
    #[error(transparent)]
    Tokens(#[from] TokenConfigError),
    /// The store failed while reading the kept secret.
    #[error("could not read the token secret from the store")]
    Store(#[from] StoreError),
}

/// A signed-in session: what login, onboarding and a password change return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The signed token and its expiry.
    pub token: IssuedToken,
    /// The signed-in user.
    pub user: User,
}

pub(crate) struct CachedCalendar {
    pub(crate) calendar: BusinessCalendar,
    pub(crate) read_at: Instant,
}

/// The pharmapay engine over a store `S`.
pub struct PharmaPay<S> {
    pub(crate) store: S,
    pub(crate) clock: Box<dyn Clock>,
    pub(crate) tokens: Tokens,
    pub(crate) passwords: Passwords,
    pub(crate) calendar: Mutex<Option<CachedCalendar>>,
    pub(crate) events: Option<Arc<dyn Render>>,
}

pub(crate) fn store_error(error: StoreError) -> Error {
    match error {
        StoreError::NotFound(entity) => Error::NotFound { entity },
        // D14: the one OwnPharmacy vendor is a rule, whichever check of the store found it taken.
        StoreError::Conflict(UniqueKey::OwnPharmacy) => Error::Rule(RuleBroken::OwnPharmacyType),
        StoreError::Conflict(key) => Error::Conflict(key),
        StoreError::ParentInactive(parent) => {
            Error::invalid(parent_field(parent), format!("must reference an active {}", parent.name().to_lowercase()))
        }
        StoreError::Rule(rule) => Error::Rule(rule),
        StoreError::Escalation(missing) => Error::Forbidden { required: Requirement::Grant(missing) },
        StoreError::OutOfScope(missing) => Error::Forbidden { required: Requirement::Scope(missing) },
        StoreError::Invalid(errors) => Error::Validation(errors),
        StoreError::Rows(errors) => Error::Rows(errors),
        unavailable @ (StoreError::Unavailable(_) | StoreError::OutcomeUnknown(_)) => Error::Unavailable(unavailable),
        other => Error::Store(other),
    }
}

/// `vendor` with its licence status for the day of `bounds` (D36).
pub(crate) fn licensed(bounds: &LicenceBounds, mut vendor: Vendor) -> Vendor {
    vendor.license_status = LicenseStatus::of(vendor.drug_license_valid_until, bounds);
    vendor
}

/// The record `found` by a read by id, unless it is missing or soft-deleted (D17).
pub(crate) fn visible<T>(found: StoreResult<Option<T>>, is_active: impl Fn(&T) -> bool, entity: Entity) -> Result<T> {
    found.map_err(store_error)?.filter(|record| is_active(record)).ok_or(Error::not_found(entity))
}

/// Maps a payment write's failures: a paid total past the largest amount is the amount's fault.
pub(crate) fn payment_error(error: StoreError) -> Error {
    match error {
        StoreError::Rule(RuleBroken::PaidTotalTooLarge) => {
            Error::invalid("amount", "would bring the invoice's paid total above 999999999999.9999")
        }
        other => store_error(other),
    }
}

pub(crate) fn parent_field(parent: Entity) -> &'static str {
    match parent {
        Entity::Vendor => "vendorId",
        Entity::Invoice => "invoiceId",
        Entity::Role => "roleId",
        Entity::Permission => "permissionIds",
        Entity::Policy => "policyId",
        Entity::User => "userId",
        Entity::Branch => "branchId",
        _ => "id",
    }
}

impl<S: Store> PharmaPay<S> {
    /// Starts an engine over `store`, reading "now" from `clock`.
    ///
    /// When `options.jwt_secret` is `None`, the secret kept in the store is used, and one is
    /// generated and kept on first start (D28).
    ///
    /// # Errors
    /// [`OpenError::Tokens`] for a secret under 32 characters or invalid token settings;
    /// [`OpenError::Store`] when the store cannot be read.
    pub async fn open(store: S, clock: impl Clock, options: EngineOptions) -> Result<Self, OpenError> {
        let secret = match options.jwt_secret {
            Some(secret) => secret,
            None => store.token_secret(Secret::generate()).await?,
        };
        let tokens = Tokens::new(TokenSettings {
            secret,
            issuer: options.jwt_issuer,
            audience: options.jwt_audience,
            lifetime: options.token_lifetime,
        })?;
        Ok(Self {
            store,
            clock: Box::new(clock),
            tokens,
            passwords: Passwords::new(options.passwords),
            calendar: Mutex::new(None),
            events: options.events,
        })
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The current instant, at the microsecond precision stores keep.
    pub fn now(&self) -> Timestamp {
        to_micros(self.clock.now())
    }

    /// The business calendar (D3), from the `TimeZone` setting.
    ///
    /// # Errors
    /// [`Error::Unavailable`] or [`Error::Store`] when the setting cannot be read.
    pub async fn calendar(&self) -> Result<BusinessCalendar> {
        {
            let cached = self.calendar.lock().expect("calendar cache lock is never poisoned");
            if let Some(cached) = cached.as_ref()
                && cached.read_at.elapsed() < TIME_ZONE_REFRESH
            {
                return Ok(cached.calendar.clone());
            }
        }
        let setting = self.store.get_setting(TIME_ZONE).await.map_err(store_error)?;
        let value = setting.map(|setting| setting.value);
        if let Some(value) = &value
            && BusinessCalendar::parse(value).is_err()
        {
            warn!(zone = %value, "the TimeZone setting is not a known zone; using UTC");
        }
        let calendar = BusinessCalendar::from_setting(value.as_deref());
        self.remember_calendar(calendar.clone());
        Ok(calendar)
    }

    pub(crate) fn remember_calendar(&self, calendar: BusinessCalendar) {
        let mut cached = self.calendar.lock().expect("calendar cache lock is never poisoned");
        *cached = Some(CachedCalendar { calendar, read_at: Instant::now() });
    }

    /// The first instant of today in the business time zone.
    pub(crate) async fn today_start(&self) -> Result<Timestamp> {
        let calendar = self.calendar().await?;
        Ok(calendar.start_of(calendar.date_of(self.now())))
    }

    /// `filter` with its days resolved in the business calendar (D32: `dueWithinDays` becomes
    /// the window of due instants from today's start to the start of the day after the last),
    /// and the first instant of today.
    pub(crate) async fn invoice_filter(
        &self,
        principal: &Principal,
        mut filter: InvoiceFilter,
    ) -> Result<(InvoiceFilter, Timestamp)> {
        // D49: the caller's branches, or those of them the filter names.
        filter.branches = self.branch_filter(principal, filter.branches.as_deref()).await?;
        let calendar = self.calendar().await?;
        let today = calendar.date_of(self.now());
        let today_start = calendar.start_of(today);
        filter.due_window = filter.due_within_days.map(|days| {
            let after_last = today.checked_add(jiff::Span::new().days(i64::from(days) + 1)).unwrap_or(today);
            (today_start, calendar.start_of(after_last))
        });
        Ok((filter, today_start))
    }

    /// Today's licence bounds in the business calendar (D36).
    pub(crate) async fn licence_bounds(&self) -> Result<LicenceBounds> {
        let calendar = self.calendar().await?;
        Ok(LicenceBounds::for_day(&calendar, calendar.date_of(self.now())))
    }

    pub(crate) async fn tomorrow_start(&self) -> Result<Timestamp> {
        Ok(self.calendar().await?.start_of_next_day(self.now()))
    }

    pub(crate) fn ctx(&self, principal: &Principal) -> WriteContext {
        WriteContext {
            scope: principal.scope.clone(),
            ..WriteContext::new(Some(principal.user_id), Authority::of(principal), self.now())
        }
    }

    /// `ctx` with what renders its events (D47), for the write's day, when the engine
    /// announces its writes.
    pub(crate) async fn announcing(&self, ctx: WriteContext) -> Result<WriteContext> {
        let Some(render) = &self.events else { return Ok(ctx) };
        let calendar = self.calendar().await?;
        let bounds = LicenceBounds::for_day(&calendar, calendar.date_of(ctx.at));
        Ok(WriteContext { announce: Some(Announcer::new(Arc::clone(render), bounds)), ..ctx })
    }

    /// The context of a write that records `changes` in the audit log (D22).
    pub(crate) fn ctx_with(&self, principal: &Principal, changes: String) -> WriteContext {
        WriteContext { changes: Some(changes), ..self.ctx(principal) }
    }

    /// The context of a delete, keeping its `reason` in the audit log once it is valid (D16).
    pub(crate) fn ctx_for_delete(&self, principal: &Principal, reason: Option<String>) -> Result<WriteContext> {
        let reason = text::optional(reason.as_deref(), TEXT_MAX, Lines::Multi)
            .map_err(|error| Error::invalid("reason", error.to_string()))?;
        Ok(WriteContext { reason, ..self.ctx(principal) })
    }

    /// Signs a token for a user a store signed in: its claims are the user and permissions as
    /// the store's transaction read them, its `iat` the second that transaction recorded.
    pub(crate) fn sign(&self, sign_in: SignIn) -> Result<Session> {
        let is_admin = sign_in.user.role_id == ADMIN_ROLE_ID;
        let perm = if is_admin { Vec::new() } else { sign_in.permissions.iter().map(Permission::code).collect() };
        let token = self.tokens.issue(&sign_in.user, is_admin, perm, sign_in.issued_at)?;
        Ok(Session { token, user: sign_in.user })
    }

    /// Creates with `write` under `ctx`, or replays: with a `request`, the key is claimed first
    /// and `write` completes the claim in its own transaction (D23); a retry of a finished
    /// request answers the response recorded for it, or the record `refetch` reads now.
    pub(crate) async fn create_idempotently<T, W, WF, R, RF>(
        &self,
        principal: &Principal,
        request: Option<&IdempotencyRequest>,
        mut ctx: WriteContext,
        write: W,
        refetch: R,
    ) -> Result<Created<T>>
    where
        W: FnOnce(WriteContext) -> WF,
        WF: Future<Output = Result<T>>,
        R: FnOnce(i64) -> RF,
        RF: Future<Output = StoreResult<Option<T>>>,
    {
        let Some(request) = request else {
            return write(ctx).await.map(Created::New);
        };
        if request.fingerprint.is_empty() || request.fingerprint.len() > 128 {
            return Err(Error::invalid("Idempotency-Key", "the request fingerprint must be 1 to 128 characters"));
        }
        let claim = IdempotencyClaim {
            user_id: principal.user_id,
            key: request.key.clone(),
            fingerprint: request.fingerprint.clone(),
            now: self.now(),
        };
        match self.store.claim_idempotency_key(claim).await.map_err(store_error)? {
            ClaimOutcome::Claimed => {}
            ClaimOutcome::InProgress => return Err(Error::Idempotency(IdempotencyClash::InProgress)),
            ClaimOutcome::Mismatch => return Err(Error::Idempotency(IdempotencyClash::DifferentRequest)),
            ClaimOutcome::Completed { response: Some(response), .. } => {
                return Ok(Created::Replayed(Replay::Recorded(response)));
            }
            ClaimOutcome::Completed { entity_id, response: None } => {
                let current = refetch(entity_id)
                    .await
                    .map_err(store_error)?
                    .ok_or(Error::Idempotency(IdempotencyClash::InProgress))?;
                return Ok(Created::Replayed(Replay::Current(current)));
            }
        }
        ctx.idempotency = Some(IdempotencyTicket { user_id: principal.user_id, key: request.key.clone() });
        match write(ctx).await {
            Ok(created) => Ok(Created::New(created)),
            // D48: a write whose commit may have gone through keeps its claim, so a retry with
            // the key replays it if it was kept and never writes it twice.
            Err(error @ Error::Unavailable(StoreError::OutcomeUnknown(_))) => Err(error),
            Err(error) => {
                if let Err(release) = self.store.release_idempotency_key(principal.user_id, &request.key).await {
                    warn!(error = %release, "could not release an idempotency key after a failed create");
                }
                Err(error)
            }
        }
    }

    /// Keeps the response sent for an idempotent create, so a retry gets the same bytes (D23).
    ///
    /// # Errors
    /// Store failures.
    pub async fn record_idempotent_response(
        &self,
        principal: &Principal,
        key: &IdempotencyKey,
        response: Vec<u8>,
    ) -> Result<()> {
        self.store.record_idempotent_response(principal.user_id, key, response).await.map_err(store_error)
    }

    pub(crate) async fn active_user(&self, id: UserId) -> Result<User> {
        visible(self.store.get_user(id).await, |user: &_| user.is_active, Entity::User)
    }
}
