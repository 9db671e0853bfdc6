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
//! [`Store`] is the sum of one trait per purpose, each defined in its family's store file and
//! re-exported here, each implementable in its own file of a backend:
//! - [`SessionStore`]: health, onboarding, the token secret, credentials, session state, the
//!   failed-login window and idempotency claims.
//! - [`VendorStore`], [`InvoiceStore`], [`TransactionStore`] and [`VendorPaymentStore`]: the
//!   ledger; [`CreditStore`]: vendor credits (D44).
//! - [`AccessStore`]: users, roles, policies, permissions and the profile.
//! - [`ReportStore`]: settings, dashboard figures, the audit log and exports.
//! - [`FileImportStore`]: the rows of imported files (D45).
//! - [`BankStatementStore`]: bank statements, their lines and matches (D46).
//! - [`EventStore`]: the event feed (D47); every write of the ledger records its events beside
//!   its audit entry, from [`WriteContext::announcements`].
//! - [`WebhookStore`]: webhooks and the queue of their deliveries (D47).
//! - [`BranchStore`]: the chain's branches (D49).
//!
//! `bulk_loads.rs` holds [`BulkLoadStore`], the bulk loads; it is not part of [`Store`].
//! `context.rs` holds the [`WriteContext`] every write carries; the contract's error and unique
//! keys are [`crate::base::faults`]'.
//!
//! # Contract shared by every method
//! - Reads by id (`get_*`) return the record whatever its `is_active`; the engine decides
//!   whether a soft-deleted record is visible.
//! - Updates and deletes of a missing *or soft-deleted* record fail with
//!   [`StoreError::NotFound`]; a restore of a missing or *active* record does too (D15).
//! - A referenced parent that is missing or inactive fails with [`StoreError::ParentInactive`];
//!   a restore whose parent is inactive is refused by [`crate::base::restore`] instead (D15).
//! - A taken unique value fails with [`StoreError::Conflict`] naming its [`UniqueKey`] (D4, D5).
//! - Every write records one audit entry (D22) from its [`WriteContext`] in the same
//!   transaction, and completes the context's idempotency ticket there too (D23).
//! - A write that gives access (a role to a user, permissions to a policy, a policy to a user
//!   or a role) loads what it gives and checks it with [`crate::access::grants::check`] against the
//!   context's [`Authority`] once its records are found, before any other rule (D38).
//! - A write that may take access away from users (a role change, a policy detached, a
//!   permission removed, a policy or role deleted) revokes the tokens of every user it may
//!   affect with [`crate::sessions::rules::revoke`] under those users' row locks (D39).
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

mod bulk_loads;
mod context;

pub use bulk_loads::{BulkCredit, BulkInvoice, BulkLoadStore, BulkTransaction, BulkVendor};
pub use context::WriteContext;

pub use crate::access::store::{AccessStore, PolicyHolder};
pub use crate::access::user::NewUserRecord;
pub use crate::bank::store::BankStatementStore;
pub use crate::base::faults::{BoxError, StoreError, StoreResult, UniqueKey};
pub use crate::branches::store::BranchStore;
pub use crate::credits::store::CreditStore;
pub use crate::events::store::EventStore;
pub use crate::imports::store::FileImportStore;
pub use crate::invoices::store::InvoiceStore;
pub use crate::reports::store::ReportStore;
pub use crate::sessions::SignIn;
pub use crate::sessions::store::{Credentials, LoginOutcome, SessionState, SessionStore};
pub use crate::transactions::store::TransactionStore;
pub use crate::vendor_payments::store::VendorPaymentStore;
pub use crate::vendors::store::VendorStore;
pub use crate::webhooks::store::WebhookStore;

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
    + BranchStore
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
        + BranchStore
{
}
