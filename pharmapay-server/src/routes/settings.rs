//! `/api/settings/{key}` (spec, Settings; D3): a setting by its key.

use pharmapay_core::{Principal, Store};

use crate::app::App;
use crate::decode::{self, Body};
use crate::dto::SettingDto;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// One setting; 404 for an unknown key.
pub async fn get<S: Store>(app: &App<S>, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
    let setting = app.engine.get_setting(principal, req.param("key")).await?;
    Ok(super::ok(&SettingDto::from(setting)))
}

/// Changes a setting's value: `{value}`.
pub async fn update<S: Store>(app: &App<S>, principal: &Principal, mut req: Req) -> Result<Reply, ApiError> {
    let value = req.json::<decode::SettingBody>()?.decode()?;
    let setting = app.engine.update_setting(principal, req.param("key"), &value).await?;
    Ok(super::ok(&SettingDto::from(setting)))
}
