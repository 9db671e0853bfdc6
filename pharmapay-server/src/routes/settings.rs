//! `/api/settings` (spec, Settings; D3, D27): the seeded settings, read by key and changed by
//! value, their body and their DTO.

use pharmapay_core::Action::{Read, Update};
use pharmapay_core::Collection::Setting;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Call, Route, each};
use crate::app::needs;
use crate::decode::{Body, Fields, Slot};
use crate::http::Reply;
use crate::problem::ApiError;

/// The setting routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/settings", needs(Setting, Read), |call| {
            Box::pin(call.read(PharmaPay::list_settings, each(SettingDto::from)))
        }),
        Route::get("/api/settings/{key}", needs(Setting, Read), |call| Box::pin(get(call))),
        Route::put("/api/settings/{key}", needs(Setting, Update), |call| Box::pin(update(call))),
    ]
}

/// One setting; 404 for an unknown key.
async fn get<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let setting = call.app.engine.get_setting(call.caller()?, call.req.param("key")).await?;
    Ok(super::ok(&SettingDto::from(setting)))
}

/// Changes a setting's value: `{value}`.
async fn update<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let value = call.req.json::<SettingBody>()?.decode()?;
    let setting = call.app.engine.update_setting(principal, call.req.param("key"), &value).await?;
    Ok(super::ok(&SettingDto::from(setting)))
}

/// Setting update: `{value}`.
#[derive(Debug, serde::Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingBody {
    value: Option<Slot>,
}

impl Body for SettingBody {
    type Input = String;

    fn read(self, fields: &mut Fields<'_>) -> Option<Self::Input> {
        fields.string("value", self.value)
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

impl From<pharmapay_core::domain::Setting> for SettingDto {
    fn from(setting: pharmapay_core::domain::Setting) -> Self {
        Self { key: setting.key, value: setting.value, description: setting.description }
    }
}
