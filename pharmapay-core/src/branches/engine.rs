//! Branch use cases (D49): the list, reads, creates, changes, soft deletes and restores; and
//! how a caller's scope names the branch of a create or the branches of a list.
//!
//! Writing a branch needs a scope of all branches; a branch outside the caller's scope is
//! missing to them.

use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal, Requirement};
use crate::base::permissions::ScopeNeed;
use crate::branches::rules as branch_rules;
use crate::branches::{Branch, NewBranch};
use crate::engine::{PharmaPay, store_error, visible};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::BranchId;
use crate::store::Store;

impl<S: Store> PharmaPay<S> {
    /// The branch a create by `principal` goes to (D49): the one it names, which must be in
    /// their scope (else a 403 naming its code; an id that is no branch is the store's 400),
    /// or their default ([`branch_rules::default_branch`]).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] on `branchId`.
    pub(crate) async fn branch_for_create(&self, principal: &Principal, named: Option<BranchId>) -> Result<BranchId> {
        match named {
            Some(branch) => {
                self.check_branch_in_scope(principal, branch).await?;
                Ok(branch)
            }
            None => branch_rules::default_branch(&principal.scope).map_err(Error::Validation),
        }
    }

    /// Passes when `principal`'s scope holds `branch` (D49).
    ///
    /// # Errors
    /// [`Error::Forbidden`] naming the branch's code; [`Error::Validation`] on `branchId` when
    /// there is no such branch.
    pub(crate) async fn check_branch_in_scope(&self, principal: &Principal, branch: BranchId) -> Result<()> {
        if principal.scope.contains(branch) {
            return Ok(());
        }
        match self.store.get_branch(branch).await.map_err(store_error)? {
            Some(found) => Err(Error::Forbidden { required: Requirement::Scope(ScopeNeed::Codes(vec![found.code])) }),
            None => Err(Error::invalid("branchId", "must be an active branch")),
        }
    }

    /// The branches a list or figure of `principal` keeps (D49): those `requested` by the
    /// repeatable `branchId` filter, each a branch (else 400) in the caller's scope (else a
    /// 403 naming them), or else every branch of the scope; `None` for every branch there is.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] on `branchId`.
    pub(crate) async fn branch_filter(
        &self,
        principal: &Principal,
        requested: Option<&[BranchId]>,
    ) -> Result<Option<Vec<BranchId>>> {
        let Some(requested) = requested else { return Ok(principal.scope.ids().map(<[BranchId]>::to_vec)) };
        let mut outside = Vec::new();
        for branch in requested {
            match self.store.get_branch(*branch).await.map_err(store_error)? {
                None => return Err(Error::invalid("branchId", format!("names {}, which is no branch", branch.get()))),
                Some(found) if !principal.scope.contains(*branch) => outside.push(found.code),
                Some(_) => {}
            }
        }
        if outside.is_empty() {
            Ok(Some(requested.to_vec()))
        } else {
            Err(Error::Forbidden { required: Requirement::Scope(ScopeNeed::Codes(outside)) })
        }
    }

    /// The active branches, head office first, then by code (D49; not paginated).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_branches(&self, principal: &Principal) -> Result<Vec<Branch>> {
        principal.require(Access::new(Collection::Branch, Action::Read))?;
        // The branches are a chain's tens to hundreds, listed whole: the caller's are kept.
        let mut branches = self.store.list_branches().await.map_err(store_error)?;
        branches.retain(|branch| principal.scope.contains(branch.id));
        Ok(branches)
    }

    /// One active branch.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or soft-deleted.
    pub async fn get_branch(&self, principal: &Principal, id: BranchId) -> Result<Branch> {
        principal.require(Access::new(Collection::Branch, Action::Read))?;
        let found = self.store.get_branch(id).await;
        visible(found, |branch: &Branch| branch.is_active && principal.scope.contains(branch.id), Entity::Branch)
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
        principal.require_all_branches()?;
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
        principal.require_all_branches()?;
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
        principal.require_all_branches()?;
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
        principal.require_all_branches()?;
        self.store.restore_branch(id, self.ctx(principal)).await.map_err(store_error)
    }
}
