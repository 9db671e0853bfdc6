//! `/api/transactions` (spec, Transactions; D10, D13, D14, D30): payments against invoices, their
//! body and their DTO.

use pharmapay_core::Action::{Create, Delete, Read, Update};
use pharmapay_core::Collection::Transaction;
use pharmapay_core::domain::{InvoiceBrief, NewTransaction, TransactionQuery, TransactionType};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::{Amount, PharmaPay, Store};
use serde::Serialize;

use super::Route;
use crate::app::needs;
use crate::decode::{Slot, bodies};
use crate::dto::{amount, instant, money};

/// The payment routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/transactions", needs(Transaction, Read), |call| {
            Box::pin(call.page(TransactionQuery::from_params, PharmaPay::list_transactions, TransactionDto::from))
        }),
        Route::post("/api/transactions", needs(Transaction, Create), |call| {
            Box::pin(call.create(
                "transactions",
                PharmaPay::create_transaction,
                |payment| payment.id.get(),
                TransactionDto::from,
            ))
        }),
        Route::get("/api/transactions/{id}", needs(Transaction, Read), |call| {
            Box::pin(call.by_id(PharmaPay::get_transaction, TransactionDto::from))
        }),
        Route::put("/api/transactions/{id}", needs(Transaction, Update), |call| {
            Box::pin(call.replace(PharmaPay::update_transaction, TransactionDto::from))
        }),
        Route::delete("/api/transactions/{id}", needs(Transaction, Delete), |call| {
            Box::pin(call.delete(PharmaPay::delete_transaction))
        }),
        Route::post("/api/transactions/{id}/restore", needs(Transaction, Update), |call| {
            Box::pin(call.by_id(PharmaPay::restore_transaction, TransactionDto::from))
        }),
    ]
}

bodies! {
    /// Payment create and replace (spec; D14).
    TransactionBody => NewTransaction {
        invoice_id: Slot => id("invoiceId"),
        amount: Slot => amount("amount"),
        transaction_date: Slot => datetime("transactionDate"),
        transaction_type: Slot => choice("transactionType", TransactionType::parse, TransactionType::expected()),
        reference: Slot => optional_reference("reference"),
        description: Slot => optional_string("description"),
    }
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
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    invoice: InvoiceBriefDto,
}

impl From<pharmapay_core::domain::Transaction> for TransactionDto {
    fn from(transaction: pharmapay_core::domain::Transaction) -> Self {
        Self {
            id: transaction.id.get(),
            invoice_id: transaction.invoice_id.get(),
            amount: transaction.amount,
            transaction_date: transaction.transaction_date,
            transaction_type: transaction.transaction_type.name(),
            reference: transaction.reference,
            description: transaction.description,
            vendor_payment_id: transaction.vendor_payment_id.map(|id| id.get()),
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
            amount: invoice.amount,
            pending_amount: invoice.pending_amount,
        }
    }
}
