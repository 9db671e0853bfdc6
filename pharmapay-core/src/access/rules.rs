//! The guard rails around people: nobody deletes themself, the last admin stays (D18), and the
//! system roles keep their names and their existence.
//!
//! A store locks the user or role a write changes, loads the facts named here (for the last
//! admin, how many active admins there are, under the lock that serialises access changes) and
//! asks the rule; a refusal leaves nothing written. These rules come after the records are
//! found, their parents checked, what the write gives judged (D38) and its unique values found
//! free, as the stores' contract orders them.

use crate::access::ADMIN_ROLE_ID;
use crate::error::RuleBroken;
use crate::ids::{RoleId, UserId};
use crate::store::{StoreError, StoreResult};

/// What the guard rails need to know about the user a write changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserFacts {
    /// The user.
    pub id: UserId,
    /// Their role as it stands before the write.
    pub role_id: RoleId,
}

impl UserFacts {
    fn is_admin(self) -> bool {
        self.role_id == ADMIN_ROLE_ID
    }
}

/// What the guard rails need to know about the role a write changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoleFacts<'a> {
    /// Its name as it stands, exactly as written.
    pub name: &'a str,
    /// Whether it is one of the seeded system roles (D27).
    pub is_system: bool,
}

/// The last active admin keeps the Admin role (D18): a change of `user`'s role to `next_role`,
/// with `active_admins` active admins counted before it.
///
/// # Errors
/// `Rule(LastAdmin)` when the change would leave no active admin.
pub fn check_user_change(user: UserFacts, next_role: RoleId, active_admins: u64) -> StoreResult<()> {
    if user.is_admin() && next_role != ADMIN_ROLE_ID && active_admins <= 1 {
        return Err(StoreError::Rule(RuleBroken::LastAdmin));
    }
    Ok(())
}

/// Whether `actor` may delete `target`: nobody deletes themself (D18). The engine asks this
/// before it reads anything else of the request, and the store's delete asks it again through
/// [`check_user_delete`].
///
/// # Errors
/// `Rule(DeleteSelf)` when the actor is the target.
pub fn check_not_self(actor: Option<UserId>, target: UserId) -> StoreResult<()> {
    if actor == Some(target) {
        return Err(StoreError::Rule(RuleBroken::DeleteSelf));
    }
    Ok(())
}

/// A delete of `user` by `actor`, with `active_admins` active admins counted before it: not
/// oneself, and not the last active admin (D18).
///
/// # Errors
/// `Rule(DeleteSelf)`, then `Rule(LastAdmin)`.
pub fn check_user_delete(user: UserFacts, actor: Option<UserId>, active_admins: u64) -> StoreResult<()> {
    check_not_self(actor, user.id)?;
    if user.is_admin() && active_admins <= 1 {
        return Err(StoreError::Rule(RuleBroken::LastAdmin));
    }
    Ok(())
}

/// A system role keeps its name; its description may change.
///
/// # Errors
/// `Rule(SystemRoleRename)` when a system role's name would change (even only in case).
pub fn check_role_update(role: RoleFacts<'_>, next_name: &str) -> StoreResult<()> {
    if role.is_system && role.name != next_name {
        return Err(StoreError::Rule(RuleBroken::SystemRoleRename));
    }
    Ok(())
}

/// A system role cannot be deleted.
///
/// # Errors
/// `Rule(SystemRoleDelete)` for a system role.
pub fn check_role_delete(role: RoleFacts<'_>) -> StoreResult<()> {
    if role.is_system {
        return Err(StoreError::Rule(RuleBroken::SystemRoleDelete));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::PHARMACIST_ROLE_ID;
    use crate::base::faults::refusal as rule;

    const ADMIN: UserFacts = UserFacts { id: UserId(1), role_id: ADMIN_ROLE_ID };
    const PHARMACIST: UserFacts = UserFacts { id: UserId(2), role_id: PHARMACIST_ROLE_ID };

    #[test]
    fn the_last_admin_keeps_the_admin_role() {
        assert_eq!(rule(check_user_change(ADMIN, PHARMACIST_ROLE_ID, 1)), Some(RuleBroken::LastAdmin));
        assert_eq!(rule(check_user_change(ADMIN, PHARMACIST_ROLE_ID, 0)), Some(RuleBroken::LastAdmin));
        assert_eq!(rule(check_user_change(ADMIN, PHARMACIST_ROLE_ID, 2)), None, "another admin remains");
        assert_eq!(rule(check_user_change(ADMIN, ADMIN_ROLE_ID, 1)), None, "keeping the role changes nothing");
        assert_eq!(rule(check_user_change(PHARMACIST, ADMIN_ROLE_ID, 1)), None, "a promotion adds an admin");
        assert_eq!(rule(check_user_change(PHARMACIST, RoleId(9), 1)), None, "non-admins move freely");
    }

    #[test]
    fn nobody_deletes_themself() {
        assert_eq!(rule(check_not_self(Some(UserId(2)), UserId(2))), Some(RuleBroken::DeleteSelf));
        assert_eq!(rule(check_not_self(Some(UserId(1)), UserId(2))), None);
        assert_eq!(rule(check_not_self(None, UserId(2))), None, "the system acts for nobody");
        assert_eq!(rule(check_user_delete(ADMIN, Some(ADMIN.id), 5)), Some(RuleBroken::DeleteSelf));
        assert_eq!(
            rule(check_user_delete(ADMIN, Some(ADMIN.id), 1)),
            Some(RuleBroken::DeleteSelf),
            "deleting oneself answers first, even as the last admin"
        );
    }

    #[test]
    fn the_last_admin_cannot_be_deleted() {
        assert_eq!(rule(check_user_delete(ADMIN, Some(UserId(9)), 1)), Some(RuleBroken::LastAdmin));
        assert_eq!(rule(check_user_delete(ADMIN, Some(UserId(9)), 2)), None);
        assert_eq!(rule(check_user_delete(PHARMACIST, Some(UserId(9)), 1)), None, "non-admins go freely");
    }

    #[test]
    fn system_roles_keep_their_names_and_their_existence() {
        let system = RoleFacts { name: "Admin", is_system: true };
        let custom = RoleFacts { name: "Cashier", is_system: false };
        assert_eq!(rule(check_role_update(system, "Admin")), None, "the description may change");
        assert_eq!(rule(check_role_update(system, "admin")), Some(RuleBroken::SystemRoleRename), "case counts");
        assert_eq!(rule(check_role_update(system, "Boss")), Some(RuleBroken::SystemRoleRename));
        assert_eq!(rule(check_role_update(custom, "Teller")), None);
        assert_eq!(rule(check_role_delete(system)), Some(RuleBroken::SystemRoleDelete));
        assert_eq!(rule(check_role_delete(custom)), None);
    }
}
