//! Storage for invoices: [`InvoiceStore`], part of [`Store`](crate::store::Store).

use std::future::Future;

use jiff::Timestamp;

use crate::ids::InvoiceId;
use crate::invoices::{Invoice, InvoiceDetail, InvoiceQuery, NewInvoice};
use crate::paging::Page;
use crate::store::{StoreResult, WriteContext};

/// Storage for invoices.
pub trait InvoiceStore: Send + Sync + 'static {
    /// Inserts an invoice for an active vendor with a number free among active invoices, of the
    /// active branch [`crate::branches::rules::branch_of_create`] names for it
    /// (`ParentInactive(Branch)` otherwise, D49).
    fn insert_invoice(
        &self,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Invoice>> + Send;

    /// The invoice with its vendor.
    fn get_invoice(
        &self,
        id: InvoiceId,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Option<InvoiceDetail>>> + Send;

    /// Replaces an active invoice's fields; the paid total is kept. A branch it names must be
    /// active (`ParentInactive(Branch)`), and it moves there, its payments with it, only while
    /// no credit is applied to it ([`crate::credits::rules::check_branch_move`]); `None` keeps
    /// its branch (D49).
    fn update_invoice(
        &self,
        id: InvoiceId,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Invoice>> + Send;

    /// Cancels (soft-deletes) an active invoice; its payments are kept.
    fn delete_invoice(&self, id: InvoiceId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a canceled invoice active again, if its vendor is active
    /// (`Rule(ParentInactive(Vendor))` otherwise) and its number is free.
    fn restore_invoice(
        &self,
        id: InvoiceId,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Invoice>> + Send;

    /// A page of invoices.
    fn list_invoices(
        &self,
        query: &InvoiceQuery,
        today_start: Timestamp,
    ) -> impl Future<Output = StoreResult<Page<Invoice>>> + Send;
}
