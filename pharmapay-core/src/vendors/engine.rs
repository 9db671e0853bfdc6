//! Vendor use cases (D11, D14): the list, reads, creates, changes, soft deletes and restores
//! (D15, D16).

use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal};
use crate::engine::{PharmaPay, licensed, store_error, visible};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::VendorId;
use crate::paging::Page;
use crate::store::Store;
use crate::vendors::{NewVendor, Vendor, VendorQuery};

impl<S: Store> PharmaPay<S> {
    /// Lists vendors (spec, Vendor list query). Listing soft-deleted vendors
    /// (`is_active = false`) needs an admin token.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_vendors(&self, principal: &Principal, query: &VendorQuery) -> Result<Page<Vendor>> {
        principal.require(Access::new(Collection::Vendor, Action::Read))?;
        if !query.filter.is_active {
            principal.require_admin()?;
        }
        let bounds = self.licence_bounds().await?;
        let mut query = query.clone();
        query.filter.licence = query.filter.license_status.map(|status| (status, bounds));
        let page = self.store.list_vendors(&query).await.map_err(store_error)?;
        Ok(page.map(|vendor| licensed(&bounds, vendor)))
    }

    /// One active vendor with its totals (D11).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or soft-deleted.
    pub async fn get_vendor(&self, principal: &Principal, id: VendorId) -> Result<Vendor> {
        principal.require(Access::new(Collection::Vendor, Action::Read))?;
        let vendor = visible(self.store.get_vendor(id).await, |vendor: &_| vendor.is_active, Entity::Vendor)?;
        Ok(licensed(&self.licence_bounds().await?, vendor))
    }

    /// Creates a vendor; the type may not be OwnPharmacy (spec, Vendors).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_vendor(
        &self,
        principal: &Principal,
        vendor: NewVendor,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Vendor>> {
        principal.require(Access::new(Collection::Vendor, Action::Create))?;
        let vendor = vendor.validate_new().map_err(Error::Validation)?;
        let ctx = self.announcing(self.ctx_with(principal, vendor.audit_changes())).await?;
        let insert = |ctx| async move { self.store.insert_vendor(vendor, ctx).await.map_err(store_error) };
        let created = self
            .create_idempotently(principal, idempotency, ctx, insert, |id| self.store.get_vendor(VendorId(id)))
            .await?;
        let bounds = self.licence_bounds().await?;
        Ok(created.map(|vendor| licensed(&bounds, vendor)))
    }

    /// Replaces a vendor's fields (D14); the type cannot change to or from OwnPharmacy.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Rule`].
    #[instrument(skip_all, fields(vendor_id = %id))]
    pub async fn update_vendor(&self, principal: &Principal, id: VendorId, vendor: NewVendor) -> Result<Vendor> {
        principal.require(Access::new(Collection::Vendor, Action::Update))?;
        let vendor = vendor.validate().map_err(Error::Validation)?;
        let ctx = self.announcing(self.ctx_with(principal, vendor.audit_changes())).await?;
        let vendor = self.store.update_vendor(id, vendor, ctx).await.map_err(store_error)?;
        Ok(licensed(&self.licence_bounds().await?, vendor))
    }

    /// Soft-deletes a vendor, keeping `reason` in the audit log (D16). Its invoices and
    /// payments are kept. The OwnPharmacy vendor cannot be deleted (D14).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`].
    #[instrument(skip_all, fields(vendor_id = %id))]
    pub async fn delete_vendor(&self, principal: &Principal, id: VendorId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Vendor, Action::Delete))?;
        let ctx = self.announcing(self.ctx_for_delete(principal, reason)?).await?;
        self.store.delete_vendor(id, ctx).await.map_err(store_error)
    }

    /// Makes a soft-deleted vendor active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or already active.
    #[instrument(skip_all, fields(vendor_id = %id))]
    pub async fn restore_vendor(&self, principal: &Principal, id: VendorId) -> Result<Vendor> {
        principal.require(Access::new(Collection::Vendor, Action::Update))?;
        let vendor =
            self.store.restore_vendor(id, self.announcing(self.ctx(principal)).await?).await.map_err(store_error)?;
        Ok(licensed(&self.licence_bounds().await?, vendor))
    }
}
