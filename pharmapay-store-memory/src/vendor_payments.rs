//! Vendor payments in memory (D31): [`VendorPaymentStore`] for [`MemoryStore`].
//!
//! Under the one lock, the vendor is checked, the reference is [`references`]' to judge (D30),
//! the invoices the payment may pay are handed to [`vendor_payment_rules::allocate`], and each share is
//! recorded as a payment naming the vendor payment, its figures kept as every payment's are.

use pharmapay_core::ids::{BranchId, InvoiceId, VendorId, VendorPaymentId};
use pharmapay_core::store::{StoreResult, VendorPaymentStore, WriteContext};
use pharmapay_core::transactions::NewTransaction;
use pharmapay_core::transactions::holders::Holder;
use pharmapay_core::vendor_payments::rules as vendor_payment_rules;
use pharmapay_core::vendor_payments::rules::{PayableInvoice, RequestedAllocation};
use pharmapay_core::vendor_payments::{NewVendorPayment, VendorPayment};
use pharmapay_core::{Entity, StoreError};

use crate::figures::Touch;
use crate::{MemoryStore, State, VendorPaymentRow};

impl State {
    pub(crate) fn vendor_payment(&self, id: i64) -> Option<VendorPayment> {
        let row = self.vendor_payments.get(&id)?;
        let parts = self
            .active_parts(id)
            .into_iter()
            .map(|(part_id, _)| self.transaction(part_id).expect("listed above"))
            .collect();
        Some(VendorPayment {
            id: VendorPaymentId(id),
            vendor_id: VendorId(row.vendor_id),
            vendor_name: self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default(),
            amount: row.amount,
            transaction_date: row.transaction_date,
            transaction_type: row.transaction_type,
            reference: row.reference.as_ref().map(|reference| reference.as_str().to_owned()),
            description: row.description.clone(),
            created_at: row.created_at,
            transactions: parts,
        })
    }

    /// The active payments vendor payment `id` made, with their invoices.
    fn active_parts(&self, id: i64) -> Vec<(i64, i64)> {
        self.vendor_payment_parts
            .get(&id)
            .into_iter()
            .flatten()
            .filter_map(|part_id| Some((*part_id, self.transactions.get(part_id)?)))
            .filter(|(_, part)| part.is_active)
            .map(|(part_id, part)| (part_id, part.invoice_id))
            .collect()
    }

    /// The invoices a vendor payment (or a credit's application, D44) may pay: those its
    /// allocations name (when they exist), or every invoice of the vendor.
    pub(crate) fn payable(&self, vendor_id: i64, allocations: Option<&[RequestedAllocation]>) -> Vec<PayableInvoice> {
        let ids: Vec<i64> = match allocations {
            Some(allocations) => allocations.iter().map(|allocation| allocation.invoice_id.get()).collect(),
            None => self.invoices_by_vendor.get(&vendor_id).into_iter().flatten().copied().collect(),
        };
        ids.into_iter()
            .filter_map(|id| {
                let row = self.invoices.get(&id)?;
                Some(PayableInvoice {
                    id: InvoiceId(id),
                    vendor_id: VendorId(row.vendor_id),
                    branch_id: BranchId(row.branch_id),
                    is_active: row.is_active,
                    pending: row.pending(),
                    due_date: row.due_date,
                    invoice_date: row.invoice_date,
                })
            })
            .collect()
    }
}

impl State {
    /// Records a vendor payment (D31) under the lock the caller holds: the vendor active, the
    /// reference free (D30), the amount split by [`vendor_payment_rules::allocate`], a payment per share.
    /// Answers its id; writes nothing when refused.
    pub(crate) fn record_vendor_payment(
        &mut self,
        vendor_id: VendorId,
        payment: &NewVendorPayment,
        (scope, at): (&pharmapay_core::branches::Scope, pharmapay_core::jiff::Timestamp),
    ) -> StoreResult<i64> {
        if !self.active_vendor(vendor_id.get()) {
            return Err(StoreError::NotFound(Entity::Vendor));
        }
        self.check_reference(payment.transaction_type, payment.reference.as_ref(), None)?;
        let payable = self.payable(vendor_id.get(), payment.allocations.as_deref());
        let allocations = vendor_payment_rules::plan_payment(
            vendor_id,
            (payment.amount, payment.allocations.as_deref()),
            (scope, payment.branch_id),
            &payable,
        )?;
        let id = self.next("vendor_payment");
        self.vendor_payments.insert(
            id,
            VendorPaymentRow {
                vendor_id: vendor_id.get(),
                amount: payment.amount,
                transaction_date: payment.transaction_date,
                transaction_type: payment.transaction_type,
                reference: payment.reference.clone(),
                description: payment.description.clone(),
                created_at: at,
            },
        );
        for share in allocations {
            let part = NewTransaction {
                invoice_id: share.invoice_id,
                amount: share.amount,
                transaction_date: payment.transaction_date,
                transaction_type: payment.transaction_type,
                reference: payment.reference.clone(),
                description: payment.description.clone(),
            };
            self.add_transaction(part, true, at, Some(id));
        }
        Ok(id)
    }
}

impl VendorPaymentStore for MemoryStore {
    async fn insert_vendor_payment(
        &self,
        vendor_id: VendorId,
        payment: NewVendorPayment,
        ctx: WriteContext,
    ) -> StoreResult<VendorPayment> {
        let mut state = self.write();
        let id = state.record_vendor_payment(vendor_id, &payment, (&ctx.scope, ctx.at))?;
        state.finish_write(&ctx, "create", Entity::VendorPayment, id);
        Ok(state.vendor_payment(id).expect("just written"))
    }

    async fn get_vendor_payment(&self, id: VendorPaymentId) -> StoreResult<Option<VendorPayment>> {
        Ok(self.read().vendor_payment(id.get()))
    }

    async fn delete_vendor_payment(&self, id: VendorPaymentId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let parts = state.active_parts(id.get());
        // D49: a vendor payment is the writer's when all of its invoices are of their branches.
        let reached = parts.iter().all(|(_, invoice_id)| ctx.scope.contains(state.invoice_branch(*invoice_id)));
        if parts.is_empty() || !reached {
            return Err(StoreError::NotFound(Entity::VendorPayment));
        }
        let touched: Vec<Touch> = parts
            .iter()
            .flat_map(|(part_id, invoice_id)| [Touch::Payment(*part_id), Touch::Invoice(*invoice_id)])
            .collect();
        let before = state.snapshot(&touched);
        for (part_id, invoice_id) in parts {
            let part = state.transactions.get_mut(&part_id).expect("listed above");
            part.is_active = false;
            part.updated_at = ctx.at;
            let amount = part.amount.get();
            state.add_paid(invoice_id, -amount);
        }
        state.keep_figures(before);
        let released: Vec<_> = state.release(Holder::VendorPayment(id)).into_iter().collect();
        state.finish_announcing(&ctx, ("delete", Entity::VendorPayment, id.get()), &released);
        Ok(())
    }
}
