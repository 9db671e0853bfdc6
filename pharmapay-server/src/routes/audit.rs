//! `GET /api/audit-log` (D22): every write, sign-in and refusal, newest first, with its DTO and
//! operation.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::AuditLog;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::reports::audit::{AuditEntry, AuditQuery};
use pharmapay_core::text::TEXT_MAX;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;
use serde_json::value::RawValue;

use super::Route;
use crate::dto::{PageDto, instant, page_schema};
use crate::guard::needs;
use crate::openapi::schema::{self, not_space, space};
use crate::openapi::{
    Json, Operation, PAGE, Schema, Tag, describe, object, page_size, query, query_date, query_id, schema_ref,
};

/// The audit routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![Route::get("/api/audit-log", needs(AuditLog, Read), list, |call| {
        Box::pin(call.page(AuditQuery::from_params, PharmaPay::list_audit, AuditEntryDto::from))
    })]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Audit");

/// The longest `entity` filter, after trimming; an entry's action and kind of record, which the
/// server names itself (`login_throttled`, `VendorPayment`), are shorter.
const ENTITY_MAX: usize = 50;

fn list() -> Operation {
    let (space, not_space) = (space(), not_space());
    TAG.operation(
        "listAuditLog",
        "Read the audit log",
        " (D22). Every create, update, delete (with its reason), restore, login, failed login and settings change, \
         newest first, paginated (D8).",
    )
    .ok("A page of audit entries.", schema_ref::<PageDto<AuditEntryDto>>())
    .parameter(PAGE)
    .parameter(page_size(15))
    .parameter(query(
        "entity",
        format!(
            "Only this kind of record (exact, case-insensitive), e.g. `Vendor`; at most {ENTITY_MAX} characters after \
             trimming; blank means no filter."
        ),
        object! {
            "type": "string",
            "pattern": format!(r"^{space}*(?:{not_space}(?:[\s\S]{{0,{}}}{not_space})?)?{space}*$", ENTITY_MAX - 2),
        },
    ))
    .parameter(query_id("entityId", "Only this record id."))
    .parameter(query_id("userId", "Only this user's actions."))
    .parameter(query_date("fromDate", "At or after."))
    .parameter(query_date("toDate", "At or before."))
    .errors(&[400, 401, 403, 503])
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

describe! {
    AuditEntryDto as "AuditEntry": "One audit-log entry (D22)." {
        id: schema::id("Entry id."),
        at: schema::instant("When it happened."),
        user_id: schema::nullable_id("Who did it, or null when unknown (e.g. a failed login)."),
        action: schema::text(
            ENTITY_MAX,
            "What was done: `create`, `update`, `delete`, `restore`, `login`, `login_failed`, `login_throttled` ...",
        ),
        entity: schema::text(
            ENTITY_MAX,
            "The kind of record: `Vendor`, `Invoice`, `Transaction`, `User`, `Role`, `Policy`, `Setting` ...",
        ),
        entity_id: schema::nullable_id("The record's id, or null when it has no numeric id."),
        reason: schema::nullable_text(TEXT_MAX, "The reason given for a delete (D16), or null."),
        changes: object! {
            "type": ["object", "null"],
            "description": "The values written, as a JSON object (never a password or hash), or null.",
        },
    }
}

impl Schema for PageDto<AuditEntryDto> {
    const NAME: &'static str = "AuditPage";

    fn schema() -> Json {
        page_schema::<AuditEntryDto>("A page of audit-log entries, newest first.")
    }
}
