//! `/api/dashboard/*` (spec, Dashboard; D8, D12): live figures, never cached.

use pharmapay_core::paging::read_limit;
use pharmapay_core::{FieldErrors, Store};

use crate::app::App;
use crate::dto::{MonthlyDto, RecentInvoiceDto, SummaryDto, TopVendorDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

fn limit(req: &Req) -> Result<u32, ApiError> {
    let mut errors = FieldErrors::new();
    let limit = read_limit(&req.query, &mut errors);
    if errors.is_empty() { Ok(limit) } else { Err(ApiError::Invalid(errors)) }
}

/// The summary card.
pub async fn summary<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let summary = app.engine.dashboard_summary(&principal).await?;
    Ok(super::ok(&SummaryDto::from(summary)))
}

/// Active vendors ranked by outstanding balance; `limit` defaults to 5, clamped to 1..=100.
pub async fn top_vendors<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let top = app.engine.top_vendors(&principal, limit(req)?).await?;
    Ok(super::ok(&top.into_iter().map(TopVendorDto::from).collect::<Vec<_>>()))
}

/// The newest invoices; `limit` defaults to 5, clamped to 1..=100.
pub async fn recent_invoices<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let recent = app.engine.recent_invoices(&principal, limit(req)?).await?;
    Ok(super::ok(&recent.into_iter().map(RecentInvoiceDto::from).collect::<Vec<_>>()))
}

/// Twelve months of payment totals, current month first.
pub async fn monthly<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let months = app.engine.monthly_transactions(&principal).await?;
    Ok(super::ok(&months.into_iter().map(MonthlyDto::from).collect::<Vec<_>>()))
}
