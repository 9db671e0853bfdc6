//! The vocabulary of permissions: a [`Collection`] and an [`Action`] make an [`Access`],
//! written `Collection:Action`; sets of them ([`PermissionSet`]); what an operation needs
//! ([`Requirement`]); and what a grant would give beyond its grantor's hold ([`Escalation`], D38).

use std::fmt;

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
    /// The chain's branches (D49).
    Branch,
}

impl Collection {
    /// Every collection, in seeding order: a new one is a line here, and the permission set
    /// keeps four bits for it.
    pub const ALL: &[Collection] = &[
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
        Collection::Branch,
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
            Collection::Branch => "Branch",
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
        let collection = Collection::ALL.iter().copied().find(|c| c.name() == collection)?;
        let action = Action::ALL.into_iter().find(|a| a.name() == action)?;
        Some(Self { collection, action })
    }

    /// The permission's bit in a [`PermissionSet`]: four per collection, one per action, both
    /// numbered as declared.
    pub(crate) fn bit(self) -> u64 {
        1 << (self.collection as u32 * 4 + self.action as u32)
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.collection.name(), self.action.name())
    }
}

/// What a caller lacks in scope, as the 403's `detail` names it (D49): `all branches`, or each
/// branch code missing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScopeNeed {
    /// A scope of all branches.
    All,
    /// These branches, by code.
    Codes(Vec<String>),
}

impl fmt::Display for ScopeNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScopeNeed::All => f.write_str("all branches"),
            ScopeNeed::Codes(codes) => write!(f, "the branches {}", codes.join(", ")),
        }
    }
}

/// What an operation needs beyond a valid token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// One permission.
    Permission(Access),
    /// An admin token (listing soft-deleted vendors, spec Vendors).
    Admin,
    /// Holding everything a write would give (D38): what the caller lacks.
    Grant(Escalation),
    /// A scope of more branches than the caller's (D49): what it lacks.
    Scope(ScopeNeed),
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Permission(access) => access.fmt(f),
            Requirement::Admin => f.write_str("admin"),
            Requirement::Grant(missing) => missing.fmt(f),
            Requirement::Scope(missing) => missing.fmt(f),
        }
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
            .iter()
            .copied()
            .flat_map(|collection| Action::ALL.into_iter().map(move |action| Access::new(collection, action)))
            .filter(move |access| self.contains(*access))
    }
}

/// What a grant holds that its grantor lacks: the `detail` of the 403 names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Escalation {
    /// The Admin role was to be given by someone who is not an admin.
    pub admin_role: bool,
    /// Permissions to be given that the grantor's token lacks.
    pub permissions: PermissionSet,
}

impl std::fmt::Display for Escalation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<String> = Vec::new();
        if self.admin_role {
            names.push("Admin".into());
        }
        names.extend(self.permissions.iter().map(|access: Access| access.to_string()));
        f.write_str(&names.join(", "))
    }
}
