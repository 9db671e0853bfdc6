//! Storage for branches (D49): [`BranchStore`], part of [`Store`](crate::store::Store).

use std::future::Future;

use crate::branches::{Branch, NewBranch};
use crate::ids::BranchId;
use crate::store::{StoreResult, WriteContext};

/// Storage for the chain's branches. A code is unique among active branches
/// (`Conflict(BranchCode)`); the head office (branch 1) exists from the first start and is
/// never deleted, as [`crate::branches::rules::check_delete`] says.
pub trait BranchStore: Send + Sync + 'static {
    /// Every active branch: the head office first, then by code.
    fn list_branches(&self) -> impl Future<Output = StoreResult<Vec<Branch>>> + Send;

    /// The branch, active or not.
    fn get_branch(&self, id: BranchId) -> impl Future<Output = StoreResult<Option<Branch>>> + Send;

    /// Inserts a branch with a code free among active branches; it is never the head office.
    fn insert_branch(&self, branch: NewBranch, ctx: WriteContext) -> impl Future<Output = StoreResult<Branch>> + Send;

    /// Replaces an active branch's fields, its code free among the other active branches.
    fn update_branch(
        &self,
        id: BranchId,
        branch: NewBranch,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Branch>> + Send;

    /// Soft-deletes an active branch but the head office; its records stay as they are.
    fn delete_branch(&self, id: BranchId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted branch active again, if its code is free among active branches.
    fn restore_branch(&self, id: BranchId, ctx: WriteContext) -> impl Future<Output = StoreResult<Branch>> + Send;
}
