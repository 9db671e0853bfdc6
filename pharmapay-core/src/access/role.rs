//! Roles: a user has one; policies attached to it grant permissions (D19).

use jiff::Timestamp;

use crate::base::tidy::tidy_name_and_description;
use crate::error::FieldErrors;
use crate::ids::RoleId;

/// A role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Role {
    /// Id.
    pub id: RoleId,
    /// Name, unique among all roles (D4).
    pub name: String,
    /// Description.
    pub description: String,
    /// True for the seeded `Admin` and `Pharmacist` roles only.
    pub is_system: bool,
    /// False once soft-deleted.
    pub is_active: bool,
    /// When created.
    pub created_at: Timestamp,
}

/// The fields of a role create or update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewRole {
    /// Name.
    pub name: String,
    /// Description (may be empty).
    pub description: String,
}

impl NewRole {
    /// Trims and checks the fields.
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        tidy_name_and_description(&mut self.name, &mut self.description, &mut errors);
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }
}

impl NewRole {
    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self) -> String {
        serde_json::json!({ "name": self.name, "description": self.description }).to_string()
    }
}
