//! One onboarding per installation (spec, Onboarding).
//!
//! A store is onboarded once it holds the OwnPharmacy vendor and at least one user. The store
//! loads those two facts under its onboarding lock and asks [`onboard`], which refuses a second
//! onboarding and says whether the pharmacy's row is made afresh or an earlier one (left by an
//! onboarding whose admin was never written) is taken over. Creating the admin, with its email
//! free among active users, is the store's to keep.

use crate::error::RuleBroken;
use crate::ids::VendorId;
use crate::store::{StoreError, StoreResult};

/// What a store knows about its installation, read under the onboarding lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Installation {
    /// The OwnPharmacy vendor, when one exists.
    pub own_pharmacy: Option<VendorId>,
    /// Whether any user exists, active or not.
    pub has_users: bool,
}

/// Where onboarding writes the pharmacy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PharmacyRow {
    /// No OwnPharmacy vendor exists yet: insert it.
    Insert,
    /// This OwnPharmacy vendor exists without users: replace its fields and make it active.
    Reuse(VendorId),
}

/// True once the installation has its pharmacy and a user.
pub fn is_onboarded(installation: Installation) -> bool {
    installation.own_pharmacy.is_some() && installation.has_users
}

/// Decides an onboarding: where its pharmacy goes, unless one was completed already.
///
/// # Errors
/// `Rule(AlreadyOnboarded)` when the installation is onboarded.
pub fn onboard(installation: Installation) -> StoreResult<PharmacyRow> {
    if is_onboarded(installation) {
        return Err(StoreError::Rule(RuleBroken::AlreadyOnboarded));
    }
    Ok(installation.own_pharmacy.map_or(PharmacyRow::Insert, PharmacyRow::Reuse))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_store_onboards_with_a_new_pharmacy() {
        let empty = Installation::default();
        assert!(!is_onboarded(empty));
        assert_eq!(onboard(empty).ok(), Some(PharmacyRow::Insert));
    }

    #[test]
    fn a_pharmacy_without_users_is_taken_over() {
        let half_done = Installation { own_pharmacy: Some(VendorId(7)), has_users: false };
        assert!(!is_onboarded(half_done));
        assert_eq!(onboard(half_done).ok(), Some(PharmacyRow::Reuse(VendorId(7))));
    }

    #[test]
    fn users_without_a_pharmacy_do_not_make_an_onboarded_store() {
        let users_only = Installation { own_pharmacy: None, has_users: true };
        assert!(!is_onboarded(users_only));
        assert_eq!(onboard(users_only).ok(), Some(PharmacyRow::Insert));
    }

    #[test]
    fn a_second_onboarding_is_refused() {
        let done = Installation { own_pharmacy: Some(VendorId(1)), has_users: true };
        assert!(is_onboarded(done));
        assert!(matches!(onboard(done), Err(StoreError::Rule(RuleBroken::AlreadyOnboarded))));
    }
}
