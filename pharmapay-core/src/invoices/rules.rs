//! Buying only from licensed distributors (D36).
//!
//! The setting `ExpiredLicensePolicy` decides what an expired drug licence does to invoices:
//! under `Warn` (the default) nothing but the licence status; under `Block`, an invoice created
//! or changed for a vendor whose licence expired before the invoice's date is refused on
//! `vendorId`. Days are business days (D3): a licence valid until a day still covers invoices of
//! that day. The store loads the vendor's validity date with the vendor it already locks for the
//! invoice, and the engine passes the first instant of the invoice's business day.

use jiff::Timestamp;

use crate::error::FieldErrors;
use crate::store::{StoreError, StoreResult};
use crate::vendors::licence::ExpiredLicensePolicy;

/// Passes unless `policy` blocks and the licence, valid until `valid_until`, expired before the
/// business day that starts at `invoice_day_start`.
///
/// # Errors
/// `Invalid` on `vendorId`.
pub fn check_invoice(
    policy: ExpiredLicensePolicy,
    valid_until: Option<Timestamp>,
    invoice_day_start: Timestamp,
) -> StoreResult<()> {
    match (policy, valid_until) {
        (ExpiredLicensePolicy::Block, Some(until)) if until < invoice_day_start => {
            Err(StoreError::Invalid(FieldErrors::single(
                "vendorId",
                "the vendor's drug licence expired before the invoice's date, and ExpiredLicensePolicy is Block",
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn refused(result: StoreResult<()>) -> bool {
        matches!(result, Err(StoreError::Invalid(errors)) if errors.contains("vendorId"))
    }

    #[test]
    fn block_refuses_invoices_dated_after_the_licences_last_day() {
        let day_of_invoice = at("2024-06-01T00:00:00Z");
        let block = ExpiredLicensePolicy::Block;
        assert!(refused(check_invoice(block, Some(at("2024-05-31T00:00:00Z")), day_of_invoice)));
        assert!(!refused(check_invoice(block, Some(at("2024-06-01T00:00:00Z")), day_of_invoice)), "its last day");
        assert!(!refused(check_invoice(block, Some(at("2025-01-01T00:00:00Z")), day_of_invoice)));
        assert!(!refused(check_invoice(block, None, day_of_invoice)), "no recorded date blocks nothing");
    }

    #[test]
    fn warn_never_refuses() {
        let result =
            check_invoice(ExpiredLicensePolicy::Warn, Some(at("2020-01-01T00:00:00Z")), at("2024-06-01T00:00:00Z"));
        assert!(result.is_ok());
    }
}
