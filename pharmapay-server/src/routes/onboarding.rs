//! `GET /api/onboarding/status` and `POST /api/onboarding/setup` (spec, Onboarding): whether
//! setup is complete, and the one-time setup with its body and the session it answers.

use hyper::header;
use pharmapay_core::access::user::User;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::sessions::{AdminAccount, Onboarding, PharmacyDetails};
use pharmapay_core::text::{EMAIL_MAX, NAME_MAX};
use pharmapay_core::{Session, Store};
use serde::Serialize;

use super::{Call, Route};
use crate::decode::{Body, Nested, Slot, bodies};
use crate::dto::instant;
use crate::guard::Guard;
use crate::http::Reply;
use crate::openapi::TOKEN;
use crate::openapi::{CACHE_CONTROL, Operation, Tag, describe, json_response, object, schema, schema_ref};
use crate::problem::ApiError;

/// The onboarding routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/onboarding/status", Guard::Public, status_operation, |call| Box::pin(status(call))),
        Route::post("/api/onboarding/setup", Guard::Public, setup_operation, |call| Box::pin(setup(call))),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Onboarding");

/// Whether setup is complete.
async fn status<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let is_onboarded = call.app.engine.onboarding_status().await?;
    Ok(super::ok(&OnboardingStatusDto { is_onboarded }))
}

/// Creates the pharmacy and the first admin, who is signed in at once; 400 once done.
async fn setup<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let setup = call.req.json::<OnboardingBody>()?.decode()?;
    let session = call.app.engine.complete_onboarding(setup).await.map_err(ApiError::in_setup)?;
    Ok(super::ok(&OnboardingSessionDto::from(session)).with_header(header::CACHE_CONTROL, "no-store"))
}

fn status_operation() -> Operation {
    TAG.operation(
        "getOnboardingStatus",
        "Whether setup is complete",
        "Onboarded means an OwnPharmacy vendor exists and at least one user account exists.",
    )
    .ok("The onboarding state.", schema_ref::<OnboardingStatusDto>())
    .errors(&[503])
}

fn setup_operation() -> Operation {
    TAG.operation(
        "completeOnboarding",
        "Create the pharmacy and the first admin",
        "One-time, public. Creates the OwnPharmacy vendor and the first admin user (role Admin) in one atomic step and \
         signs the admin in at once. 400 when setup is already complete or the body is invalid (paths such as \
         `pharmacy.name`, `adminUser.password`); 409 if a concurrent setup took the email.",
    )
    .body::<OnboardingBody>()
    .response(
        "200",
        json_response("Setup done; the admin is signed in.", schema_ref::<OnboardingSessionDto>())
            .with("headers", object! { "Cache-Control": CACHE_CONTROL }),
    )
    .errors(&[400, 409, 413, 415, 503])
}

bodies! {
    /// Onboarding setup (spec, Setup body): `{pharmacy, adminUser}`.
    OnboardingBody => Onboarding as "SetupRequest":
        "Onboarding: the pharmacy (created as the OwnPharmacy vendor) and the first admin user, created in one atomic \
         step. Unknown fields are ignored." {
        pharmacy: Nested<PharmacyBody> => object("pharmacy"),
        #[serde(rename = "adminUser")]
        admin: Nested<AdminUserBody> => object("adminUser"),
    }

    /// The onboarding body's `pharmacy`.
    PharmacyBody => PharmacyDetails as "Pharmacy": "The operator's own pharmacy." {
        name: Slot => string("name") as schema::name("Pharmacy name."),
        address: Slot => optional_string("address") as schema::free_text("Postal address."),
        phone: Slot => optional_string("phone") as schema::code("Phone number."),
        email: Slot => optional_string("email") as schema::optional_email("Email."),
        drug_license_number1: Slot => optional_string("drugLicenseNumber1") as schema::code("Primary drug licence."),
    }

    /// The onboarding body's `adminUser`.
    AdminUserBody => AdminAccount as "AdminUser": "The first admin (role Admin, id 1)." {
        first_name: Slot => string("firstName") as schema::name("First name."),
        last_name: Slot => string("lastName") as schema::name("Last name."),
        email: Slot => string("email") as schema::email("Email."),
        password: Slot => password("password") as "Password.",
    }
}

/// Whether setup is complete.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OnboardingStatusDto {
    is_onboarded: bool,
}

/// The onboarding result: token, expiry and the first admin (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OnboardingSessionDto {
    token: String,
    #[serde(serialize_with = "instant")]
    expires_at: Timestamp,
    user: OnboardingUserDto,
}

impl From<Session> for OnboardingSessionDto {
    fn from(session: Session) -> Self {
        Self {
            token: session.token.token,
            expires_at: session.token.expires_at,
            user: OnboardingUserDto::from(session.user),
        }
    }
}

/// The user inside the onboarding result, and the part every other user DTO shares and flattens
/// (a login result's user, a user, a profile).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OnboardingUserDto {
    id: i64,
    first_name: String,
    last_name: String,
    email: String,
    role_id: i64,
    branch_ids: serde_json::Value,
}

impl From<User> for OnboardingUserDto {
    fn from(user: User) -> Self {
        Self {
            id: user.id.get(),
            first_name: user.first_name,
            last_name: user.last_name,
            email: user.email,
            role_id: user.role_id.get(),
            branch_ids: user.branch_ids.json(),
        }
    }
}

describe! {
    OnboardingStatusDto as "OnboardingStatus": "Whether setup is complete." {
        is_onboarded: schema::boolean(
            "True once an OwnPharmacy vendor and at least one user exist: the frontend goes to login; false: it goes to \
             onboarding.",
        ),
    }
}

describe! {
    OnboardingSessionDto as "OnboardingSession": "Onboarding result: the first admin is signed in at once." {
        token: object! { "type": "string", "description": TOKEN },
        expires_at: schema::instant("When the token expires."),
        user: schema_ref::<OnboardingUserDto>(),
    }
}

describe! {
    OnboardingUserDto as "OnboardingUser":
        "The admin user inside the onboarding result: no `isActive`, no `createdAt` (spec)." {
        id: schema::id("User id."),
        first_name: schema::text(NAME_MAX, "First name."),
        last_name: schema::text(NAME_MAX, "Last name."),
        email: schema::text(EMAIL_MAX, "Email."),
        role_id: schema::id("Role id."),
        branch_ids: object! {
            "type": ["array", "null"],
            "items": schema::id("A branch id."),
            "minItems": 1,
            "maxItems": crate::decode::MAX_ARRAY_ITEMS,
            "description": "The branches the user sees and writes in (D49), in id order; null for every branch \
                            (always for the Admin role).",
        },
    }
}
