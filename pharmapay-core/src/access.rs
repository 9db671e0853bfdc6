//! Who may do what: permissions, their resolution (D19) and the authenticated caller.
//!
//! A permission is written `Collection:Action`. Checks run against the [`Principal`] built from
//! a verified token: admins pass every check (spec, Authentication 6); everyone else needs the
//! named permission in their token's `perm` claim. Resolution of a user's permissions from role
//! and policies happens in the store (D19); this module holds the vocabulary and the check.

use std::fmt;

use jiff::Timestamp;

use crate::error::Error;
use crate::ids::{PermissionId, RoleId, UserId};
use crate::rules::grants::Escalation;

/// The role seeded as `Admin`: its users are admins (D18, D27).
pub const ADMIN_ROLE_ID: RoleId = RoleId(1);
/// The role seeded as `Pharmacist` (D27).
pub const PHARMACIST_ROLE_ID: RoleId = RoleId(2);

/// What a permission is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collection {
    /// Vendors.
    Vendor,
    /// Invoices.
    Invoice,
    /// Payment transactions.
    Transaction,
    /// Dashboard figures.
    Dashboard,
    /// Application settings.
    Setting,
    /// Policies.
    Policy,
    /// Permissions.
    Permission,
    /// Roles.
    Role,
    /// Users.
    User,
    /// The audit log (D22).
    AuditLog,
    /// Vendor credits (D44).
    VendorCredit,
    /// Bank statements (D46).
    BankStatement,
    /// Webhooks and the event feed (D47).
    Webhook,
}

impl Collection {
    /// Every collection, in seeding order.
    pub const ALL: [Collection; 13] = [
        Collection::Vendor,
        Collection::Invoice,
        Collection::Transaction,
        Collection::Dashboard,
        Collection::Setting,
        Collection::Policy,
        Collection::Permission,
        Collection::Role,
        Collection::User,
        Collection::AuditLog,
        Collection::VendorCredit,
        Collection::BankStatement,
        Collection::Webhook,
    ];

    /// The name as written in a permission.
    pub fn name(self) -> &'static str {
        match self {
            Collection::Vendor => "Vendor",
            Collection::Invoice => "Invoice",
            Collection::Transaction => "Transaction",
            Collection::Dashboard => "Dashboard",
            Collection::Setting => "Setting",
            Collection::Policy => "Policy",
            Collection::Permission => "Permission",
            Collection::Role => "Role",
            Collection::User => "User",
            Collection::AuditLog => "AuditLog",
            Collection::VendorCredit => "VendorCredit",
            Collection::BankStatement => "BankStatement",
            Collection::Webhook => "Webhook",
        }
    }
}

/// What a permission allows on its collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Read.
    Read,
    /// Create.
    Create,
    /// Update (and restore, D15).
    Update,
    /// Delete.
    Delete,
}

impl Action {
    /// Every action, in seeding order.
    pub const ALL: [Action; 4] = [Action::Read, Action::Create, Action::Update, Action::Delete];

    /// The name as written in a permission.
    pub fn name(self) -> &'static str {
        match self {
            Action::Read => "Read",
            Action::Create => "Create",
            Action::Update => "Update",
            Action::Delete => "Delete",
        }
    }
}

/// A permission a use case requires, such as `Vendor:Read`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// The collection.
    pub collection: Collection,
    /// The action.
    pub action: Action,
}

impl Access {
    /// `collection:action`.
    pub const fn new(collection: Collection, action: Action) -> Self {
        Self { collection, action }
    }

    /// Parses `Collection:Action` exactly as written in tokens; unknown names give `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let (collection, action) = text.split_once(':')?;
        let collection = Collection::ALL.into_iter().find(|c| c.name() == collection)?;
        let action = Action::ALL.into_iter().find(|a| a.name() == action)?;
        Some(Self { collection, action })
    }

    /// The permission's bit in a [`PermissionSet`]: four per collection, one per action, both
    /// numbered as declared.
    fn bit(self) -> u64 {
        1 << (self.collection as u32 * 4 + self.action as u32)
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.collection.name(), self.action.name())
    }
}

/// What an operation needs beyond a valid token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// One permission.
    Permission(Access),
    /// An admin token (listing soft-deleted vendors, spec Vendors).
    Admin,
    /// Holding everything a write would give (D38): what the caller lacks.
    Grant(Escalation),
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Permission(access) => access.fmt(f),
            Requirement::Admin => f.write_str("admin"),
            Requirement::Grant(missing) => missing.fmt(f),
        }
    }
}

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

/// A set of [`Access`] values, as a bit set: checks cost one AND.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PermissionSet(u64);

impl PermissionSet {
    /// The empty set.
    pub fn empty() -> Self {
        Self(0)
    }

    /// Adds one permission.
    pub fn insert(&mut self, access: Access) {
        self.0 |= access.bit();
    }

    /// True when `access` is in the set.
    pub fn contains(self, access: Access) -> bool {
        self.0 & access.bit() != 0
    }

    /// The permissions in this set or in `other`.
    pub fn union(self, other: PermissionSet) -> PermissionSet {
        Self(self.0 | other.0)
    }

    /// The permissions of this set that `other` lacks.
    pub fn without(self, other: PermissionSet) -> PermissionSet {
        Self(self.0 & !other.0)
    }

    /// True when the set holds nothing.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The set of the permissions listed, skipping any that names no known [`Access`].
    pub fn from_permissions<'a>(permissions: impl IntoIterator<Item = &'a Permission>) -> Self {
        let mut set = Self::empty();
        for access in permissions.into_iter().filter_map(Permission::access) {
            set.insert(access);
        }
        set
    }

    /// Builds a set from `Collection:Action` strings, skipping ones it does not know.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut set = Self::empty();
        for access in names.into_iter().filter_map(Access::parse) {
            set.insert(access);
        }
        set
    }

    /// The permissions in the set, in seeding order.
    pub fn iter(self) -> impl Iterator<Item = Access> {
        Collection::ALL
            .into_iter()
            .flat_map(|collection| Action::ALL.into_iter().map(move |action| Access::new(collection, action)))
            .filter(move |access| self.contains(*access))
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
        let collection = Collection::ALL.into_iter().find(|c| c.name() == self.collection)?;
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

    /// Passes only for admins.
    ///
    /// # Errors
    /// [`Error::Forbidden`] for everyone else.
    pub fn require_admin(&self) -> Result<(), Error> {
        if self.is_admin { Ok(()) } else { Err(Error::Forbidden { required: Requirement::Admin }) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_permission_has_a_bit_of_its_own() {
        let every = Collection::ALL.into_iter().flat_map(|c| Action::ALL.into_iter().map(move |a| Access::new(c, a)));
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
        for collection in Collection::ALL {
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
