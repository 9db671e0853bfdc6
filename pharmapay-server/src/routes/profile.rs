//! `/api/profile` (D24): the caller's own account; a valid token is all it needs.

use hyper::header;
use pharmapay_core::Store;

use crate::app::App;
use crate::decode;
use crate::dto::{ProfileDto, SessionDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// The caller's profile.
pub async fn get<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let profile = app.engine.profile(&principal).await?;
    Ok(super::ok(&ProfileDto::from(profile)))
}

/// Changes the caller's names and email; 409 for a taken email.
pub async fn update<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let update = decode::profile(&req.json()?)?;
    let profile = app.engine.update_profile(&principal, update).await?;
    Ok(super::ok(&ProfileDto::from(profile)))
}

/// Changes the caller's password and answers a fresh login result (D20, D24).
pub async fn change_password<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let change = decode::password_change(&req.json()?)?;
    let session = app.engine.change_password(&principal, change).await?;
    Ok(super::ok(&SessionDto::login(session)).with_header(header::CACHE_CONTROL, "no-store"))
}
