//! `POST /api/auth/login` (spec, Auth; D21).

use hyper::header;
use pharmapay_core::Store;

use crate::app::App;
use crate::decode::{self, Body};
use crate::dto::SessionDto;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// Signs a user in; 401 `{message}` for bad credentials, 429 when throttled.
pub async fn login<S: Store>(app: &App<S>, mut req: Req) -> Result<Reply, ApiError> {
    let (email, password) = req.json::<decode::LoginBody>()?.decode()?;
    let session = app.engine.login(&email, &password).await?;
    Ok(super::ok(&SessionDto::login(session)).with_header(header::CACHE_CONTROL, "no-store"))
}
