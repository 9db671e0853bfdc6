//! Vendor payments (D31): one payment to a vendor, such as one NEFT transfer or one cheque, that
//! settles several of its invoices. It is kept as the payment itself and one payment transaction
//! per invoice it pays, all carrying its date, type, reference and description.

mod engine;
pub mod rules;
pub mod store;

use jiff::Timestamp;

use crate::base::tidy::{decimal_text, tidy_optional};
use crate::error::FieldErrors;
use crate::ids::{BranchId, VendorId, VendorPaymentId};
use crate::money::Amount;
use crate::text::{Lines, TEXT_MAX};
use crate::vendor_payments::rules::RequestedAllocation;

use crate::transactions::reference::PaymentReference;
use crate::transactions::{Transaction, TransactionType};

/// A vendor payment to record: the body of `POST /api/vendors/:id/payments`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewVendorPayment {
    /// The whole amount paid (D1).
    pub amount: Amount,
    /// When paid; not after today (D2).
    pub transaction_date: Timestamp,
    /// How paid.
    pub transaction_type: TransactionType,
    /// The UTR, bank reference or cheque number (D30).
    pub reference: Option<PaymentReference>,
    /// Free text.
    pub description: Option<String>,
    /// How the amount is split over the vendor's invoices; `None` pays the oldest due first.
    pub allocations: Option<Vec<RequestedAllocation>>,
    /// Only this branch's invoices are paid (D49): the body's `branchId`, which narrows the
    /// oldest-first split (ignored beside `allocations`), or the branch of the bank statement a
    /// payment is recorded from, which narrows both. `None`: every branch's.
    pub branch_id: Option<BranchId>,
}

impl NewVendorPayment {
    /// Trims the text, checks that the payment is not dated after today (`tomorrow_start` is the
    /// first instant of tomorrow in the business zone, D2, D3) and that the allocations, if
    /// any, fit together ([`rules::check_request`]). Every problem comes back at once.
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self, tomorrow_start: Timestamp) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        tidy_optional(&mut self.description, "description", TEXT_MAX, Lines::Multi, &mut errors);
        if self.transaction_date >= tomorrow_start {
            errors.add("transactionDate", "must not be after today");
        }
        if let Err(shape) = rules::check_request(self.amount, self.allocations.as_deref()) {
            errors.merge(shape);
        }
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }

    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self, vendor_id: VendorId) -> String {
        let allocations = rules::allocations_json(self.allocations.as_deref());
        serde_json::json!({
            "vendorId": vendor_id.get(),
            "amount": decimal_text(self.amount.get()),
            "transactionDate": self.transaction_date.to_string(),
            "transactionType": self.transaction_type.name(),
            "reference": self.reference.as_ref().map(PaymentReference::as_str),
            "description": self.description,
            "allocations": allocations,
            "branchId": self.branch_id.map(BranchId::get),
        })
        .to_string()
    }
}

/// A recorded vendor payment with its payments that are still active.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorPayment {
    /// Id.
    pub id: VendorPaymentId,
    /// The vendor paid.
    pub vendor_id: VendorId,
    /// Its name.
    pub vendor_name: String,
    /// The amount recorded; it stays so when one of its payments is deleted on its own.
    pub amount: Amount,
    /// When paid.
    pub transaction_date: Timestamp,
    /// How paid.
    pub transaction_type: TransactionType,
    /// The reference, trimmed.
    pub reference: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// When recorded.
    pub created_at: Timestamp,
    /// Its active payments, one per invoice, by id.
    pub transactions: Vec<Transaction>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::InvoiceId;

    #[test]
    fn every_problem_of_a_vendor_payment_comes_back_at_once() {
        let tomorrow: Timestamp = "2024-05-11T00:00:00Z".parse().unwrap();
        let amount = |text: &str| Amount::parse(text).unwrap();
        let payment = NewVendorPayment {
            amount: amount("10"),
            transaction_date: tomorrow,
            transaction_type: TransactionType::NetBanking,
            reference: None,
            description: Some("x".repeat(TEXT_MAX + 1)),
            allocations: Some(vec![
                RequestedAllocation { invoice_id: InvoiceId(1), amount: amount("4") },
                RequestedAllocation { invoice_id: InvoiceId(1), amount: amount("5") },
            ]),
            branch_id: None,
        };
        let errors = payment.validate(tomorrow).unwrap_err();
        for field in ["transactionDate", "description", "allocations[1].invoiceId", "amount"] {
            assert!(errors.contains(field), "{field}: {errors}");
        }
    }
}
