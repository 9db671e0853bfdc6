//! Storage for vendors: [`VendorStore`], part of [`Store`](crate::store::Store).

use std::future::Future;

use crate::ids::VendorId;
use crate::paging::Page;
use crate::store::{StoreResult, WriteContext};
use crate::vendors::{NewVendor, Vendor, VendorQuery};

/// Storage for vendors.
pub trait VendorStore: Send + Sync + 'static {
    /// Inserts a vendor; OwnPharmacy is refused with `Rule(OwnPharmacyType)`, as only onboarding
    /// makes that vendor (spec, VendorType).
    fn insert_vendor(&self, vendor: NewVendor, ctx: WriteContext) -> impl Future<Output = StoreResult<Vendor>> + Send;

    /// The vendor with its totals (D11).
    fn get_vendor(&self, id: VendorId) -> impl Future<Output = StoreResult<Option<Vendor>>> + Send;

    /// Replaces an active vendor's fields; refuses changing the type to or from OwnPharmacy
    /// with `Rule(OwnPharmacyType)` (D14).
    fn update_vendor(
        &self,
        id: VendorId,
        vendor: NewVendor,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Vendor>> + Send;

    /// Soft-deletes an active vendor; its invoices and payments are kept. Refuses the
    /// OwnPharmacy vendor with `Rule(OwnPharmacyDelete)` (D14).
    fn delete_vendor(&self, id: VendorId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a soft-deleted vendor active again (D15).
    fn restore_vendor(&self, id: VendorId, ctx: WriteContext) -> impl Future<Output = StoreResult<Vendor>> + Send;

    /// A page of vendors.
    fn list_vendors(&self, query: &VendorQuery) -> impl Future<Output = StoreResult<Page<Vendor>>> + Send;
}
