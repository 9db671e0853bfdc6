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
//! (D23). The use cases sit in each family's engine file ([`crate::vendors`], [`crate::invoices`],
//! [`crate::transactions`], [`crate::credits`] and the rest), beside the family's records, rules and store
//! trait.

mod pharmapay;

pub use pharmapay::*;
