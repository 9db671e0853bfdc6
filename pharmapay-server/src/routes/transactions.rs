//! `/api/transactions` (spec, Transactions; D10, D13, D14, D30): payments against invoices, their
//! body, their DTO and their operations.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Transaction;
use pharmapay_core::branches::BRANCH_CODE_MAX;
use pharmapay_core::invoices::InvoiceBrief;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::text::{CODE_MAX, NAME_MAX, TEXT_MAX};
use pharmapay_core::transactions::reference::REFERENCE_MAX;
use pharmapay_core::transactions::{NewTransaction, TransactionQuery, TransactionType};
use pharmapay_core::{Amount, PharmaPay, Store};
use serde::Serialize;

use super::{Route, kept_routes};
use crate::decode::{Slot, bodies};
use crate::dto::{PageDto, amount, instant, money, page_schema};
use crate::guard::needs;
use crate::openapi::ACTIVE_ONLY;
use crate::openapi::schema::{self, either, names};
use crate::openapi::{
    Crud, Json, Operation, SORT_DIR, Schema, branch_filter, describe, object, query, query_date, query_id, schema_ref,
    sort_by,
};

/// The payment routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    kept_routes! {
        "/api/transactions" as "transactions", Transaction, reads: needs(Transaction, Read), dto: TransactionDto;
        list: |call| Box::pin(call.page(TransactionQuery::from_params, PharmaPay::list_transactions, TransactionDto::from));
        engine: create_transaction, get_transaction, update_transaction, delete_transaction, restore_transaction;
    }
}

const CRUD: Crud =
    Crud { base: "/api/transactions", tag: "Transactions", singular: "transaction", restore_parent: Some("invoice") };

fn list() -> Operation {
    let defaults = TransactionQuery::default();
    CRUD.page::<PageDto<TransactionDto>>(". Paginated (D8); each item carries its invoice.", defaults.page.page_size())
        .parameter(sort_by(defaults.sort.key))
        .parameter(SORT_DIR)
        .parameters(filters(true))
}

fn create() -> Operation {
    CRUD.create::<TransactionBody, TransactionDto>(
        "The invoice must exist and be active (400); a date after today is a 400 (D2). A reference another payment \
         holds is a 409 with `existingTransactionId` (D30). ",
    )
}

fn get() -> Operation {
    CRUD.get::<TransactionDto>("")
}

fn update() -> Operation {
    CRUD.update::<TransactionBody, TransactionDto>("A reference another payment holds is a 409 (D30).")
}

fn delete() -> Operation {
    CRUD.delete("")
}

fn restore() -> Operation {
    CRUD.restore::<TransactionDto>()
}

/// The filters of the payment list, which the transactions report reads too (`listing` false).
pub fn filters(listing: bool) -> Vec<Json> {
    let types = names(&TransactionType::ALL, TransactionType::name);
    vec![
        query_id("invoiceId", "Only this invoice's payments."),
        branch_filter("payments (a payment is of its invoice's branch)"),
        query_date("fromDate", "Inclusive lower bound on transactionDate."),
        query_date("toDate", "Inclusive upper bound on transactionDate; earlier than fromDate is a 400."),
        query(
            "transactionType",
            format!("Only this type: {}, matched case-insensitively; anything else is a 400 (D8).", either(&types)),
            schema::choice(&types),
        ),
        query(
            "reference",
            format!(
                "Only payments whose reference has this one's key: case, punctuation, spaces and compatibility forms do \
                 not matter (D30, D48). 1 to {REFERENCE_MAX} characters after trimming, else 400."
            ),
            object! { "type": "string", "pattern": schema::reference_pattern(REFERENCE_MAX) },
        ),
        query(
            "isActive",
            if listing { "`true` (default): active payments; `false`: soft-deleted ones." } else { ACTIVE_ONLY },
            object! { "type": "boolean" },
        ),
    ]
}

bodies! {
    /// Payment create and replace (spec; D14).
    TransactionBody => NewTransaction as "TransactionInput":
        "Payment create and full replacement (D14). Unknown fields are ignored." {
        invoice_id: Slot => id("invoiceId") as "An existing active invoice; otherwise 400.",
        amount: Slot => amount("amount") as "Amount paid. Overpayment is allowed (D10).",
        transaction_date: Slot => datetime("transactionDate")
            as "When the payment was made; after today in the business time zone is a 400 (D2, D3).",
        transaction_type: Slot => choice("transactionType", TransactionType::parse, TransactionType::expected())
            as transaction_type_input(),
        reference: Slot => optional_reference("reference"),
        description: Slot => optional_string("description") as schema::free_text("Free text."),
    }
}

/// `transactionType` in a body (D7).
pub fn transaction_type_input() -> (Vec<&'static str>, String) {
    let types = names(&TransactionType::ALL, TransactionType::name);
    let description = format!("One of {}, matched case-insensitively (D7).", types.join(", "));
    (types, description)
}

/// `TransactionDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionDto {
    id: i64,
    invoice_id: i64,
    #[serde(serialize_with = "amount")]
    amount: Amount,
    #[serde(serialize_with = "instant")]
    transaction_date: Timestamp,
    transaction_type: &'static str,
    /// D30: null when absent.
    reference: Option<String>,
    description: Option<String>,
    /// D31: null for a payment recorded on its own.
    vendor_payment_id: Option<i64>,
    /// D49: its invoice's.
    branch_id: i64,
    branch_code: String,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    invoice: InvoiceBriefDto,
}

impl From<pharmapay_core::transactions::Transaction> for TransactionDto {
    fn from(transaction: pharmapay_core::transactions::Transaction) -> Self {
        Self {
            id: transaction.id.get(),
            invoice_id: transaction.invoice_id.get(),
            amount: transaction.amount,
            transaction_date: transaction.transaction_date,
            transaction_type: transaction.transaction_type.name(),
            reference: transaction.reference,
            description: transaction.description,
            vendor_payment_id: transaction.vendor_payment_id.map(|id| id.get()),
            branch_id: transaction.invoice.branch_id.get(),
            branch_code: transaction.invoice.branch_code.clone(),
            is_active: transaction.is_active,
            created_at: transaction.created_at,
            invoice: transaction.invoice.into(),
        }
    }
}

/// The invoice nested in a transaction (spec; D13).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceBriefDto {
    id: i64,
    invoice_number: String,
    vendor_id: i64,
    vendor_name: String,
    /// D49.
    branch_id: i64,
    branch_code: String,
    #[serde(serialize_with = "amount")]
    amount: Amount,
    #[serde(serialize_with = "money")]
    pending_amount: Decimal,
}

impl From<InvoiceBrief> for InvoiceBriefDto {
    fn from(invoice: InvoiceBrief) -> Self {
        Self {
            id: invoice.id.get(),
            invoice_number: invoice.invoice_number,
            vendor_id: invoice.vendor_id.get(),
            vendor_name: invoice.vendor_name,
            branch_id: invoice.branch_id.get(),
            branch_code: invoice.branch_code,
            amount: invoice.amount,
            pending_amount: invoice.pending_amount,
        }
    }
}

describe! {
    TransactionDto as "Transaction": "TransactionDto: a payment with its invoice." {
        id: schema::id("Transaction id."),
        invoice_id: schema::id("The invoice paid."),
        amount: schema::amount("Amount paid."),
        transaction_date: schema::instant("When the payment was made."),
        transaction_type: schema::one_of(
            &names(&TransactionType::ALL, TransactionType::name),
            "How the payment was made, in canonical case.",
        ),
        reference: schema::nullable_text(REFERENCE_MAX, "The payment's reference as recorded (trimmed), or null (D30)."),
        description: schema::nullable_text(TEXT_MAX, "Free text, or null."),
        vendor_payment_id: schema::nullable_id(
            "The vendor payment this payment is a part of, or null for a payment recorded on its own (D31).",
        ),
        branch_id: schema::id("Its invoice's branch, never given: it moves with the invoice (D49)."),
        branch_code: schema::text(BRANCH_CODE_MAX, "That branch's code."),
        is_active: schema::boolean("False once soft-deleted."),
        created_at: schema::instant("When recorded."),
        invoice: schema_ref::<InvoiceBriefDto>(),
    }
}

describe! {
    InvoiceBriefDto as "InvoiceBrief": "The invoice nested in a transaction (spec; D13)." {
        id: schema::id("Invoice id."),
        invoice_number: schema::text(CODE_MAX, "Invoice number."),
        vendor_id: schema::id("Vendor id (D13)."),
        vendor_name: schema::text(NAME_MAX, "Vendor name."),
        branch_id: schema::id("The invoice's branch (D49)."),
        branch_code: schema::text(BRANCH_CODE_MAX, "That branch's code."),
        amount: schema::amount("Total amount."),
        pending_amount: schema::money("Amount still unpaid as of now; negative when overpaid."),
    }
}

impl Schema for PageDto<TransactionDto> {
    const NAME: &'static str = "TransactionPage";

    fn schema() -> Json {
        page_schema::<TransactionDto>("A page of transactions, each with its invoice.")
    }
}
