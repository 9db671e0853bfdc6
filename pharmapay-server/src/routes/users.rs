//! `/api/users` (spec, Users; D15, D17, D18, D19).

use pharmapay_core::ids::{PolicyId, UserId};
use pharmapay_core::{Action, Collection, Store};

use crate::app::App;
use crate::decode;
use crate::dto::{PermissionDto, PolicyDto, UserDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// Active users.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let users = app.engine.list_users(&principal).await?;
    Ok(super::ok(&users.into_iter().map(UserDto::from).collect::<Vec<_>>()))
}

/// One active user.
pub async fn get<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let user = app.engine.get_user(&principal, UserId(req.id("id")?)).await?;
    Ok(super::ok(&UserDto::from(user)))
}

/// The caller's resolved permissions (D19).
pub async fn my_permissions<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let permissions = app.engine.my_permissions(&principal).await?;
    Ok(super::ok(&permissions.into_iter().map(PermissionDto::from).collect::<Vec<_>>()))
}

/// Creates a user: 201 with `Location`; 409 for a taken email (D5).
pub async fn create<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::User, Action::Create)?;
    let body = req.json()?;
    let idempotency = super::idempotency(req, &body)?;
    let user = decode::new_user(&body)?;
    let created = app.engine.create_user(&principal, user, idempotency.as_ref()).await?;
    Ok(super::created(app, &principal, idempotency.as_ref(), created, "users", |u| u.id.get(), UserDto::from).await)
}

/// Replaces a user's names, email and role.
pub async fn update<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::User, Action::Update)?;
    let id = UserId(req.id("id")?);
    let user = decode::user_update(&req.json()?)?;
    let user = app.engine.update_user(&principal, id, user).await?;
    Ok(super::ok(&UserDto::from(user)))
}

/// Soft-deletes a user: 204 (D18 guards apply).
pub async fn delete<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::User, Action::Delete)?;
    let id = UserId(req.id("id")?);
    let reason = decode::reason(req.optional_json()?.as_ref())?;
    app.engine.delete_user(&principal, id, reason).await?;
    Ok(Reply::no_content())
}

/// Restores a deleted user (D15).
pub async fn restore<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let user = app.engine.restore_user(&principal, UserId(req.id("id")?)).await?;
    Ok(super::ok(&UserDto::from(user)))
}

/// The policies attached directly to a user (D19).
pub async fn policies<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let policies = app.engine.list_user_policies(&principal, UserId(req.id("id")?)).await?;
    Ok(super::ok(&policies.into_iter().map(PolicyDto::from).collect::<Vec<_>>()))
}

/// Attaches a policy to a user: 204 (D19).
pub async fn attach_policy<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let (user, policy) = (UserId(req.id("id")?), PolicyId(req.id("policyId")?));
    app.engine.attach_user_policy(&principal, user, policy).await?;
    Ok(Reply::no_content())
}

/// Detaches a policy from a user: 204 (D19).
pub async fn detach_policy<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let (user, policy) = (UserId(req.id("id")?), PolicyId(req.id("policyId")?));
    app.engine.detach_user_policy(&principal, user, policy).await?;
    Ok(Reply::no_content())
}
