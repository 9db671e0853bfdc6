//! The pharmacy's own vendor record (D14).
//!
//! Exactly one vendor is the pharmacy itself, of type OwnPharmacy, and only onboarding makes it
//! (spec, VendorType). These functions judge a vendor write from the types the store read under
//! its lock: nothing else may become OwnPharmacy, the pharmacy may not become anything else, and
//! it cannot be deleted.

use crate::error::RuleBroken;
use crate::store::{StoreError, StoreResult};
use crate::vendors::VendorType;

/// A vendor created outside onboarding (a create or an import) is never OwnPharmacy.
///
/// # Errors
/// `Rule(OwnPharmacyType)` for an OwnPharmacy vendor.
pub fn check_insert(vendor_type: VendorType) -> StoreResult<()> {
    if vendor_type == VendorType::OwnPharmacy {
        return Err(StoreError::Rule(RuleBroken::OwnPharmacyType));
    }
    Ok(())
}

/// A vendor's type may change, but never to or from OwnPharmacy (D14).
///
/// # Errors
/// `Rule(OwnPharmacyType)` when exactly one of the two types is OwnPharmacy.
pub fn check_update(current: VendorType, next: VendorType) -> StoreResult<()> {
    if (current == VendorType::OwnPharmacy) != (next == VendorType::OwnPharmacy) {
        return Err(StoreError::Rule(RuleBroken::OwnPharmacyType));
    }
    Ok(())
}

/// The OwnPharmacy vendor cannot be deleted (D14); any other vendor can.
///
/// # Errors
/// `Rule(OwnPharmacyDelete)` for the OwnPharmacy vendor.
pub fn check_delete(current: VendorType) -> StoreResult<()> {
    if current == VendorType::OwnPharmacy {
        return Err(StoreError::Rule(RuleBroken::OwnPharmacyDelete));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::faults::refusal as rule;

    #[test]
    fn only_onboarding_makes_the_pharmacy() {
        for vendor_type in VendorType::ALL {
            let expected = (vendor_type == VendorType::OwnPharmacy).then_some(RuleBroken::OwnPharmacyType);
            assert_eq!(rule(check_insert(vendor_type)), expected, "{vendor_type:?}");
        }
    }

    #[test]
    fn types_change_freely_except_to_or_from_the_pharmacy() {
        for current in VendorType::ALL {
            for next in VendorType::ALL {
                let crosses = (current == VendorType::OwnPharmacy) != (next == VendorType::OwnPharmacy);
                let expected = crosses.then_some(RuleBroken::OwnPharmacyType);
                assert_eq!(rule(check_update(current, next)), expected, "{current:?} to {next:?}");
            }
        }
    }

    #[test]
    fn the_pharmacy_alone_cannot_be_deleted() {
        for vendor_type in VendorType::ALL {
            let expected = (vendor_type == VendorType::OwnPharmacy).then_some(RuleBroken::OwnPharmacyDelete);
            assert_eq!(rule(check_delete(vendor_type)), expected, "{vendor_type:?}");
        }
    }
}
