//! `GET /api/audit-log` (D22): every write, sign-in and refusal, newest first, and its DTO.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::AuditLog;
use pharmapay_core::domain::{AuditEntry, AuditQuery};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;
use serde_json::value::RawValue;

use super::Route;
use crate::app::needs;
use crate::dto::instant;

/// The audit routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![Route::get("/api/audit-log", needs(AuditLog, Read), |call| {
        Box::pin(call.page(AuditQuery::from_params, PharmaPay::list_audit, AuditEntryDto::from))
    })]
}

/// One audit-log entry (D22); `changes` is the JSON object that was recorded.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryDto {
    id: i64,
    #[serde(serialize_with = "instant")]
    at: Timestamp,
    user_id: Option<i64>,
    action: String,
    entity: String,
    entity_id: Option<i64>,
    reason: Option<String>,
    changes: Option<Box<RawValue>>,
}

impl From<AuditEntry> for AuditEntryDto {
    fn from(entry: AuditEntry) -> Self {
        Self {
            id: entry.id.get(),
            at: entry.at,
            user_id: entry.user_id.map(|id| id.get()),
            action: entry.action,
            entity: entry.entity,
            entity_id: entry.entity_id,
            reason: entry.reason,
            changes: entry.changes.and_then(|changes| RawValue::from_string(changes).ok()),
        }
    }
}
