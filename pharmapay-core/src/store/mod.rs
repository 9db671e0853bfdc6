//! The storage contract: the [`Store`] trait every backend implements, split by purpose.
//!
//! The contract is shaped by use case, not by table. Each method is one atomic unit: it either
//! happens completely or not at all, and it keeps the invariants that span rows *inside its
//! own transaction*: an active parent, unique numbers and emails among active rows, one
//! OwnPharmacy vendor, the last admin, one-time onboarding, and each invoice's paid total
//! equalling the exact sum of its active payments. The engine never reads, decides and then
//! writes across two calls, so concurrent requests cannot slip between a check and a write.
//!
//! Core decides, stores keep: every rule that spans rows is a pure function of
//! [`crate::rules`]. A store method opens its transaction, locks and loads the facts a rule
//! names, asks the rule, writes what it allows and commits; it never judges on its own. What a
//! store reports itself are facts: a missing row, an inactive parent, a taken unique value.
//!
//! # Layout
//! [`Store`] is the sum of one trait per purpose (`traits.rs`), each implementable in its own
//! file of a backend:
//! - [`SessionStore`]: health, onboarding, the token secret, credentials, session state, the
//!   failed-login window and idempotency claims.
//! - [`VendorStore`], [`InvoiceStore`], [`TransactionStore`] and [`VendorPaymentStore`]: the
//!   ledger; [`CreditStore`]: vendor credits (D44).
//! - [`AccessStore`]: users, roles, policies, permissions and the profile.
//! - [`ReportStore`]: settings, dashboard figures, the audit log and exports.
//! - [`FileImportStore`] (`files.rs`): the rows of imported files (D45).
//! - [`BankStatementStore`] (`bank.rs`): bank statements, their lines and matches (D46).
//! - [`EventStore`] (`events.rs`): the event feed (D47); every write of the ledger records its
//!   events beside its audit entry, from [`WriteContext::announcements`].
//! - [`WebhookStore`] (`webhooks.rs`): webhooks and the queue of their deliveries (D47).
//!
//! [`ImportStore`] holds the bulk imports; it is not part of [`Store`]. This file holds the
//! contract's error, its unique keys and the records the traits speak.
//!
//! # Contract shared by every method
//! - Reads by id (`get_*`) return the record whatever its `is_active`; the engine decides
//!   whether a soft-deleted record is visible.
//! - Updates and deletes of a missing *or soft-deleted* record fail with
//!   [`StoreError::NotFound`]; a restore of a missing or *active* record does too (D15).
//! - A referenced parent that is missing or inactive fails with [`StoreError::ParentInactive`];
//!   a restore whose parent is inactive is refused by [`crate::rules::restore`] instead (D15).
//! - A taken unique value fails with [`StoreError::Conflict`] naming its [`UniqueKey`] (D4, D5).
//! - Every write records one audit entry (D22) from its [`WriteContext`] in the same
//!   transaction, and completes the context's idempotency ticket there too (D23).
//! - A write that gives access (a role to a user, permissions to a policy, a policy to a user
//!   or a role) loads what it gives and checks it with [`crate::rules::grants::check`] against the
//!   context's [`Authority`] once its records are found, before any other rule (D38).
//! - A write that may take access away from users (a role change, a policy detached, a
//!   permission removed, a policy or role deleted) revokes the tokens of every user it may
//!   affect with [`crate::rules::sessions::revoke`] under those users' row locks (D39).
//! - Checks answer in one order: the record (`NotFound`), its parents (`ParentInactive`, or the
//!   restore rule), what the write gives (`Escalation`), its unique values (`Conflict`), then
//!   the other rules.
//! - Invoices are returned with `status` computed for the day starting at `today_start`.
//! - Text comparisons for uniqueness and search use [`crate::text::key`] (trimmed, lower-cased).
//! - Every sort ends with the id, in the sort's direction, as tie-breaker (D8).
//!
//! # Writing a store
//! Implement each sub-trait with `async fn`; the returned futures must be `Send`. [`Store`]
//! then comes with a blanket implementation. Map the backend's own errors into [`StoreError`]:
//! unique-constraint violations to `Conflict` with their key, connection failures to
//! `Unavailable`, anything else to `Backend`. Run the conformance suite (feature
//! `conformance`) against the new store.

mod bank;
mod events;
mod files;
mod traits;
mod webhooks;

use std::error::Error as StdError;
use std::fmt;

use jiff::Timestamp;

pub use bank::BankStatementStore;
pub use events::EventStore;
pub use files::FileImportStore;
pub use traits::{
    AccessStore, CreditStore, ImportStore, ImportedCredit, ImportedInvoice, ImportedTransaction, ImportedVendor,
    InvoiceStore, ReportStore, SessionStore, TransactionStore, VendorPaymentStore, VendorStore,
};
pub use webhooks::WebhookStore;

use crate::access::{Authority, Permission};
use crate::domain::{NewAuditEntry, User};
use crate::error::{Entity, FieldErrors, RuleBroken};
use crate::events::{Announcement, Announcer, announcement};
use crate::idempotency::IdempotencyTicket;
use crate::ids::{BankLineId, RoleId, TransactionId, UserId};
use crate::import::RowErrors;
use crate::rules::grants::Escalation;

/// Storage for the engine: every purpose's trait at once. See the module docs for the
/// contract every method follows; any type implementing all of them is a `Store`.
pub trait Store:
    SessionStore
    + VendorStore
    + InvoiceStore
    + TransactionStore
    + VendorPaymentStore
    + CreditStore
    + AccessStore
    + ReportStore
    + FileImportStore
    + BankStatementStore
    + EventStore
    + WebhookStore
{
}

impl<T> Store for T where
    T: SessionStore
        + VendorStore
        + InvoiceStore
        + TransactionStore
        + VendorPaymentStore
        + CreditStore
        + AccessStore
        + ReportStore
        + FileImportStore
        + BankStatementStore
        + EventStore
        + WebhookStore
{
}

/// A boxed error from a backend.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// The result of every store method.
pub type StoreResult<T> = Result<T, StoreError>;

/// How a store method failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The record (of the given kind) does not exist, or is not in the state the method needs.
    #[error("{0} not found")]
    NotFound(Entity),
    /// A unique value is taken.
    #[error("the {0} is already taken")]
    Conflict(UniqueKey),
    /// A referenced record (of the given kind) is missing or inactive.
    #[error("the referenced {0} is missing or inactive")]
    ParentInactive(Entity),
    /// A rule that spans rows refused the write.
    #[error("{}", .0.message())]
    Rule(RuleBroken),
    /// The write would give more than its context's authority holds (D38).
    #[error("the write would give {0}, which the caller does not hold")]
    Escalation(Escalation),
    /// A rule found fields of the write wrong against what is stored (an allocation above an
    /// invoice's pending amount, D31; an invoice dated after its vendor's licence, D36).
    #[error("invalid input: {0}")]
    Invalid(FieldErrors),
    /// Rows of an imported file were refused (D45): their errors by `row<N>.<field>`.
    #[error("{0}")]
    Rows(RowErrors),
    /// The backend cannot be reached.
    #[error("the store is unavailable")]
    Unavailable(#[source] BoxError),
    /// The connection to the database was lost while a write's commit was under way, so
    /// whether the write was kept is unknown (D48). Its idempotency claim, if any, is kept: a
    /// retry with the same key replays the write if it was kept, and never writes it twice.
    #[error("the connection was lost during the commit; whether the write was kept is unknown")]
    OutcomeUnknown(#[source] BoxError),
    /// Anything else.
    #[error("store backend failure")]
    Backend(#[source] BoxError),
}

/// A value that must be unique, as a store reports it taken (D4, D5). It names what is unique,
/// never how a request spells it: the server maps each key to its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UniqueKey {
    /// An invoice number, among active invoices.
    InvoiceNumber,
    /// A user's email, among active users.
    UserEmail,
    /// A role's name, among all roles.
    RoleName,
    /// A policy's name, among active policies.
    PolicyName,
    /// A vendor's GSTIN, among active vendors (D37).
    Gstin,
    /// A payment reference of a payment type, among active payments (D30); `existing` is an
    /// active payment holding it.
    PaymentReference {
        /// The lowest id among the payments holding it.
        existing: TransactionId,
    },
    /// The one OwnPharmacy vendor (D14). Stores refuse a second one by
    /// [`crate::rules::vendors::check_insert`] before any index could; a store whose unique
    /// index finds one anyway reports this key, and the engine answers it as that rule.
    OwnPharmacy,
    /// A vendor credit's number, among the vendor's active credits (D44).
    CreditNumber,
    /// A payment (a payment on its own or a whole vendor payment) matched to a line of an
    /// active bank statement (D46): it is matched to one line at most.
    BankMatch {
        /// The line holding it.
        line: BankLineId,
        /// Whether the payment is a vendor payment (else a payment on its own).
        vendor_payment: bool,
    },
}

impl UniqueKey {
    /// The kind of record holding the value.
    pub fn entity(self) -> Entity {
        match self {
            UniqueKey::InvoiceNumber => Entity::Invoice,
            UniqueKey::UserEmail => Entity::User,
            UniqueKey::RoleName => Entity::Role,
            UniqueKey::PolicyName => Entity::Policy,
            UniqueKey::Gstin => Entity::Vendor,
            UniqueKey::PaymentReference { .. } => Entity::Transaction,
            UniqueKey::OwnPharmacy => Entity::Vendor,
            UniqueKey::CreditNumber => Entity::VendorCredit,
            UniqueKey::BankMatch { .. } => Entity::BankLine,
        }
    }
}

impl fmt::Display for UniqueKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UniqueKey::InvoiceNumber => "invoice number",
            UniqueKey::UserEmail => "email",
            UniqueKey::RoleName => "role name",
            UniqueKey::PolicyName => "policy name",
            UniqueKey::Gstin => "GSTIN",
            UniqueKey::PaymentReference { .. } => "payment reference",
            UniqueKey::OwnPharmacy => "OwnPharmacy vendor",
            UniqueKey::CreditNumber => "credit number",
            UniqueKey::BankMatch { .. } => "matched payment",
        })
    }
}

impl StoreError {
    /// Wraps any error as [`StoreError::Backend`].
    pub fn backend(error: impl StdError + Send + Sync + 'static) -> Self {
        StoreError::Backend(Box::new(error))
    }
}

/// Who writes, when, why, and under which idempotency claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteContext {
    /// The acting user (absent for onboarding).
    pub actor: Option<UserId>,
    /// What the actor may give others (D38).
    pub authority: Authority,
    /// The instant of the write; stores use it for `created_at`, `updated_at` and the audit.
    pub at: Timestamp,
    /// The reason of a delete (D16).
    pub reason: Option<String>,
    /// The values written, as a JSON object, for the audit log.
    pub changes: Option<String>,
    /// The claim this write completes (D23).
    pub idempotency: Option<IdempotencyTicket>,
    /// What renders the write's events (D47); none when the engine announces nothing.
    pub announce: Option<Announcer>,
}

impl WriteContext {
    /// A context for `actor`, who may give what `authority` allows, at `at`, with nothing else.
    pub fn new(actor: Option<UserId>, authority: Authority, at: Timestamp) -> Self {
        Self { actor, authority, at, reason: None, changes: None, idempotency: None, announce: None }
    }

    /// The audit entry this write records: `action` on `entity` number `entity_id`.
    pub fn audit(&self, action: &'static str, entity: Entity, entity_id: Option<i64>) -> NewAuditEntry {
        NewAuditEntry {
            at: self.at,
            user_id: self.actor,
            action,
            entity: entity.name(),
            entity_id,
            reason: self.reason.clone(),
            changes: self.changes.clone(),
        }
    }

    /// The events a write recording the audit entry `action` on `entity` number `entity_id`
    /// writes beside it (D47), in order: its own, `also` (the vendor payment a bank line
    /// recorded), then `invoice.paid` for each invoice `paid` names. None when the context
    /// renders no events.
    pub fn announcements(
        &self,
        (action, entity, entity_id): (&str, Entity, i64),
        also: &[Announcement],
        paid: impl IntoIterator<Item = i64>,
    ) -> Vec<Announcement> {
        if self.announce.is_none() {
            return Vec::new();
        }
        announcement(action, entity, entity_id)
            .into_iter()
            .chain(also.iter().copied())
            .chain(paid.into_iter().map(Announcement::paid))
            .collect()
    }
}

/// What a policy is attached to directly (D19): a user, or a role and through it its users.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyHolder {
    /// A user.
    User(UserId),
    /// A role.
    Role(RoleId),
}

impl PolicyHolder {
    /// The kind of record the holder is, as a missing record and the audit log name it.
    pub fn entity(self) -> Entity {
        match self {
            PolicyHolder::User(_) => Entity::User,
            PolicyHolder::Role(_) => Entity::Role,
        }
    }

    /// The holder's id.
    pub fn id(self) -> i64 {
        match self {
            PolicyHolder::User(id) => id.get(),
            PolicyHolder::Role(id) => id.get(),
        }
    }
}

/// A user to insert: the account fields and the password's Argon2id hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewUserRecord {
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Email.
    pub email: String,
    /// The role.
    pub role_id: RoleId,
    /// PHC string.
    pub password_hash: String,
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

/// A user signed in by a store, in the transaction that also recorded the token's issue
/// second (see [`crate::rules::sessions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignIn {
    /// The account as it stands.
    pub user: User,
    /// Its permissions (D19) as they stand; empty for admins, who need none.
    pub permissions: Vec<Permission>,
    /// The token's `iat`, in Unix seconds, from [`crate::rules::sessions::issue`].
    pub issued_at: i64,
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
