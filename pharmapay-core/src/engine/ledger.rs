//! Ledger use cases: vendors (D11, D14), invoices (D4, D5, D10), payments (D1, D2, D10, D30)
//! and vendor payments over several invoices (D31), with their soft deletes and restores (D15,
//! D16).
//!
//! A payment past the paid total's bound is answered as the amount's fault.

use tracing::instrument;

use super::{PharmaPay, licensed, payment_error, store_error, visible};
use crate::access::{Access, Action, Collection, Principal};
use crate::domain::{
    Invoice, InvoiceDetail, InvoiceQuery, NewInvoice, NewTransaction, NewVendor, NewVendorPayment, Transaction,
    TransactionQuery, Vendor, VendorPayment, VendorQuery,
};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::{InvoiceId, TransactionId, VendorId, VendorPaymentId};
use crate::paging::Page;
use crate::store::Store;

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

    /// Lists invoices (spec, Invoice list query), with status as of today (D3, D10).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_invoices(&self, principal: &Principal, query: &InvoiceQuery) -> Result<Page<Invoice>> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        let (filter, today_start) = self.invoice_filter(query.filter.clone()).await?;
        let query = InvoiceQuery { filter, ..query.clone() };
        self.store.list_invoices(&query, today_start).await.map_err(store_error)
    }

    /// One active invoice with its vendor (D13).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or canceled.
    pub async fn get_invoice(&self, principal: &Principal, id: InvoiceId) -> Result<InvoiceDetail> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        let today_start = self.today_start().await?;
        visible(self.store.get_invoice(id, today_start).await, |detail: &_| detail.invoice.is_active, Entity::Invoice)
    }

    /// Creates an invoice for an active vendor (spec; D4, D5).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for an inactive vendor);
    /// [`Error::Conflict`] for a taken number; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_invoice(
        &self,
        principal: &Principal,
        invoice: NewInvoice,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Invoice>> {
        principal.require(Access::new(Collection::Invoice, Action::Create))?;
        let invoice = invoice.validate().map_err(Error::Validation)?;
        let today_start = self.today_start().await?;
        let ctx = self.announcing(self.ctx_with(principal, invoice.audit_changes())).await?;
        let insert =
            |ctx| async move { self.store.insert_invoice(invoice, ctx, today_start).await.map_err(store_error) };
        let read = |id| async move {
            let detail = self.store.get_invoice(InvoiceId(id), today_start).await?;
            Ok(detail.map(|detail| detail.invoice))
        };
        self.create_idempotently(principal, idempotency, ctx, insert, read).await
    }

    /// Replaces an invoice's fields (D14); its payments stay.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(invoice_id = %id))]
    pub async fn update_invoice(&self, principal: &Principal, id: InvoiceId, invoice: NewInvoice) -> Result<Invoice> {
        principal.require(Access::new(Collection::Invoice, Action::Update))?;
        let invoice = invoice.validate().map_err(Error::Validation)?;
        let today_start = self.today_start().await?;
        let ctx = self.announcing(self.ctx_with(principal, invoice.audit_changes())).await?;
        self.store.update_invoice(id, invoice, ctx, today_start).await.map_err(store_error)
    }

    /// Cancels an invoice (status becomes Canceled); its payments are kept (D10, D16).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(invoice_id = %id))]
    pub async fn delete_invoice(&self, principal: &Principal, id: InvoiceId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Invoice, Action::Delete))?;
        let ctx = self.announcing(self.ctx_for_delete(principal, reason)?).await?;
        self.store.delete_invoice(id, ctx).await.map_err(store_error)
    }

    /// Makes a canceled invoice active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Conflict`] when its number is taken;
    /// [`Error::Rule`] when its vendor is inactive.
    #[instrument(skip_all, fields(invoice_id = %id))]
    pub async fn restore_invoice(&self, principal: &Principal, id: InvoiceId) -> Result<Invoice> {
        principal.require(Access::new(Collection::Invoice, Action::Update))?;
        let today_start = self.today_start().await?;
        self.store
            .restore_invoice(id, self.announcing(self.ctx(principal)).await?, today_start)
            .await
            .map_err(store_error)
    }

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
        self.store.list_transactions(query).await.map_err(store_error)
    }

    /// One active payment with its invoice.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or deleted.
    pub async fn get_transaction(&self, principal: &Principal, id: TransactionId) -> Result<Transaction> {
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        visible(self.store.get_transaction(id).await, |transaction: &_| transaction.is_active, Entity::Transaction)
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

impl<S: Store> PharmaPay<S> {
    /// Records one payment to an active vendor over several of its invoices (D31): split as its
    /// `allocations` say, or over the invoices still owing, oldest due first; never more than
    /// an invoice owes. Idempotent like every create (D23).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] naming each field path at fault
    /// (`allocations[2].amount`); [`Error::NotFound`] for an unknown or deleted vendor;
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
        let payment = payment.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
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
        visible(found, |payment: &VendorPayment| !payment.transactions.is_empty(), Entity::VendorPayment)
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
