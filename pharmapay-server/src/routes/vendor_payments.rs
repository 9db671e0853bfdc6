//! `POST /api/vendors/{id}/payments` and `/api/vendor-payments/{id}` (D31): one payment to a
//! vendor over several of its invoices, its body and its DTO.

use pharmapay_core::Action::{Create, Delete, Read};
use pharmapay_core::Collection::Transaction;
use pharmapay_core::domain::{NewVendorPayment, TransactionType, VendorPayment};
use pharmapay_core::idempotency::IdempotencyRequest;
use pharmapay_core::ids::VendorId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rules::allocation::RequestedAllocation;
use pharmapay_core::{Amount, PharmaPay, Principal, Store};
use serde::Serialize;

use super::transactions::TransactionDto;
use super::{Call, Route};
use crate::app::needs;
use crate::decode::{Objects, Slot, bodies};
use crate::dto::{amount, instant};
use crate::http::Reply;
use crate::problem::ApiError;

/// The vendor payment routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::post("/api/vendors/{id}/payments", needs(Transaction, Create), |call| Box::pin(pay(call))),
        Route::get("/api/vendor-payments/{id}", needs(Transaction, Read), |call| {
            Box::pin(call.by_id(PharmaPay::get_vendor_payment, VendorPaymentDto::from))
        }),
        Route::delete("/api/vendor-payments/{id}", needs(Transaction, Delete), |call| {
            Box::pin(call.delete(PharmaPay::delete_vendor_payment))
        }),
    ]
}

/// Records a vendor payment: the vendor is the path's, the payment and its split are the
/// body's (D31).
async fn pay<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let vendor_id = VendorId(call.req.id("id")?);
    let create = async move |engine: &PharmaPay<S>,
                             principal: &Principal,
                             payment: NewVendorPayment,
                             idempotency: Option<&IdempotencyRequest>| {
        engine.create_vendor_payment(principal, vendor_id, payment, idempotency).await
    };
    call.create("vendor-payments", create, |payment| payment.id.get(), VendorPaymentDto::from).await
}

bodies! {
    /// A vendor payment over several invoices (D31): `POST /api/vendors/:id/payments`.
    VendorPaymentBody => NewVendorPayment {
        amount: Slot => amount("amount"),
        transaction_date: Slot => datetime("transactionDate"),
        transaction_type: Slot => choice("transactionType", TransactionType::parse, TransactionType::expected()),
        reference: Slot => optional_reference("reference"),
        description: Slot => optional_string("description"),
        allocations: Objects<AllocationBody> => optional_objects("allocations"),
    }

    /// One share of a vendor payment: `{invoiceId, amount}`.
    AllocationBody => RequestedAllocation {
        invoice_id: Slot => id("invoiceId"),
        amount: Slot => amount("amount"),
    }
}

/// A vendor payment with its active payments (D31).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VendorPaymentDto {
    id: i64,
    vendor_id: i64,
    vendor_name: String,
    #[serde(serialize_with = "amount")]
    amount: Amount,
    #[serde(serialize_with = "instant")]
    transaction_date: Timestamp,
    transaction_type: &'static str,
    reference: Option<String>,
    description: Option<String>,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    transactions: Vec<TransactionDto>,
}

impl From<VendorPayment> for VendorPaymentDto {
    fn from(payment: VendorPayment) -> Self {
        Self {
            id: payment.id.get(),
            vendor_id: payment.vendor_id.get(),
            vendor_name: payment.vendor_name,
            amount: payment.amount,
            transaction_date: payment.transaction_date,
            transaction_type: payment.transaction_type.name(),
            reference: payment.reference,
            description: payment.description,
            created_at: payment.created_at,
            transactions: payment.transactions.into_iter().map(TransactionDto::from).collect(),
        }
    }
}
