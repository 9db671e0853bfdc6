//! Storage of bank statements (D46): [`BankStatementStore`], part of [`crate::store::Store`].

use std::future::Future;

use jiff::Timestamp;

use crate::bank::{
    BankLine, BankStatement, LineAction, LineQuery, NewBankStatement, StatementQuery, UnclearedPayment, UnclearedTotals,
};
use crate::ids::{BankLineId, BankStatementId, BranchId};
use crate::paging::{Page, PageRequest};
use crate::store::{StoreResult, WriteContext};
use crate::vendor_payments::NewVendorPayment;

/// Storage of bank statements and their lines (D46). Every write holds the bank statements'
/// lock for its transaction (SQLite's one writer; an advisory lock on PostgreSQL), taken after
/// the time zone setting and before any payment's lock (D48's order), so uploads and line
/// actions are decided one at a time and a payment is held by one line of the active
/// statements at most.
pub trait BankStatementStore: Send + Sync + 'static {
    /// Keeps an upload: the branch it names must be active (`ParentInactive(Branch)`, checked
    /// under the branch's lock, D49); under the statements' lock, loads the identities of the
    /// lines of the account's other active statements on the upload's days, and the active
    /// payments no line holds that [`crate::bank::rules::MatchingNeeds`] names (by reference
    /// key, and the payments other than Cash of the lines' amounts on the days around them),
    /// each with its branch; asks
    /// [`crate::bank::rules::plan_statement`]; writes the statement with its counts, its kept
    /// lines, the audit entry and the idempotency claim of `ctx` in one transaction.
    fn insert_statement(
        &self,
        statement: NewBankStatement,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<BankStatement>> + Send;

    /// The statement, active or not.
    fn get_statement(&self, id: BankStatementId) -> impl Future<Output = StoreResult<Option<BankStatement>>> + Send;

    /// Active statements of the branches the filter keeps, newest first (by id, descending).
    fn list_statements(&self, query: &StatementQuery) -> impl Future<Output = StoreResult<Page<BankStatement>>> + Send;

    /// How many active UPI and NetBanking payments dated in `[from, to)` no line of an active
    /// statement holds (a vendor payment with an active part counting as one), and what they
    /// add up to (D51); of those a statement of branch `statement` may match only
    /// ([`crate::bank::rules::matched_branch`], D49).
    fn uncleared_totals(
        &self,
        range: (Timestamp, Timestamp),
        statement: BranchId,
    ) -> impl Future<Output = StoreResult<UnclearedTotals>> + Send;

    /// A page of those payments (D51): oldest first, then payments on their own before vendor
    /// payments, then by id.
    fn uncleared_payments(
        &self,
        range: (Timestamp, Timestamp),
        statement: BranchId,
        page: PageRequest,
    ) -> impl Future<Output = StoreResult<Page<UnclearedPayment>>> + Send;

    /// A page of an active statement's lines by line number: `NotFound(BankStatement)` when it
    /// is missing or deleted.
    fn list_lines(
        &self,
        statement: BankStatementId,
        query: &LineQuery,
    ) -> impl Future<Output = StoreResult<Page<BankLine>>> + Send;

    /// A line of an active statement, if it is one of its lines.
    fn get_line(
        &self,
        statement: BankStatementId,
        line: BankLineId,
    ) -> impl Future<Output = StoreResult<Option<BankLine>>> + Send;

    /// Acts on a line (D46): `NotFound(BankStatement)` unless the statement is active,
    /// `NotFound(BankLine)` unless the line is one of its; for a match, the payment chosen
    /// (`NotFound(Transaction)` or `NotFound(VendorPayment)` unless active), its branch and the
    /// line holding it; then the function of [`crate::bank::rules`] for the action decides; the line and the
    /// statement's counts are written with the audit entry. Answers the line.
    fn act_on_line(
        &self,
        statement: BankStatementId,
        line: BankLineId,
        action: LineAction,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<BankLine>> + Send;

    /// `record` (D46): as [`BankStatementStore::act_on_line`] finds the line,
    /// [`crate::bank::rules::check_record`]; then records `payment` to `payment`'s vendor as
    /// [`crate::store::VendorPaymentStore::insert_vendor_payment`] does (D30, D31), in the same
    /// transaction, and the line holds it ([`crate::bank::rules::recorded`]). Answers the line.
    fn record_line(
        &self,
        statement: BankStatementId,
        line: BankLineId,
        vendor: crate::ids::VendorId,
        payment: NewVendorPayment,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<BankLine>> + Send;

    /// Soft-deletes an active statement and frees the payments its lines held:
    /// `NotFound(BankStatement)` unless active.
    fn delete_statement(&self, id: BankStatementId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;
}
