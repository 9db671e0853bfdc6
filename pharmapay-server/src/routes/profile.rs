//! `/api/profile` and `PUT /api/profile/password` (D24): the caller's own account, its bodies,
//! its DTO and its operations; a valid token is all they need.

use hyper::header;
use pharmapay_core::access::user::{PasswordChange, Profile, ProfileUpdate};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::text::{NAME_MAX, PASSWORD_MAX_BYTES, PASSWORD_MIN};
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::auth::{SessionDto, session_response};
use super::onboarding::OnboardingUserDto;
use super::permissions::{longest_code, permission_count};
use super::{Call, Route};
use crate::decode::{Body, Slot, bodies};
use crate::dto::instant;
use crate::guard::Guard;
use crate::http::Reply;
use crate::openapi::{Operation, Tag, describe, flatten, schema, schema_ref};
use crate::problem::ApiError;

/// The profile routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/profile", Guard::Token, get_operation, |call| {
            Box::pin(call.read(PharmaPay::profile, ProfileDto::from))
        }),
        Route::put("/api/profile", Guard::Token, update_operation, |call| Box::pin(update(call))),
        Route::put("/api/profile/password", Guard::Token, password_operation, |call| Box::pin(change_password(call))),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Profile");

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
    Ok(super::ok(&SessionDto::from(session)).with_header(header::CACHE_CONTROL, "no-store"))
}

fn get_operation() -> Operation {
    TAG.operation("getProfile", "The caller's profile", " (D24).")
        .ok("The caller's profile.", schema_ref::<ProfileDto>())
        .errors(&[401, 503])
}

fn update_operation() -> Operation {
    TAG.operation(
        "updateProfile",
        "Update the caller's profile",
        " (D24). Changes first name, last name and email; a taken email is a 409.",
    )
    .body::<ProfileBody>()
    .ok("The updated profile.", schema_ref::<ProfileDto>())
    .errors(&[400, 401, 409, 413, 415, 503])
}

fn password_operation() -> Operation {
    TAG.operation(
        "changePassword",
        "Change the caller's password",
        format!(
            " (D24). A wrong current password or a new one under {PASSWORD_MIN} characters is a 400. Answers a fresh \
             login result; every older token of the user stops working (D20)."
        ),
    )
    .body::<PasswordChangeBody>()
    .response("200", session_response("Password changed; a fresh session."))
    .errors(&[400, 401, 413, 415, 503])
}

bodies! {
    /// Profile update (D24): `{firstName, lastName, email}`.
    ProfileBody => ProfileUpdate as "ProfileUpdate":
        "What a user may change of their own profile (D24). Unknown fields are ignored." {
        first_name: Slot => string("firstName") as schema::name("First name."),
        last_name: Slot => string("lastName") as schema::name("Last name."),
        email: Slot => string("email") as schema::email("Email, unique among active users; a taken email is a 409."),
    }

    /// Password change (D24): `{currentPassword, newPassword}`.
    PasswordChangeBody => PasswordChange as "PasswordChange":
        "A password change by the user themself (D24). Unknown fields are ignored." {
        current_password: Slot => string("currentPassword")
            as schema::text(PASSWORD_MAX_BYTES, "The password in use now; a wrong one is a 400."),
        new_password: Slot => password("newPassword") as "The new password.",
    }
}

/// The caller's profile (D24).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileDto {
    #[serde(flatten)]
    user: OnboardingUserDto,
    role_name: String,
    is_admin: bool,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    permissions: Vec<String>,
}

impl From<Profile> for ProfileDto {
    fn from(profile: Profile) -> Self {
        let (is_active, created_at) = (profile.user.is_active, profile.user.created_at);
        Self {
            user: OnboardingUserDto::from(profile.user),
            role_name: profile.role_name,
            is_admin: profile.is_admin,
            is_active,
            created_at,
            permissions: profile.permissions,
        }
    }
}

describe! {
    ProfileDto as "Profile": "The caller's own profile (D24)." {
        user: flatten::<OnboardingUserDto>(),
        role_name: schema::text(NAME_MAX, "The role's name."),
        is_admin: schema::boolean("True for users of the Admin role (D18)."),
        is_active: schema::boolean("Whether the account is active."),
        created_at: schema::instant("When created."),
        permissions: schema::array(schema::text(longest_code(), "`Collection:Action`."))
            .with("maxItems", permission_count())
            .with("description", "Resolved permissions as `Collection:Action` (D19); `[\"*:*\"]` for an admin."),
    }
}
