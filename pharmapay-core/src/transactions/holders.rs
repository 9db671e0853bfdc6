//! Payment references (D30): among active payments, one reference key per payment type belongs
//! to one payment, a payment recorded on its own or a vendor payment with all its parts (D31).
//! Recording the same UTR or cheque number twice is the commonest way a pharmacy pays a bill
//! twice, so a second holder is refused, naming a payment that holds the key.
//!
//! A store looks up the active payments holding the key under a lock that serialises writers of
//! that key (the database's write lock on SQLite, an advisory lock on PostgreSQL), so two
//! concurrent writes of one reference end in exactly one success.

use crate::ids::{TransactionId, VendorPaymentId};
use crate::store::{StoreError, StoreResult, UniqueKey};

/// What holds a reference: a payment recorded on its own, or a vendor payment, whose payments
/// share its reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holder {
    /// A payment on its own.
    Payment(TransactionId),
    /// A vendor payment and every payment of it.
    VendorPayment(VendorPaymentId),
}

impl Holder {
    /// The holder a payment belongs to.
    pub fn of(transaction_id: TransactionId, vendor_payment_id: Option<VendorPaymentId>) -> Self {
        match vendor_payment_id {
            Some(vendor_payment) => Holder::VendorPayment(vendor_payment),
            None => Holder::Payment(transaction_id),
        }
    }
}

/// An active payment holding the reference key a write wants, as a store found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHolder {
    /// The payment.
    pub transaction_id: TransactionId,
    /// The vendor payment it belongs to, if any.
    pub vendor_payment_id: Option<VendorPaymentId>,
}

/// Passes unless an active payment of another holder than `writer` holds the key; `writer` is
/// `None` for a payment or vendor payment being created, which holds nothing yet.
///
/// # Errors
/// `Conflict(PaymentReference)` naming the lowest id among the payments holding the key.
pub fn check(holders: &[KeyHolder], writer: Option<Holder>) -> StoreResult<()> {
    let other = holders
        .iter()
        .filter(|found| Some(Holder::of(found.transaction_id, found.vendor_payment_id)) != writer)
        .map(|found| found.transaction_id)
        .min();
    match other {
        Some(existing) => Err(StoreError::Conflict(UniqueKey::PaymentReference { existing })),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(id: i64) -> KeyHolder {
        KeyHolder { transaction_id: TransactionId(id), vendor_payment_id: None }
    }

    fn part(id: i64, vendor_payment: i64) -> KeyHolder {
        KeyHolder { transaction_id: TransactionId(id), vendor_payment_id: Some(VendorPaymentId(vendor_payment)) }
    }

    fn taken_by(result: StoreResult<()>) -> Option<i64> {
        match result {
            Ok(()) => None,
            Err(StoreError::Conflict(UniqueKey::PaymentReference { existing })) => Some(existing.get()),
            Err(other) => panic!("expected a taken reference, got {other:?}"),
        }
    }

    #[test]
    fn a_free_key_may_be_taken_by_anyone() {
        assert_eq!(taken_by(check(&[], None)), None);
        assert_eq!(taken_by(check(&[], Some(Holder::Payment(TransactionId(4))))), None);
    }

    #[test]
    fn a_new_payment_cannot_take_a_held_key_and_learns_the_lowest_holder() {
        assert_eq!(taken_by(check(&[single(9)], None)), Some(9));
        assert_eq!(taken_by(check(&[part(12, 3), part(11, 3)], None)), Some(11));
    }

    #[test]
    fn a_holder_keeps_its_own_key() {
        let mine = Some(Holder::Payment(TransactionId(9)));
        assert_eq!(taken_by(check(&[single(9)], mine)), None, "a payment replaced with its own reference");
        let payment = Some(Holder::VendorPayment(VendorPaymentId(3)));
        assert_eq!(taken_by(check(&[part(11, 3), part(12, 3)], payment)), None, "parts of one vendor payment");
        assert_eq!(taken_by(check(&[part(11, 3), single(5)], payment)), Some(5), "another payment holds it too");
        assert_eq!(taken_by(check(&[part(11, 3)], Some(Holder::Payment(TransactionId(20))))), Some(11));
    }
}
