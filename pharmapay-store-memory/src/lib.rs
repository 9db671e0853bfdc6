//! An in-memory store for pharmapay: for embedding, tests and benchmarks.
//!
//! All data sits in ordered maps behind one [`RwLock`]. Every store method takes the lock once,
//! loads what a rule of [`pharmapay_core::rules`] needs, asks it and applies the change before
//! letting go, so each method is atomic and the cross-row invariants of the
//! [`Store`](pharmapay_core::Store) contract hold under any concurrency. The lock is a plain
//! `std` lock held only for in-memory work, never across an `.await`, so it cannot stall the
//! async runtime; reads share it.
//!
//! Each invoice keeps the running sum of its active payments (`paid`), and the store keeps the
//! figures of D41 per vendor, due date, business day and installation (`figures.rs`), all
//! updated under the same lock as every write that changes them, so reading a vendor or the
//! dashboard never sums rows. Lists scan and sort in memory; they cost time in proportion to
//! the table, which is fine for the sizes an embedded store holds.
//!
//! Nothing is persisted: the data lives as long as the [`MemoryStore`] (clones share it).
//!
//! # Layout
//! `state.rs` holds [`MemoryStore`], its state, the seed data (D27) and the audit and
//! idempotency bookkeeping every write ends with; `rows.rs` every record as the store keeps it;
//! `figures.rs` keeps the figures. Each purpose of the contract has its own file:
//! `sessions.rs` ([`SessionStore`](pharmapay_core::store::SessionStore)), `vendors.rs`,
//! `invoices.rs` and `transactions.rs` (the ledger, a resource each, as in the SQL store),
//! `access.rs`
//! ([`AccessStore`](pharmapay_core::store::AccessStore)), `reports.rs`
//! ([`ReportStore`](pharmapay_core::store::ReportStore)), `vendor_payments.rs`
//! ([`VendorPaymentStore`](pharmapay_core::store::VendorPaymentStore)), `credits.rs`
//! ([`CreditStore`](pharmapay_core::store::CreditStore)), `bank.rs`
//! ([`BankStatementStore`](pharmapay_core::store::BankStatementStore)), `events.rs` (the feed,
//! D47), `webhooks.rs` (webhooks and their deliveries, D47), `branches.rs` (the chain's branches,
//! D49), `imports.rs` (imported files, D45,
//! [`FileImportStore`](pharmapay_core::FileImportStore)) and `bulk_loads.rs`
//! ([`BulkLoadStore`](pharmapay_core::BulkLoadStore)).

mod access;
mod bank;
mod branches;
mod bulk_loads;
mod credits;
mod events;
mod figures;
mod imports;
mod invoices;
mod reports;
mod rows;
mod sessions;
mod state;
mod transactions;
mod vendor_payments;
mod vendors;
mod webhooks;

pub(crate) use rows::*;
pub use state::*;
