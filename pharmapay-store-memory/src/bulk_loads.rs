//! Bulk loads in memory: [`BulkLoadStore`] for [`MemoryStore`].
//!
//! Each call checks its whole batch before writing any of it, so a refused batch changes
//! nothing; the rules are [`vendor_rules`]' and [`ledger`]'s.

use std::collections::{HashMap, HashSet};

use pharmapay_core::ids::{InvoiceId, TransactionId, VendorCreditId, VendorId};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{
    BulkCredit, BulkInvoice, BulkLoadStore, BulkTransaction, BulkVendor, StoreResult, UniqueKey,
};
use pharmapay_core::text::key;
use pharmapay_core::transactions::{holders, rules as transaction_rules};
use pharmapay_core::vendors::rules as vendor_rules;
use pharmapay_core::{Entity, StoreError};

use crate::MemoryStore;

impl BulkLoadStore for MemoryStore {
    async fn load_credits(&self, credits: Vec<BulkCredit>) -> StoreResult<Vec<VendorCreditId>> {
        self.write().load_credits(credits)
    }

    async fn load_vendors(&self, vendors: Vec<BulkVendor>) -> StoreResult<Vec<VendorId>> {
        let mut state = self.write();
        let mut gstins = HashSet::new();
        for imported in &vendors {
            vendor_rules::check_insert(imported.vendor.vendor_type)?;
            // D37: a GSTIN free among stored active vendors and the batch's.
            if imported.is_active
                && let Some(gstin) = &imported.vendor.gstin
            {
                state.check_gstin(Some(gstin.as_str()), None)?;
                if !gstins.insert(gstin.as_str().to_owned()) {
                    return Err(StoreError::Conflict(UniqueKey::Gstin));
                }
            }
        }
        let add =
            |imported: BulkVendor| VendorId(state.add_vendor(imported.vendor, imported.is_active, imported.created_at));
        Ok(vendors.into_iter().map(add).collect())
    }

    async fn load_invoices(&self, invoices: Vec<BulkInvoice>) -> StoreResult<Vec<InvoiceId>> {
        let mut state = self.write();
        // Check the whole batch before writing any of it, so a refused batch changes nothing.
        let taken = state.active_number_keys();
        let mut numbers: HashSet<String> = HashSet::new();
        for imported in &invoices {
            if !state.vendors.contains_key(&imported.invoice.vendor_id.get()) {
                return Err(StoreError::ParentInactive(Entity::Vendor));
            }
            if imported.is_active {
                let number_key = key(&imported.invoice.invoice_number);
                if taken.contains(&number_key) || !numbers.insert(number_key) {
                    return Err(StoreError::Conflict(UniqueKey::InvoiceNumber));
                }
            }
        }
        let add = |imported: BulkInvoice| {
            InvoiceId(state.add_invoice(imported.invoice, imported.is_active, imported.created_at))
        };
        Ok(invoices.into_iter().map(add).collect())
    }

    async fn load_transactions(&self, transactions: Vec<BulkTransaction>) -> StoreResult<Vec<TransactionId>> {
        let mut state = self.write();
        if transactions.iter().any(|imported| !state.invoices.contains_key(&imported.transaction.invoice_id.get())) {
            return Err(StoreError::ParentInactive(Entity::Invoice));
        }
        let mut added: HashMap<i64, Decimal> = HashMap::new();
        for imported in transactions.iter().filter(|imported| imported.is_active) {
            *added.entry(imported.transaction.invoice_id.get()).or_default() += imported.transaction.amount.get();
        }
        for (invoice_id, amount) in &added {
            let paid = state.invoices.get(invoice_id).map(|invoice| invoice.paid).unwrap_or_default();
            transaction_rules::check_paid_total(paid + amount)?;
        }
        // D30: each active reference of the batch is held by no stored payment and by no earlier
        // payment of the batch, which would get the id the store numbers it with.
        let first_id = state.peek_next("transaction");
        let with_references =
            transactions.iter().any(|imported| imported.is_active && imported.transaction.reference.is_some());
        let held = if with_references { state.reference_holders() } else { HashMap::new() };
        let mut keys = HashMap::new();
        for (index, imported) in transactions.iter().enumerate().filter(|(_, imported)| imported.is_active) {
            let payment = &imported.transaction;
            let Some(reference) = &payment.reference else { continue };
            if let Some(holders) = held.get(&(payment.transaction_type, reference.key().to_owned())) {
                holders::check(holders, None)?;
            }
            let id = first_id + index as i64;
            if let Some(existing) = keys.insert((payment.transaction_type, reference.key().to_owned()), id) {
                keys.insert((payment.transaction_type, reference.key().to_owned()), existing);
                return Err(StoreError::Conflict(UniqueKey::PaymentReference { existing: TransactionId(existing) }));
            }
        }
        let add = |imported: BulkTransaction| {
            TransactionId(state.add_transaction(imported.transaction, imported.is_active, imported.created_at, None))
        };
        let ids = transactions.into_iter().map(add).collect();
        // Bulk loads announce nothing (D47 covers the books' writes, not the demo's seeding).
        state.paid_now.clear();
        Ok(ids)
    }
}
