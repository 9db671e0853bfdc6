//! `POST /api/auth/login` (spec, Auth; D21): signing in, its body, and the session it answers,
//! which a password change answers too.

use hyper::header;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::sessions::login;
use pharmapay_core::text::PASSWORD_MAX_BYTES;
use pharmapay_core::{Session, Store};
use serde::Serialize;

use super::onboarding::OnboardingUserDto;
use super::{Call, Route};
use crate::decode::{Body, Slot, bodies};
use crate::dto::instant;
use crate::guard::Guard;
use crate::http::Reply;
use crate::openapi::{
    CACHE_CONTROL, Component, Json, Operation, TOKEN, Tag, describe, flatten, json_content, json_response,
    named_schema, object, schema, schema_ref,
};
use crate::problem::{ApiError, INVALID_CREDENTIALS};

/// The sign-in route.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![Route::post("/api/auth/login", Guard::Public, login_operation, |call| Box::pin(login(call)))]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Auth");

/// Signs a user in; 401 `{message}` for bad credentials, 429 when throttled.
async fn login<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let Credentials { email, password } = call.req.json::<LoginBody>()?.decode()?;
    let session = call.app.engine.login(&email, &password).await?;
    Ok(super::ok(&SessionDto::from(session)).with_header(header::CACHE_CONTROL, "no-store"))
}

fn login_operation() -> Operation {
    TAG.operation(
        "login",
        "Sign in",
        format!(
            "Checks an email and password and returns a bearer token. Unknown emails, inactive users and wrong \
             passwords all get the same 401 `{{message}}` body (plain JSON, not problem details). After {} failed \
             logins for one email within {} minutes, further attempts for that email answer 429 with `Retry-After` \
             until the window passes; a success resets the count (D21). Recorded in the audit log (D22).",
            login::LIMIT,
            login::WINDOW.as_mins()
        ),
    )
    .body::<LoginBody>()
    .response("200", session_response("Signed in."))
    .response(
        "401",
        object! {
            "description": "Invalid email or password (also an inactive user).",
            "content": json_content(LOGIN_FAILURE),
        },
    )
    .errors(&[400, 413, 415, 429, 503])
}

/// A 200 with a fresh session, which is not to be cached.
pub fn session_response(description: &'static str) -> Json {
    json_response(description, schema_ref::<SessionDto>()).with("headers", object! { "Cache-Control": CACHE_CONTROL })
}

/// The body of a failed sign-in, which `crate::problem` writes (spec, Auth).
const LOGIN_FAILURE: Component = named_schema("LoginFailure", || {
    object! {
        "type": "object",
        "description": "The body of a failed login (401); plain `application/json`, not problem details.",
        "required": ["message"],
        "properties": object! {
            "message": object! {
                "type": "string",
                "const": INVALID_CREDENTIALS,
                "description": "Always the same text, whether the email is unknown, the user inactive or the password \
                     wrong (D21).",
            },
        },
        "additionalProperties": false,
    }
});

bodies! {
    /// Login: `{email, password}`.
    LoginBody => Credentials as "LoginRequest": "Credentials. Unknown fields are ignored." {
        email: Slot => string("email")
            as schema::trimmed_text("Email of an active user (compared case-insensitively)."),
        password: Slot => string("password") as schema::text(PASSWORD_MAX_BYTES, "Password."),
    }
}

/// An email and password to sign in with, as the body gives them.
pub struct Credentials {
    /// The email, not yet checked.
    pub email: String,
    /// The password.
    pub password: String,
}

/// The login result: token, expiry and user (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDto {
    token: String,
    #[serde(serialize_with = "instant")]
    expires_at: Timestamp,
    user: SessionUserDto,
}

/// The user inside a login result: the onboarding result's user and `isActive` (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionUserDto {
    #[serde(flatten)]
    user: OnboardingUserDto,
    is_active: bool,
}

impl From<Session> for SessionDto {
    fn from(session: Session) -> Self {
        let is_active = session.user.is_active;
        Self {
            token: session.token.token,
            expires_at: session.token.expires_at,
            user: SessionUserDto { user: OnboardingUserDto::from(session.user), is_active },
        }
    }
}

describe! {
    SessionDto as "Session": "Login result: a bearer token and the signed-in user." {
        token: object! { "type": "string", "description": TOKEN },
        expires_at: schema::instant("When the token expires (24 hours by default, configurable)."),
        user: schema_ref::<SessionUserDto>(),
    }
}

describe! {
    SessionUserDto as "SessionUser": "The signed-in user inside a login result." {
        user: flatten::<OnboardingUserDto>(),
        is_active: schema::boolean("Whether the account is active."),
    }
}
