//! No escalation (D38): a caller who is not an admin cannot give anyone more than they hold.
//!
//! A write that would give access (a user's role, a policy's permissions, a policy attached to
//! a user or a role) describes what it gives as a [`Grant`]; the store loads that grant from its
//! current data inside the write's own transaction and asks [`check`] before any other rule.

use crate::access::{ADMIN_ROLE_ID, Authority, PermissionSet};
use crate::ids::RoleId;
use crate::store::{StoreError, StoreResult};

pub use crate::base::permissions::Escalation;

/// What a write would give to whoever holds the role or policy it touches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grant {
    /// The write gives the Admin role, which bypasses every check.
    pub admin_role: bool,
    /// The permissions the write gives.
    pub permissions: PermissionSet,
}

impl Grant {
    /// A grant of the Admin role.
    pub fn admin_role() -> Self {
        Self { admin_role: true, permissions: PermissionSet::empty() }
    }

    /// A grant of `permissions`.
    pub fn permissions(permissions: PermissionSet) -> Self {
        Self { admin_role: false, permissions }
    }

    /// What holding role `role_id` gives: the Admin role, or the permissions of the role's
    /// active policies (`permissions`, empty when the role is inactive).
    pub fn role(role_id: RoleId, permissions: PermissionSet) -> Self {
        Self { admin_role: role_id == ADMIN_ROLE_ID, permissions }
    }

    /// What this grant and `other` give together: restoring a user gives back their role and
    /// the policies attached to them directly (D48, amending D38).
    #[must_use]
    pub fn and(self, other: Grant) -> Self {
        Self { admin_role: self.admin_role || other.admin_role, permissions: self.permissions.union(other.permissions) }
    }
}

/// Passes when `authority` may give `grant`: admins (and the system itself) may give anything;
/// anyone else only permissions their token holds, and never the Admin role.
///
/// # Errors
/// [`StoreError::Escalation`] naming everything the grant holds beyond the authority.
pub fn check(authority: Authority, grant: Grant) -> StoreResult<()> {
    let Authority::Limited(held) = authority else { return Ok(()) };
    let missing = Escalation { admin_role: grant.admin_role, permissions: grant.permissions.without(held) };
    if missing == Escalation::default() { Ok(()) } else { Err(StoreError::Escalation(missing)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::access::{Action, Collection};

    fn set(names: &[&str]) -> PermissionSet {
        PermissionSet::from_names(names.iter().copied())
    }

    #[test]
    fn a_restored_user_gives_back_their_role_and_their_own_policies_together() {
        let role = Grant::role(RoleId(2), set(&["Vendor:Read"]));
        let own = Grant::permissions(set(&["AuditLog:Read", "User:Delete"]));
        let both = role.and(own);
        assert!(!both.admin_role);
        assert_eq!(both.permissions, set(&["Vendor:Read", "AuditLog:Read", "User:Delete"]));
        let missing = escalation(check(Authority::Limited(set(&["Vendor:Read", "User:Delete"])), both));
        assert_eq!(missing.to_string(), "AuditLog:Read", "only what the restorer lacks is named");
        assert!(Grant::role(ADMIN_ROLE_ID, PermissionSet::empty()).and(own).admin_role);
    }

    fn escalation(result: StoreResult<()>) -> Escalation {
        match result {
            Err(StoreError::Escalation(missing)) => missing,
            other => panic!("expected an escalation, got {other:?}"),
        }
    }

    #[test]
    fn admins_and_the_system_may_give_anything() {
        assert!(check(Authority::Full, Grant::admin_role()).is_ok());
        assert!(check(Authority::Full, Grant::permissions(set(&["User:Delete", "Vendor:Delete"]))).is_ok());
    }

    #[test]
    fn a_holder_may_give_what_they_hold_or_less() {
        let held = Authority::Limited(set(&["Vendor:Read", "Vendor:Create", "User:Create"]));
        assert!(check(held, Grant::permissions(set(&["Vendor:Read"]))).is_ok());
        assert!(check(held, Grant::permissions(set(&["Vendor:Read", "Vendor:Create", "User:Create"]))).is_ok());
        assert!(check(held, Grant::default()).is_ok(), "an empty grant gives nothing");
    }

    #[test]
    fn the_admin_role_is_never_given_by_a_holder() {
        let held = Authority::Limited(set(&["User:Create", "User:Update"]));
        let missing = escalation(check(held, Grant::admin_role()));
        assert!(missing.admin_role);
        assert_eq!(missing.to_string(), "Admin");
    }

    #[test]
    fn each_missing_permission_is_named() {
        let held = Authority::Limited(set(&["Vendor:Read", "Policy:Create"]));
        let missing =
            escalation(check(held, Grant::permissions(set(&["Vendor:Read", "Vendor:Delete", "User:Create"]))));
        assert!(!missing.admin_role);
        assert!(missing.permissions.contains(Access::new(Collection::Vendor, Action::Delete)));
        assert!(!missing.permissions.contains(Access::new(Collection::Vendor, Action::Read)));
        assert_eq!(missing.to_string(), "Vendor:Delete, User:Create");
    }

    #[test]
    fn the_admin_role_is_a_grant_of_admin_whatever_its_policies() {
        assert!(Grant::role(ADMIN_ROLE_ID, PermissionSet::empty()).admin_role);
        assert!(!Grant::role(RoleId(2), set(&["Vendor:Read"])).admin_role);
    }

    #[test]
    fn a_holder_with_no_permissions_may_give_nothing() {
        let missing =
            escalation(check(Authority::Limited(PermissionSet::empty()), Grant::permissions(set(&["Dashboard:Read"]))));
        assert_eq!(missing.to_string(), "Dashboard:Read");
    }
}
