//! `GET /api/onboarding/status` and `POST /api/onboarding/setup` (spec, Onboarding): whether
//! setup is complete, and the one-time setup with its body.

use hyper::header;
use pharmapay_core::Store;
use pharmapay_core::engine::{AdminAccount, Onboarding, PharmacyDetails};
use serde_json::json;

use super::auth::SessionDto;
use super::{Call, Route};
use crate::app::Guard;
use crate::decode::{Body, Nested, Slot, bodies};
use crate::http::Reply;
use crate::problem::ApiError;

/// The onboarding routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/onboarding/status", Guard::Public, |call| Box::pin(status(call))),
        Route::post("/api/onboarding/setup", Guard::Public, |call| Box::pin(setup(call))),
    ]
}

/// Whether setup is complete.
async fn status<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let onboarded = call.app.engine.onboarding_status().await?;
    Ok(super::ok(&json!({ "isOnboarded": onboarded })))
}

/// Creates the pharmacy and the first admin, who is signed in at once; 400 once done.
async fn setup<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let setup = call.req.json::<OnboardingBody>()?.decode()?;
    let session = call.app.engine.complete_onboarding(setup).await.map_err(ApiError::in_setup)?;
    Ok(super::ok(&SessionDto::onboarding(session)).with_header(header::CACHE_CONTROL, "no-store"))
}

bodies! {
    /// Onboarding setup (spec, Setup body): `{pharmacy, adminUser}`.
    OnboardingBody => Onboarding {
        pharmacy: Nested<PharmacyBody> => object("pharmacy"),
        #[serde(rename = "adminUser")]
        admin: Nested<AdminUserBody> => object("adminUser"),
    }

    /// The onboarding body's `pharmacy`.
    PharmacyBody => PharmacyDetails {
        name: Slot => string("name"),
        address: Slot => optional_string("address"),
        phone: Slot => optional_string("phone"),
        email: Slot => optional_string("email"),
        drug_license_number1: Slot => optional_string("drugLicenseNumber1"),
    }

    /// The onboarding body's `adminUser`.
    AdminUserBody => AdminAccount {
        first_name: Slot => string("firstName"),
        last_name: Slot => string("lastName"),
        email: Slot => string("email"),
        password: Slot => password("password"),
    }
}
