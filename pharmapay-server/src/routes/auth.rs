//! `POST /api/auth/login` (spec, Auth; D21): signing in, its body and the session it answers,
//! which onboarding and a password change answer too.

use hyper::header;
use pharmapay_core::{Session, Store};
use serde::Serialize;

use super::{Call, Route};
use crate::app::Guard;
use crate::decode::{Body, Fields, Slot};
use crate::dto::instant;
use crate::http::Reply;
use crate::problem::ApiError;

/// The sign-in route.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![Route::post("/api/auth/login", Guard::Public, |call| Box::pin(login(call)))]
}

/// Signs a user in; 401 `{message}` for bad credentials, 429 when throttled.
async fn login<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let (email, password) = call.req.json::<LoginBody>()?.decode()?;
    let session = call.app.engine.login(&email, &password).await?;
    Ok(super::ok(&SessionDto::login(session)).with_header(header::CACHE_CONTROL, "no-store"))
}

/// Login: `{email, password}`.
#[derive(Debug, serde::Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginBody {
    email: Option<Slot>,
    password: Option<Slot>,
}

impl Body for LoginBody {
    type Input = (String, String);

    fn read(self, fields: &mut Fields<'_>) -> Option<Self::Input> {
        let email = fields.string("email", self.email);
        let password = fields.string("password", self.password);
        Some((email?, password?))
    }
}

/// The login and onboarding result: token, expiry and user (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDto {
    token: String,
    #[serde(serialize_with = "instant")]
    expires_at: pharmapay_core::jiff::Timestamp,
    user: LoginUserDto,
}

/// The user inside a login result: also `isActive` (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoginUserDto {
    id: i64,
    first_name: String,
    last_name: String,
    email: String,
    role_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_active: Option<bool>,
}

impl SessionDto {
    /// The login result; its user carries `isActive`.
    pub fn login(session: Session) -> Self {
        Self::new(session, true)
    }

    /// The onboarding result; its user has no `isActive` (spec).
    pub fn onboarding(session: Session) -> Self {
        Self::new(session, false)
    }

    fn new(session: Session, with_active: bool) -> Self {
        let user = session.user;
        Self {
            token: session.token.token,
            expires_at: session.token.expires_at,
            user: LoginUserDto {
                id: user.id.get(),
                first_name: user.first_name,
                last_name: user.last_name,
                email: user.email,
                role_id: user.role_id.get(),
                is_active: with_active.then_some(user.is_active),
            },
        }
    }
}
