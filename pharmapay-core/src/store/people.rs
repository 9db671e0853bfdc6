//! The records stores hand the engine for people: a user to insert, the credentials and
//! session state a sign-in reads (D24, D39), and who holds a policy.

use jiff::Timestamp;

use crate::access::Permission;
use crate::domain::User;
use crate::error::Entity;
use crate::ids::{RoleId, UserId};

/// What a policy is attached to directly (D19): a user, or a role and through it its users.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyHolder {
    /// A user.
    User(UserId),
    /// A role.
    Role(RoleId),
}

impl PolicyHolder {
    /// The kind of record the holder is, as a missing record and the audit log name it.
    pub fn entity(self) -> Entity {
        match self {
            PolicyHolder::User(_) => Entity::User,
            PolicyHolder::Role(_) => Entity::Role,
        }
    }

    /// The holder's id.
    pub fn id(self) -> i64 {
        match self {
            PolicyHolder::User(id) => id.get(),
            PolicyHolder::Role(id) => id.get(),
        }
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
    /// PHC string.
    pub password_hash: String,
}

/// What a login needs to know about an account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    /// The account.
    pub user: User,
    /// PHC string of its password.
    pub password_hash: String,
}

/// What each authenticated request checks about its user (D20, D39).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionState {
    /// False once the user is deleted.
    pub is_active: bool,
    /// Tokens issued in or before this second (Unix seconds) no longer work; 0 revokes nothing.
    pub revoked_through: i64,
}

/// A user signed in by a store, in the transaction that also recorded the token's issue
/// second (see [`crate::rules::sessions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignIn {
    /// The account as it stands.
    pub user: User,
    /// Its permissions (D19) as they stand; empty for admins, who need none.
    pub permissions: Vec<Permission>,
    /// The token's `iat`, in Unix seconds, from [`crate::rules::sessions::issue`].
    pub issued_at: i64,
}

/// How a sign-in with the right password ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginOutcome {
    /// Signed in.
    SignedIn(SignIn),
    /// Five failures were recorded meanwhile: nothing was written (D40).
    Throttled {
        /// When the window closes.
        until: Timestamp,
    },
}
