//! Branch use cases (D49): the list, reads, creates, changes, soft deletes and restores.
//!
//! Every caller's scope is all branches until scopes are kept per user, so the writes that need
//! a scope of all branches need only their permission today.

use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal};
use crate::branches::{Branch, NewBranch};
use crate::engine::{PharmaPay, store_error, visible};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::BranchId;
use crate::store::Store;

impl<S: Store> PharmaPay<S> {
    /// The active branches, head office first, then by code (D49; not paginated).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_branches(&self, principal: &Principal) -> Result<Vec<Branch>> {
        principal.require(Access::new(Collection::Branch, Action::Read))?;
        self.store.list_branches().await.map_err(store_error)
    }

    /// One active branch.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or soft-deleted.
    pub async fn get_branch(&self, principal: &Principal, id: BranchId) -> Result<Branch> {
        principal.require(Access::new(Collection::Branch, Action::Read))?;
        visible(self.store.get_branch(id).await, |branch: &_| branch.is_active, Entity::Branch)
    }

    /// Creates a branch; it is never the head office (D7, D49).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::Conflict`] for a code another
    /// active branch holds; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_branch(
        &self,
        principal: &Principal,
        branch: NewBranch,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Branch>> {
        principal.require(Access::new(Collection::Branch, Action::Create))?;
        let branch = branch.validate().map_err(Error::Validation)?;
        let ctx = self.ctx_with(principal, branch.audit_changes());
        let insert = |ctx| async move { self.store.insert_branch(branch, ctx).await.map_err(store_error) };
        self.create_idempotently(principal, idempotency, ctx, insert, |id| self.store.get_branch(BranchId(id))).await
    }

    /// Replaces a branch's fields (D14).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(branch_id = %id))]
    pub async fn update_branch(&self, principal: &Principal, id: BranchId, branch: NewBranch) -> Result<Branch> {
        principal.require(Access::new(Collection::Branch, Action::Update))?;
        let branch = branch.validate().map_err(Error::Validation)?;
        let ctx = self.ctx_with(principal, branch.audit_changes());
        self.store.update_branch(id, branch, ctx).await.map_err(store_error)
    }

    /// Soft-deletes a branch, keeping `reason` in the audit log (D16); its records stay. The
    /// head office cannot be deleted.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`] for the head office.
    #[instrument(skip_all, fields(branch_id = %id))]
    pub async fn delete_branch(&self, principal: &Principal, id: BranchId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Branch, Action::Delete))?;
        let ctx = self.ctx_for_delete(principal, reason)?;
        self.store.delete_branch(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted branch active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or active; [`Error::Conflict`]
    /// when another active branch took its code meanwhile.
    #[instrument(skip_all, fields(branch_id = %id))]
    pub async fn restore_branch(&self, principal: &Principal, id: BranchId) -> Result<Branch> {
        principal.require(Access::new(Collection::Branch, Action::Update))?;
        self.store.restore_branch(id, self.ctx(principal)).await.map_err(store_error)
    }
}
