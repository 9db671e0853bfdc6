//! Vendor payment use cases: one payment over several invoices (D31), its read and its delete.

use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal};
use crate::engine::{PharmaPay, payment_error, store_error, visible};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::{VendorId, VendorPaymentId};
use crate::store::Store;
use crate::vendor_payments::{NewVendorPayment, VendorPayment};

impl<S: Store> PharmaPay<S> {
    /// Records one payment to an active vendor over several of its invoices (D31): split as its
    /// `allocations` say, or over the invoices still owing, oldest due first (of one branch when
    /// `branchId` names it, D49; beside `allocations` it is ignored); never more than an
    /// invoice owes. Idempotent like every create (D23).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] naming each field path at fault
    /// (`allocations[2].amount`, a `branchId` that is no branch); [`Error::NotFound`] for an
    /// unknown or deleted vendor;
    /// [`Error::Conflict`] for a reference another payment holds (D30); idempotency clashes.
    #[instrument(skip_all, fields(vendor_id = %vendor_id))]
    pub async fn create_vendor_payment(
        &self,
        principal: &Principal,
        vendor_id: VendorId,
        payment: NewVendorPayment,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<VendorPayment>> {
        principal.require(Access::new(Collection::Transaction, Action::Create))?;
        let mut payment = payment.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        if payment.allocations.is_some() {
            // D49: with allocations the invoices are named, so `branchId` is ignored.
            payment.branch_id = None;
        } else if let Some(branch) = payment.branch_id {
            // A deleted branch's bills stay payable (D49): the branch must be the caller's, and
            // an id that is no branch is wrong.
            self.check_branch_in_scope(principal, branch).await?;
            if self.store.get_branch(branch).await.map_err(store_error)?.is_none() {
                return Err(Error::invalid("branchId", "must be a branch"));
            }
        }
        let ctx = self.announcing(self.ctx_with(principal, payment.audit_changes(vendor_id))).await?;
        let insert =
            |ctx| async move { self.store.insert_vendor_payment(vendor_id, payment, ctx).await.map_err(payment_error) };
        self.create_idempotently(principal, idempotency, ctx, insert, |id| async move {
            let found = self.store.get_vendor_payment(VendorPaymentId(id)).await?;
            Ok(found.filter(|payment| !payment.transactions.is_empty()))
        })
        .await
    }

    /// A vendor payment with its active payments (D31).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or none of its payments is active.
    pub async fn get_vendor_payment(&self, principal: &Principal, id: VendorPaymentId) -> Result<VendorPayment> {
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        let found = self.store.get_vendor_payment(id).await;
        // D49: in scope when all of its payments' invoices are.
        let shown = |payment: &VendorPayment| {
            !payment.transactions.is_empty()
                && payment.transactions.iter().all(|part| principal.scope.contains(part.invoice.branch_id))
        };
        visible(found, shown, Entity::VendorPayment)
    }

    /// Soft-deletes every active payment of a vendor payment at once (D31, D16).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or none of its payments is active.
    #[instrument(skip_all, fields(vendor_payment_id = %id))]
    pub async fn delete_vendor_payment(
        &self,
        principal: &Principal,
        id: VendorPaymentId,
        reason: Option<String>,
    ) -> Result<()> {
        principal.require(Access::new(Collection::Transaction, Action::Delete))?;
        let ctx = self.announcing(self.ctx_for_delete(principal, reason)?).await?;
        self.store.delete_vendor_payment(id, ctx).await.map_err(store_error)
    }
}
