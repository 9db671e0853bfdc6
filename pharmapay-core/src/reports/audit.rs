//! The audit log (D22): who changed what, when, and why.

use jiff::Timestamp;

use crate::error::FieldErrors;
use crate::ids::{AuditId, UserId};
use crate::paging::{ListFilter, ListQuery, Params, read_id};
use crate::text;

use crate::invoices::read_date;

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    /// Id.
    pub id: AuditId,
    /// When it happened.
    pub at: Timestamp,
    /// Who did it, when known.
    pub user_id: Option<UserId>,
    /// What was done: `create`, `update`, `delete`, `restore`, `login`, `login_failed` ...
    pub action: String,
    /// The kind of record: `Vendor`, `Invoice`, `Setting` ...
    pub entity: String,
    /// The record's id, when it has a numeric one.
    pub entity_id: Option<i64>,
    /// The reason given for a delete (D16).
    pub reason: Option<String>,
    /// The values written, as a JSON object; never a password or hash.
    pub changes: Option<String>,
}

/// An event to record; the store assigns the id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewAuditEntry {
    /// When it happened.
    pub at: Timestamp,
    /// Who did it.
    pub user_id: Option<UserId>,
    /// What was done.
    pub action: &'static str,
    /// The kind of record.
    pub entity: &'static str,
    /// The record's id, when known before the write.
    pub entity_id: Option<i64>,
    /// Reason (D16).
    pub reason: Option<String>,
    /// The values written, as a JSON object.
    pub changes: Option<String>,
}

/// Which entries to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Only this kind of record (exact, case-insensitive).
    pub entity: Option<String>,
    /// Only this record id.
    pub entity_id: Option<i64>,
    /// Only this user's actions.
    pub user_id: Option<UserId>,
    /// At or after.
    pub from_date: Option<Timestamp>,
    /// At or before.
    pub to_date: Option<Timestamp>,
}

impl ListFilter for AuditFilter {
    const PAGE_SIZE: u32 = 15;

    /// Reads `entity`, `entityId`, `userId`, `fromDate` and `toDate` (D22).
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self {
        // Bounded and free of control characters like every other text filter: a NUL byte
        // would otherwise reach the database, which PostgreSQL refuses outright.
        let entity = errors.check("entity", text::optional(params.get("entity"), 50, text::Lines::Single)).flatten();
        let filter = AuditFilter {
            entity,
            entity_id: read_id(params, "entityId", errors),
            user_id: read_id(params, "userId", errors).map(UserId),
            from_date: read_date(params, "fromDate", errors),
            to_date: read_date(params, "toDate", errors),
        };
        if let (Some(from), Some(to)) = (filter.from_date, filter.to_date)
            && to < from
        {
            errors.add("toDate", "must not be earlier than fromDate");
        }
        filter
    }
}

/// A page of audit entries, newest first.
pub type AuditQuery = ListQuery<AuditFilter>;

impl NewAuditEntry {
    /// The entry of a sign-in event (`login`, `login_failed`, `login_throttled`,
    /// `password_change_failed`) for `email_key`, already a key or `(invalid)` (D40): the email
    /// is kept as that key, never as typed.
    pub(crate) fn sign_in(action: &'static str, user_id: Option<UserId>, email_key: &str, at: Timestamp) -> Self {
        NewAuditEntry {
            at,
            user_id,
            action,
            entity: crate::error::Entity::User.name(),
            entity_id: user_id.map(UserId::get),
            reason: None,
            changes: Some(serde_json::json!({ "email": email_key }).to_string()),
        }
    }
}
