//! `GET /api/health` and `GET /api/openapi.json` (D25): public and cheap.

use hyper::StatusCode;
use pharmapay_core::Store;
use serde::Serialize;

use super::{Call, Route};
use crate::guard::Guard;
use crate::http::Reply;
use crate::openapi::{Operation, Tag, describe, json_response, object, schema_ref};
use crate::problem::ApiError;

/// The system routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/health", Guard::Public, health_operation, |call| Box::pin(health(call))),
        Route::get("/api/openapi.json", Guard::Public, openapi_operation, |call| Box::pin(openapi(call))),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("System");

/// 200 `{status: "ok", database}` when the store answers, else 503 `{status: "unavailable"}`.
async fn health<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let database = call.app.backend;
    match call.app.engine.health().await {
        Ok(()) => Ok(super::ok(&HealthDto { database, status: "ok" })),
        Err(error) => {
            tracing::warn!(%error, "health check failed");
            Ok(Reply::json(StatusCode::SERVICE_UNAVAILABLE, &HealthDto { database, status: "unavailable" }))
        }
    }
}

/// The OpenAPI document, built once ([`super::api_document`]) and kept in the application.
async fn openapi<S>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    Ok(Reply::bytes(StatusCode::OK, "application/json", (call.app.api_document)()))
}

fn health_operation() -> Operation {
    TAG.operation(
        "getHealth",
        "Health check",
        "Public and cheap (D25): 200 `{status: \"ok\", database}` when the store answers, 503 `{status: \
         \"unavailable\", database}` when it does not. Plain JSON, not problem details.",
    )
    .response("200", json_response("The store answers.", schema_ref::<HealthDto>()))
    .response("503", json_response("The store is unreachable.", schema_ref::<HealthDto>()))
}

fn openapi_operation() -> Operation {
    TAG.operation(
        "getOpenApi",
        "This OpenAPI document",
        "Public (D25): the OpenAPI 3.1 document describing every route, built from the route table when first asked \
         for.",
    )
    .ok("The OpenAPI document.", object! { "type": "object" })
}

/// The health of the service and its store (D25).
#[derive(Serialize)]
pub struct HealthDto {
    database: &'static str,
    status: &'static str,
}

describe! {
    HealthDto as "Health": "Health of the service and its store (D25). Plain `application/json`, not problem details." {
        status: object! {
            "type": "string",
            "enum": ["ok", "unavailable"],
            "description": "`ok` when the store answers, `unavailable` (with status 503) when it does not.",
        },
        database: object! {
            "type": "string",
            "enum": ["sqlite", "postgres", "memory"],
            "description": "The store's kind.",
        },
    }
}
