//! `GET /api/health` and `GET /api/openapi.json` (D25): public and cheap.

use hyper::StatusCode;
use pharmapay_core::Store;
use serde_json::json;

use super::{Call, Route};
use crate::app::Guard;
use crate::http::Reply;
use crate::problem::ApiError;

/// The OpenAPI 3.1 document of every route, served as kept in the repository.
pub const OPENAPI: &str = include_str!("../../openapi.json");

/// The system routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/health", Guard::Public, |call| Box::pin(health(call))),
        Route::get("/api/openapi.json", Guard::Public, |_call| Box::pin(openapi())),
    ]
}

/// 200 `{status: "ok", database}` when the store answers, else 503 `{status: "unavailable"}`.
async fn health<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let backend = call.app.backend;
    match call.app.engine.health().await {
        Ok(()) => Ok(super::ok(&json!({ "status": "ok", "database": backend }))),
        Err(error) => {
            tracing::warn!(%error, "health check failed");
            Ok(Reply::json(StatusCode::SERVICE_UNAVAILABLE, &json!({ "status": "unavailable", "database": backend })))
        }
    }
}

/// The OpenAPI document.
async fn openapi() -> Result<Reply, ApiError> {
    Ok(Reply::bytes(StatusCode::OK, "application/json", OPENAPI))
}
