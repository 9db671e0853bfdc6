//! The payments' side of an invoice: which invoice may take a payment, and how far its paid
//! total may go (D1, D10, D15).
//!
//! Each invoice keeps `paid`, the exact sum of its active payments, changed in the transaction
//! of every payment write. A write that adds to an invoice (a payment recorded, moved onto it,
//! grown, or restored) asks [`receive`] with the invoice as it stands *after* the addition; the
//! store may add first and ask afterwards (one statement that updates and returns the row), as
//! long as a refusal drops the transaction so nothing is kept. The paid total never passes
//! [`MAX_AMOUNT`], so every sum the stores keep stays exact.

use rust_decimal::Decimal;

use crate::base::restore;
use crate::error::{Entity, RuleBroken};
use crate::money::MAX_AMOUNT;
use crate::store::{StoreError, StoreResult};

/// An invoice a payment write adds to, as it stands after the addition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaidInvoice {
    /// Whether the invoice is active.
    pub is_active: bool,
    /// Its paid total, the addition included.
    pub paid: Decimal,
}

/// How a payment write came to the invoice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaymentWrite {
    /// A payment recorded or changed: the request names the invoice, so an inactive one is the
    /// request's fault (a 400 on `invoiceId`).
    Record,
    /// A deleted payment brought back: it may return only under an active invoice (D15).
    Restore,
}

/// The paid total after the addition is within the largest amount (D1).
///
/// # Errors
/// `Rule(PaidTotalTooLarge)` above [`MAX_AMOUNT`].
pub fn check_paid_total(paid: Decimal) -> StoreResult<()> {
    if paid > MAX_AMOUNT {
        return Err(StoreError::Rule(RuleBroken::PaidTotalTooLarge));
    }
    Ok(())
}

/// A payment may be recorded on, or moved to, an invoice of a branch in the writer's scope
/// only (D49): another branch's invoice is refused as a missing one.
///
/// # Errors
/// `ParentInactive(Invoice)`.
pub fn check_invoice_reach(scope: &crate::branches::Scope, branch: crate::ids::BranchId) -> StoreResult<()> {
    if scope.contains(branch) { Ok(()) } else { Err(StoreError::ParentInactive(Entity::Invoice)) }
}

/// Whether `invoice` (`None` when missing), as it stands after a payment was added to it, may
/// keep the payment.
///
/// # Errors
/// For a missing or inactive invoice, `ParentInactive(Invoice)` for [`PaymentWrite::Record`]
/// and `Rule(ParentInactive(Invoice))` for [`PaymentWrite::Restore`]; then
/// `Rule(PaidTotalTooLarge)` from [`check_paid_total`].
pub fn receive(invoice: Option<PaidInvoice>, write: PaymentWrite) -> StoreResult<()> {
    let active = invoice.is_some_and(|invoice| invoice.is_active);
    match write {
        PaymentWrite::Record if !active => return Err(StoreError::ParentInactive(Entity::Invoice)),
        PaymentWrite::Record => {}
        PaymentWrite::Restore => restore::check_parent(Entity::Invoice, active)?,
    }
    invoice.map_or(Ok(()), |invoice| check_paid_total(invoice.paid))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).expect("a decimal")
    }

    fn active(paid: &str) -> Option<PaidInvoice> {
        Some(PaidInvoice { is_active: true, paid: dec(paid) })
    }

    #[test]
    fn the_paid_total_may_reach_the_largest_amount_but_not_pass_it() {
        assert!(check_paid_total(MAX_AMOUNT).is_ok());
        assert!(check_paid_total(Decimal::ZERO).is_ok());
        assert!(check_paid_total(dec("-5")).is_ok(), "D10: only the sum's size is bounded");
        assert!(matches!(check_paid_total(dec("1000000000000")), Err(StoreError::Rule(RuleBroken::PaidTotalTooLarge))));
    }

    #[test]
    fn a_recorded_payment_needs_an_active_invoice_with_room() {
        assert!(receive(active("999999999999.9999"), PaymentWrite::Record).is_ok());
        assert!(matches!(
            receive(active("1000000000000.0000"), PaymentWrite::Record),
            Err(StoreError::Rule(RuleBroken::PaidTotalTooLarge))
        ));
        let canceled = Some(PaidInvoice { is_active: false, paid: dec("1") });
        assert!(matches!(receive(canceled, PaymentWrite::Record), Err(StoreError::ParentInactive(Entity::Invoice))));
        assert!(matches!(receive(None, PaymentWrite::Record), Err(StoreError::ParentInactive(Entity::Invoice))));
    }

    #[test]
    fn a_restored_payment_needs_an_active_invoice_as_a_rule() {
        assert!(receive(active("10"), PaymentWrite::Restore).is_ok());
        let canceled = Some(PaidInvoice { is_active: false, paid: dec("1000000000000") });
        assert!(
            matches!(
                receive(canceled, PaymentWrite::Restore),
                Err(StoreError::Rule(RuleBroken::ParentInactive(Entity::Invoice)))
            ),
            "the inactive invoice answers before the paid total"
        );
        assert!(matches!(
            receive(active("1000000000000"), PaymentWrite::Restore),
            Err(StoreError::Rule(RuleBroken::PaidTotalTooLarge))
        ));
    }
}
