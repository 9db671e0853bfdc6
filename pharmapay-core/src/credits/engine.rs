//! Vendor credits (D44): claims on distributors for returned stock or rate differences, their
//! decisions, and their soft deletes and restores (D15, D16).

use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal};
use crate::credits::{CreditDecision, CreditQuery, NewCreditApplication, NewVendorCredit, VendorCredit};
use crate::engine::{PharmaPay, store_error, visible};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::{CreditApplicationId, VendorCreditId};
use crate::paging::Page;
use crate::store::Store;

impl<S: Store> PharmaPay<S> {
    /// Lists credits, newest claim first (D44); `claimedBefore` is read as the first instant of
    /// that day in the business time zone (D3).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_credits(&self, principal: &Principal, query: &CreditQuery) -> Result<Page<VendorCredit>> {
        principal.require(Access::new(Collection::VendorCredit, Action::Read))?;
        let mut query = query.clone();
        // D49: the caller's branches, or those of them the filter names.
        query.filter.branches = self.branch_filter(principal, query.filter.branches.as_deref()).await?;
        if let Some(day) = query.filter.claimed_before {
            query.filter.claimed_before_start = Some(self.calendar().await?.start_of(day));
        }
        self.store.list_credits(&query).await.map_err(store_error)
    }

    /// One active credit with its active applications (D44).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or soft-deleted.
    pub async fn get_credit(&self, principal: &Principal, id: VendorCreditId) -> Result<VendorCredit> {
        principal.require(Access::new(Collection::VendorCredit, Action::Read))?;
        let shown = |credit: &VendorCredit| credit.is_active && principal.scope.contains(credit.branch_id);
        visible(self.store.get_credit(id).await, shown, Entity::VendorCredit)
    }

    /// Records a claim on an active vendor (D44), idempotently (D23), of the branch it names or
    /// the default one (D49).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (an inactive vendor or branch, an invoice of
    /// another vendor or branch, a claim dated after today); [`Error::Conflict`] for a number the vendor's active
    /// credits hold (D5); idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_credit(
        &self,
        principal: &Principal,
        credit: NewVendorCredit,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<VendorCredit>> {
        principal.require(Access::new(Collection::VendorCredit, Action::Create))?;
        let mut credit = credit.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        // D49: a credit that names no branch goes to the caller's default.
        credit.branch_id = Some(self.branch_for_create(principal, credit.branch_id).await?);
        let ctx = self.announcing(self.ctx_with(principal, credit.audit_changes())).await?;
        let insert = |ctx| async move { self.store.insert_credit(credit, ctx).await.map_err(store_error) };
        self.create_idempotently(principal, idempotency, ctx, insert, |id| self.store.get_credit(VendorCreditId(id)))
            .await
    }

    /// Replaces a credit's claim (D14, D44); its decision and applications stay.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also a claim below the accepted amount, or a
    /// new vendor for an applied credit); [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(credit_id = %id))]
    pub async fn update_credit(
        &self,
        principal: &Principal,
        id: VendorCreditId,
        credit: NewVendorCredit,
    ) -> Result<VendorCredit> {
        principal.require(Access::new(Collection::VendorCredit, Action::Update))?;
        let credit = credit.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        // D49: a move goes only to a branch of the caller's.
        if let Some(branch) = credit.branch_id {
            self.check_branch_in_scope(principal, branch).await?;
        }
        let ctx = self.announcing(self.ctx_with(principal, credit.audit_changes())).await?;
        self.store.update_credit(id, credit, ctx).await.map_err(store_error)
    }

    /// Records the distributor's decision on a claim (D44); a decided credit may be decided again.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] naming `acceptedAmount` or `decisionDate`;
    /// [`Error::NotFound`].
    #[instrument(skip_all, fields(credit_id = %id))]
    pub async fn decide_credit(
        &self,
        principal: &Principal,
        id: VendorCreditId,
        decision: CreditDecision,
    ) -> Result<VendorCredit> {
        principal.require(Access::new(Collection::VendorCredit, Action::Update))?;
        let decision = decision.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        let ctx = self.announcing(self.ctx_with(principal, decision.audit_changes())).await?;
        self.store.decide_credit(id, decision, ctx).await.map_err(store_error)
    }

    /// Sets an accepted credit against the vendor's bills (D44): as `allocations` say, or over
    /// the open invoices oldest due first, never more than is available nor more than an invoice
    /// still owes. Idempotent like every create (D23); answers the credit with its applications.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] naming `amount`, `date` or the allocation at
    /// fault; [`Error::NotFound`]; idempotency clashes.
    #[instrument(skip_all, fields(credit_id = %id))]
    pub async fn apply_credit(
        &self,
        principal: &Principal,
        id: VendorCreditId,
        application: NewCreditApplication,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<VendorCredit>> {
        principal.require(Access::new(Collection::VendorCredit, Action::Update))?;
        let application = application.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        let ctx = self.announcing(self.ctx_with(principal, application.audit_changes(self.now()))).await?;
        let apply = |ctx| async move { self.store.apply_credit(id, application, ctx).await.map_err(store_error) };
        self.create_idempotently(principal, idempotency, ctx, apply, |id| self.store.get_credit(VendorCreditId(id)))
            .await
    }

    /// Undoes one application of a credit (D44): the invoice owes it again and the credit has it
    /// available again.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when the credit or the application is missing or
    /// deleted, or the application is another credit's.
    #[instrument(skip_all, fields(credit_id = %id, application_id = %application))]
    pub async fn undo_application(
        &self,
        principal: &Principal,
        id: VendorCreditId,
        application: CreditApplicationId,
    ) -> Result<()> {
        principal.require(Access::new(Collection::VendorCredit, Action::Update))?;
        self.store
            .undo_application(id, application, self.announcing(self.ctx(principal)).await?)
            .await
            .map_err(store_error)
    }

    /// Soft-deletes a credit and its applications, keeping `reason` in the audit log (D16, D44).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(credit_id = %id))]
    pub async fn delete_credit(&self, principal: &Principal, id: VendorCreditId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::VendorCredit, Action::Delete))?;
        let ctx = self.announcing(self.ctx_for_delete(principal, reason)?).await?;
        self.store.delete_credit(id, ctx).await.map_err(store_error)
    }

    /// Makes a soft-deleted credit active again, without its applications (D15, D44).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Conflict`] when its number is taken;
    /// [`Error::Rule`] when its vendor is inactive.
    #[instrument(skip_all, fields(credit_id = %id))]
    pub async fn restore_credit(&self, principal: &Principal, id: VendorCreditId) -> Result<VendorCredit> {
        principal.require(Access::new(Collection::VendorCredit, Action::Update))?;
        self.store.restore_credit(id, self.announcing(self.ctx(principal)).await?).await.map_err(store_error)
    }
}
