//! `POST /api/vendors/{id}/payments` and `/api/vendor-payments/{id}` (D31): one payment to a
//! vendor over several of its invoices, its body, its DTO and its operations.

use pharmapay_core::Action::{Create, Delete, Read};
use pharmapay_core::Collection::Transaction;
use pharmapay_core::idempotency::IdempotencyRequest;
use pharmapay_core::ids::VendorId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::text::{NAME_MAX, TEXT_MAX};
use pharmapay_core::transactions::TransactionType;
use pharmapay_core::transactions::reference::REFERENCE_MAX;
use pharmapay_core::vendor_payments::rules::{MAX_ALLOCATIONS, RequestedAllocation};
use pharmapay_core::vendor_payments::{NewVendorPayment, VendorPayment};
use pharmapay_core::{Amount, PharmaPay, Principal, Store};
use serde::Serialize;

use super::transactions::{TransactionDto, transaction_type_input};
use super::{Call, Route};
use crate::decode::{Objects, ReasonBody, Slot, bodies};
use crate::dto::{amount, instant};
use crate::guard::needs;
use crate::http::Reply;
use crate::openapi::schema::{self, names};
use crate::openapi::{
    IDEMPOTENCY_KEY, Json, Operation, Tag, created, describe, link_by_id, no_content, object, path_id, schema_ref,
};
use crate::problem::ApiError;

/// The vendor payment routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::post("/api/vendors/{id}/payments", needs(Transaction, Create), pay_operation, |call| {
            Box::pin(pay(call))
        }),
        Route::get("/api/vendor-payments/{id}", needs(Transaction, Read), get, |call| {
            Box::pin(call.by_id(PharmaPay::get_vendor_payment, VendorPaymentDto::from))
        }),
        Route::delete("/api/vendor-payments/{id}", needs(Transaction, Delete), delete, |call| {
            Box::pin(call.delete(PharmaPay::delete_vendor_payment))
        }),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Transactions");

fn pay_operation() -> Operation {
    TAG.operation(
        "createVendorPayment",
        "Pay a vendor over several invoices",
        ". Records one payment to an active vendor (404 for an unknown or deleted vendor) as one payment transaction \
         per invoice, all with its date, type, reference and description and with `vendorPaymentId` (D31): split as \
         `allocations` say (each an active invoice of this vendor, listed once, at most what it still owes, adding up \
         exactly to `amount`), or over the vendor's invoices still owing, oldest due first. Every check runs in one \
         transaction with the writes, so no vendor payment ever overpays; any breach is a 400 naming the field \
         (`allocations[2].amount`) and writes nothing. A reference another payment holds is a 409 (D30). Answers 201 \
         with `Location: /api/vendor-payments/<id>` (D9). Accepts an `Idempotency-Key` (D23).",
    )
    .path_parameter(path_id("id", "Vendor id."))
    .parameter(IDEMPOTENCY_KEY)
    .body::<VendorPaymentBody>()
    .response(
        "201",
        created(
            "The vendor payment was recorded.",
            schema_ref::<VendorPaymentDto>(),
            link_by_id("getVendorPayment", "The new vendor payment."),
        ),
    )
    .errors(&[400, 401, 403, 404, 409, 413, 415, 422, 503])
}

fn get() -> Operation {
    TAG.operation(
        "getVendorPayment",
        "Get a vendor payment",
        ". The vendor payment with its active payments; 404 when missing or none of its payments is active (D31).",
    )
    .path_parameter(path_id("id", "Vendor payment id."))
    .ok("The vendor payment.", schema_ref::<VendorPaymentDto>())
    .errors(&[400, 401, 403, 404, 503])
}

fn delete() -> Operation {
    TAG.operation(
        "deleteVendorPayment",
        "Delete a vendor payment",
        ". Soft-deletes all of its active payments in one transaction (D31); each can be restored on its own. The \
         optional body `{reason}` is kept in the audit log (D16). 404 when missing or none of its payments is active.",
    )
    .path_parameter(path_id("id", "Vendor payment id."))
    .optional_body::<ReasonBody>()
    .response("204", no_content("Deleted; no body."))
    .errors(&[400, 401, 403, 404, 413, 415, 503])
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
    VendorPaymentBody => NewVendorPayment as "VendorPaymentInput":
        "One payment to a vendor over several of its invoices (D31). Unknown fields are ignored." {
        amount: Slot => amount("amount")
            as "The whole payment. With `allocations`, it must equal their sum; without, it is spread over the \
                vendor's invoices still owing, oldest due first, and may not exceed what they owe (400 on `amount`).",
        transaction_date: Slot => datetime("transactionDate")
            as "When the payment was made; after today in the business time zone is a 400 (D2, D3).",
        transaction_type: Slot => choice("transactionType", TransactionType::parse, TransactionType::expected())
            as transaction_type_input(),
        reference: Slot => optional_reference("reference"),
        description: Slot => optional_string("description")
            as schema::free_text("Free text, copied to every payment it creates."),
        allocations: Objects<AllocationBody> => optional_objects("allocations") as allocations(),
        branch_id: Slot => optional_id("branchId")
            as "Without `allocations`, only this branch's invoices are paid, oldest due first (D49); a deleted branch \
                may be named, an id that is no branch is a 400. Ignored beside `allocations`. Omitted or null: every \
                branch's invoices.",
    }

    /// One share of a vendor payment: `{invoiceId, amount}`.
    AllocationBody => RequestedAllocation as "Allocation":
        "One share of a vendor payment (D31). Unknown fields are ignored." {
        invoice_id: Slot => id("invoiceId")
            as "An active invoice of this vendor, listed once; otherwise 400 on `allocations[i].invoiceId`.",
        amount: Slot => amount("amount")
            as "What goes to this invoice: at most what it still owes (`allocations[i].amount`).",
    }
}

/// `allocations`: 1 to [`MAX_ALLOCATIONS`] invoices.
pub(super) fn allocations() -> Json {
    object! {
        "minItems": 1,
        "maxItems": MAX_ALLOCATIONS,
        "description": format!(
            "How the amount is split: 1 to {MAX_ALLOCATIONS} invoices, each listed once. Omitted or null: oldest due \
             first."
        ),
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

describe! {
    VendorPaymentDto as "VendorPayment": "A vendor payment with its active payments (D31)." {
        id: schema::id("Vendor payment id."),
        vendor_id: schema::id("The vendor paid."),
        vendor_name: schema::text(NAME_MAX, "The vendor's name."),
        amount: schema::amount("The amount recorded; it stays so when one of its payments is deleted on its own."),
        transaction_date: schema::instant("When the payment was made."),
        transaction_type: schema::one_of(
            &names(&TransactionType::ALL, TransactionType::name),
            "How the payment was made, in canonical case.",
        ),
        reference: schema::nullable_text(REFERENCE_MAX, "The reference, or null (D30)."),
        description: schema::nullable_text(TEXT_MAX, "Free text, or null."),
        created_at: schema::instant("When recorded."),
        transactions: schema::array(schema_ref::<TransactionDto>())
            .with("description", "Its active payments, one per invoice, by id."),
    }
}
