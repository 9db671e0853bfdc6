//! Storage for vendor credits (D44): [`CreditStore`], part of [`Store`](crate::store::Store).

use std::future::Future;

use crate::credits::{CreditDecision, CreditQuery, NewCreditApplication, NewVendorCredit, VendorCredit};
use crate::ids::{CreditApplicationId, VendorCreditId};
use crate::paging::Page;
use crate::reports::dashboard::CreditSummary;
use crate::store::{StoreResult, WriteContext};

/// Storage for vendor credits (D44): claims on distributors, their decisions, and (with the
/// credits' applications) what is set against the vendor's bills.
///
/// A credit's number is unique per vendor among its active credits (`Conflict(CreditNumber)`);
/// its vendor must be active when it is created, replaced or restored; the invoice a claim names
/// is checked by [`crate::credits::rules::check_against`], a replacement by
/// [`crate::credits::rules::check_update`] and a decision by
/// [`crate::credits::rules::check_decision`], each over the credit as it stands under its lock.
pub trait CreditStore: Send + Sync + 'static {
    /// Records a claim: `ParentInactive(Vendor)` unless its vendor is active, then
    /// `ParentInactive(Branch)` unless the branch it names is (D49), then the invoice it names,
    /// then its number.
    fn insert_credit(
        &self,
        credit: NewVendorCredit,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorCredit>> + Send;

    /// The credit with its active applications, oldest first, by id, active or not.
    fn get_credit(&self, id: VendorCreditId) -> impl Future<Output = StoreResult<Option<VendorCredit>>> + Send;

    /// Replaces an active credit's claim (D14): `NotFound(VendorCredit)` unless it is active, then
    /// as [`CreditStore::insert_credit`] (a branch of `None` keeps the credit's), then
    /// [`crate::credits::rules::check_update`]. Its decision and applications stay.
    fn update_credit(
        &self,
        id: VendorCreditId,
        credit: NewVendorCredit,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorCredit>> + Send;

    /// Records the distributor's decision on an active credit: `NotFound(VendorCredit)` unless
    /// it is active, then [`crate::credits::rules::check_decision`].
    fn decide_credit(
        &self,
        id: VendorCreditId,
        decision: CreditDecision,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorCredit>> + Send;

    /// Soft-deletes an active credit and its active applications in one transaction.
    fn delete_credit(&self, id: VendorCreditId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a soft-deleted credit active again, without its applications (D15, D44): the
    /// vendor must be active ([`crate::base::restore`]) and the number free.
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
    /// them (D31), then the credit; [`crate::credits::rules::plan_application`] decides, at
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
