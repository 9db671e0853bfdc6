//! The rules of a branch's life (D49): the head office stays.

use crate::base::faults::{StoreError, StoreResult};
use crate::error::FieldErrors;
use crate::error::RuleBroken;
use crate::ids::BranchId;

use super::{HEAD_OFFICE_ID, Scope};

/// The branch a record that names none is kept in by a store (D49): the head office. The engine
/// names the branch of every create from the caller's scope first ([`default_branch`]), so this
/// is what bulk loads and a record written without a caller (seed data) fall back to.
pub fn branch_of_create(named: Option<BranchId>) -> BranchId {
    named.unwrap_or(HEAD_OFFICE_ID)
}

/// The branch a create that names none goes to for a caller of `scope` (D49): their only
/// branch when they hold one, the head office when they hold every branch.
///
/// # Errors
/// A message under `branchId` for a caller holding several branches: they must name one.
pub fn default_branch(scope: &Scope) -> Result<BranchId, FieldErrors> {
    match scope {
        Scope::All => Ok(HEAD_OFFICE_ID),
        scope => scope.only().ok_or_else(|| {
            FieldErrors::single("branchId", "is required: you hold several branches, so name the one it belongs to")
        }),
    }
}

/// A record of `branch` exists for a writer of `scope` only when the scope holds it (D49): a
/// store checks this under the record's lock before changing it.
///
/// # Errors
/// `NotFound(entity)`: another branch's record is answered as a missing one.
pub fn check_in_scope(scope: &Scope, branch: BranchId, entity: crate::error::Entity) -> StoreResult<()> {
    if scope.contains(branch) { Ok(()) } else { Err(StoreError::NotFound(entity)) }
}

/// A branch may be deleted unless it is the head office.
///
/// # Errors
/// `Rule(HeadOfficeDelete)` for branch 1.
pub fn check_delete(id: BranchId) -> StoreResult<()> {
    if id == HEAD_OFFICE_ID { Err(StoreError::Rule(RuleBroken::HeadOfficeDelete)) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::faults::refusal;

    #[test]
    fn a_create_naming_no_branch_goes_to_the_callers_default() {
        assert_eq!(default_branch(&Scope::All).unwrap(), HEAD_OFFICE_ID);
        assert_eq!(default_branch(&Scope::of([BranchId(4)])).unwrap(), BranchId(4));
        assert!(default_branch(&Scope::of([BranchId(4), BranchId(5)])).unwrap_err().contains("branchId"));
        let store = Scope::of([BranchId(4)]);
        assert!(check_in_scope(&store, BranchId(4), crate::error::Entity::Invoice).is_ok());
        assert!(matches!(
            check_in_scope(&store, HEAD_OFFICE_ID, crate::error::Entity::Invoice),
            Err(StoreError::NotFound(crate::error::Entity::Invoice))
        ));
    }

    #[test]
    fn only_the_head_office_stays() {
        assert_eq!(refusal(check_delete(HEAD_OFFICE_ID)), Some(RuleBroken::HeadOfficeDelete));
        assert_eq!(refusal(check_delete(BranchId(2))), None);
    }
}
