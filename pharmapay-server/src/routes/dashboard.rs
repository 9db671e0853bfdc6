//! `/api/dashboard/top-vendors` and `/api/dashboard/recent-invoices` (spec, Dashboard; D8,
//! D12): the figures that take a `limit`. Every dashboard figure is live, never cached.

use pharmapay_core::paging::read_limit;
use pharmapay_core::{FieldErrors, Principal, Store};

use crate::app::App;
use crate::dto::{RecentInvoiceDto, TopVendorDto};
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

/// The newest invoices; `limit` defaults to 5, clamped to 1..=100.
pub async fn recent_invoices<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let recent = app.engine.recent_invoices(principal, limit(&req)?).await?;
    Ok(super::ok(&recent.into_iter().map(RecentInvoiceDto::from).collect::<Vec<_>>()))
}
