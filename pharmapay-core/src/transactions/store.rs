//! Storage for payments: [`TransactionStore`], part of [`Store`](crate::store::Store).

use std::future::Future;

use crate::ids::TransactionId;
use crate::paging::Page;
use crate::store::{StoreResult, WriteContext};
use crate::transactions::{NewTransaction, Transaction, TransactionQuery};

/// Storage for payments (the spec's transactions). A payment's reference is checked by
/// [`crate::transactions::holders::check`] on every write that makes it active or changes it (D30).
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
