//! Restores under an active parent (D15).
//!
//! A soft-deleted invoice comes back only while its vendor is active, a payment only while its
//! invoice is, a user only while their role is. A store locks the record and reads its parent's
//! state in the restore's transaction and asks [`check_parent`]. Unlike a create or an update,
//! which names its parent in the request (an inactive one is that field's fault, a 400 on the
//! field), a restore names no parent: the refusal is a rule of the record's life.

use crate::error::{Entity, RuleBroken};
use crate::store::{StoreError, StoreResult};

/// A restore may go on when its `parent` (a missing one counts as inactive) is active.
///
/// # Errors
/// `Rule(ParentInactive(parent))` otherwise.
pub fn check_parent(parent: Entity, parent_active: bool) -> StoreResult<()> {
    if parent_active { Ok(()) } else { Err(StoreError::Rule(RuleBroken::ParentInactive(parent))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_active_parent_lets_the_record_back() {
        assert!(check_parent(Entity::Vendor, true).is_ok());
    }

    #[test]
    fn an_inactive_parent_is_named_in_the_refusal() {
        for parent in [Entity::Vendor, Entity::Invoice, Entity::Role] {
            match check_parent(parent, false) {
                Err(StoreError::Rule(RuleBroken::ParentInactive(named))) => assert_eq!(named, parent),
                other => panic!("{parent}: expected a refusal naming it, got {other:?}"),
            }
        }
    }
}
