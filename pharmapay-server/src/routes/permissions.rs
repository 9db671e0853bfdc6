//! `GET /api/permissions` (spec, Permissions).

use pharmapay_core::Store;

use crate::app::App;
use crate::dto::PermissionDto;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// Every permission.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let permissions = app.engine.list_permissions(&principal).await?;
    Ok(super::ok(&permissions.into_iter().map(PermissionDto::from).collect::<Vec<_>>()))
}
