//! `/api/dashboard/top-vendors` and `/api/dashboard/recent-invoices` (spec, Dashboard; D8,
//! D12), the figures that take a `limit`, and `/api/dashboard/license-alerts` (D36), which takes
//! a window. Every dashboard figure is live, never cached.

use pharmapay_core::paging::{read_days, read_limit};
use pharmapay_core::{FieldErrors, Principal, Store};

use crate::app::App;
use crate::dto::{LicenceAlertDto, RecentInvoiceDto, TopVendorDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

fn limit(req: &Req) -> Result<u32, ApiError> {
    let mut errors = FieldErrors::new();
    let limit = read_limit(&req.query, &mut errors);
    if errors.is_empty() { Ok(limit) } else { Err(ApiError::Invalid(errors)) }
}

/// Active vendors ranked by outstanding balance; `limit` defaults to 5, clamped to 1..=100.
pub async fn top_vendors<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let top = app.engine.top_vendors(principal, limit(&req)?).await?;
    Ok(super::ok(&top.into_iter().map(TopVendorDto::from).collect::<Vec<_>>()))
}

/// Vendors whose drug licence has expired or expires within `withinDays` (default 30, 0..366),
/// soonest first (D36).
pub async fn licence_alerts<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let mut errors = FieldErrors::new();
    let within_days = read_days(&req.query, "withinDays", &mut errors).unwrap_or(30);
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let alerts = app.engine.licence_alerts(principal, within_days).await?;
    Ok(super::ok(&alerts.into_iter().map(LicenceAlertDto::from).collect::<Vec<_>>()))
}

/// The newest invoices; `limit` defaults to 5, clamped to 1..=100.
pub async fn recent_invoices<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let recent = app.engine.recent_invoices(principal, limit(&req)?).await?;
    Ok(super::ok(&recent.into_iter().map(RecentInvoiceDto::from).collect::<Vec<_>>()))
}
