//! Invoice use cases (D4, D5, D10): the list, reads, creates, changes, soft deletes and
//! restores (D15, D16).

use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal};
use crate::engine::{PharmaPay, store_error, visible};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::InvoiceId;
use crate::invoices::{Invoice, InvoiceDetail, InvoiceQuery, NewInvoice};
use crate::paging::Page;
use crate::store::Store;

impl<S: Store> PharmaPay<S> {
    /// Lists invoices (spec, Invoice list query), with status as of today (D3, D10).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_invoices(&self, principal: &Principal, query: &InvoiceQuery) -> Result<Page<Invoice>> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        let (filter, today_start) = self.invoice_filter(principal, query.filter.clone()).await?;
        let query = InvoiceQuery { filter, ..query.clone() };
        self.store.list_invoices(&query, today_start).await.map_err(store_error)
    }

    /// One active invoice with its vendor (D13), of a branch in the caller's scope (D49).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing, canceled or another branch's.
    pub async fn get_invoice(&self, principal: &Principal, id: InvoiceId) -> Result<InvoiceDetail> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        let today_start = self.today_start().await?;
        let shown =
            |detail: &InvoiceDetail| detail.invoice.is_active && principal.scope.contains(detail.invoice.branch_id);
        visible(self.store.get_invoice(id, today_start).await, shown, Entity::Invoice)
    }

    /// Creates an invoice for an active vendor (spec; D4, D5), of the branch it names or the
    /// default one (D49).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for an inactive vendor or branch);
    /// [`Error::Conflict`] for a taken number; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_invoice(
        &self,
        principal: &Principal,
        invoice: NewInvoice,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Invoice>> {
        principal.require(Access::new(Collection::Invoice, Action::Create))?;
        let mut invoice = invoice.validate().map_err(Error::Validation)?;
        // D49: an invoice that names no branch goes to the caller's default; one it names must be
        // in their scope.
        invoice.branch_id = Some(self.branch_for_create(principal, invoice.branch_id).await?);
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

    /// Replaces an invoice's fields (D14); its payments stay, and move with it to the branch it
    /// names (D49).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(invoice_id = %id))]
    pub async fn update_invoice(&self, principal: &Principal, id: InvoiceId, invoice: NewInvoice) -> Result<Invoice> {
        principal.require(Access::new(Collection::Invoice, Action::Update))?;
        let invoice = invoice.validate().map_err(Error::Validation)?;
        // D49: a move goes only to a branch of the caller's; the store finds the invoice only
        // when it is of one of them.
        if let Some(branch) = invoice.branch_id {
            self.check_branch_in_scope(principal, branch).await?;
        }
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
}
