//! `/api/policies` (spec, Policies; D4, D15, D17).

use pharmapay_core::ids::{PermissionId, PolicyId};
use pharmapay_core::{Action, Collection, Store};

use crate::app::App;
use crate::decode;
use crate::dto::PolicyDto;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// Active policies.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let policies = app.engine.list_policies(&principal).await?;
    Ok(super::ok(&policies.into_iter().map(PolicyDto::from).collect::<Vec<_>>()))
}

/// One active policy with its permissions.
pub async fn get<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let policy = app.engine.get_policy(&principal, PolicyId(req.id("id")?)).await?;
    Ok(super::ok(&PolicyDto::from(policy)))
}

/// Creates a policy: 201 with `Location`.
pub async fn create<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Policy, Action::Create)?;
    let body = req.json()?;
    let idempotency = super::idempotency(req, &body)?;
    let policy = decode::policy(&body)?;
    let created = app.engine.create_policy(&principal, policy, idempotency.as_ref()).await?;
    Ok(super::created(app, &principal, idempotency.as_ref(), created, "policies", |p| p.id.get(), PolicyDto::from)
        .await)
}

/// Replaces a policy's name, description and permissions.
pub async fn update<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Policy, Action::Update)?;
    let id = PolicyId(req.id("id")?);
    let policy = decode::policy(&req.json()?)?;
    let policy = app.engine.update_policy(&principal, id, policy).await?;
    Ok(super::ok(&PolicyDto::from(policy)))
}

/// Soft-deletes a policy: 204.
pub async fn delete<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Policy, Action::Delete)?;
    let id = PolicyId(req.id("id")?);
    let reason = decode::reason(req.optional_json()?.as_ref())?;
    app.engine.delete_policy(&principal, id, reason).await?;
    Ok(Reply::no_content())
}

/// Restores a deleted policy (D15).
pub async fn restore<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let policy = app.engine.restore_policy(&principal, PolicyId(req.id("id")?)).await?;
    Ok(super::ok(&PolicyDto::from(policy)))
}

/// Adds a permission to a policy: 204.
pub async fn add_permission<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let (policy, permission) = (PolicyId(req.id("id")?), PermissionId(req.id("permissionId")?));
    app.engine.add_policy_permission(&principal, policy, permission).await?;
    Ok(Reply::no_content())
}

/// Removes a permission from a policy: 204.
pub async fn remove_permission<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let (policy, permission) = (PolicyId(req.id("id")?), PermissionId(req.id("permissionId")?));
    app.engine.remove_policy_permission(&principal, policy, permission).await?;
    Ok(Reply::no_content())
}
