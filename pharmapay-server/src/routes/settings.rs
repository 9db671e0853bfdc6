//! `/api/settings` (spec, Settings; D3).

use pharmapay_core::{Action, Collection, Store};

use crate::app::App;
use crate::decode;
use crate::dto::SettingDto;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// Every setting.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let settings = app.engine.list_settings(&principal).await?;
    Ok(super::ok(&settings.into_iter().map(SettingDto::from).collect::<Vec<_>>()))
}

/// One setting; 404 for an unknown key.
pub async fn get<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let setting = app.engine.get_setting(&principal, req.param("key")).await?;
    Ok(super::ok(&SettingDto::from(setting)))
}

/// Changes a setting's value: `{value}`.
pub async fn update<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Setting, Action::Update)?;
    let value = decode::setting_value(&req.json()?)?;
    let setting = app.engine.update_setting(&principal, req.param("key"), &value).await?;
    Ok(super::ok(&SettingDto::from(setting)))
}
