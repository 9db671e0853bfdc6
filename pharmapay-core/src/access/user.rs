//! User accounts and the caller's own profile (D24).

use jiff::Timestamp;

use crate::base::tidy::{tidy_email, tidy_required};
use crate::branches::Scope;
use crate::error::FieldErrors;
use crate::ids::{RoleId, UserId};
use crate::text::{NAME_MAX, Password};

/// A user account; the password hash never leaves the store except for login checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// Id.
    pub id: UserId,
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Email, unique among active users (D4).
    pub email: String,
    /// The role.
    pub role_id: RoleId,
    /// The branches they see and write in (D49): all for every Admin.
    pub branch_ids: Scope,
    /// False once soft-deleted.
    pub is_active: bool,
    /// When created.
    pub created_at: Timestamp,
}

/// The fields of a user create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewUser {
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Email (D29).
    pub email: String,
    /// Password (D29).
    pub password: Password,
    /// The role; must be active.
    pub role_id: RoleId,
    /// The branches they see (D49): `None` when the body omits it, which gives the caller's
    /// own scope; `Some(Scope::All)` for `null`.
    pub branch_ids: Option<Scope>,
}

/// `validate` for the bodies that carry a person's names and email.
macro_rules! validated_person {
    ($($body:ty),*) => {$(
        impl $body {
            /// Trims and checks the text fields.
            ///
            /// # Errors
            /// The messages by field path.
            pub fn validate(mut self) -> Result<Self, FieldErrors> {
                let mut errors = FieldErrors::new();
                check_person(&mut self.first_name, &mut self.last_name, &mut self.email, &mut errors);
                if errors.is_empty() { Ok(self) } else { Err(errors) }
            }
        }
    )*};
}

validated_person!(NewUser, UserUpdate, ProfileUpdate);

fn check_person(first_name: &mut String, last_name: &mut String, email: &mut String, errors: &mut FieldErrors) {
    tidy_required(first_name, "firstName", NAME_MAX, errors);
    tidy_required(last_name, "lastName", NAME_MAX, errors);
    tidy_email(email, "email", errors);
}

/// The fields of a user replacement (spec: firstName, lastName, email, roleId).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserUpdate {
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Email (D29).
    pub email: String,
    /// The role; must be active.
    pub role_id: RoleId,
    /// The branches they see (D49): `None` when the body omits it (unchanged, or all when the
    /// role becomes Admin); `Some(Scope::All)` for `null`.
    pub branch_ids: Option<Scope>,
}

/// The caller's own profile (D24).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The account.
    pub user: User,
    /// The role's name.
    pub role_name: String,
    /// Whether the caller is an admin (D18).
    pub is_admin: bool,
    /// Resolved permissions as `Collection:Action` (`*:*` for an admin).
    pub permissions: Vec<String>,
}

/// What a user may change of their own profile (D24).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileUpdate {
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Email (D29).
    pub email: String,
}

/// A password change by the user themself (D24).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswordChange {
    /// The password in use now.
    pub current_password: String,
    /// The new password (D29).
    pub new_password: Password,
}

/// A person's values as the audit log keeps them (D22): names, email and, when the write sets
/// them, the role and the branches (D49).
fn person_changes(
    first_name: &str,
    last_name: &str,
    email: &str,
    role_id: Option<RoleId>,
    branch_ids: Option<&Scope>,
) -> String {
    let mut changes = serde_json::json!({ "firstName": first_name, "lastName": last_name, "email": email });
    if let Some(role_id) = role_id {
        changes["roleId"] = serde_json::json!(role_id.get());
    }
    if let Some(branch_ids) = branch_ids {
        changes["branchIds"] = branch_ids.json();
    }
    changes.to_string()
}

impl NewUser {
    /// The values written, as the audit log keeps them (D22); never the password.
    pub(crate) fn audit_changes(&self) -> String {
        person_changes(&self.first_name, &self.last_name, &self.email, Some(self.role_id), self.branch_ids.as_ref())
    }
}

impl UserUpdate {
    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self) -> String {
        person_changes(&self.first_name, &self.last_name, &self.email, Some(self.role_id), self.branch_ids.as_ref())
    }
}

impl ProfileUpdate {
    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self) -> String {
        person_changes(&self.first_name, &self.last_name, &self.email, None, None)
    }
}

/// A user to insert: the account fields and the password's Argon2id hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewUserRecord {
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Email.
    pub email: String,
    /// The role.
    pub role_id: RoleId,
    /// The branches asked for (D49): the caller's own scope when the body named none; the
    /// store decides the kept scope under its lock ([`crate::branches::scope::plan_scope`]).
    pub branch_ids: Scope,
    /// PHC string.
    pub password_hash: String,
}
