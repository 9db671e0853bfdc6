//! The contract's traits, one per purpose, each implementable in its own file of a backend:
//! [`SessionStore`], [`VendorStore`], [`InvoiceStore`], [`TransactionStore`], [`AccessStore`],
//! [`ReportStore`], and [`BulkLoadStore`] for bulk loads outside [`Store`](super::Store).
//!
//! - Sessions: what a request needs before it reaches a resource: whether the store answers
//!   and is onboarded, the token secret, a user's credentials and session state, the
//!   failed-login window (D21, D40) and idempotency claims (D23). The decisions are
//!   [`crate::rules::installation`]'s, [`crate::rules::login`]'s, [`crate::rules::sessions`]'
//!   and [`crate::rules::idempotency`]'s.
//! - The ledger: vendors, their invoices and the payments against them. Every invoice keeps the
//!   exact sum of its active payments (D10), changed in the transaction of each payment write;
//!   which invoice may take a payment and how far its paid total may go is
//!   [`crate::rules::ledger`]'s to say, the pharmacy's own vendor record is
//!   [`crate::rules::vendors`]', and restores under an inactive parent are refused by
//!   [`crate::rules::restore`].
//! - Access: users and their roles, policies and the permissions they hold (D19), with the
//!   caller's own profile and password. A write that gives access is checked by
//!   [`crate::rules::grants`] (D38); one that may take access away revokes tokens as
//!   [`crate::rules::sessions`] says (D39); the last admin, deleting oneself and the system
//!   roles are [`crate::rules::people`]'.
//! - Reports: settings (D3), dashboard figures (D12), the audit log (D22) and the batches
//!   reports stream from (D26).
//! - Imports: many records in one transaction per call, for seeding demo data and migrations
//!   from other systems; the engine never imports, and only the demo generator, the benchmarks
//!   and the conformance case of imports use them. No audit entries are written. Each call is
//!   atomic and keeps every invariant: parents must exist (inactive parents are allowed, as
//!   history may hold them), no vendor is OwnPharmacy, active invoice numbers stay unique, and
//!   paid totals include the active payments imported, within their bound.

use std::future::Future;

use jiff::Timestamp;
use jiff::civil::Date;

use super::{Credentials, LoginOutcome, NewUserRecord, PolicyHolder, SessionState, SignIn, StoreResult, WriteContext};
use crate::access::Permission;
use crate::auth::Secret;
use crate::clock::BusinessCalendar;
use crate::dashboard::SummaryFigures;
use crate::dashboard::{CreditSummary, TopVendor};
use crate::domain::aging::{Aging, AgingBounds};
use crate::domain::licence::LicenceHolder;
use crate::domain::statement::{StatementFigures, StatementRows};
use crate::domain::{
    AuditEntry, AuditQuery, CreditDecision, CreditQuery, Invoice, InvoiceDetail, InvoiceFilter, InvoiceQuery,
    NewAuditEntry, NewCreditApplication, NewInvoice, NewPolicy, NewRole, NewTransaction, NewVendor, NewVendorCredit,
    NewVendorPayment, Policy, ProfileUpdate, Role, Setting, Transaction, TransactionFilter, TransactionQuery, User,
    UserUpdate, Vendor, VendorCredit, VendorFilter, VendorPayment, VendorQuery,
};
use crate::figures::{DayFigures, OpenFigures};
use crate::idempotency::{ClaimOutcome, IdempotencyClaim, IdempotencyKey};
use crate::ids::{
    CreditApplicationId, InvoiceId, PermissionId, PolicyId, RoleId, TransactionId, UserId, VendorCreditId, VendorId,
    VendorPaymentId,
};
use crate::paging::{Page, PagePlace, PageRequest};
use crate::rules::login::{Failure, LoginAttempts};

/// Storage for the installation, sign-ins and idempotency claims.
pub trait SessionStore: Send + Sync + 'static {
    // Installation

    /// Succeeds when the backend answers.
    fn health(&self) -> impl Future<Output = StoreResult<()>> + Send;

    /// True once an OwnPharmacy vendor and at least one user exist.
    fn is_onboarded(&self) -> impl Future<Output = StoreResult<bool>> + Send;

    /// Creates the OwnPharmacy vendor and the first admin (role 1) atomically; fails with
    /// `Rule(AlreadyOnboarded)` when already onboarded, even under concurrent calls. The admin's
    /// token state records a token issued at `ctx.at` (see [`crate::rules::sessions::issue`]).
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
    /// [`crate::rules::login::account_key`]) at `now` as [`crate::rules::login::fail`] decides,
    /// under the attempts row's lock: when counted, writes the attempts, records `audit` if any
    /// and purges rows whose window closed before [`crate::rules::login::purge_before`]; when
    /// refused, writes nothing. Answers the decision.
    fn record_login_failure(
        &self,
        email_key: &str,
        now: Timestamp,
        audit: Option<NewAuditEntry>,
    ) -> impl Future<Output = StoreResult<Failure>> + Send;

    /// Records `audit` and marks the window noted when [`crate::rules::login::note_throttling`] says
    /// a note is due, under the attempts row's lock; otherwise writes nothing (D40).
    fn note_login_throttled(
        &self,
        email_key: &str,
        now: Timestamp,
        audit: NewAuditEntry,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Signs in an active user whose password was verified, in one transaction: unless
    /// [`crate::rules::login::gate_both`] now refuses `email_key` or the user's account key
    /// ([`crate::rules::login::account_key`], D48; then nothing is written), forgets the failures
    /// of both, issues a token second with [`crate::rules::sessions::issue`] under the user's row
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

/// Storage for vendors.
pub trait VendorStore: Send + Sync + 'static {
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
}

/// Storage for invoices.
pub trait InvoiceStore: Send + Sync + 'static {
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

    /// Makes a canceled invoice active again, if its vendor is active
    /// (`Rule(ParentInactive(Vendor))` otherwise) and its number is free.
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
}

/// Storage for payments (the spec's transactions). A payment's reference is checked by
/// [`crate::rules::references::check`] on every write that makes it active or changes it (D30).
pub trait TransactionStore: Send + Sync + 'static {
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

    /// Makes a deleted payment active again, if its invoice is active
    /// (`Rule(ParentInactive(Invoice))` otherwise), and adds it back within the paid total's
    /// bound.
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
}

/// Storage for vendor payments: one payment over several invoices (D31).
pub trait VendorPaymentStore: Send + Sync + 'static {
    /// Records `payment` to the vendor `vendor_id` in one transaction: `NotFound(Vendor)` unless
    /// the vendor is active; the reference checked by [`crate::rules::references::check`]; the
    /// invoices it may pay (those its allocations name, or else the vendor's active invoices
    /// still owing) locked and split by [`crate::rules::allocation::allocate`]; then one payment
    /// per allocation, carrying the vendor payment's id, date, type, reference and description,
    /// each added to its invoice's paid total, with the kept figures (D41), the audit entry and
    /// the idempotency claim of `ctx`. A refusal writes nothing.
    fn insert_vendor_payment(
        &self,
        vendor_id: VendorId,
        payment: NewVendorPayment,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorPayment>> + Send;

    /// The vendor payment with its active payments, by id.
    fn get_vendor_payment(
        &self,
        id: VendorPaymentId,
    ) -> impl Future<Output = StoreResult<Option<VendorPayment>>> + Send;

    /// Soft-deletes every active payment of the vendor payment in one transaction, each taken
    /// off its invoice's paid total; `NotFound(VendorPayment)` when none is active.
    fn delete_vendor_payment(
        &self,
        id: VendorPaymentId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;
}

/// Storage for vendor credits (D44): claims on distributors, their decisions, and (with the
/// credits' applications) what is set against the vendor's bills.
///
/// A credit's number is unique per vendor among its active credits (`Conflict(CreditNumber)`);
/// its vendor must be active when it is created, replaced or restored; the invoice a claim names
/// is checked by [`crate::rules::credits::check_against`], a replacement by
/// [`crate::rules::credits::check_update`] and a decision by
/// [`crate::rules::credits::check_decision`], each over the credit as it stands under its lock.
pub trait CreditStore: Send + Sync + 'static {
    /// Records a claim: `ParentInactive(Vendor)` unless its vendor is active, then the invoice it
    /// names, then its number.
    fn insert_credit(
        &self,
        credit: NewVendorCredit,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorCredit>> + Send;

    /// The credit with its active applications, oldest first, by id, active or not.
    fn get_credit(&self, id: VendorCreditId) -> impl Future<Output = StoreResult<Option<VendorCredit>>> + Send;

    /// Replaces an active credit's claim (D14): `NotFound(VendorCredit)` unless it is active, then
    /// as [`CreditStore::insert_credit`], then [`crate::rules::credits::check_update`]. Its
    /// decision and applications stay.
    fn update_credit(
        &self,
        id: VendorCreditId,
        credit: NewVendorCredit,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorCredit>> + Send;

    /// Records the distributor's decision on an active credit: `NotFound(VendorCredit)` unless
    /// it is active, then [`crate::rules::credits::check_decision`].
    fn decide_credit(
        &self,
        id: VendorCreditId,
        decision: CreditDecision,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorCredit>> + Send;

    /// Soft-deletes an active credit and its active applications in one transaction.
    fn delete_credit(&self, id: VendorCreditId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a soft-deleted credit active again, without its applications (D15, D44): the
    /// vendor must be active ([`crate::rules::restore`]) and the number free.
    fn restore_credit(
        &self,
        id: VendorCreditId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorCredit>> + Send;

    /// A page of credits, newest claim first, then id descending; without applications.
    fn list_credits(&self, query: &CreditQuery) -> impl Future<Output = StoreResult<Page<VendorCredit>>> + Send;

    /// Sets an active credit against its vendor's bills in one transaction (D44):
    /// `NotFound(VendorCredit)` unless it is active; the invoices it may credit (those the
    /// allocations name, or else the vendor's active invoices) locked as a vendor payment locks
    /// them (D31), then the credit; [`crate::rules::credits::plan_application`] decides, at
    /// `ctx.at` when the request gives no date; then one application per allocation, each added
    /// to its invoice's credited total and all to the credit's applied total, with the kept
    /// figures (D41), the audit entry and the idempotency claim of `ctx` (its id is the
    /// credit's). A refusal writes nothing. Answers the credit with its applications.
    fn apply_credit(
        &self,
        id: VendorCreditId,
        application: NewCreditApplication,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorCredit>> + Send;

    /// Undoes one active application of an active credit: `NotFound(CreditApplication)` unless
    /// both are active and the application is the credit's; its amount comes off the invoice's
    /// credited total and the credit's applied total.
    fn undo_application(
        &self,
        credit: VendorCreditId,
        application: CreditApplicationId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// The payables dashboard's credit cards (D44), from the kept figures (D41) and the oldest
    /// undecided claim.
    fn credit_summary(&self) -> impl Future<Output = StoreResult<CreditSummary>> + Send;
}

/// Storage for users, roles, policies and permissions.
pub trait AccessStore: Send + Sync + 'static {
    /// The user's permissions (D19): the union of the permissions of the active policies
    /// attached to their role (when the role is active) and of the active policies attached to
    /// them directly; deduplicated and ordered by id.
    fn resolve_permissions(&self, user_id: UserId) -> impl Future<Output = StoreResult<Vec<Permission>>> + Send;

    // Users

    /// Inserts a user with an active role and an email free among active users; the role is a
    /// grant checked against `ctx.authority` (D38).
    fn insert_user(&self, user: NewUserRecord, ctx: WriteContext) -> impl Future<Output = StoreResult<User>> + Send;

    /// The user.
    fn get_user(&self, id: UserId) -> impl Future<Output = StoreResult<Option<User>>> + Send;

    /// Active users, by id.
    fn list_users(&self) -> impl Future<Output = StoreResult<Vec<User>>> + Send;

    /// Replaces an active user's fields; refuses moving the last active admin off the Admin
    /// role with `Rule(LastAdmin)` (D18). A role change is a grant checked against
    /// `ctx.authority` before that (D38), and revokes the user's tokens (D39).
    fn update_user(
        &self,
        id: UserId,
        user: UserUpdate,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<User>> + Send;

    /// Soft-deletes an active user and revokes their tokens; refuses the context's own actor
    /// with `Rule(DeleteSelf)` and the last active admin with `Rule(LastAdmin)` (D18).
    fn delete_user(&self, id: UserId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted user active again, if their role is active (`Rule(ParentInactive(Role))`
    /// otherwise) and their email is free; the role is a grant checked against `ctx.authority`
    /// (D38).
    fn restore_user(&self, id: UserId, ctx: WriteContext) -> impl Future<Output = StoreResult<User>> + Send;

    /// Changes an active user's own names and email (D24).
    fn update_profile(
        &self,
        id: UserId,
        profile: ProfileUpdate,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<User>> + Send;

    /// Replaces an active user's password hash, revokes their older tokens (D20) and signs
    /// them in afresh, all at `ctx.at` in one transaction.
    fn set_password(
        &self,
        id: UserId,
        password_hash: String,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<SignIn>> + Send;

    /// The active policies attached directly to an active user, by id (D19).
    fn list_user_policies(&self, user_id: UserId) -> impl Future<Output = StoreResult<Vec<Policy>>> + Send;

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

    /// Soft-deletes an active non-system role (`Rule(SystemRoleDelete)` for system roles),
    /// revoking the tokens of its users (D39).
    fn delete_role(&self, id: RoleId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted role active again; what its active policies hold is a grant checked
    /// against `ctx.authority` (D38).
    fn restore_role(&self, id: RoleId, ctx: WriteContext) -> impl Future<Output = StoreResult<Role>> + Send;

    // Policies attached to users and roles

    /// Attaches an active policy to an active user or role; attaching twice is harmless. The
    /// policy's permissions are a grant checked against `ctx.authority` (D38).
    fn attach_policy(
        &self,
        holder: PolicyHolder,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Detaches a policy from an active user or role, revoking the tokens of the user or of the
    /// role's users (D39); detaching what is not attached is harmless and revokes nothing.
    fn detach_policy(
        &self,
        holder: PolicyHolder,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    // Permissions and policies

    /// Every permission, by id.
    fn list_permissions(&self) -> impl Future<Output = StoreResult<Vec<Permission>>> + Send;

    /// Inserts a policy with a name free among active policies; every permission id must exist
    /// (`ParentInactive(Permission)` otherwise), and the permissions are a grant checked
    /// against `ctx.authority` (D38).
    fn insert_policy(&self, policy: NewPolicy, ctx: WriteContext) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// The policy with its permissions.
    fn get_policy(&self, id: PolicyId) -> impl Future<Output = StoreResult<Option<Policy>>> + Send;

    /// Active policies, by id.
    fn list_policies(&self) -> impl Future<Output = StoreResult<Vec<Policy>>> + Send;

    /// Replaces an active policy's name, description and permissions. The permissions as they
    /// stand after the write are a grant checked against `ctx.authority` (D38); removing any
    /// revokes the tokens of the policy's users, directly or through a role (D39).
    fn update_policy(
        &self,
        id: PolicyId,
        policy: NewPolicy,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// Soft-deletes an active policy, revoking the tokens of its users, directly or through a
    /// role (D39).
    fn delete_policy(&self, id: PolicyId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted policy active again, if its name is free; its permissions are a grant
    /// checked against `ctx.authority` (D38).
    fn restore_policy(&self, id: PolicyId, ctx: WriteContext) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// Adds an existing permission to an active policy; adding twice is harmless. The policy's
    /// permissions after the write are a grant checked against `ctx.authority` (D38).
    fn add_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Removes a permission from an active policy, revoking the tokens of its users, directly
    /// or through a role (D39); removing what is absent is harmless and revokes nothing.
    fn remove_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;
}

/// Storage for settings, dashboard figures, the audit log and exports.
pub trait ReportStore: Send + Sync + 'static {
    // Settings

    /// Every setting, by key.
    fn list_settings(&self) -> impl Future<Output = StoreResult<Vec<Setting>>> + Send;

    /// One setting.
    fn get_setting(&self, key: &str) -> impl Future<Output = StoreResult<Option<Setting>>> + Send;

    /// Changes a setting's value (`NotFound(Setting)` for an unknown key). With `days`, the
    /// business calendar of a new `TimeZone`, every figure kept per business day is recomputed
    /// in that calendar's days in the same transaction (D41).
    fn update_setting(
        &self,
        key: &str,
        value: String,
        ctx: WriteContext,
        days: Option<&BusinessCalendar>,
    ) -> impl Future<Output = StoreResult<Setting>> + Send;

    // Dashboard (D12), from kept figures (D41)

    /// The installation's totals and the sum of the day figures from `first_recent_day` on,
    /// read together.
    fn dashboard_figures(&self, first_recent_day: Date) -> impl Future<Output = StoreResult<SummaryFigures>> + Send;

    /// Active vendors ranked by outstanding balance (desc), then name key, then id.
    fn top_vendors(&self, limit: u32) -> impl Future<Output = StoreResult<Vec<TopVendor>>> + Send;

    /// Invoices, active and canceled, newest `created_at` first (then id desc).
    fn recent_invoices(
        &self,
        limit: u32,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Vec<Invoice>>> + Send;

    /// For each half-open window `[from, before)` of due dates, the open invoices (active, still
    /// owing something) due in it, from the figures kept per due date (D32).
    fn open_invoices_due(
        &self,
        windows: &[(Timestamp, Timestamp)],
    ) -> impl Future<Output = StoreResult<Vec<OpenFigures>>> + Send;

    /// The kept figures of the business days from `first` to `last`, both included, by day;
    /// days without active payments may be left out.
    fn day_figures(&self, first: Date, last: Date)
    -> impl Future<Output = StoreResult<Vec<(Date, DayFigures)>>> + Send;

    // Reconciliation (D34-D36)

    /// The aging of `bounds.as_of` (D34): over the active invoices dated before
    /// `bounds.counts_before` (of `vendor_id` alone, if given), what each still owed then, its
    /// amount less its active payments dated before that instant, added up by vendor and by the
    /// bucket [`AgingBounds::bucket`] gives its due date, positive remainders only; answered as
    /// [`AgingBuilder::finish`] orders it.
    ///
    /// [`AgingBuilder::finish`]: crate::domain::aging::AgingBuilder::finish
    fn aging(
        &self,
        bounds: &AgingBounds,
        vendor_id: Option<VendorId>,
    ) -> impl Future<Output = StoreResult<Aging>> + Send;

    /// One page of today's aging (D34, D43), `bounds` being today's, as [`aging`](Self::aging)
    /// with no vendor would answer it cut to `page`, with the totals of the whole: from the kept
    /// figures (D41), through [`TodaysAgingPage`], in one snapshot.
    ///
    /// [`TodaysAgingPage`]: crate::domain::aging::TodaysAgingPage
    fn todays_aging_page(
        &self,
        bounds: &AgingBounds,
        page: PageRequest,
    ) -> impl Future<Output = StoreResult<Aging>> + Send;

    /// The rows of a statement of vendor `vendor_id` (D35) over the instants `[from, before)`:
    /// what was invoiced and paid before `from`, and the vendor's active invoices dated in the
    /// range with the active payments of its active invoices dated in the range, each entry's
    /// business day read in `calendar`.
    fn statement_rows(
        &self,
        vendor_id: VendorId,
        from: Timestamp,
        before: Timestamp,
        calendar: &BusinessCalendar,
    ) -> impl Future<Output = StoreResult<StatementRows>> + Send;

    /// One page of vendor `vendor_id`'s statement (D35, D43) over the business days
    /// `from_date` to `to_date` of `calendar`, as [`statement_rows`](Self::statement_rows) and
    /// [`statement::build`] would answer it cut to `page`, with the opening, totals and closing
    /// of the whole range: from the kept figures (D41), through [`StatementPage`], in one
    /// snapshot.
    ///
    /// [`statement::build`]: crate::domain::statement::build
    /// [`StatementPage`]: crate::domain::statement::StatementPage
    fn statement_page(
        &self,
        vendor_id: VendorId,
        range: (Date, Date),
        calendar: &BusinessCalendar,
        page: PageRequest,
    ) -> impl Future<Output = StoreResult<(StatementFigures, PagePlace)>> + Send;

    /// Active vendors whose drug licence is valid until an instant before `before` (D36), in
    /// any order: the engine puts them in the alerts' order.
    fn licence_alerts(&self, before: Timestamp) -> impl Future<Output = StoreResult<Vec<LicenceHolder>>> + Send;

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
}

/// Bulk loads of vendors, invoices, payments and credits (a demo, a move from another system):
/// records with their ids and times as they were, written without audit entries.
pub trait BulkLoadStore: Send + Sync + 'static {
    /// Inserts vendors; returns their ids in input order. OwnPharmacy is refused
    /// (`Rule(OwnPharmacyType)`).
    fn load_vendors(&self, vendors: Vec<BulkVendor>) -> impl Future<Output = StoreResult<Vec<VendorId>>> + Send;

    /// Inserts invoices of existing vendors; returns their ids in input order.
    fn load_invoices(&self, invoices: Vec<BulkInvoice>) -> impl Future<Output = StoreResult<Vec<InvoiceId>>> + Send;

    /// Inserts payments on existing invoices, adding the active ones to the paid totals;
    /// returns their ids in input order.
    fn load_transactions(
        &self,
        transactions: Vec<BulkTransaction>,
    ) -> impl Future<Output = StoreResult<Vec<TransactionId>>> + Send;

    /// Inserts vendor credits (D44) with their decisions and applications; returns their ids in
    /// input order. The vendor must exist (active or not); an active credit's number must be free
    /// among its vendor's active credits and the batch's (`Conflict(CreditNumber)`); a decision
    /// is judged by [`crate::rules::credits::check_decision`] and applications, made only of an
    /// active credit, by [`crate::rules::credits::plan_application`] over their invoices as the
    /// batch leaves them, each added to its invoice's credited total.
    fn load_credits(&self, credits: Vec<BulkCredit>) -> impl Future<Output = StoreResult<Vec<VendorCreditId>>> + Send;

    /// Readies the store for a long run of loads (a demo load, a move from another system):
    /// a store may set aside the indexes and search upkeep the loads do not read, so each
    /// batch writes little more than its rows, until [`BulkLoadStore::finish_bulk_load`] builds
    /// them again in one pass. Everything stays correct meanwhile; lists and searches may be
    /// slow. A store that stops before the finish builds them when it next opens. The default
    /// does nothing.
    fn begin_bulk_load(&self) -> impl Future<Output = StoreResult<()>> + Send {
        std::future::ready(Ok(()))
    }

    /// Builds whatever [`BulkLoadStore::begin_bulk_load`] set aside; nothing to do otherwise.
    /// The default does nothing.
    fn finish_bulk_load(&self) -> impl Future<Output = StoreResult<()>> + Send {
        std::future::ready(Ok(()))
    }
}

/// A vendor to import, with its state and creation time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkVendor {
    /// Its fields, already validated.
    pub vendor: NewVendor,
    /// False to import it soft-deleted.
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}

/// An invoice to import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkInvoice {
    /// Its fields, already validated; the vendor must exist.
    pub invoice: NewInvoice,
    /// False to import it canceled.
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}

/// A vendor credit to import (D44).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkCredit {
    /// Its claim, already validated; the vendor must exist.
    pub credit: NewVendorCredit,
    /// The distributor's decision, if it was made.
    pub decision: Option<CreditDecision>,
    /// What was set against bills, with explicit allocations and a date, if anything was.
    pub application: Option<NewCreditApplication>,
    /// False to import it soft-deleted (without applications).
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}

/// A payment to import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkTransaction {
    /// Its fields, already validated; the invoice must exist.
    pub transaction: NewTransaction,
    /// False to import it deleted (it then adds nothing to the paid total).
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}
