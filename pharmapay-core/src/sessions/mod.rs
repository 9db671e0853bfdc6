//! Sessions: the installation's first start (D27), sign-ins and their tokens (D20, D24, D39)
//! and the failed-login window (D21, D40).

mod engine;
pub mod installation;
pub mod login;
pub mod rules;
pub mod store;

use crate::access::Permission;
use crate::access::user::User;
use crate::text::Password;

/// The pharmacy's details at onboarding (spec, Setup body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PharmacyDetails {
    /// Name (required).
    pub name: String,
    /// Address.
    pub address: Option<String>,
    /// Phone.
    pub phone: Option<String>,
    /// Email.
    pub email: Option<String>,
    /// Primary drug licence.
    pub drug_license_number1: Option<String>,
}

/// The first admin's account at onboarding (spec, Setup body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminAccount {
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Email (D29).
    pub email: String,
    /// Password, at least 8 characters (D29).
    pub password: Password,
}

/// The one-time setup: the pharmacy and its first admin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Onboarding {
    /// The pharmacy, which becomes the OwnPharmacy vendor.
    pub pharmacy: PharmacyDetails,
    /// The first admin.
    pub admin: AdminAccount,
}

/// A user signed in by a store, in the transaction that also recorded the token's issue
/// second (see [`crate::sessions::rules`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignIn {
    /// The account as it stands.
    pub user: User,
    /// Its permissions (D19) as they stand; empty for admins, who need none.
    pub permissions: Vec<Permission>,
    /// The token's `iat`, in Unix seconds, from [`crate::sessions::rules::issue`].
    pub issued_at: i64,
}
