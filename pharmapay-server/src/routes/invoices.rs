//! `/api/invoices` (spec, Invoices; D4, D10, D13, D14): the bills vendors send, their body and
//! their DTOs.

use pharmapay_core::Action::{Create, Delete, Read, Update};
use pharmapay_core::Collection::Invoice;
use pharmapay_core::domain::{InvoiceDetail, InvoiceQuery, NewInvoice, VendorBrief};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::Route;
use crate::app::needs;
use crate::decode::{Slot, bodies};
use crate::dto::{instant, money};

/// The invoice routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/invoices", needs(Invoice, Read), |call| {
            Box::pin(call.page(InvoiceQuery::from_params, PharmaPay::list_invoices, InvoiceDto::from))
        }),
        Route::post("/api/invoices", needs(Invoice, Create), |call| {
            Box::pin(call.create("invoices", PharmaPay::create_invoice, |invoice| invoice.id.get(), InvoiceDto::from))
        }),
        Route::get("/api/invoices/{id}", needs(Invoice, Read), |call| {
            Box::pin(call.by_id(PharmaPay::get_invoice, InvoiceDetailDto::from))
        }),
        Route::put("/api/invoices/{id}", needs(Invoice, Update), |call| {
            Box::pin(call.replace(PharmaPay::update_invoice, InvoiceDto::from))
        }),
        Route::delete("/api/invoices/{id}", needs(Invoice, Delete), |call| {
            Box::pin(call.delete(PharmaPay::delete_invoice))
        }),
        Route::post("/api/invoices/{id}/restore", needs(Invoice, Update), |call| {
            Box::pin(call.by_id(PharmaPay::restore_invoice, InvoiceDto::from))
        }),
    ]
}

bodies! {
    /// Invoice create and replace (spec; D14).
    InvoiceBody => NewInvoice {
        vendor_id: Slot => id("vendorId"),
        invoice_number: Slot => string("invoiceNumber"),
        amount: Slot => amount("amount"),
        invoice_date: Slot => datetime("invoiceDate"),
        due_date: Slot => datetime("dueDate"),
        description: Slot => optional_string("description"),
    }
}

/// `InvoiceDto`, as lists, creates, updates and restores answer it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceDto {
    id: i64,
    vendor_id: i64,
    vendor_name: String,
    invoice_number: String,
    #[serde(serialize_with = "money")]
    amount: Decimal,
    #[serde(serialize_with = "money")]
    paid_amount: Decimal,
    #[serde(serialize_with = "money")]
    pending_amount: Decimal,
    status: &'static str,
    #[serde(serialize_with = "instant")]
    invoice_date: Timestamp,
    #[serde(serialize_with = "instant")]
    due_date: Timestamp,
    description: Option<String>,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<pharmapay_core::domain::Invoice> for InvoiceDto {
    fn from(invoice: pharmapay_core::domain::Invoice) -> Self {
        Self {
            id: invoice.id.get(),
            vendor_id: invoice.vendor_id.get(),
            pending_amount: invoice.pending_amount(),
            vendor_name: invoice.vendor_name,
            invoice_number: invoice.invoice_number,
            amount: invoice.amount.get(),
            paid_amount: invoice.paid_amount,
            status: invoice.status.name(),
            invoice_date: invoice.invoice_date,
            due_date: invoice.due_date,
            description: invoice.description,
            is_active: invoice.is_active,
            created_at: invoice.created_at,
        }
    }
}

/// `InvoiceDto` with its vendor, as the single-invoice read answers it (D13).
#[derive(Serialize)]
pub struct InvoiceDetailDto {
    #[serde(flatten)]
    invoice: InvoiceDto,
    vendor: VendorBriefDto,
}

impl From<InvoiceDetail> for InvoiceDetailDto {
    fn from(detail: InvoiceDetail) -> Self {
        Self { invoice: detail.invoice.into(), vendor: detail.vendor.into() }
    }
}

/// The vendor nested in a single invoice (D13).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VendorBriefDto {
    id: i64,
    name: String,
    vendor_type: &'static str,
    address: Option<String>,
    phone: Option<String>,
    email: Option<String>,
    drug_license_number1: Option<String>,
    drug_license_number2: Option<String>,
    is_active: bool,
}

impl From<VendorBrief> for VendorBriefDto {
    fn from(vendor: VendorBrief) -> Self {
        Self {
            id: vendor.id.get(),
            name: vendor.name,
            vendor_type: vendor.vendor_type.name(),
            address: vendor.address,
            phone: vendor.phone,
            email: vendor.email,
            drug_license_number1: vendor.drug_license_number1,
            drug_license_number2: vendor.drug_license_number2,
            is_active: vendor.is_active,
        }
    }
}
