//! `/api/profile` and `PUT /api/profile/password` (D24): the caller's own account, its bodies
//! and its DTO; a valid token is all they need.

use hyper::header;
use pharmapay_core::domain::{PasswordChange, Profile, ProfileUpdate};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::auth::SessionDto;
use super::{Call, Route};
use crate::app::Guard;
use crate::decode::{Body, Slot, bodies};
use crate::dto::instant;
use crate::http::Reply;
use crate::problem::ApiError;

/// The profile routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/profile", Guard::Token, |call| Box::pin(call.read(PharmaPay::profile, ProfileDto::from))),
        Route::put("/api/profile", Guard::Token, |call| Box::pin(update(call))),
        Route::put("/api/profile/password", Guard::Token, |call| Box::pin(change_password(call))),
    ]
}

/// Changes the caller's names and email; 409 for a taken email.
async fn update<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let update = call.req.json::<ProfileBody>()?.decode()?;
    let profile = call.app.engine.update_profile(principal, update).await?;
    Ok(super::ok(&ProfileDto::from(profile)))
}

/// Changes the caller's password and answers a fresh login result (D20, D24).
async fn change_password<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let change = call.req.json::<PasswordChangeBody>()?.decode()?;
    let session = call.app.engine.change_password(principal, change).await?;
    Ok(super::ok(&SessionDto::login(session)).with_header(header::CACHE_CONTROL, "no-store"))
}

bodies! {
    /// Profile update (D24): `{firstName, lastName, email}`.
    ProfileBody => ProfileUpdate {
        first_name: Slot => string("firstName"),
        last_name: Slot => string("lastName"),
        email: Slot => string("email"),
    }

    /// Password change (D24): `{currentPassword, newPassword}`.
    PasswordChangeBody => PasswordChange {
        current_password: Slot => string("currentPassword"),
        new_password: Slot => password("newPassword"),
    }
}

/// The caller's profile (D24).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileDto {
    id: i64,
    first_name: String,
    last_name: String,
    email: String,
    role_id: i64,
    role_name: String,
    is_admin: bool,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    permissions: Vec<String>,
}

impl From<Profile> for ProfileDto {
    fn from(profile: Profile) -> Self {
        let user = profile.user;
        Self {
            id: user.id.get(),
            first_name: user.first_name,
            last_name: user.last_name,
            email: user.email,
            role_id: user.role_id.get(),
            role_name: profile.role_name,
            is_admin: profile.is_admin,
            is_active: user.is_active,
            created_at: user.created_at,
            permissions: profile.permissions,
        }
    }
}
