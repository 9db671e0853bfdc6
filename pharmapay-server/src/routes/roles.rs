//! `/api/roles` (spec, Roles; D4, D15, D17).

use pharmapay_core::ids::{PolicyId, RoleId};
use pharmapay_core::{Action, Collection, Store};

use crate::app::App;
use crate::decode;
use crate::dto::RoleDto;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// Every role, active and inactive.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let roles = app.engine.list_roles(&principal).await?;
    Ok(super::ok(&roles.into_iter().map(RoleDto::from).collect::<Vec<_>>()))
}

/// One active role.
pub async fn get<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let role = app.engine.get_role(&principal, RoleId(req.id("id")?)).await?;
    Ok(super::ok(&RoleDto::from(role)))
}

/// Creates a role (never a system role): 201 with `Location`.
pub async fn create<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Role, Action::Create)?;
    let body = req.json()?;
    let idempotency = super::idempotency(req, &body)?;
    let role = decode::role(&body)?;
    let created = app.engine.create_role(&principal, role, idempotency.as_ref()).await?;
    Ok(super::created(app, &principal, idempotency.as_ref(), created, "roles", |r| r.id.get(), RoleDto::from).await)
}

/// Changes a role's name and description.
pub async fn update<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Role, Action::Update)?;
    let id = RoleId(req.id("id")?);
    let role = decode::role(&req.json()?)?;
    let role = app.engine.update_role(&principal, id, role).await?;
    Ok(super::ok(&RoleDto::from(role)))
}

/// Soft-deletes a role: 204; 400 for a system role.
pub async fn delete<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Role, Action::Delete)?;
    let id = RoleId(req.id("id")?);
    let reason = decode::reason(req.optional_json()?.as_ref())?;
    app.engine.delete_role(&principal, id, reason).await?;
    Ok(Reply::no_content())
}

/// Restores a deleted role (D15).
pub async fn restore<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let role = app.engine.restore_role(&principal, RoleId(req.id("id")?)).await?;
    Ok(super::ok(&RoleDto::from(role)))
}

/// Attaches a policy to a role: 204.
pub async fn attach_policy<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let (role, policy) = (RoleId(req.id("id")?), PolicyId(req.id("policyId")?));
    app.engine.attach_role_policy(&principal, role, policy).await?;
    Ok(Reply::no_content())
}

/// Detaches a policy from a role: 204.
pub async fn detach_policy<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let (role, policy) = (RoleId(req.id("id")?), PolicyId(req.id("policyId")?));
    app.engine.detach_role_policy(&principal, role, policy).await?;
    Ok(Reply::no_content())
}
