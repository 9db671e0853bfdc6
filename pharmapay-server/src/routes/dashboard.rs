//! `/api/dashboard/*` (spec, Dashboard; D8, D12, D32): the summary, the top vendors, the newest
//! invoices, payments per month and what falls due when, with their DTOs. Every figure is live,
//! never cached. The licence alerts, also under `/api/dashboard`, are the reconciliation's.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Dashboard;
use pharmapay_core::dashboard::{DueFigures, MonthlyTotal, Payables, Summary, TopVendor};
use pharmapay_core::domain::Invoice;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::paging::read_limit;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::{Amount, FieldErrors, PharmaPay, Store};
use serde::Serialize;

use super::{Call, Route, each};
use crate::app::needs;
use crate::dto::{amount, instant, money};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// The dashboard routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/dashboard/summary", needs(Dashboard, Read), |call| {
            Box::pin(call.read(PharmaPay::dashboard_summary, SummaryDto::from))
        }),
        Route::get("/api/dashboard/top-vendors", needs(Dashboard, Read), |call| Box::pin(top_vendors(call))),
        Route::get("/api/dashboard/recent-invoices", needs(Dashboard, Read), |call| Box::pin(recent_invoices(call))),
        Route::get("/api/dashboard/monthly-transactions", needs(Dashboard, Read), |call| {
            Box::pin(call.read(PharmaPay::monthly_transactions, each(MonthlyDto::from)))
        }),
        Route::get("/api/dashboard/payables", needs(Dashboard, Read), |call| {
            Box::pin(call.read(PharmaPay::payables, PayablesDto::from))
        }),
    ]
}

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
}

impl From<Payables> for PayablesDto {
    fn from(payables: Payables) -> Self {
        Self {
            overdue: payables.overdue.into(),
            due_today: payables.due_today.into(),
            due_in7_days: payables.due_in_7_days.into(),
            due_in30_days: payables.due_in_30_days.into(),
        }
    }
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
