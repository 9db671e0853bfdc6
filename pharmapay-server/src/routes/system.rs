//! `GET /api/health` and `GET /api/openapi.json` (D25): public and cheap.

use hyper::StatusCode;
use pharmapay_core::Store;
use serde_json::json;

use crate::app::App;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// The OpenAPI 3.1 document of every route, served as kept in the repository.
pub const OPENAPI: &str = include_str!("../../openapi.json");

/// 200 `{status: "ok", database}` when the store answers, else 503 `{status: "unavailable"}`.
pub async fn health<S: Store>(app: &App<S>, _req: Req) -> Result<Reply, ApiError> {
    match app.engine.health().await {
        Ok(()) => Ok(super::ok(&json!({ "status": "ok", "database": app.backend }))),
        Err(error) => {
            tracing::warn!(%error, "health check failed");
            Ok(Reply::json(
                StatusCode::SERVICE_UNAVAILABLE,
                &json!({ "status": "unavailable", "database": app.backend }),
            ))
        }
    }
}

/// The OpenAPI document.
pub async fn openapi<S: Store>(_app: &App<S>, _req: Req) -> Result<Reply, ApiError> {
    Ok(Reply::bytes(StatusCode::OK, "application/json", OPENAPI))
}
