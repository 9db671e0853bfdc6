//! `GET /api/audit-log` (D22).

use pharmapay_core::Store;
use pharmapay_core::domain::AuditQuery;

use crate::app::App;
use crate::dto::{AuditEntryDto, PageDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// A page of the audit log, newest first.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let query = AuditQuery::from_params(&req.query)?;
    let page = app.engine.list_audit(&principal, &query).await?;
    Ok(super::ok(&PageDto::from_page(page, AuditEntryDto::from)))
}
