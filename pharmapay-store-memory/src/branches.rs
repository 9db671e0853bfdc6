//! The chain's branches (D49): [`BranchStore`]. Codes are unique among active branches,
//! compared as kept (upper-cased); the head office is never deleted, as
//! [`branch_rules::check_delete`] says.

use pharmapay_core::branches::Scope;
use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::branches::scope::BranchFacts;
use pharmapay_core::branches::{Branch, HEAD_OFFICE_ID, NewBranch};
use pharmapay_core::error::Entity;
use pharmapay_core::ids::BranchId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::store::{BranchStore, StoreError, StoreResult, UniqueKey, WriteContext};

use crate::{BranchRow, MemoryStore, State};

impl State {
    pub(crate) fn branch(&self, id: i64) -> Option<Branch> {
        let row = self.branches.get(&id)?;
        Some(Branch {
            id: BranchId(id),
            code: row.code.clone(),
            name: row.name.clone(),
            gstin: row.gstin.clone(),
            address: row.address.clone(),
            phone: row.phone.clone(),
            drug_license_number: row.drug_license_number.clone(),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }

    /// The code of branch `id`, as records show it beside their `branchId` (D49).
    pub(crate) fn branch_code(&self, id: i64) -> String {
        self.branches.get(&id).map(|row| row.code.clone()).unwrap_or_default()
    }

    /// The branch of invoice `id` (D49): a payment's is its invoice's.
    pub(crate) fn invoice_branch(&self, id: i64) -> BranchId {
        BranchId(self.invoices.get(&id).map_or(HEAD_OFFICE_ID.get(), |row| row.branch_id))
    }

    /// Whether branch `id` exists and is active: a new record may name it (D49).
    pub(crate) fn active_branch(&self, id: i64) -> bool {
        self.branches.get(&id).is_some_and(|row| row.is_active)
    }

    /// The branches the scopes name, as a scope write checks them (D49).
    pub(crate) fn branch_facts<'a>(&self, scopes: impl IntoIterator<Item = &'a Scope>) -> Vec<BranchFacts> {
        let ids: std::collections::BTreeSet<BranchId> =
            scopes.into_iter().filter_map(Scope::ids).flatten().copied().collect();
        ids.into_iter()
            .filter_map(|id| {
                let row = self.branches.get(&id.get())?;
                Some(BranchFacts { id, code: row.code.clone(), is_active: row.is_active })
            })
            .collect()
    }

    /// Every active branch's id and code, for the imports that name branches by code (D49).
    pub(crate) fn active_branches(&self) -> Vec<(BranchId, String)> {
        self.branches
            .iter()
            .filter(|(_, row)| row.is_active)
            .map(|(id, row)| (BranchId(*id), row.code.clone()))
            .collect()
    }

    /// Whether an active branch other than `except` holds `code`.
    fn branch_code_taken(&self, code: &str, except: Option<i64>) -> bool {
        self.branches.iter().any(|(id, row)| row.is_active && row.code == code && Some(*id) != except)
    }

    /// Names the head office after the pharmacy at onboarding (D49).
    pub(crate) fn name_head_office(&mut self, name: String, at: Timestamp) {
        if let Some(row) = self.branches.get_mut(&HEAD_OFFICE_ID.get()) {
            row.name = name;
            row.updated_at = at;
        }
    }
}

impl BranchRow {
    fn replace(&mut self, branch: NewBranch, at: Timestamp) {
        self.code = branch.code;
        self.name = branch.name;
        self.gstin = branch.gstin.map(|gstin| gstin.as_str().to_owned());
        self.address = branch.address;
        self.phone = branch.phone;
        self.drug_license_number = branch.drug_license_number;
        self.updated_at = at;
    }
}

impl BranchStore for MemoryStore {
    async fn list_branches(&self) -> StoreResult<Vec<Branch>> {
        let state = self.read();
        let mut branches: Vec<Branch> =
            state.branches.iter().filter(|(_, row)| row.is_active).filter_map(|(id, _)| state.branch(*id)).collect();
        branches.sort_by(|a, b| (!a.is_head_office(), &a.code).cmp(&(!b.is_head_office(), &b.code)));
        Ok(branches)
    }

    async fn get_branch(&self, id: BranchId) -> StoreResult<Option<Branch>> {
        Ok(self.read().branch(id.get()))
    }

    async fn insert_branch(&self, branch: NewBranch, ctx: WriteContext) -> StoreResult<Branch> {
        let mut state = self.write();
        if state.branch_code_taken(&branch.code, None) {
            return Err(StoreError::Conflict(UniqueKey::BranchCode));
        }
        let id = state.next("branch");
        let mut row = BranchRow {
            code: String::new(),
            name: String::new(),
            gstin: None,
            address: None,
            phone: None,
            drug_license_number: None,
            is_active: true,
            created_at: ctx.at,
            updated_at: ctx.at,
        };
        row.replace(branch, ctx.at);
        state.branches.insert(id, row);
        state.finish_write(&ctx, "create", Entity::Branch, id);
        Ok(state.branch(id).expect("just written"))
    }

    async fn update_branch(&self, id: BranchId, branch: NewBranch, ctx: WriteContext) -> StoreResult<Branch> {
        let mut state = self.write();
        if !state.branches.get(&id.get()).is_some_and(|row| row.is_active) {
            return Err(StoreError::NotFound(Entity::Branch));
        }
        if state.branch_code_taken(&branch.code, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::BranchCode));
        }
        state.branches.get_mut(&id.get()).expect("checked above").replace(branch, ctx.at);
        state.finish_write(&ctx, "update", Entity::Branch, id.get());
        Ok(state.branch(id.get()).expect("just written"))
    }

    async fn delete_branch(&self, id: BranchId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let Some(row) = state.branches.get_mut(&id.get()).filter(|row| row.is_active) else {
            return Err(StoreError::NotFound(Entity::Branch));
        };
        branch_rules::check_delete(id)?;
        row.is_active = false;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "delete", Entity::Branch, id.get());
        Ok(())
    }

    async fn restore_branch(&self, id: BranchId, ctx: WriteContext) -> StoreResult<Branch> {
        let mut state = self.write();
        let Some(code) = state.branches.get(&id.get()).filter(|row| !row.is_active).map(|row| row.code.clone()) else {
            return Err(StoreError::NotFound(Entity::Branch));
        };
        if state.branch_code_taken(&code, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::BranchCode));
        }
        let row = state.branches.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "restore", Entity::Branch, id.get());
        Ok(state.branch(id.get()).expect("just written"))
    }
}
