//! `/api/invoices` (spec, Invoices; D4, D10, D13, D14): the bills vendors send, their body,
//! their DTOs and their operations.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Invoice;
use pharmapay_core::branches::BRANCH_CODE_MAX;
use pharmapay_core::invoices::{InvoiceDetail, InvoiceQuery, InvoiceStatus, NewInvoice};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::paging::MAX_DAYS;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::text::{CODE_MAX, EMAIL_MAX, NAME_MAX, TEXT_MAX};
use pharmapay_core::vendors::{VendorBrief, VendorType};
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, kept_routes};
use crate::decode::{Slot, bodies};
use crate::dto::{PageDto, instant, money, page_schema};
use crate::guard::needs;
use crate::openapi::ACTIVE_ONLY;
use crate::openapi::schema::{self, TRIM_NOTE, names};
use crate::openapi::{
    Crud, Json, Operation, SORT_DIR, Schema, branch_filter, describe, flatten, object, query, query_date, query_id,
    schema_ref, search, sort_by,
};

/// The invoice routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    kept_routes! {
        "/api/invoices" as "invoices", Invoice, reads: needs(Invoice, Read), dto: InvoiceDto, one: InvoiceDetailDto;
        list: |call| Box::pin(call.page(InvoiceQuery::from_params, PharmaPay::list_invoices, InvoiceDto::from));
        engine: create_invoice, get_invoice, update_invoice, delete_invoice, restore_invoice;
    }
}

const CRUD: Crud = Crud { base: "/api/invoices", tag: "Invoices", singular: "invoice", restore_parent: Some("vendor") };

fn list() -> Operation {
    let defaults = InvoiceQuery::default();
    CRUD.page::<PageDto<InvoiceDto>>(
        ". Paginated (D8); items carry no nested vendor. Status is computed as of today (D3, D10).",
        defaults.page.page_size(),
    )
    .parameter(sort_by(defaults.sort.key))
    .parameter(SORT_DIR)
    .parameters(filters(true))
}

fn create() -> Operation {
    CRUD.create::<InvoiceBody, InvoiceDto>(
        "The vendor must exist and be active (400). A taken invoice number is a 409 (D5). ",
    )
}

fn get() -> Operation {
    CRUD.get::<InvoiceDetailDto>("Carries the nested `vendor` (D13).")
}

fn update() -> Operation {
    CRUD.update::<InvoiceBody, InvoiceDto>("A taken invoice number is a 409 (D5).")
}

fn delete() -> Operation {
    CRUD.delete("Its status becomes Canceled and its number is freed (D4).")
}

fn restore() -> Operation {
    CRUD.restore::<InvoiceDto>()
}

/// The filters of the invoice list, which the invoices report reads too (`listing` false).
pub fn filters(listing: bool) -> Vec<Json> {
    vec![
        query(
            "status",
            "Only this computed status: FullyPaid, PartiallyPaid, Overdue or Canceled, matched case-insensitively; \
             anything else is a 400 (D8).",
            schema::choice(&names(&InvoiceStatus::ALL, InvoiceStatus::name)),
        ),
        search("search", "Substring match on invoice number or vendor name, case-insensitive."),
        query_id("vendorId", "Only this vendor's invoices."),
        branch_filter("invoices"),
        search("invoiceNumber", "Substring match on the invoice number only, case-insensitive."),
        query_date("fromDate", "Inclusive lower bound on invoiceDate."),
        query_date("toDate", "Inclusive upper bound on invoiceDate; earlier than fromDate is a 400."),
        query(
            "minAmount",
            format!(
                "Inclusive lower bound on amount; a decimal with at most {} fractional digits, |value| <= {}.",
                pharmapay_core::money::MAX_FRACTION_DIGITS,
                pharmapay_core::money::MAX_AMOUNT
            ),
            schema::amount_bound(),
        ),
        query("maxAmount", "Inclusive upper bound on amount; less than minAmount is a 400.", schema::amount_bound()),
        query(
            "isActive",
            if listing { "Omitted: all invoices; `true`: active only; `false`: canceled only." } else { ACTIVE_ONLY },
            object! { "type": "boolean" },
        ),
        query(
            "dueWithinDays",
            format!(
                "Only active invoices still owing something, due from today to today plus this many days in the \
                 business time zone (D32); 0 to {MAX_DAYS}, else 400."
            ),
            schema::days(),
        ),
        query(
            "overpaid",
            "`true`: only invoices whose pendingAmount is below zero; `false`: only those at zero or above (D33).",
            object! { "type": "boolean" },
        ),
    ]
}

bodies! {
    /// Invoice create and replace (spec; D14).
    InvoiceBody => NewInvoice as "InvoiceInput": "Invoice create and full replacement (D14). Unknown fields are ignored." {
        vendor_id: Slot => id("vendorId") as "An existing active vendor; otherwise 400.",
        branch_id: Slot => optional_id("branchId")
            as "The branch whose bill it is, an active one; otherwise 400 (D49). Omitted or null: on a create, the \
                head office; on a replacement, the invoice's branch as it is. Its payments move with it; an invoice \
                with a vendor credit applied cannot move (400).",
        invoice_number: Slot => string("invoiceNumber") as invoice_number_input(),
        amount: Slot => amount("amount") as "Total amount.",
        invoice_date: Slot => datetime("invoiceDate") as "Invoice date.",
        due_date: Slot => datetime("dueDate") as "Due date; earlier than `invoiceDate` is a 400 (D2).",
        description: Slot => optional_string("description") as schema::free_text("Free text."),
    }
}

/// `invoiceNumber` in a body: a code, unique among active invoices (D4, D5).
fn invoice_number_input() -> Json {
    object! {
        "type": "string",
        "pattern": schema::line_pattern(CODE_MAX),
        "description": format!(
            "Invoice number, unique among active invoices, compared case-insensitively (D4); a taken number is a 409 \
             (D5). Not blank, at most {CODE_MAX} characters. {TRIM_NOTE}."
        ),
    }
}

/// `InvoiceDto`, as lists, creates, updates and restores answer it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceDto {
    id: i64,
    vendor_id: i64,
    vendor_name: String,
    /// D49.
    branch_id: i64,
    branch_code: String,
    invoice_number: String,
    #[serde(serialize_with = "money")]
    amount: Decimal,
    #[serde(serialize_with = "money")]
    paid_amount: Decimal,
    /// D44.
    #[serde(serialize_with = "money")]
    credited_amount: Decimal,
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

impl From<pharmapay_core::invoices::Invoice> for InvoiceDto {
    fn from(invoice: pharmapay_core::invoices::Invoice) -> Self {
        Self {
            id: invoice.id.get(),
            vendor_id: invoice.vendor_id.get(),
            pending_amount: invoice.pending_amount(),
            vendor_name: invoice.vendor_name,
            branch_id: invoice.branch_id.get(),
            branch_code: invoice.branch_code,
            invoice_number: invoice.invoice_number,
            amount: invoice.amount.get(),
            paid_amount: invoice.paid_amount,
            credited_amount: invoice.credited_amount,
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

describe! {
    InvoiceDto as "Invoice": "InvoiceDto, as lists, creates, updates and restores return it (no nested vendor)." {
        id: schema::id("Invoice id."),
        vendor_id: schema::id("The vendor billed by."),
        vendor_name: schema::text(NAME_MAX, "That vendor's name."),
        branch_id: schema::id("The branch whose bill it is (D49)."),
        branch_code: schema::text(BRANCH_CODE_MAX, "That branch's code."),
        invoice_number: schema::text(CODE_MAX, "Invoice number."),
        amount: schema::amount("Total amount."),
        paid_amount: schema::money("Sum of the invoice's active transactions (D10)."),
        credited_amount: schema::money("Sum of the active applications of vendor credits to it (D44)."),
        pending_amount: schema::money("`amount - paidAmount - creditedAmount` (D10, D44); negative when overpaid."),
        status: schema::one_of(
            &names(&InvoiceStatus::ALL, InvoiceStatus::name),
            "Computed on read, first match wins: Canceled when inactive, FullyPaid when pendingAmount <= 0, Overdue when \
             the due date is before today in the business time zone (D3), else PartiallyPaid.",
        ),
        invoice_date: schema::instant("Invoice date."),
        due_date: schema::instant("Due date."),
        description: schema::nullable_text(TEXT_MAX, "Free text, or null."),
        is_active: schema::boolean("False once canceled (soft-deleted)."),
        created_at: schema::instant("When created."),
    }
}

describe! {
    InvoiceDetailDto as "InvoiceWithVendor":
        "InvoiceDto with the nested vendor, as `GET /api/invoices/{id}` returns it (D13)." {
        invoice: flatten::<InvoiceDto>(),
        vendor: schema_ref::<VendorBriefDto>(),
    }
}

describe! {
    VendorBriefDto as "VendorBrief": "The vendor nested in a single-invoice read (D13)." {
        id: schema::id("Vendor id."),
        name: schema::text(NAME_MAX, "Name."),
        vendor_type: schema::one_of(&names(&VendorType::ALL, VendorType::name), "Kind of business."),
        address: schema::nullable_text(TEXT_MAX, "Postal address, or null."),
        phone: schema::nullable_text(CODE_MAX, "Phone number, or null."),
        email: schema::nullable_text(EMAIL_MAX, "Email, or null."),
        drug_license_number1: schema::nullable_text(CODE_MAX, "Primary drug licence, or null."),
        drug_license_number2: schema::nullable_text(CODE_MAX, "Secondary drug licence, or null."),
        is_active: schema::boolean("False once soft-deleted."),
    }
}

impl Schema for PageDto<InvoiceDto> {
    const NAME: &'static str = "InvoicePage";

    fn schema() -> Json {
        page_schema::<InvoiceDto>("A page of invoices (without the nested vendor).")
    }
}
