//! The storage contract: the [`Store`] trait every backend implements.
//!
//! The trait is shaped by use case, not by table. Each method is one atomic unit: it either
//! happens completely or not at all, and it enforces the invariants that span rows *inside its
//! own transaction*: an active parent, unique numbers and emails among active rows, one
//! OwnPharmacy vendor, the last admin, one-time onboarding, and each invoice's paid total
//! equalling the exact sum of its active payments. The engine never reads, decides and then
//! writes across two calls, so concurrent requests cannot slip between a check and a write.
//!
//! # Contract shared by every method
//! - Reads by id (`get_*`) return the record whatever its `is_active`; the engine decides
//!   whether a soft-deleted record is visible.
//! - Updates and deletes of a missing *or soft-deleted* record fail with
//!   [`StoreError::NotFound`]; a restore of a missing or *active* record does too (D15).
//! - A referenced parent that is missing or inactive fails with [`StoreError::ParentInactive`].
//! - A taken unique value fails with [`StoreError::Conflict`] naming the field (D4, D5).
//! - Every write records one audit entry (D22) from its [`WriteContext`] in the same
//!   transaction, and completes the context's idempotency ticket there too (D23).
//! - Invoices are returned with `status` computed for the day starting at `today_start`.
//! - Text comparisons for uniqueness and search use [`crate::text::key`] (trimmed, lower-cased).
//! - Every sort ends with the id, in the sort's direction, as tie-breaker (D8).
//!
//! # Writing a store
//! Implement each method with `async fn`; the returned futures must be `Send`. Map the
//! backend's own errors into [`StoreError`]: unique-constraint violations to `Conflict`,
//! connection failures to `Unavailable`, anything else to `Backend`. Run the conformance suite
//! (feature `conformance`) against the new store.

use std::error::Error as StdError;
use std::future::Future;

use jiff::Timestamp;

use crate::access::Permission;
use crate::auth::Secret;
use crate::dashboard::{PeriodTotal, Summary, TopVendor};
use crate::domain::{
    AuditEntry, AuditQuery, Invoice, InvoiceDetail, InvoiceFilter, InvoiceQuery, NewAuditEntry, NewInvoice, NewPolicy,
    NewRole, NewTransaction, NewVendor, Policy, ProfileUpdate, Role, Setting, Transaction, TransactionFilter,
    TransactionQuery, User, UserUpdate, Vendor, VendorFilter, VendorQuery,
};
use crate::error::{Entity, RuleBroken};
use crate::idempotency::{ClaimOutcome, IdempotencyClaim, IdempotencyKey, IdempotencyTicket};
use crate::ids::{InvoiceId, PermissionId, PolicyId, RoleId, TransactionId, UserId, VendorId};
use crate::paging::Page;

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
    #[error("{field} is already taken")]
    Conflict {
        /// The field path whose value is taken, such as `invoiceNumber`.
        field: &'static str,
    },
    /// A referenced record (of the given kind) is missing or inactive.
    #[error("the referenced {0} is missing or inactive")]
    ParentInactive(Entity),
    /// A rule that spans rows refused the write.
    #[error("{}", .0.message())]
    Rule(RuleBroken),
    /// The backend cannot be reached.
    #[error("the store is unavailable")]
    Unavailable(#[source] BoxError),
    /// Anything else.
    #[error("store backend failure")]
    Backend(#[source] BoxError),
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
    /// The instant of the write; stores use it for `created_at`, `updated_at` and the audit.
    pub at: Timestamp,
    /// The reason of a delete (D16).
    pub reason: Option<String>,
    /// The values written, as a JSON object, for the audit log.
    pub changes: Option<String>,
    /// The claim this write completes (D23).
    pub idempotency: Option<IdempotencyTicket>,
}

impl WriteContext {
    /// A context for `actor` at `at`, with nothing else.
    pub fn new(actor: Option<UserId>, at: Timestamp) -> Self {
        Self { actor, at, reason: None, changes: None, idempotency: None }
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
    /// Tokens issued in or before this second are revoked (see [`SessionState`]).
    pub tokens_revoked_at: Timestamp,
}

/// What each authenticated request checks about its user (D20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionState {
    /// False once the user is deleted.
    pub is_active: bool,
    /// The last password change or delete: tokens issued in or before this second no longer
    /// work. A new user starts at the Unix epoch (nothing revoked).
    pub tokens_revoked_at: Timestamp,
}

/// Whether a login attempt may proceed (D21).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoginGate {
    /// The attempt was counted and may go ahead.
    Allowed,
    /// Too many failures: no attempt until `until`.
    Throttled {
        /// When the window ends.
        until: Timestamp,
    },
}

/// Storage for the engine. See the module docs for the contract every method follows.
pub trait Store: Send + Sync + 'static {
    // Installation

    /// Succeeds when the backend answers.
    fn health(&self) -> impl Future<Output = StoreResult<()>> + Send;

    /// True once an OwnPharmacy vendor and at least one user exist.
    fn is_onboarded(&self) -> impl Future<Output = StoreResult<bool>> + Send;

    /// Creates the OwnPharmacy vendor and the first admin (role 1) atomically; fails with
    /// `Rule(AlreadyOnboarded)` when already onboarded, even under concurrent calls.
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

    /// The facts each request checks about its user (D20).
    fn session_state(&self, user_id: UserId) -> impl Future<Output = StoreResult<Option<SessionState>>> + Send;

    /// The user's permissions (D19): the union of the permissions of the active policies
    /// attached to their role (when the role is active) and of the active policies attached to
    /// them directly; deduplicated and ordered by id.
    fn resolve_permissions(&self, user_id: UserId) -> impl Future<Output = StoreResult<Vec<Permission>>> + Send;

    /// Counts a login attempt for `email_key` unless `limit` attempts were already counted in
    /// the window that started at the first of them and lasts `window` (D21). Counting and
    /// checking are one atomic step, so parallel attempts cannot pass the limit.
    fn begin_login_attempt(
        &self,
        email_key: &str,
        now: Timestamp,
        limit: u32,
        window: jiff::SignedDuration,
    ) -> impl Future<Output = StoreResult<LoginGate>> + Send;

    /// Forgets the attempts counted for `email_key` (after a successful login).
    fn clear_login_attempts(&self, email_key: &str) -> impl Future<Output = StoreResult<()>> + Send;

    /// Records an audit entry that is not part of another write (logins).
    fn append_audit(&self, entry: NewAuditEntry) -> impl Future<Output = StoreResult<()>> + Send;

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

    // Vendors

    /// Inserts a vendor; OwnPharmacy is refused with `Rule(OwnPharmacyType)`, as only onboarding
    /// makes that vendor (spec, VendorType).
    fn insert_vendor(&self, vendor: NewVendor, ctx: WriteContext) -> impl Future<Output = StoreResult<Vendor>> + Send;

    /// The vendor with its totals (D11).
    fn get_vendor(&self, id: VendorId) -> impl Future<Output = StoreResult<Option<Vendor>>> + Send;

    /// Replaces an active vendor's fields; refuses changing the type to or from OwnPharmacy
    /// with `Rule(OwnPharmacyType)` (D14).
    fn update_vendor(
        &self,
        id: VendorId,
        vendor: NewVendor,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Vendor>> + Send;

    /// Soft-deletes an active vendor; its invoices and payments are kept. Refuses the
    /// OwnPharmacy vendor with `Rule(OwnPharmacyDelete)` (D14).
    fn delete_vendor(&self, id: VendorId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a soft-deleted vendor active again (D15).
    fn restore_vendor(&self, id: VendorId, ctx: WriteContext) -> impl Future<Output = StoreResult<Vendor>> + Send;

    /// A page of vendors.
    fn list_vendors(&self, query: &VendorQuery) -> impl Future<Output = StoreResult<Page<Vendor>>> + Send;

    // Invoices

    /// Inserts an invoice for an active vendor with a number free among active invoices.
    fn insert_invoice(
        &self,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Invoice>> + Send;

    /// The invoice with its vendor.
    fn get_invoice(
        &self,
        id: InvoiceId,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Option<InvoiceDetail>>> + Send;

    /// Replaces an active invoice's fields; the paid total is kept.
    fn update_invoice(
        &self,
        id: InvoiceId,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Invoice>> + Send;

    /// Cancels (soft-deletes) an active invoice; its payments are kept.
    fn delete_invoice(&self, id: InvoiceId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a canceled invoice active again, if its vendor is active and its number is free.
    fn restore_invoice(
        &self,
        id: InvoiceId,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Invoice>> + Send;

    /// A page of invoices.
    fn list_invoices(
        &self,
        query: &InvoiceQuery,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Page<Invoice>>> + Send;

    // Transactions

    /// Records a payment on an active invoice and adds it to the invoice's paid total; refuses
    /// with `Rule(PaidTotalTooLarge)` a payment that would bring that total above
    /// [`crate::money::MAX_AMOUNT`] (the same holds for updates, restores and imports).
    fn insert_transaction(
        &self,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Transaction>> + Send;

    /// The payment with its invoice.
    fn get_transaction(&self, id: TransactionId) -> impl Future<Output = StoreResult<Option<Transaction>>> + Send;

    /// Replaces an active payment's fields, moving its amount between invoices' paid totals as
    /// needed; the target invoice must be active.
    fn update_transaction(
        &self,
        id: TransactionId,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Transaction>> + Send;

    /// Soft-deletes an active payment and takes it off its invoice's paid total.
    fn delete_transaction(&self, id: TransactionId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted payment active again, if its invoice is active, and adds it back.
    fn restore_transaction(
        &self,
        id: TransactionId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Transaction>> + Send;

    /// A page of payments.
    fn list_transactions(
        &self,
        query: &TransactionQuery,
    ) -> impl Future<Output = StoreResult<Page<Transaction>>> + Send;

    // Users

    /// Inserts a user with an active role and an email free among active users.
    fn insert_user(&self, user: NewUserRecord, ctx: WriteContext) -> impl Future<Output = StoreResult<User>> + Send;

    /// The user.
    fn get_user(&self, id: UserId) -> impl Future<Output = StoreResult<Option<User>>> + Send;

    /// Active users, by id.
    fn list_users(&self) -> impl Future<Output = StoreResult<Vec<User>>> + Send;

    /// Replaces an active user's fields; refuses moving the last active admin off the Admin
    /// role with `Rule(LastAdmin)` (D18).
    fn update_user(
        &self,
        id: UserId,
        user: UserUpdate,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<User>> + Send;

    /// Soft-deletes an active user and revokes their tokens (`tokens_revoked_at = ctx.at`);
    /// refuses the last active admin with `Rule(LastAdmin)`.
    fn delete_user(&self, id: UserId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted user active again, if their role is active and their email is free.
    fn restore_user(&self, id: UserId, ctx: WriteContext) -> impl Future<Output = StoreResult<User>> + Send;

    /// Changes an active user's own names and email (D24).
    fn update_profile(
        &self,
        id: UserId,
        profile: ProfileUpdate,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<User>> + Send;

    /// Replaces an active user's password hash and revokes their older tokens
    /// (`tokens_revoked_at = ctx.at`, D20).
    fn set_password(
        &self,
        id: UserId,
        password_hash: String,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// The active policies attached directly to an active user, by id (D19).
    fn list_user_policies(&self, user_id: UserId) -> impl Future<Output = StoreResult<Vec<Policy>>> + Send;

    /// Attaches an active policy to an active user; attaching twice is harmless.
    fn attach_user_policy(
        &self,
        user_id: UserId,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Detaches a policy from an active user; detaching what is not attached is harmless.
    fn detach_user_policy(
        &self,
        user_id: UserId,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    // Roles

    /// Inserts a non-system role with a name free among all roles.
    fn insert_role(&self, role: NewRole, ctx: WriteContext) -> impl Future<Output = StoreResult<Role>> + Send;

    /// The role.
    fn get_role(&self, id: RoleId) -> impl Future<Output = StoreResult<Option<Role>>> + Send;

    /// Every role, active and inactive, by id.
    fn list_roles(&self) -> impl Future<Output = StoreResult<Vec<Role>>> + Send;

    /// Changes an active role's name and description; a system role keeps its name
    /// (`Rule(SystemRoleRename)`).
    fn update_role(
        &self,
        id: RoleId,
        role: NewRole,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Role>> + Send;

    /// Soft-deletes an active non-system role (`Rule(SystemRoleDelete)` for system roles).
    fn delete_role(&self, id: RoleId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted role active again.
    fn restore_role(&self, id: RoleId, ctx: WriteContext) -> impl Future<Output = StoreResult<Role>> + Send;

    /// Attaches an active policy to an active role; attaching twice is harmless.
    fn attach_role_policy(
        &self,
        role_id: RoleId,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Detaches a policy from an active role; detaching what is not attached is harmless.
    fn detach_role_policy(
        &self,
        role_id: RoleId,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    // Permissions and policies

    /// Every permission, by id.
    fn list_permissions(&self) -> impl Future<Output = StoreResult<Vec<Permission>>> + Send;

    /// Inserts a policy with a name free among active policies; every permission id must exist
    /// (`ParentInactive(Permission)` otherwise).
    fn insert_policy(&self, policy: NewPolicy, ctx: WriteContext) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// The policy with its permissions.
    fn get_policy(&self, id: PolicyId) -> impl Future<Output = StoreResult<Option<Policy>>> + Send;

    /// Active policies, by id.
    fn list_policies(&self) -> impl Future<Output = StoreResult<Vec<Policy>>> + Send;

    /// Replaces an active policy's name, description and permissions.
    fn update_policy(
        &self,
        id: PolicyId,
        policy: NewPolicy,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// Soft-deletes an active policy.
    fn delete_policy(&self, id: PolicyId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted policy active again, if its name is free.
    fn restore_policy(&self, id: PolicyId, ctx: WriteContext) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// Adds an existing permission to an active policy; adding twice is harmless.
    fn add_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Removes a permission from an active policy; removing what is absent is harmless.
    fn remove_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    // Settings

    /// Every setting, by key.
    fn list_settings(&self) -> impl Future<Output = StoreResult<Vec<Setting>>> + Send;

    /// One setting.
    fn get_setting(&self, key: &str) -> impl Future<Output = StoreResult<Option<Setting>>> + Send;

    /// Changes a setting's value (`NotFound(Setting)` for an unknown key).
    fn update_setting(
        &self,
        key: &str,
        value: String,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Setting>> + Send;

    // Dashboard (D12)

    /// The summary; payments dated at or after `recent_from` count as recent.
    fn dashboard_summary(&self, recent_from: Timestamp) -> impl Future<Output = StoreResult<Summary>> + Send;

    /// Active vendors ranked by outstanding balance (desc), then name key, then id.
    fn top_vendors(&self, limit: u32) -> impl Future<Output = StoreResult<Vec<TopVendor>>> + Send;

    /// Invoices, active and canceled, newest `created_at` first (then id desc).
    fn recent_invoices(
        &self,
        limit: u32,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Invoice>>> + Send;

    /// For each half-open window `[start, end)`, the sum and count of active payments dated in it.
    fn payment_totals(
        &self,
        windows: &[(Timestamp, Timestamp)],
    ) -> impl Future<Output = StoreResult<Vec<PeriodTotal>>> + Send;

    // Audit (D22)

    /// A page of audit entries, newest first (then id desc).
    fn list_audit(&self, query: &AuditQuery) -> impl Future<Output = StoreResult<Page<AuditEntry>>> + Send;

    // Exports (D26): the list filters, in id order, read in batches after a cursor, so a report
    // of any size streams without holding the table.

    /// Up to `limit` vendors matching `filter` with ids above `after`, in id order.
    fn export_vendors(
        &self,
        filter: &VendorFilter,
        after: Option<VendorId>,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Vendor>>> + Send;

    /// Up to `limit` invoices matching `filter` with ids above `after`, in id order.
    fn export_invoices(
        &self,
        filter: &InvoiceFilter,
        today_start: Timestamp,
        after: Option<InvoiceId>,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Invoice>>> + Send;

    /// Up to `limit` payments matching `filter` with ids above `after`, in id order.
    fn export_transactions(
        &self,
        filter: &TransactionFilter,
        after: Option<TransactionId>,
        limit: u32,
    ) -> impl Future<Output = StoreResult<Vec<Transaction>>> + Send;

    // Bulk import: many records in one transaction per call, for seeding demo data and
    // migrations from other systems. No audit entries are written. Each call is atomic and
    // keeps every invariant: parents must exist (inactive parents are allowed, as history may
    // hold them), active invoice numbers stay unique, and paid totals include the active
    // payments imported.

    /// Inserts vendors; returns their ids in input order. OwnPharmacy is refused
    /// (`Rule(OwnPharmacyType)`).
    fn import_vendors(&self, vendors: Vec<ImportedVendor>) -> impl Future<Output = StoreResult<Vec<VendorId>>> + Send;

    /// Inserts invoices of existing vendors; returns their ids in input order.
    fn import_invoices(
        &self,
        invoices: Vec<ImportedInvoice>,
    ) -> impl Future<Output = StoreResult<Vec<InvoiceId>>> + Send;

    /// Inserts payments on existing invoices, adding the active ones to the paid totals;
    /// returns their ids in input order.
    fn import_transactions(
        &self,
        transactions: Vec<ImportedTransaction>,
    ) -> impl Future<Output = StoreResult<Vec<TransactionId>>> + Send;
}

/// A vendor to import, with its state and creation time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedVendor {
    /// Its fields, already validated.
    pub vendor: NewVendor,
    /// False to import it soft-deleted.
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}

/// An invoice to import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedInvoice {
    /// Its fields, already validated; the vendor must exist.
    pub invoice: NewInvoice,
    /// False to import it canceled.
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}

/// A payment to import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedTransaction {
    /// Its fields, already validated; the invoice must exist.
    pub transaction: NewTransaction,
    /// False to import it deleted (it then adds nothing to the paid total).
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}
