//! pharmapay-core: the accounts-payable engine of a pharmacy.
//!
//! A pharmacy owes its vendors money: it records their invoices and the partial payments made
//! against each one, and wants exact balances, statuses and dashboards, with role-based access.
//! This crate is that whole domain as a library, with no HTTP and no SQL: a [`PharmaPay`]
//! engine over any [`Store`].
//!
//! ```no_run
//! # async fn demo<S: pharmapay_core::Store>(store: S) -> Result<(), Box<dyn std::error::Error>> {
//! use pharmapay_core::{EngineOptions, PharmaPay, SystemClock};
//! let engine = PharmaPay::open(store, SystemClock, EngineOptions::default()).await?;
//! let session = engine.login("admin@example.com", "correct horse").await?;
//! let caller = engine.authenticate(&session.token.token).await?;
//! let summary = engine.dashboard_summary(&caller).await?;
//! println!("total due: {}", summary.total_due);
//! # Ok(()) }
//! ```
//!
//! # Layout
//! One folder per resource family, each holding the family's records, inputs and queries (in the
//! folder's module file), its rules (pure functions over the facts a store loaded under its lock: core
//! decides, stores keep), its [`PharmaPay`] methods (permission first, then one store call)
//! and its store trait, each in a file of that name inside the folder:
//! - [`vendors`]: vendors, their GSTIN and drug licence (D11, D14, D36).
//! - [`invoices`]: invoices and their statuses (D4, D5, D10), refused from expired licences
//!   when the pharmacy says so (D36).
//! - [`transactions`]: payments, their references (D30) and the invoices' paid totals (D1,
//!   D10).
//! - [`vendor_payments`]: one payment split over several invoices (D31).
//! - [`credits`]: vendor credits, their decisions and applications (D44).
//! - [`access`]: permissions, the authenticated [`Principal`], users, roles and policies, and
//!   the grants nobody may exceed (D18, D19, D38).
//! - [`sessions`]: onboarding, sign-ins, tokens and the failed-login window (D20, D21, D39,
//!   D40).
//! - [`imports`]: reading CSV and xlsx files of vendors and invoices, and what their rows
//!   create (D45, D51).
//! - [`bank`]: bank statements, read from the banks' files and matched to payments (D46).
//! - [`events`]: what a write announces, rendered in the write's own transaction (D47);
//!   [`webhooks`]: who follows the events and the queue of their deliveries (D47).
//! - [`branches`]: the chain's branches, the head office first (D49).
//! - [`reports`]: settings (D3), the dashboard (D12), the audit log (D22), the aging and vendor
//!   statements (D34, D35) and the Excel reports (D26).
//!
//! Beside them:
//! - [`base`]: the layer everything shares and that imports nothing above it: [`money`], exact
//!   amounts (D1); [`clock`], the injected clock and the business calendar (D2, D3); [`text`],
//!   bounded text, emails and passwords; [`ids`]; [`paging`]; and the field errors, store
//!   errors, unique keys and permission vocabulary the other modules speak.
//! - [`engine`]: [`PharmaPay`] itself: opening it, its clock, calendar and write contexts.
//! - [`store`]: the [`Store`] supertrait listing every family's store trait once, the
//!   [`WriteContext`](store::WriteContext) each write carries, and [`BulkLoadStore`] for bulk
//!   loads; backends live in other crates.
//! - [`error`]: the one [`Error`] enum every method returns; [`auth`]: Argon2id and JWT.
//! - [`figures`]: the running totals stores keep beside their rows in each write's own
//!   transaction (D41), and what each row contributes to them.
//! - [`idempotency`]: idempotent creates (D23); [`seed`]: the initial data (D27);
//!   [`background`]: long processor work on threads of lower priority (D48).
//! - [`conformance`] (feature `conformance`): the behavioural suite every store must pass, one
//!   file of cases per family, and the hostile files uploads are tested with (D51).
//!
//! Decision ids (D1..D51) refer to the project's contract decisions; the comments that cite
//! them explain why a rule is as it is.

pub mod access;
pub mod auth;
pub mod background;
pub mod bank;
pub mod base;
pub mod branches;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod credits;
pub mod engine;
pub mod error;
pub mod events;
pub mod figures;
pub mod idempotency;
pub mod imports;
pub mod invoices;
pub mod reports;
pub mod seed;
pub mod sessions;
pub mod store;
pub mod transactions;
pub mod vendor_payments;
pub mod vendors;
pub mod webhooks;

pub use base::{clock, ids, money, paging, text};

pub use access::{Access, Action, Authority, Collection, Permission, Principal};
pub use clock::{BusinessCalendar, Clock, ManualClock, SystemClock};
pub use engine::{EngineOptions, PharmaPay, Session};
pub use error::{Entity, Error, FieldErrors, Result, RuleBroken};
pub use money::Amount;
pub use paging::{Page, PageRequest, Params, Sort, SortDir};
pub use sessions::{AdminAccount, Onboarding, PharmacyDetails};
pub use store::{BulkLoadStore, FileImportStore, Store, StoreError, StoreResult, UniqueKey};

pub use jiff;
pub use rust_decimal;
