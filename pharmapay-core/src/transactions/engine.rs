//! Payment use cases (D1, D2, D10, D30): the list, reads, records, changes, soft deletes and
//! restores (D15, D16).
//!
//! A payment past the paid total's bound is answered as the amount's fault.

use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal};
use crate::engine::{PharmaPay, payment_error, store_error, visible};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::TransactionId;
use crate::paging::Page;
use crate::store::Store;
use crate::transactions::{NewTransaction, Transaction, TransactionQuery};

impl<S: Store> PharmaPay<S> {
    /// Lists payments (spec, Transaction list query).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_transactions(
        &self,
        principal: &Principal,
        query: &TransactionQuery,
    ) -> Result<Page<Transaction>> {
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        let mut query = query.clone();
        // D49: the caller's branches, or those of them the filter names.
        query.filter.branches = self.branch_filter(principal, query.filter.branches.as_deref()).await?;
        self.store.list_transactions(&query).await.map_err(store_error)
    }

    /// One active payment with its invoice.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or deleted.
    pub async fn get_transaction(&self, principal: &Principal, id: TransactionId) -> Result<Transaction> {
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        // D49: a payment is of its invoice's branch.
        let shown = |transaction: &Transaction| {
            transaction.is_active && principal.scope.contains(transaction.invoice.branch_id)
        };
        visible(self.store.get_transaction(id).await, shown, Entity::Transaction)
    }

    /// Records a payment against an active invoice (spec; D2: not dated after today).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for an inactive invoice); idempotency
    /// clashes.
    #[instrument(skip_all)]
    pub async fn create_transaction(
        &self,
        principal: &Principal,
        transaction: NewTransaction,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Transaction>> {
        principal.require(Access::new(Collection::Transaction, Action::Create))?;
        let transaction = transaction.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        let ctx = self.announcing(self.ctx_with(principal, transaction.audit_changes())).await?;
        let insert = |ctx| async move { self.store.insert_transaction(transaction, ctx).await.map_err(payment_error) };
        self.create_idempotently(principal, idempotency, ctx, insert, |id| {
            self.store.get_transaction(TransactionId(id))
        })
        .await
    }

    /// Replaces a payment's fields (D14), moving it between invoices if `invoice_id` changes.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(transaction_id = %id))]
    pub async fn update_transaction(
        &self,
        principal: &Principal,
        id: TransactionId,
        transaction: NewTransaction,
    ) -> Result<Transaction> {
        principal.require(Access::new(Collection::Transaction, Action::Update))?;
        let transaction = transaction.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        let ctx = self.announcing(self.ctx_with(principal, transaction.audit_changes())).await?;
        self.store.update_transaction(id, transaction, ctx).await.map_err(payment_error)
    }

    /// Soft-deletes a payment; its invoice's paid amount drops by it (D10, D16).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(transaction_id = %id))]
    pub async fn delete_transaction(
        &self,
        principal: &Principal,
        id: TransactionId,
        reason: Option<String>,
    ) -> Result<()> {
        principal.require(Access::new(Collection::Transaction, Action::Delete))?;
        let ctx = self.announcing(self.ctx_for_delete(principal, reason)?).await?;
        self.store.delete_transaction(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted payment active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`] when its invoice is canceled.
    #[instrument(skip_all, fields(transaction_id = %id))]
    pub async fn restore_transaction(&self, principal: &Principal, id: TransactionId) -> Result<Transaction> {
        principal.require(Access::new(Collection::Transaction, Action::Update))?;
        self.store.restore_transaction(id, self.announcing(self.ctx(principal)).await?).await.map_err(store_error)
    }
}
