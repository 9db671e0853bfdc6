//! Payments (the spec's transactions) in memory: [`TransactionStore`] for [`MemoryStore`].
//! Every payment write moves its invoice's kept paid total under the store's one lock;
//! [`transaction_rules::receive`] says whether the invoice may take it (D1, D15), and
//! [`references`] whether its reference is free (D30).

use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::ids::BranchId;
use std::collections::HashMap;

use pharmapay_core::ids::{InvoiceId, TransactionId, VendorPaymentId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{StoreResult, TransactionStore, WriteContext};
use pharmapay_core::transactions::holders::{self, Holder, KeyHolder};
use pharmapay_core::transactions::reference::PaymentReference;
use pharmapay_core::transactions::rules as transaction_rules;
use pharmapay_core::transactions::rules::{PaidInvoice, PaymentWrite};
use pharmapay_core::transactions::{
    NewTransaction, Transaction, TransactionFilter, TransactionQuery, TransactionSortKey, TransactionType,
};
use pharmapay_core::{Entity, Page, StoreError};

use crate::figures::Touch;
use crate::{MemoryStore, SortKey, State, TransactionRow, by_key_then_id};

impl State {
    /// Inserts a payment, active or not, made at `at`; an active one adds to its invoice's paid
    /// total. Answers its id.
    pub(crate) fn add_transaction(
        &mut self,
        transaction: NewTransaction,
        is_active: bool,
        at: Timestamp,
        vendor_payment_id: Option<i64>,
    ) -> i64 {
        let id = self.next("transaction");
        let (invoice_id, amount) = (transaction.invoice_id.get(), transaction.amount);
        let before = self.snapshot(&[Touch::Invoice(invoice_id), Touch::Payment(id)]);
        let row = TransactionRow {
            invoice_id,
            amount,
            transaction_date: transaction.transaction_date,
            transaction_type: transaction.transaction_type,
            reference: transaction.reference,
            description: transaction.description,
            vendor_payment_id,
            is_active,
            created_at: at,
            updated_at: at,
        };
        if let Some(reference) = &row.reference {
            self.payments_by_reference.entry(reference.key().to_owned()).or_default().insert(id);
        }
        if let Some(vendor_payment_id) = vendor_payment_id {
            self.vendor_payment_parts.entry(vendor_payment_id).or_default().push(id);
        }
        self.transactions.insert(id, row);
        if is_active {
            self.add_paid(invoice_id, amount.get());
        }
        self.keep_figures(before);
        id
    }

    pub(crate) fn transaction(&self, id: i64) -> Option<Transaction> {
        let row = self.transactions.get(&id)?;
        Some(Transaction {
            id: TransactionId(id),
            invoice_id: InvoiceId(row.invoice_id),
            amount: row.amount,
            transaction_date: row.transaction_date,
            transaction_type: row.transaction_type,
            reference: row.reference.as_ref().map(|reference| reference.as_str().to_owned()),
            description: row.description.clone(),
            vendor_payment_id: row.vendor_payment_id.map(VendorPaymentId),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
            invoice: self.invoice_brief(row.invoice_id),
        })
    }

    /// The invoice as it would stand with `added` more paid, for [`transaction_rules::receive`].
    pub(crate) fn paid_invoice_after(&self, invoice_id: i64, added: Decimal) -> Option<PaidInvoice> {
        let invoice = self.invoices.get(&invoice_id)?;
        Some(PaidInvoice { is_active: invoice.is_active, paid: invoice.paid + added })
    }

    /// D30: refuses `reference` among active payments of type `kind` when a payment of another
    /// holder than `writer` holds its key, as [`holders::check`] decides.
    pub(crate) fn check_reference(
        &self,
        kind: TransactionType,
        reference: Option<&PaymentReference>,
        writer: Option<Holder>,
    ) -> StoreResult<()> {
        let Some(reference) = reference else { return Ok(()) };
        let holders: Vec<KeyHolder> = self
            .payments_by_reference
            .get(reference.key())
            .into_iter()
            .flatten()
            .filter_map(|id| Some((*id, self.transactions.get(id)?)))
            .filter(|(_, row)| {
                row.is_active
                    && row.transaction_type == kind
                    && row.reference.as_ref().is_some_and(|held| held.key() == reference.key())
            })
            .map(|(id, row)| KeyHolder {
                transaction_id: TransactionId(id),
                vendor_payment_id: row.vendor_payment_id.map(VendorPaymentId),
            })
            .collect();
        holders::check(&holders, writer)
    }

    /// The holders of every active payment reference, by type and key: one pass over the
    /// payments for an import that checks thousands of references.
    pub(crate) fn reference_holders(&self) -> HashMap<(TransactionType, String), Vec<KeyHolder>> {
        let mut held: HashMap<(TransactionType, String), Vec<KeyHolder>> = HashMap::new();
        for (id, row) in self.transactions.iter().filter(|(_, row)| row.is_active) {
            let Some(reference) = &row.reference else { continue };
            held.entry((row.transaction_type, reference.key().to_owned())).or_default().push(KeyHolder {
                transaction_id: TransactionId(*id),
                vendor_payment_id: row.vendor_payment_id.map(VendorPaymentId),
            });
        }
        held
    }
}

/// Whether a payment row, of an invoice of `branch`, matches a list's or an export's filter.
pub(crate) fn transaction_matches(row: &TransactionRow, branch: BranchId, filter: &TransactionFilter) -> bool {
    row.is_active == filter.is_active
        && filter.branches.as_deref().is_none_or(|branches| branches.contains(&branch))
        && filter.invoice_id.is_none_or(|invoice| row.invoice_id == invoice.get())
        && filter.transaction_type.is_none_or(|kind| row.transaction_type == kind)
        && filter.reference.as_deref().is_none_or(|key| row.reference.as_ref().is_some_and(|held| held.key() == key))
        && filter.from_date.is_none_or(|from| row.transaction_date >= from)
        && filter.to_date.is_none_or(|to| row.transaction_date <= to)
}

impl TransactionStore for MemoryStore {
    async fn insert_transaction(&self, transaction: NewTransaction, ctx: WriteContext) -> StoreResult<Transaction> {
        let mut state = self.write();
        let invoice_id = transaction.invoice_id.get();
        transaction_rules::receive(
            state.paid_invoice_after(invoice_id, transaction.amount.get()),
            PaymentWrite::Record,
        )?;
        // D49: another branch's invoice is as a missing one.
        transaction_rules::check_invoice_reach(&ctx.scope, state.invoice_branch(invoice_id))?;
        state.check_reference(transaction.transaction_type, transaction.reference.as_ref(), None)?;
        let id = state.add_transaction(transaction, true, ctx.at, None);
        state.finish_write(&ctx, "create", Entity::Transaction, id);
        Ok(state.transaction(id).expect("just written"))
    }

    async fn get_transaction(&self, id: TransactionId) -> StoreResult<Option<Transaction>> {
        Ok(self.read().transaction(id.get()))
    }

    async fn update_transaction(
        &self,
        id: TransactionId,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> StoreResult<Transaction> {
        let mut state = self.write();
        let old = state
            .transactions
            .get(&id.get())
            .filter(|row| row.is_active)
            .cloned()
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        // D49: another branch's payment is missing to the writer, another branch's invoice as a
        // missing one.
        branch_rules::check_in_scope(&ctx.scope, state.invoice_branch(old.invoice_id), Entity::Transaction)?;
        let new_invoice = transaction.invoice_id.get();
        // A payment that stays on its invoice frees its old amount there first.
        let freed = if old.invoice_id == new_invoice { old.amount.get() } else { Decimal::ZERO };
        let target = state.paid_invoice_after(new_invoice, transaction.amount.get() - freed);
        transaction_rules::receive(target, PaymentWrite::Record)?;
        transaction_rules::check_invoice_reach(&ctx.scope, state.invoice_branch(new_invoice))?;
        let holder = Holder::of(id, old.vendor_payment_id.map(VendorPaymentId));
        state.check_reference(transaction.transaction_type, transaction.reference.as_ref(), Some(holder))?;
        let before =
            state.snapshot(&[Touch::Payment(id.get()), Touch::Invoice(old.invoice_id), Touch::Invoice(new_invoice)]);
        state.add_paid(old.invoice_id, -old.amount.get());
        state.add_paid(new_invoice, transaction.amount.get());
        let row = state.transactions.get_mut(&id.get()).expect("checked above");
        row.invoice_id = new_invoice;
        row.amount = transaction.amount;
        row.transaction_date = transaction.transaction_date;
        row.transaction_type = transaction.transaction_type;
        row.reference = transaction.reference;
        row.description = transaction.description;
        row.updated_at = ctx.at;
        if let Some(reference) = &row.reference {
            let key = reference.key().to_owned();
            state.payments_by_reference.entry(key).or_default().insert(id.get());
        }
        state.keep_figures(before);
        state.finish_write(&ctx, "update", Entity::Transaction, id.get());
        Ok(state.transaction(id.get()).expect("just written"))
    }

    async fn delete_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = state
            .transactions
            .get(&id.get())
            .filter(|row| row.is_active)
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        let (invoice_id, amount) = (row.invoice_id, row.amount.get());
        branch_rules::check_in_scope(&ctx.scope, state.invoice_branch(invoice_id), Entity::Transaction)?;
        let before = state.snapshot(&[Touch::Payment(id.get()), Touch::Invoice(invoice_id)]);
        let row = state.transactions.get_mut(&id.get()).expect("checked above");
        row.is_active = false;
        row.updated_at = ctx.at;
        state.add_paid(invoice_id, -amount);
        state.keep_figures(before);
        let released: Vec<_> = state.release(Holder::Payment(id)).into_iter().collect();
        state.finish_announcing(&ctx, ("delete", Entity::Transaction, id.get()), &released);
        Ok(())
    }

    async fn restore_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<Transaction> {
        let mut state = self.write();
        let row = state
            .transactions
            .get(&id.get())
            .filter(|row| !row.is_active)
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        let (invoice_id, amount) = (row.invoice_id, row.amount.get());
        let holder = Holder::of(id, row.vendor_payment_id.map(VendorPaymentId));
        let (kind, reference) = (row.transaction_type, row.reference.clone());
        branch_rules::check_in_scope(&ctx.scope, state.invoice_branch(invoice_id), Entity::Transaction)?;
        transaction_rules::receive(state.paid_invoice_after(invoice_id, amount), PaymentWrite::Restore)?;
        state.check_reference(kind, reference.as_ref(), Some(holder))?;
        let before = state.snapshot(&[Touch::Payment(id.get()), Touch::Invoice(invoice_id)]);
        let row = state.transactions.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.add_paid(invoice_id, amount);
        state.keep_figures(before);
        state.finish_write(&ctx, "restore", Entity::Transaction, id.get());
        Ok(state.transaction(id.get()).expect("just written"))
    }

    async fn list_transactions(&self, query: &TransactionQuery) -> StoreResult<Page<Transaction>> {
        let state = self.read();
        let rows: Vec<(SortKey, i64)> = state
            .transactions
            .iter()
            .filter(|(_, row)| transaction_matches(row, state.invoice_branch(row.invoice_id), &query.filter))
            .map(|(id, row)| {
                let key = match query.sort.key {
                    TransactionSortKey::TransactionDate => SortKey::Instant(row.transaction_date),
                    TransactionSortKey::Amount => SortKey::Money(row.amount.get()),
                    TransactionSortKey::TransactionType => SortKey::Text(row.transaction_type.name()),
                    TransactionSortKey::CreatedAt => SortKey::Instant(row.created_at),
                };
                (key, *id)
            })
            .collect();
        let page = query.page.sorted_slice(rows, by_key_then_id(query.sort.dir));
        Ok(page.map(|(_, id)| state.transaction(id).expect("listed above")))
    }
}
