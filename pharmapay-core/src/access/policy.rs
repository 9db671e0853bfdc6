//! Policies: named bundles of permissions, attached to roles or directly to users (D19).

use jiff::Timestamp;

use crate::access::Permission;
use crate::base::tidy::tidy_name_and_description;
use crate::error::FieldErrors;
use crate::ids::{PermissionId, PolicyId};

/// Most permissions one policy request may list.
pub const MAX_POLICY_PERMISSIONS: usize = 200;

/// A policy with its permissions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Id.
    pub id: PolicyId,
    /// Name, unique among active policies (D4).
    pub name: String,
    /// Description.
    pub description: String,
    /// False once soft-deleted.
    pub is_active: bool,
    /// Its permissions, by id.
    pub permissions: Vec<Permission>,
    /// When created.
    pub created_at: Timestamp,
}

/// The fields of a policy create or full replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewPolicy {
    /// Name.
    pub name: String,
    /// Description (may be empty).
    pub description: String,
    /// Its permissions; each must exist.
    pub permission_ids: Vec<PermissionId>,
}

impl NewPolicy {
    /// Trims the text, drops duplicate ids and checks the bounds.
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        tidy_name_and_description(&mut self.name, &mut self.description, &mut errors);
        if self.permission_ids.len() > MAX_POLICY_PERMISSIONS {
            errors.add("permissionIds", format!("must list at most {MAX_POLICY_PERMISSIONS} ids"));
        }
        self.permission_ids.sort();
        self.permission_ids.dedup();
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }
}

impl NewPolicy {
    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self) -> String {
        let ids: Vec<i64> = self.permission_ids.iter().map(|id| id.get()).collect();
        serde_json::json!({ "name": self.name, "description": self.description, "permissionIds": ids }).to_string()
    }
}
