//! The rules that span records, each decided once, here, by a pure function.
//!
//! A store method that must keep a cross-row invariant opens its transaction, locks and loads
//! the facts a rule names, calls the rule, and writes what the rule allows. The rule itself does
//! no I/O and knows no backend, so every store decides alike and each rule is unit-tested on
//! its own. Rules answer with [`StoreError`](crate::store::StoreError) values, which the store
//! passes on unchanged and the engine translates for callers. What stays with the stores are the
//! facts themselves: a missing row (`NotFound`), an inactive parent named by a request
//! (`ParentInactive`) and a taken unique value (`Conflict`).
//!
//! # Layout
//! - [`installation`]: one onboarding per installation.
//! - [`vendors`]: the pharmacy's own vendor record (D14).
//! - [`people`]: nobody deletes themself, the last admin stays, system roles stay (D18).
//! - [`ledger`]: which invoice takes a payment, and the paid total's bound (D1, D10).
//! - [`restore`]: records come back only under an active parent (D15).
//! - [`grants`]: nobody gives more than they hold (D38).
//! - [`sessions`]: when tokens are issued and revoked, to the second (D20, D39).
//! - [`login`]: the failed-login window and its gate (D21, D40).
//! - [`idempotency`]: who holds an idempotency key (D23).
//! - [`allocation`]: how one vendor payment is split over invoices (D31).
//! - [`credits`]: what a vendor credit's replacement and decision may change (D44).
//! - [`references`]: one payment reference per payment type, one holder (D30).
//! - [`licence`]: no invoices from vendors whose drug licence expired, when the pharmacy says so
//!   (D36).
//! - [`imports`]: what an imported file's rows create, judged against the stored records (D45).
//! - [`bank`]: how a bank statement's lines are matched and what each line action does (D46,
//!   D51).
//! - [`webhooks`]: which events a webhook takes, which deliveries a server may claim, and what a
//!   try leaves a delivery as (D47).

pub mod allocation;
pub mod bank;
pub mod credits;
pub mod grants;
pub mod idempotency;
pub mod imports;
pub mod installation;
pub mod ledger;
pub mod licence;
pub mod login;
pub mod people;
pub mod references;
pub mod restore;
pub mod sessions;
pub mod vendors;
pub mod webhooks;

/// The rule a refusal names, for the rules' tests: `None` when the write may go on.
///
/// # Panics
/// When the refusal is not a rule; a test failure.
#[cfg(test)]
fn refusal(result: crate::store::StoreResult<()>) -> Option<crate::error::RuleBroken> {
    match result {
        Ok(()) => None,
        Err(crate::store::StoreError::Rule(rule)) => Some(rule),
        Err(other) => panic!("expected a rule, got {other:?}"),
    }
}
