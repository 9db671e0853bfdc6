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
//! - [`engine`]: [`PharmaPay`], one method per use case, in one file per family;
//!   permissions are checked there.
//! - [`store`]: the [`Store`] contract, one trait per purpose, and [`BulkLoadStore`] for bulk
//!   loads; backends live in other crates.
//! - [`rules`]: every rule that spans records, decided once by a pure function over the facts
//!   a store loaded under its lock: onboarding, the OwnPharmacy vendor, the guard rails of
//!   people, the ledger's paid totals, restores, grants, token revocation, the login window and
//!   idempotency claims. Core decides; stores keep.
//! - [`domain`]: records, the inputs that create them and the filters that list them.
//! - [`error`]: the one [`Error`] enum every method returns.
//! - [`base`]: the layer everything shares and that imports nothing above it: [`money`], exact
//!   amounts (D1); [`clock`], the injected clock and the business calendar (D2, D3); [`text`],
//!   bounded text, emails and passwords; [`ids`]; [`paging`]; and the field errors, store
//!   errors, unique keys and permission vocabulary the other modules speak.
//! - [`access`]: permissions and the authenticated [`Principal`]; [`auth`]: Argon2id and JWT.
//! - [`figures`]: the running totals stores keep beside their rows in each write's own
//!   transaction (D41), and what each row contributes to them.
//! - [`dashboard`]: figures (D12);
//!   [`idempotency`]: idempotent creates (D23); [`seed`]: the initial data (D27).
//! - [`import`]: reading CSV and xlsx files of vendors and invoices into the inputs of their
//!   creates (D45).
//! - [`bank`]: reading the bank statements pharmacies download into their money-out lines, and
//!   the keys a line's payment may be found by (D46).
//! - [`events`]: what a write announces to the integrations following the books, rendered
//!   in the write's own transaction (D47).
//! - [`report`]: Excel reports (D26), streamed from the store in batches, built in constant
//!   memory and saved into any writer.
//! - [`background`]: long processor work on threads of lower priority (D48).
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
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod dashboard;
pub mod domain;
pub mod engine;
pub mod error;
pub mod events;
pub mod figures;
pub mod idempotency;
pub mod import;
pub mod report;
pub mod rules;
pub mod seed;
pub mod store;

pub use base::{clock, ids, money, paging, text};

pub use access::{Access, Action, Authority, Collection, Permission, Principal};
pub use clock::{BusinessCalendar, Clock, ManualClock, SystemClock};
pub use engine::{AdminAccount, EngineOptions, Onboarding, PharmaPay, PharmacyDetails, Session};
pub use error::{Entity, Error, FieldErrors, Result, RuleBroken};
pub use money::Amount;
pub use paging::{Page, PageRequest, Params, Sort, SortDir};
pub use store::{BulkLoadStore, FileImportStore, Store, StoreError, StoreResult, UniqueKey};

pub use jiff;
pub use rust_decimal;
