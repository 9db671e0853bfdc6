//! `GET /api/onboarding/status` and `POST /api/onboarding/setup` (spec, Onboarding).

use hyper::header;
use pharmapay_core::Store;
use serde_json::json;

use crate::app::App;
use crate::decode::{self, Body};
use crate::dto::SessionDto;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// Whether setup is complete.
pub async fn status<S: Store>(app: &App<S>, _req: Req) -> Result<Reply, ApiError> {
    let onboarded = app.engine.onboarding_status().await?;
    Ok(super::ok(&json!({ "isOnboarded": onboarded })))
}

/// Creates the pharmacy and the first admin, who is signed in at once; 400 once done.
pub async fn setup<S: Store>(app: &App<S>, mut req: Req) -> Result<Reply, ApiError> {
    let setup = req.json::<decode::OnboardingBody>()?.decode()?;
    let session = app.engine.complete_onboarding(setup).await.map_err(ApiError::in_setup)?;
    Ok(super::ok(&SessionDto::onboarding(session)).with_header(header::CACHE_CONTROL, "no-store"))
}
