//! The engine: one documented method per use case of the API.
//!
//! [`PharmaPay`] owns the rules: who may call what, what input is valid, what "today" is, how
//! computed figures are derived. It delegates every read and every atomic write to its
//! [`Store`], and never reads, decides and writes across two store calls where rows could
//! change in between: such invariants are the store's to keep, decided by [`crate::rules`]
//! (see [`crate::store`]).
//!
//! Methods that act for a caller take the [`Principal`] that [`PharmaPay::authenticate`]
//! returned for their token. Each method checks the caller's permission first, so an
//! unauthorised caller learns nothing about the records (403 before 404).
//!
//! # Layout
//! `pharmapay.rs` holds [`PharmaPay`] itself: opening it, the clock and the business calendar, the
//! write contexts, how store errors become [`Error`]s, signing sessions and idempotent creates
//! (D23). The use cases sit in one file per family, as the store's contract is split:
//! `sessions.rs` (health, onboarding, sign-in, authentication), `ledger.rs` (vendors,
//! invoices, payments, vendor payments), `credits.rs` (vendor credits, D44),
//! `reconciliation.rs` (the aging, vendor statements and licence alerts, D34-D36), `imports.rs`
//! (imported files, D45), `bank.rs` (bank statements and their lines, D46), `events.rs` (the
//! event feed, D47), `webhooks.rs` (webhooks and their deliveries, D47), `access.rs` (users,
//! the caller's profile, roles, permissions, policies) and `reports.rs` (settings, dashboard
//! figures, the audit log). The Excel reports' use cases are [`crate::report`]'s.

mod access;
mod bank;
mod credits;
mod events;
mod imports;
mod ledger;
mod pharmapay;
mod reconciliation;
mod reports;
mod sessions;
mod webhooks;

pub use bank::StatementUpload;
pub use imports::{ImportProgress, ImportRequest, ImportStage};
pub use reconciliation::LicenceAlert;
pub use sessions::{AdminAccount, Onboarding, PharmacyDetails};

pub use pharmapay::*;
