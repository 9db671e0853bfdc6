//! The data every installation starts with (D27): roles, permissions, the pharmacist's default
//! policy and the settings. Stores write it when they are created or migrated; ids are fixed so
//! every backend agrees.

use crate::access::{ADMIN_ROLE_ID, Access, Action, Collection, PHARMACIST_ROLE_ID};
use crate::ids::{PermissionId, PolicyId, RoleId};
use crate::reports::setting::{CURRENCY, TIME_ZONE};
use crate::vendors::licence::EXPIRED_LICENSE_POLICY;

/// A seeded role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRole {
    /// Fixed id.
    pub id: RoleId,
    /// Name.
    pub name: &'static str,
    /// Description.
    pub description: &'static str,
}

/// A seeded permission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedPermission {
    /// Fixed id.
    pub id: PermissionId,
    /// What it grants.
    pub access: Access,
    /// Description.
    pub description: String,
}

/// A seeded setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedSetting {
    /// Key.
    pub key: &'static str,
    /// Initial value.
    pub value: &'static str,
    /// Description.
    pub description: &'static str,
}

/// The seeded policy attached to the Pharmacist role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedPolicy {
    /// Fixed id.
    pub id: PolicyId,
    /// Name.
    pub name: &'static str,
    /// Description.
    pub description: &'static str,
    /// Its permissions.
    pub permission_ids: Vec<PermissionId>,
    /// The role it is attached to.
    pub role_id: RoleId,
}

/// The two system roles: `Admin` (id 1) and `Pharmacist` (id 2).
pub fn roles() -> [SeedRole; 2] {
    [
        SeedRole { id: ADMIN_ROLE_ID, name: "Admin", description: "Full access to everything" },
        SeedRole {
            id: PHARMACIST_ROLE_ID,
            name: "Pharmacist",
            description: "Day-to-day work with vendors, invoices and payments",
        },
    ]
}

/// Every permission, with ids 1, 2, ... in the order D27 gives.
pub fn permissions() -> Vec<SeedPermission> {
    use Action::{Create, Delete, Read, Update};
    use Collection as C;
    let crud = [Read, Create, Update, Delete];
    let mut list: Vec<Access> = Vec::new();
    for collection in [C::Vendor, C::Invoice, C::Transaction] {
        list.extend(crud.iter().map(|action| Access::new(collection, *action)));
    }
    list.push(Access::new(C::Dashboard, Read));
    list.push(Access::new(C::Setting, Read));
    list.push(Access::new(C::Setting, Update));
    for collection in [C::Policy, C::Role, C::User] {
        list.extend(crud.iter().map(|action| Access::new(collection, *action)));
    }
    list.push(Access::new(C::Permission, Read));
    list.push(Access::new(C::AuditLog, Read));
    // D44: ids 30 to 33, after the audit log's.
    list.extend(crud.iter().map(|action| Access::new(C::VendorCredit, *action)));
    // D46: ids 34 to 37, for admins only by default (no policy grants them).
    list.extend(crud.iter().map(|action| Access::new(C::BankStatement, *action)));
    // D47: ids 38 to 41, for admins only by default.
    list.extend(crud.iter().map(|action| Access::new(C::Webhook, *action)));
    // D49: ids 42 to 45; the Pharmacist Default policy holds `Branch:Read`.
    list.extend(crud.iter().map(|action| Access::new(C::Branch, *action)));
    list.into_iter()
        .enumerate()
        .map(|(index, access)| SeedPermission {
            id: PermissionId(index as i64 + 1),
            description: describe(access),
            access,
        })
        .collect()
}

fn describe(access: Access) -> String {
    let noun = match access.collection {
        Collection::Vendor => "vendors",
        Collection::Invoice => "invoices",
        Collection::Transaction => "payment transactions",
        Collection::Dashboard => "the dashboard",
        Collection::Setting => "settings",
        Collection::Policy => "policies",
        Collection::Permission => "permissions",
        Collection::Role => "roles",
        Collection::User => "users",
        Collection::AuditLog => "the audit log",
        Collection::VendorCredit => "vendor credits",
        Collection::BankStatement => "bank statements",
        Collection::Webhook => "webhooks and events",
        Collection::Branch => "branches",
    };
    let verb = match access.action {
        Action::Read => "View",
        Action::Create => "Create",
        Action::Update => "Update",
        Action::Delete => "Delete",
    };
    format!("{verb} {noun}")
}

/// The permission id of `access` in the seeded list.
pub fn permission_id(access: Access) -> PermissionId {
    permissions()
        .into_iter()
        .find(|permission| permission.access == access)
        .map(|permission| permission.id)
        .expect("every Access used by the seed is in the seeded list")
}

/// The `Pharmacist Default` policy: Vendor, Invoice and Transaction Read/Create/Update,
/// Dashboard:Read and Setting:Read (D27), VendorCredit Read/Create/Update (D44) and Branch:Read
/// (D49), attached to the Pharmacist role.
pub fn pharmacist_policy() -> SeedPolicy {
    use Action::{Create, Read, Update};
    let mut grants = Vec::new();
    for collection in [Collection::Vendor, Collection::Invoice, Collection::Transaction] {
        for action in [Read, Create, Update] {
            grants.push(Access::new(collection, action));
        }
    }
    grants.push(Access::new(Collection::Dashboard, Read));
    grants.push(Access::new(Collection::Setting, Read));
    // D44: vendor credits, as for the ledger.
    grants.extend([Read, Create, Update].map(|action| Access::new(Collection::VendorCredit, action)));
    // D49: every pharmacist sees the branches of their scope.
    grants.push(Access::new(Collection::Branch, Read));
    SeedPolicy {
        id: PolicyId(1),
        name: "Pharmacist Default",
        description: "What a pharmacist needs day to day",
        permission_ids: grants.into_iter().map(permission_id).collect(),
        role_id: PHARMACIST_ROLE_ID,
    }
}

/// The settings: `Currency` = `₹` and `TimeZone` = `UTC` (D27), and `ExpiredLicensePolicy` =
/// `Warn` (D36).
pub fn settings() -> [SeedSetting; 3] {
    [
        SeedSetting { key: CURRENCY, value: "₹", description: "Currency symbol shown in amounts" },
        SeedSetting { key: TIME_ZONE, value: "UTC", description: "IANA time zone for dates and the Overdue rule" },
        SeedSetting {
            key: EXPIRED_LICENSE_POLICY,
            value: "Warn",
            description: "Warn or Block: whether invoices dated after a vendor's drug licence expired are refused",
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_ids_follow_the_d27_order() {
        let names: Vec<String> = permissions().iter().map(|p| p.access.to_string()).collect();
        assert_eq!(names.len(), 45);
        assert_eq!(names[0], "Vendor:Read");
        assert_eq!(names[3], "Vendor:Delete");
        assert_eq!(names[11], "Transaction:Delete");
        assert_eq!(names[12], "Dashboard:Read");
        assert_eq!(names[13..15], ["Setting:Read", "Setting:Update"]);
        assert_eq!(names[15], "Policy:Read");
        assert_eq!(names[27], "Permission:Read");
        assert_eq!(names[28], "AuditLog:Read");
        assert_eq!(
            names[29..33],
            ["VendorCredit:Read", "VendorCredit:Create", "VendorCredit:Update", "VendorCredit:Delete"]
        );
        assert_eq!(
            names[33..37],
            ["BankStatement:Read", "BankStatement:Create", "BankStatement:Update", "BankStatement:Delete"]
        );
        assert_eq!(names[37..41], ["Webhook:Read", "Webhook:Create", "Webhook:Update", "Webhook:Delete"]);
        assert_eq!(names[41..], ["Branch:Read", "Branch:Create", "Branch:Update", "Branch:Delete"]);
        assert!(permissions().iter().enumerate().all(|(i, p)| p.id.0 == i as i64 + 1));
    }

    #[test]
    fn pharmacist_default_grants_fifteen_permissions() {
        let policy = pharmacist_policy();
        let ids: Vec<i64> = policy.permission_ids.iter().map(|id| id.0).collect();
        assert_eq!(ids, [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 30, 31, 32, 42]);
        assert_eq!(policy.role_id, PHARMACIST_ROLE_ID);
    }
}
