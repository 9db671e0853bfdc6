//! `/api/settings` (spec, Settings; D3, D27): the seeded settings, read by key and changed by
//! value, their body, their DTO and their operations.

use pharmapay_core::Action::{Read, Update};
use pharmapay_core::Collection::Setting;
use pharmapay_core::text::CODE_MAX;
use pharmapay_core::{PharmaPay, Store, seed};
use serde::Serialize;

use super::{Call, Route, each};
use crate::decode::{Body, Slot, bodies};
use crate::guard::needs;
use crate::http::Reply;
use crate::openapi::schema::{self, TRIM_NOTE};
use crate::openapi::{Json, Operation, Tag, describe, object, schema_ref};
use crate::problem::ApiError;

/// The setting routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/settings", needs(Setting, Read), list, |call| {
            Box::pin(call.read(PharmaPay::list_settings, each(SettingDto::from)))
        }),
        Route::get("/api/settings/{key}", needs(Setting, Read), get_operation, |call| Box::pin(get(call))),
        Route::put("/api/settings/{key}", needs(Setting, Update), update_operation, |call| Box::pin(update(call))),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Settings");

/// One setting; 404 for an unknown key.
async fn get<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let setting = call.app.engine.get_setting(call.caller()?, call.req.param("key")).await?;
    Ok(super::ok(&SettingDto::from(setting)))
}

/// Changes a setting's value: `{value}`.
async fn update<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let SettingValue { value } = call.req.json::<SettingBody>()?.decode()?;
    let setting = call.app.engine.update_setting(principal, call.req.param("key"), &value).await?;
    Ok(super::ok(&SettingDto::from(setting)))
}

fn list() -> Operation {
    TAG.operation("listSettings", "List settings", ". Settings are seeded (D27) and cannot be created or deleted.")
        .ok("Every setting.", schema::array(schema_ref::<SettingDto>()).with("maxItems", seed::settings().len()))
        .errors(&[401, 403, 503])
}

/// The `{key}` path parameter.
fn key() -> Json {
    object! {
        "name": "key",
        "in": "path",
        "required": true,
        "description": "Setting key, e.g. `Currency` or `TimeZone`; a key no setting has is a 404.",
        "schema": object! { "type": "string", "maxLength": longest_key() },
    }
}

fn get_operation() -> Operation {
    TAG.operation("getSetting", "Get a setting", ". 404 for an unknown key.")
        .path_parameter(key())
        .ok("The setting.", schema_ref::<SettingDto>())
        .errors(&[401, 403, 404, 503])
}

fn update_operation() -> Operation {
    TAG.operation(
        "updateSetting",
        "Change a setting's value",
        ". Only the value changes; key and description are immutable. `TimeZone` must be a known IANA zone (400, D3). \
         404 for an unknown key. Recorded in the audit log (D22).",
    )
    .path_parameter(key())
    .body::<SettingBody>()
    .ok("The updated setting.", schema_ref::<SettingDto>())
    .errors(&[400, 401, 403, 404, 413, 415, 503])
}

bodies! {
    /// Setting update: `{value}`.
    SettingBody => SettingValue as "SettingUpdate": "New value of a setting. Unknown fields are ignored." {
        value: Slot => string("value") as setting_value(),
    }
}

/// A setting's new value, as the body gives it.
pub struct SettingValue {
    /// The value, not yet checked.
    pub value: String,
}

/// `value`: a code, and for `TimeZone` a zone's name (D3).
fn setting_value() -> Json {
    object! {
        "type": "string",
        "pattern": schema::line_pattern(CODE_MAX),
        "description": format!(
            "Not blank, at most {CODE_MAX} characters. {TRIM_NOTE}. For `TimeZone` it must be a known IANA zone such as \
             `UTC` or `Asia/Kolkata` (D3), else 400."
        ),
    }
}

/// `AppSettingDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingDto {
    key: String,
    value: String,
    description: String,
}

impl From<pharmapay_core::reports::setting::Setting> for SettingDto {
    fn from(setting: pharmapay_core::reports::setting::Setting) -> Self {
        Self { key: setting.key, value: setting.value, description: setting.description }
    }
}

describe! {
    SettingDto as "Setting": "AppSettingDto." {
        key: schema::one_of(&keys(), "Key; immutable (seeded, D27, D36)."),
        value: schema::text(CODE_MAX, "Value; the only updatable part."),
        description: schema::text(longest_description(), "What it is for; immutable."),
    }
}

/// The keys of the settings: the seeded ones, which are never added to (D27).
fn keys() -> Vec<&'static str> {
    seed::settings().into_iter().map(|setting| setting.key).collect()
}

/// The longest key a setting has; a longer one names no setting.
fn longest_key() -> usize {
    keys().into_iter().map(|key| key.chars().count()).max().unwrap_or(0)
}

/// The longest description a setting has, all of them seeded.
fn longest_description() -> usize {
    seed::settings().into_iter().map(|setting| setting.description.chars().count()).max().unwrap_or(0)
}
