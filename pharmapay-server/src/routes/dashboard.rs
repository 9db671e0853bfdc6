//! `/api/dashboard/*` (spec, Dashboard; D8, D12, D32): the summary, the top vendors, the newest
//! invoices, payments per month and what falls due when, with their DTOs and operations. Every
//! figure is live, never cached. The licence alerts, also under `/api/dashboard`, are the
//! reconciliation's.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Dashboard;
use pharmapay_core::engine::RECENT_DAYS;
use pharmapay_core::invoices::{Invoice, InvoiceStatus};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::paging::{MAX_PAGE_SIZE, read_limit};
use pharmapay_core::reports::dashboard::{DueFigures, MonthlyTotal, Payables, Summary, TopVendor};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::text::{CODE_MAX, NAME_MAX};
use pharmapay_core::{Amount, FieldErrors, PharmaPay, Store};
use serde::Serialize;

use super::{Call, Route, each};
use crate::dto::{amount, instant, money, optional_instant};
use crate::guard::needs;
use crate::http::{Reply, Req};
use crate::openapi::schema::{self, names};
use crate::openapi::{Component, Operation, Section, Tag, describe, object, query, schema_ref};
use crate::problem::ApiError;

/// The dashboard routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/dashboard/summary", needs(Dashboard, Read), summary_operation, |call| {
            Box::pin(call.read(PharmaPay::dashboard_summary, SummaryDto::from))
        }),
        Route::get("/api/dashboard/top-vendors", needs(Dashboard, Read), top_vendors_operation, |call| {
            Box::pin(top_vendors(call))
        }),
        Route::get("/api/dashboard/recent-invoices", needs(Dashboard, Read), recent_invoices_operation, |call| {
            Box::pin(recent_invoices(call))
        }),
        Route::get("/api/dashboard/monthly-transactions", needs(Dashboard, Read), monthly_operation, |call| {
            Box::pin(call.read(PharmaPay::monthly_transactions, each(MonthlyDto::from)))
        }),
        Route::get("/api/dashboard/payables", needs(Dashboard, Read), payables_operation, |call| {
            Box::pin(call.read(PharmaPay::payables, PayablesDto::from))
        }),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Dashboard");

fn limit(req: &Req) -> Result<u32, ApiError> {
    let mut errors = FieldErrors::new();
    let limit = read_limit(&req.query, &mut errors);
    if errors.is_empty() { Ok(limit) } else { Err(ApiError::Invalid(errors)) }
}

/// Active vendors ranked by outstanding balance; `limit` defaults to 5, clamped to 1..=100.
async fn top_vendors<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let top = call.app.engine.top_vendors(call.caller()?, limit(&call.req)?).await?;
    Ok(super::ok(&top.into_iter().map(TopVendorDto::from).collect::<Vec<_>>()))
}

/// The newest invoices; `limit` defaults to 5, clamped to 1..=100.
async fn recent_invoices<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let recent = call.app.engine.recent_invoices(call.caller()?, limit(&call.req)?).await?;
    Ok(super::ok(&recent.into_iter().map(RecentInvoiceDto::from).collect::<Vec<_>>()))
}

fn summary_operation() -> Operation {
    TAG.operation("getDashboardSummary", "Summary figures", ". Computed live on every request (D12).")
        .ok("The summary.", schema_ref::<SummaryDto>())
        .errors(&[401, 403, 503])
}

/// The `limit` of the dashboard's short lists (D8): clamped, never refused, so it has no
/// bounds to state.
const LIMIT: Component = Component {
    section: Section::Parameters,
    name: "Limit",
    build: || {
        query(
            "limit",
            format!("How many rows; default 5. Clamped to 1..{MAX_PAGE_SIZE} (D8); not an integer is a 400."),
            object! { "type": "integer" },
        )
    },
};

fn top_vendors_operation() -> Operation {
    TAG.operation(
        "getTopVendors",
        "Vendors with the largest outstanding balance",
        ". Active vendors ranked by outstanding balance, descending, then name (D12).",
    )
    .ok("The top vendors.", schema::array(schema_ref::<TopVendorDto>()).with("maxItems", MAX_PAGE_SIZE))
    .parameter(LIMIT)
    .errors(&[400, 401, 403, 503])
}

fn recent_invoices_operation() -> Operation {
    TAG.operation(
        "getRecentInvoices",
        "Most recently created invoices",
        ". Active and canceled invoices, newest `createdAt` first (D12).",
    )
    .ok("The newest invoices.", schema::array(schema_ref::<RecentInvoiceDto>()).with("maxItems", MAX_PAGE_SIZE))
    .parameter(LIMIT)
    .errors(&[400, 401, 403, 503])
}

fn monthly_operation() -> Operation {
    TAG.operation(
        "getMonthlyTransactions",
        "Payments per month",
        ". Exactly 12 rows, current month first; months without payments are zero rows (D12).",
    )
    .ok("Twelve months.", schema::array(schema_ref::<MonthlyDto>()).with("minItems", 12).with("maxItems", 12))
    .errors(&[401, 403, 503])
}

fn payables_operation() -> Operation {
    TAG.operation(
        "getPayables",
        "What falls due when",
        ". Amount and count of active invoices still owing something: overdue, due today, within 7 and within 30 days \
         (D32).",
    )
    .ok("The payables.", schema_ref::<PayablesDto>())
    .errors(&[401, 403, 503])
}

/// The dashboard summary (spec; D12).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDto {
    total_vendors: u64,
    total_invoices: u64,
    #[serde(serialize_with = "money")]
    total_due: Decimal,
    #[serde(serialize_with = "money")]
    total_paid: Decimal,
    recent_transactions: u64,
}

impl From<Summary> for SummaryDto {
    fn from(summary: Summary) -> Self {
        Self {
            total_vendors: summary.total_vendors,
            total_invoices: summary.total_invoices,
            total_due: summary.total_due,
            total_paid: summary.total_paid,
            recent_transactions: summary.recent_transactions,
        }
    }
}

/// What falls due in one window (D32).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DueDto {
    #[serde(serialize_with = "money")]
    amount: Decimal,
    invoice_count: u64,
}

impl From<DueFigures> for DueDto {
    fn from(due: DueFigures) -> Self {
        Self { amount: due.amount, invoice_count: due.invoice_count }
    }
}

/// The dashboard's payables (D32).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PayablesDto {
    overdue: DueDto,
    due_today: DueDto,
    due_in7_days: DueDto,
    due_in30_days: DueDto,
    /// D44.
    available_credit: AvailableCreditDto,
    pending_claims: PendingClaimsDto,
}

impl From<Payables> for PayablesDto {
    fn from(payables: Payables) -> Self {
        let (available, pending) = (payables.credits.available_credit, payables.credits.pending_claims);
        Self {
            overdue: payables.overdue.into(),
            due_today: payables.due_today.into(),
            due_in7_days: payables.due_in_7_days.into(),
            due_in30_days: payables.due_in_30_days.into(),
            available_credit: AvailableCreditDto { amount: available.amount, credit_count: available.credit_count },
            pending_claims: PendingClaimsDto {
                amount: pending.amount,
                credit_count: pending.credit_count,
                oldest_claim_date: pending.oldest_claim_date,
            },
        }
    }
}

/// Credit still to set against bills (D44).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailableCreditDto {
    #[serde(serialize_with = "money")]
    amount: Decimal,
    credit_count: u64,
}

/// Claims still waiting for the distributor's decision (D44).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingClaimsDto {
    #[serde(serialize_with = "money")]
    amount: Decimal,
    credit_count: u64,
    #[serde(serialize_with = "optional_instant")]
    oldest_claim_date: Option<Timestamp>,
}

/// One top vendor.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopVendorDto {
    vendor_id: i64,
    vendor_name: String,
    #[serde(serialize_with = "money")]
    outstanding_balance: Decimal,
    total_invoices: u64,
}

impl From<TopVendor> for TopVendorDto {
    fn from(top: TopVendor) -> Self {
        Self {
            vendor_id: top.vendor_id.get(),
            vendor_name: top.vendor_name,
            outstanding_balance: top.outstanding_balance,
            total_invoices: top.total_invoices,
        }
    }
}

/// One recent invoice (spec, Dashboard).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentInvoiceDto {
    id: i64,
    invoice_number: String,
    vendor_name: String,
    #[serde(serialize_with = "amount")]
    amount: Amount,
    #[serde(serialize_with = "money")]
    pending_amount: Decimal,
    status: &'static str,
    #[serde(serialize_with = "instant")]
    invoice_date: Timestamp,
    #[serde(serialize_with = "instant")]
    due_date: Timestamp,
}

impl From<Invoice> for RecentInvoiceDto {
    fn from(invoice: Invoice) -> Self {
        Self {
            id: invoice.id.get(),
            pending_amount: invoice.pending_amount(),
            invoice_number: invoice.invoice_number,
            vendor_name: invoice.vendor_name,
            amount: invoice.amount,
            status: invoice.status.name(),
            invoice_date: invoice.invoice_date,
            due_date: invoice.due_date,
        }
    }
}

/// One month of payments.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MonthlyDto {
    month: String,
    #[serde(serialize_with = "money")]
    total_amount: Decimal,
    transaction_count: u64,
}

impl From<MonthlyTotal> for MonthlyDto {
    fn from(month: MonthlyTotal) -> Self {
        Self { month: month.month, total_amount: month.total_amount, transaction_count: month.transaction_count }
    }
}

describe! {
    SummaryDto as "Summary": "Dashboard summary, computed live (D12)." {
        total_vendors: schema::count("Count of all vendor records, active and inactive."),
        total_invoices: schema::count("Count of all invoice records, active and canceled."),
        total_due: schema::money("Sum of `pendingAmount` over active invoices (D12)."),
        total_paid: schema::money("Sum of active transactions (D12)."),
        recent_transactions: schema::count(format!("Active transactions dated within the last {RECENT_DAYS} days (D12).")),
    }
}

describe! {
    DueDto as "Due": "What falls due in one window (D32)." {
        amount: schema::money("The sum of their pending amounts."),
        invoice_count: schema::count("How many invoices."),
    }
}

describe! {
    PayablesDto as "Payables":
        "Over active invoices still owing something: overdue (due before today), due today, due from tomorrow to \
         today + 7, and from tomorrow to today + 30 (so it includes the 7 days), in the business time zone (D32); \
         and the vendor credits still available and the claims still undecided (D44)." {
        overdue: schema_ref::<DueDto>(),
        due_today: schema_ref::<DueDto>(),
        due_in7_days: schema_ref::<DueDto>(),
        due_in30_days: schema_ref::<DueDto>(),
        available_credit: schema_ref::<AvailableCreditDto>(),
        pending_claims: schema_ref::<PendingClaimsDto>(),
    }
}

describe! {
    AvailableCreditDto as "AvailableCredit":
        "Credit still to set against bills (D44): active credits with something available." {
        amount: schema::money("The sum of their `availableAmount`."),
        credit_count: schema::count("How many credits."),
    }
}

describe! {
    PendingClaimsDto as "PendingClaims": "Claims still waiting for the distributor's decision (D44)." {
        amount: schema::money("The sum of their claimed amounts."),
        credit_count: schema::count("How many claims."),
        oldest_claim_date: schema::nullable_instant("The earliest claim date among them, or null when there is none."),
    }
}

describe! {
    TopVendorDto as "TopVendor": "One active vendor ranked by outstanding balance (descending, then name)." {
        vendor_id: schema::id("Vendor id."),
        vendor_name: schema::text(NAME_MAX, "Vendor name."),
        outstanding_balance: schema::money("Outstanding balance (D11)."),
        total_invoices: schema::count("Count of the vendor's active invoices."),
    }
}

describe! {
    RecentInvoiceDto as "RecentInvoice": "One of the newest invoices (active and canceled), newest `createdAt` first." {
        id: schema::id("Invoice id."),
        invoice_number: schema::text(CODE_MAX, "Invoice number."),
        vendor_name: schema::text(NAME_MAX, "Vendor name."),
        amount: schema::amount("Total amount."),
        pending_amount: schema::money("Amount still unpaid; negative when overpaid."),
        status: schema::one_of(&names(&InvoiceStatus::ALL, InvoiceStatus::name), "Computed status."),
        invoice_date: schema::instant("Invoice date."),
        due_date: schema::instant("Due date."),
    }
}

describe! {
    MonthlyDto as "MonthlyTotal": "Payments of one month (D12)." {
        month: object! {
            "type": "string",
            "maxLength": "YYYY-MM".len(),
            "pattern": "^[0-9]{4}-[0-9]{2}$",
            "description": "Month `YYYY-MM` in the business time zone (D3).",
        },
        total_amount: schema::money("Sum of the month's active transactions."),
        transaction_count: schema::count("Number of the month's active transactions."),
    }
}
