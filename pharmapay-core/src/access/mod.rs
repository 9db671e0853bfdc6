//! Who may do what: permissions, their resolution (D19) and the authenticated caller.
//!
//! A permission is written `Collection:Action`. Checks run against the [`Principal`] built from
//! a verified token: admins pass every check (spec, Authentication 6); everyone else needs the
//! named permission in their token's `perm` claim. Resolution of a user's permissions from role
//! and policies happens in the store (D19); this module holds the vocabulary and the check.

mod engine;
pub mod grants;
pub mod policy;
pub mod role;
pub mod rules;
pub mod store;
pub mod user;

use jiff::Timestamp;

use crate::error::Error;
use crate::ids::{PermissionId, RoleId, UserId};

pub use crate::base::permissions::{Access, Action, Collection, PermissionSet, Requirement};

/// The role seeded as `Admin`: its users are admins (D18, D27).
pub const ADMIN_ROLE_ID: RoleId = RoleId(1);
/// The role seeded as `Pharmacist` (D27).
pub const PHARMACIST_ROLE_ID: RoleId = RoleId(2);

/// What a caller may give others through roles and policies (D38): everything, or only the
/// permissions their token holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authority {
    /// An admin, or the system itself (onboarding, imports): no limit.
    Full,
    /// Anyone else: at most these permissions, and never the Admin role.
    Limited(PermissionSet),
}

impl Authority {
    /// The authority a verified caller's token proves.
    pub fn of(principal: &Principal) -> Self {
        if principal.is_admin { Authority::Full } else { Authority::Limited(principal.permissions) }
    }
}

/// A permission as stored and listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permission {
    /// Its id.
    pub id: PermissionId,
    /// The collection name, such as `Vendor`.
    pub collection: String,
    /// The action name, such as `Read`.
    pub action: String,
    /// What it allows.
    pub description: String,
}

impl Permission {
    /// `Collection:Action`.
    pub fn code(&self) -> String {
        format!("{}:{}", self.collection, self.action)
    }

    /// What the permission allows, when it names a known collection and action.
    pub fn access(&self) -> Option<Access> {
        let collection = Collection::ALL.iter().copied().find(|c| c.name() == self.collection)?;
        let action = Action::ALL.into_iter().find(|a| a.name() == self.action)?;
        Some(Access::new(collection, action))
    }

    /// The wildcard entry `GET /api/users/me/permissions` answers for an admin (D19).
    pub fn full_access() -> Self {
        Self { id: PermissionId(0), collection: "*".into(), action: "*".into(), description: "Full access".into() }
    }
}

/// The authenticated caller, as proven by a verified token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// The user's id (`sub`).
    pub user_id: UserId,
    /// The user's email (`email`).
    pub email: String,
    /// First name (`given_name`).
    pub first_name: String,
    /// Last name (`family_name`).
    pub last_name: String,
    /// Role id (`role_id`).
    pub role_id: RoleId,
    /// Whether every check is bypassed (`is_admin`).
    pub is_admin: bool,
    /// The resolved permissions (`perm`).
    pub permissions: PermissionSet,
    /// The branches the caller sees and writes in (`branches`, D49).
    pub scope: crate::branches::Scope,
    /// When the token expires (`exp`).
    pub expires_at: Timestamp,
}

impl Principal {
    /// Passes when the caller is an admin or holds `access`.
    ///
    /// # Errors
    /// [`Error::Forbidden`] naming the missing permission.
    pub fn require(&self, access: Access) -> Result<(), Error> {
        if self.is_admin || self.permissions.contains(access) {
            Ok(())
        } else {
            Err(Error::Forbidden { required: Requirement::Permission(access) })
        }
    }

    /// Whether the caller is an admin or holds `access`: what [`Principal::require`] checks,
    /// for answers that show less to those without it (D51).
    pub fn may(&self, access: Access) -> bool {
        self.require(access).is_ok()
    }

    /// Passes for a caller whose scope is every branch (D49): chain-wide writes and reads.
    ///
    /// # Errors
    /// [`Error::Forbidden`] naming all branches.
    pub fn require_all_branches(&self) -> Result<(), Error> {
        if self.scope.is_all() {
            Ok(())
        } else {
            Err(Error::Forbidden { required: Requirement::Scope(crate::base::permissions::ScopeNeed::All) })
        }
    }

    /// Passes only for admins.
    ///
    /// # Errors
    /// [`Error::Forbidden`] for everyone else.
    pub fn require_admin(&self) -> Result<(), Error> {
        if self.is_admin { Ok(()) } else { Err(Error::Forbidden { required: Requirement::Admin }) }
    }
}

impl PermissionSet {
    /// The set of the permissions listed, skipping any that names no known [`Access`].
    pub fn from_permissions<'a>(permissions: impl IntoIterator<Item = &'a Permission>) -> Self {
        let mut set = Self::empty();
        for access in permissions.into_iter().filter_map(Permission::access) {
            set.insert(access);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_permission_has_a_bit_of_its_own() {
        let every =
            Collection::ALL.iter().copied().flat_map(|c| Action::ALL.into_iter().map(move |a| Access::new(c, a)));
        let bits: std::collections::BTreeSet<u64> = every.map(Access::bit).collect();
        assert_eq!(bits.len(), Collection::ALL.len() * Action::ALL.len());
    }

    fn principal(is_admin: bool, perms: &[&str]) -> Principal {
        Principal {
            user_id: UserId(7),
            email: "p@example.com".into(),
            first_name: "P".into(),
            last_name: "Q".into(),
            role_id: RoleId(2),
            is_admin,
            permissions: PermissionSet::from_names(perms.iter().copied()),
            scope: crate::branches::Scope::All,
            expires_at: Timestamp::UNIX_EPOCH,
        }
    }

    const VENDOR_READ: Access = Access::new(Collection::Vendor, Action::Read);

    #[test]
    fn permissions_parse_exactly_as_written() {
        assert_eq!(Access::parse("Vendor:Read"), Some(VENDOR_READ));
        assert_eq!(Access::parse("AuditLog:Read").unwrap().to_string(), "AuditLog:Read");
        for bad in ["vendor:read", "Vendor", "Vendor:Fly", "*:Create", ":", ""] {
            assert_eq!(Access::parse(bad), None, "input {bad:?}");
        }
    }

    #[test]
    fn a_user_needs_the_named_permission() {
        let reader = principal(false, &["Vendor:Read", "Invoice:Create"]);
        assert!(reader.require(VENDOR_READ).is_ok());
        let denied = reader.require(Access::new(Collection::Vendor, Action::Delete));
        assert!(matches!(denied, Err(Error::Forbidden { required: Requirement::Permission(a) })
            if a.to_string() == "Vendor:Delete"));
        assert!(matches!(reader.require_admin(), Err(Error::Forbidden { required: Requirement::Admin })));
    }

    #[test]
    fn admins_bypass_every_check() {
        // Spec, Authentication 6: the admin token carries only `*:Create`, yet passes everything.
        let admin = principal(true, &["*:Create"]);
        for &collection in Collection::ALL {
            for action in Action::ALL {
                assert!(admin.require(Access::new(collection, action)).is_ok());
            }
        }
        assert!(admin.require_admin().is_ok());
    }

    #[test]
    fn permission_sets_list_in_seeding_order() {
        let set = PermissionSet::from_names(["User:Delete", "Vendor:Read", "Vendor:Read", "nonsense"]);
        let names: Vec<String> = set.iter().map(|a| a.to_string()).collect();
        assert_eq!(names, ["Vendor:Read", "User:Delete"]);
    }
}
