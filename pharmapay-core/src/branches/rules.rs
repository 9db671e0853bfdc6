//! The rules of a branch's life (D49): the head office stays.

use crate::base::faults::{StoreError, StoreResult};
use crate::error::RuleBroken;
use crate::ids::BranchId;

use super::HEAD_OFFICE_ID;

/// The branch a create that names none goes to (D49): the head office, the default of a caller
/// whose scope is all branches (every caller's, until scopes are kept per user).
pub fn branch_of_create(named: Option<BranchId>) -> BranchId {
    named.unwrap_or(HEAD_OFFICE_ID)
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
    fn only_the_head_office_stays() {
        assert_eq!(refusal(check_delete(HEAD_OFFICE_ID)), Some(RuleBroken::HeadOfficeDelete));
        assert_eq!(refusal(check_delete(BranchId(2))), None);
    }
}
