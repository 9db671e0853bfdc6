//! Storage for vendor payments (D31): [`VendorPaymentStore`], part of [`Store`](crate::store::Store).

use std::future::Future;

use crate::ids::{VendorId, VendorPaymentId};
use crate::store::{StoreResult, WriteContext};
use crate::vendor_payments::{NewVendorPayment, VendorPayment};

/// Storage for vendor payments: one payment over several invoices (D31).
pub trait VendorPaymentStore: Send + Sync + 'static {
    /// Records `payment` to the vendor `vendor_id` in one transaction: `NotFound(Vendor)` unless
    /// the vendor is active; the reference checked by [`crate::transactions::holders::check`]; the
    /// invoices it may pay (those its allocations name, or else the vendor's active invoices
    /// still owing) locked and split by [`crate::vendor_payments::rules::allocate`]; then one payment
    /// per allocation, carrying the vendor payment's id, date, type, reference and description,
    /// each added to its invoice's paid total, with the kept figures (D41), the audit entry and
    /// the idempotency claim of `ctx`. A refusal writes nothing.
    fn insert_vendor_payment(
        &self,
        vendor_id: VendorId,
        payment: NewVendorPayment,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<VendorPayment>> + Send;

    /// The vendor payment with its active payments, by id.
    fn get_vendor_payment(
        &self,
        id: VendorPaymentId,
    ) -> impl Future<Output = StoreResult<Option<VendorPayment>>> + Send;

    /// Soft-deletes every active payment of the vendor payment in one transaction, each taken
    /// off its invoice's paid total; `NotFound(VendorPayment)` when none is active.
    fn delete_vendor_payment(
        &self,
        id: VendorPaymentId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;
}
