//! `PUT /api/profile` and `PUT /api/profile/password` (D24): changes to the caller's own account;
//! a valid token is all they need.

use hyper::header;
use pharmapay_core::{Principal, Store};

use crate::app::App;
use crate::decode::{self, Body};
use crate::dto::{ProfileDto, SessionDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// Changes the caller's names and email; 409 for a taken email.
pub async fn update<S: Store>(app: &App<S>, principal: &Principal, mut req: Req) -> Result<Reply, ApiError> {
    let update = req.json::<decode::ProfileBody>()?.decode()?;
    let profile = app.engine.update_profile(principal, update).await?;
    Ok(super::ok(&ProfileDto::from(profile)))
}

/// Changes the caller's password and answers a fresh login result (D20, D24).
pub async fn change_password<S: Store>(app: &App<S>, principal: &Principal, mut req: Req) -> Result<Reply, ApiError> {
    let change = req.json::<decode::PasswordChangeBody>()?.decode()?;
    let session = app.engine.change_password(principal, change).await?;
    Ok(super::ok(&SessionDto::login(session)).with_header(header::CACHE_CONTROL, "no-store"))
}
