//! How an event's `data` is rendered by the server (D47): [`ApiRenderer`] writes each record
//! with the DTO its `GET` answers with, so an event carries exactly what a read would have
//! shown. An application embedding the engine passes it in `EngineOptions::events` to get the
//! same events as the server.

use pharmapay_core::events::{Announced, Render};

use crate::routes::bank_statements::BankStatementDto;
use crate::routes::invoices::InvoiceDetailDto;
use crate::routes::transactions::TransactionDto;
use crate::routes::vendor_credits::VendorCreditDetailDto;
use crate::routes::vendor_payments::VendorPaymentDto;
use crate::routes::vendors::VendorDto;

/// Renders an event's `data` with the DTO of the record's `GET` answer (D47): the renderer the
/// server opens the engine with, and the one an application embedding the engine can pass to
/// get the same events.
#[derive(Clone, Copy, Debug, Default)]
pub struct ApiRenderer;

impl Render for ApiRenderer {
    fn render(&self, record: Announced<'_>) -> String {
        let json = match record {
            Announced::Vendor(vendor) => serde_json::to_string(&VendorDto::from(vendor.clone())),
            Announced::Invoice(invoice) => serde_json::to_string(&InvoiceDetailDto::from(invoice.clone())),
            Announced::Transaction(payment) => serde_json::to_string(&TransactionDto::from(payment.clone())),
            Announced::VendorPayment(payment) => serde_json::to_string(&VendorPaymentDto::from(payment.clone())),
            Announced::VendorCredit(credit) => serde_json::to_string(&VendorCreditDetailDto::from(credit.clone())),
            Announced::BankStatement(statement) => serde_json::to_string(&BankStatementDto::from(statement.clone())),
        };
        json.expect("a DTO serializes")
    }
}
