//! Vendor credits (D44): what a credit's replacement and its decision may change, judged over
//! the credit as a store loaded and locked it.
//!
//! A claim is decided against what is stored: the distributor cannot accept more than was
//! claimed, a credit cannot be decided below what is already applied from it, nor dated before
//! its claim; and a replacement cannot claim less than was accepted, nor move a credit that is
//! already set against one vendor's bills to another vendor. Each refusal names its field, as
//! a 400 (D44).

use jiff::Timestamp;
use rust_decimal::Decimal;

use crate::domain::{CreditDecision, NewVendorCredit};
use crate::error::FieldErrors;
use crate::ids::VendorId;
use crate::store::{StoreError, StoreResult};

/// What the rules read of a stored credit, under its lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditFacts {
    /// Its vendor.
    pub vendor_id: VendorId,
    /// What it claims.
    pub claimed: Decimal,
    /// When claimed.
    pub claim_date: Timestamp,
    /// What was accepted; `None` while undecided.
    pub accepted: Option<Decimal>,
    /// The sum of its active applications.
    pub applied: Decimal,
}

/// A replacement of `credit` by `new` (D14, D44) may go on when it claims at least what was
/// accepted and, once anything is applied, keeps the vendor.
///
/// # Errors
/// `Invalid` naming `claimedAmount` or `vendorId`.
pub fn check_update(credit: &CreditFacts, new: &NewVendorCredit) -> StoreResult<()> {
    let mut errors = FieldErrors::new();
    if let Some(accepted) = credit.accepted
        && new.claimed_amount.get() < accepted
    {
        errors.add("claimedAmount", format!("must not be below the accepted amount, {}", accepted.normalize()));
    }
    if new.vendor_id != credit.vendor_id && credit.applied > Decimal::ZERO {
        errors.add("vendorId", "cannot change once the credit is applied to the vendor's invoices");
    }
    refuse_unless_empty(errors)
}

/// A decision on `credit` (D44) may go on when it accepts at most what is claimed and at least
/// what is applied, and is dated no earlier than the claim. (A decision dated after today is
/// refused before any credit is read, by [`CreditDecision::validate`].)
///
/// # Errors
/// `Invalid` naming `acceptedAmount` or `decisionDate`.
pub fn check_decision(credit: &CreditFacts, decision: &CreditDecision) -> StoreResult<()> {
    let mut errors = FieldErrors::new();
    if decision.accepted_amount > credit.claimed {
        errors.add("acceptedAmount", format!("must not be above the claimed amount, {}", credit.claimed.normalize()));
    } else if decision.accepted_amount < credit.applied {
        errors.add(
            "acceptedAmount",
            format!("must not be below the amount already applied, {}", credit.applied.normalize()),
        );
    }
    if decision.decision_date < credit.claim_date {
        errors.add("decisionDate", "must not be earlier than claimDate");
    }
    refuse_unless_empty(errors)
}

/// A claim naming an invoice (D44) may go on when that invoice exists and belongs to the
/// credit's vendor, active or not: `invoice_vendor` is the vendor of the invoice the store
/// found, `None` when there is none.
///
/// # Errors
/// `Invalid` naming `againstInvoiceId`.
pub fn check_against(vendor_id: VendorId, invoice_vendor: Option<VendorId>) -> StoreResult<()> {
    match invoice_vendor {
        Some(owner) if owner == vendor_id => Ok(()),
        Some(_) => refuse("againstInvoiceId", "must be an invoice of the credit's vendor"),
        None => refuse("againstInvoiceId", "must be an existing invoice"),
    }
}

fn refuse(field: &str, message: &str) -> StoreResult<()> {
    Err(StoreError::Invalid(FieldErrors::single(field, message)))
}

fn refuse_unless_empty(errors: FieldErrors) -> StoreResult<()> {
    if errors.is_empty() { Ok(()) } else { Err(StoreError::Invalid(errors)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::CreditKind;
    use crate::money::Amount;

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).unwrap()
    }

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn facts(accepted: Option<&str>, applied: &str) -> CreditFacts {
        CreditFacts {
            vendor_id: VendorId(1),
            claimed: dec("100"),
            claim_date: ts("2024-05-01T00:00:00Z"),
            accepted: accepted.map(dec),
            applied: dec(applied),
        }
    }

    fn fields(result: StoreResult<()>) -> Vec<String> {
        match result {
            Ok(()) => Vec::new(),
            Err(StoreError::Invalid(errors)) => errors.iter().map(|(field, _)| field.to_owned()).collect(),
            Err(other) => panic!("unexpected refusal {other:?}"),
        }
    }

    fn replacement(vendor: i64, claimed: &str) -> NewVendorCredit {
        NewVendorCredit {
            vendor_id: VendorId(vendor),
            credit_number: "CN-1".into(),
            kind: CreditKind::ExpiryReturn,
            claimed_amount: Amount::parse(claimed).unwrap(),
            claim_date: ts("2024-05-01T00:00:00Z"),
            against_invoice_id: None,
            description: None,
        }
    }

    fn decision(accepted: &str, date: &str) -> CreditDecision {
        CreditDecision { accepted_amount: dec(accepted), decision_date: ts(date), distributor_reference: None }
    }

    #[test]
    fn a_replacement_keeps_what_was_accepted_and_the_vendor_of_what_is_applied() {
        assert!(fields(check_update(&facts(None, "0"), &replacement(2, "1"))).is_empty(), "undecided, unapplied");
        assert_eq!(fields(check_update(&facts(Some("60"), "0"), &replacement(1, "59.9999"))), ["claimedAmount"]);
        assert!(fields(check_update(&facts(Some("60"), "0"), &replacement(2, "60"))).is_empty());
        assert_eq!(fields(check_update(&facts(Some("60"), "0.0001"), &replacement(2, "60"))), ["vendorId"]);
        assert!(fields(check_update(&facts(Some("60"), "10"), &replacement(1, "70"))).is_empty());
    }

    #[test]
    fn a_decision_lies_between_what_is_applied_and_what_is_claimed() {
        let claimed_on = "2024-05-01T00:00:00Z";
        assert!(fields(check_decision(&facts(None, "0"), &decision("0", claimed_on))).is_empty(), "rejected");
        assert!(fields(check_decision(&facts(None, "0"), &decision("100", claimed_on))).is_empty(), "in full");
        assert_eq!(fields(check_decision(&facts(None, "0"), &decision("100.0001", claimed_on))), ["acceptedAmount"]);
        assert_eq!(fields(check_decision(&facts(Some("80"), "50"), &decision("49", claimed_on))), ["acceptedAmount"]);
        assert!(fields(check_decision(&facts(Some("80"), "50"), &decision("50", claimed_on))).is_empty());
        assert_eq!(
            fields(check_decision(&facts(None, "0"), &decision("1", "2024-04-30T23:59:59Z"))),
            ["decisionDate"],
            "before the claim"
        );
    }

    #[test]
    fn a_claim_names_an_invoice_of_its_own_vendor() {
        assert!(check_against(VendorId(1), Some(VendorId(1))).is_ok());
        assert_eq!(fields(check_against(VendorId(1), Some(VendorId(2)))), ["againstInvoiceId"]);
        assert_eq!(fields(check_against(VendorId(1), None)), ["againstInvoiceId"]);
    }
}
