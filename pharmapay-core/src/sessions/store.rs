//! Storage for the installation, sign-ins and idempotency claims: [`SessionStore`], part of
//! [`Store`](crate::store::Store).

use std::future::Future;

use jiff::Timestamp;

use crate::access::user::User;
use crate::auth::Secret;
use crate::idempotency::{ClaimOutcome, IdempotencyClaim, IdempotencyKey};
use crate::ids::UserId;
use crate::reports::audit::NewAuditEntry;
use crate::sessions::SignIn;
use crate::sessions::login::{Failure, LoginAttempts};
use crate::store::{NewUserRecord, StoreResult, WriteContext};
use crate::vendors::{NewVendor, Vendor};

/// Storage for the installation, sign-ins and idempotency claims.
pub trait SessionStore: Send + Sync + 'static {
    // Installation

    /// Succeeds when the backend answers.
    fn health(&self) -> impl Future<Output = StoreResult<()>> + Send;

    /// True once an OwnPharmacy vendor and at least one user exist.
    fn is_onboarded(&self) -> impl Future<Output = StoreResult<bool>> + Send;

    /// Creates the OwnPharmacy vendor and the first admin (role 1) atomically; fails with
    /// `Rule(AlreadyOnboarded)` when already onboarded, even under concurrent calls. The admin's
    /// token state records a token issued at `ctx.at` (see [`crate::sessions::rules::issue`]).
    fn complete_onboarding(
        &self,
        pharmacy: NewVendor,
        admin: NewUserRecord,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<(Vendor, User)>> + Send;

    /// The token signing secret kept in the store, storing `candidate` first if none is kept.
    /// Every caller gets the same secret, whichever candidate won (D28).
    fn token_secret(&self, candidate: Secret) -> impl Future<Output = StoreResult<Secret>> + Send;

    // Authentication

    /// The active or inactive user with this email key, with its password hash. When several
    /// users share the key (only one can be active), the active one.
    fn find_credentials(&self, email_key: &str) -> impl Future<Output = StoreResult<Option<Credentials>>> + Send;

    /// The user with this id and its password hash.
    fn credentials(&self, user_id: UserId) -> impl Future<Output = StoreResult<Option<Credentials>>> + Send;

    /// The facts each request checks about its user (D20, D39).
    fn session_state(&self, user_id: UserId) -> impl Future<Output = StoreResult<Option<SessionState>>> + Send;

    /// The failures recorded for `email_key` (D21), read without locking or writing.
    fn login_attempts(&self, email_key: &str) -> impl Future<Output = StoreResult<Option<LoginAttempts>>> + Send;

    /// Records a failed password check for `email_key` (an email key, or an account's key,
    /// [`crate::sessions::login::account_key`]) at `now` as [`crate::sessions::login::fail`] decides,
    /// under the attempts row's lock: when counted, writes the attempts, records `audit` if any
    /// and purges rows whose window closed before [`crate::sessions::login::purge_before`]; when
    /// refused, writes nothing. Answers the decision.
    fn record_login_failure(
        &self,
        email_key: &str,
        now: Timestamp,
        audit: Option<NewAuditEntry>,
    ) -> impl Future<Output = StoreResult<Failure>> + Send;

    /// Records `audit` and marks the window noted when [`crate::sessions::login::note_throttling`] says
    /// a note is due, under the attempts row's lock; otherwise writes nothing (D40).
    fn note_login_throttled(
        &self,
        email_key: &str,
        now: Timestamp,
        audit: NewAuditEntry,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Signs in an active user whose password was verified, in one transaction: unless
    /// [`crate::sessions::login::gate_both`] now refuses `email_key` or the user's account key
    /// ([`crate::sessions::login::account_key`], D48; then nothing is written), forgets the failures
    /// of both, issues a token second with [`crate::sessions::rules::issue`] under the user's row
    /// lock, records `audit`, and answers the user with their permissions as they stand.
    /// `NotFound(User)` when the user is missing or no longer active.
    fn complete_login(
        &self,
        user_id: UserId,
        email_key: &str,
        now: Timestamp,
        audit: NewAuditEntry,
    ) -> impl Future<Output = StoreResult<LoginOutcome>> + Send;

    // Idempotency (D23)

    /// Claims `claim.key` for `claim.user_id`, or reports who holds it. Expired claims are
    /// replaced; unfinished claims older than the abandonment limit are taken over.
    fn claim_idempotency_key(&self, claim: IdempotencyClaim) -> impl Future<Output = StoreResult<ClaimOutcome>> + Send;

    /// Keeps the response sent for a completed claim, for byte-exact replays.
    fn record_idempotent_response(
        &self,
        user_id: UserId,
        key: &IdempotencyKey,
        response: Vec<u8>,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Gives up an unfinished claim (its request failed), so a retry runs afresh.
    fn release_idempotency_key(
        &self,
        user_id: UserId,
        key: &IdempotencyKey,
    ) -> impl Future<Output = StoreResult<()>> + Send;
}

/// What a login needs to know about an account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    /// The account.
    pub user: User,
    /// PHC string of its password.
    pub password_hash: String,
}

/// What each authenticated request checks about its user (D20, D39).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionState {
    /// False once the user is deleted.
    pub is_active: bool,
    /// Tokens issued in or before this second (Unix seconds) no longer work; 0 revokes nothing.
    pub revoked_through: i64,
}

/// How a sign-in with the right password ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginOutcome {
    /// Signed in.
    SignedIn(SignIn),
    /// Five failures were recorded meanwhile: nothing was written (D40).
    Throttled {
        /// When the window closes.
        until: Timestamp,
    },
}
