//! Who writes, when, why, and under which idempotency claim: the context every store write
//! carries, with the audit entry and announcements it makes (D22, D47).

use jiff::Timestamp;

use crate::access::Authority;
use crate::error::Entity;
use crate::events::{Announcement, Announcer, announcement};
use crate::idempotency::IdempotencyTicket;
use crate::ids::UserId;
use crate::reports::audit::NewAuditEntry;

/// Who writes, when, why, and under which idempotency claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteContext {
    /// The acting user (absent for onboarding).
    pub actor: Option<UserId>,
    /// What the actor may give others (D38).
    pub authority: Authority,
    /// The branches the actor sees and writes in (D49): all for the system itself.
    pub scope: crate::branches::Scope,
    /// The instant of the write; stores use it for `created_at`, `updated_at` and the audit.
    pub at: Timestamp,
    /// The reason of a delete (D16).
    pub reason: Option<String>,
    /// The values written, as a JSON object, for the audit log.
    pub changes: Option<String>,
    /// The claim this write completes (D23).
    pub idempotency: Option<IdempotencyTicket>,
    /// What renders the write's events (D47); none when the engine announces nothing.
    pub announce: Option<Announcer>,
}

impl WriteContext {
    /// A context for `actor`, who may give what `authority` allows, at `at`, with nothing else.
    pub fn new(actor: Option<UserId>, authority: Authority, at: Timestamp) -> Self {
        Self {
            actor,
            authority,
            scope: crate::branches::Scope::All,
            at,
            reason: None,
            changes: None,
            idempotency: None,
            announce: None,
        }
    }

    /// The audit entry this write records: `action` on `entity` number `entity_id`.
    pub fn audit(&self, action: &'static str, entity: Entity, entity_id: Option<i64>) -> NewAuditEntry {
        NewAuditEntry {
            at: self.at,
            user_id: self.actor,
            action,
            entity: entity.name(),
            entity_id,
            reason: self.reason.clone(),
            changes: self.changes.clone(),
        }
    }

    /// The events a write recording the audit entry `action` on `entity` number `entity_id`
    /// writes beside it (D47), in order: its own, `also` (the vendor payment a bank line
    /// recorded), then `invoice.paid` for each invoice `paid` names. None when the context
    /// renders no events.
    pub fn announcements(
        &self,
        (action, entity, entity_id): (&str, Entity, i64),
        also: &[Announcement],
        paid: impl IntoIterator<Item = i64>,
    ) -> Vec<Announcement> {
        if self.announce.is_none() {
            return Vec::new();
        }
        announcement(action, entity, entity_id)
            .into_iter()
            .chain(also.iter().copied())
            .chain(paid.into_iter().map(Announcement::paid))
            .collect()
    }
}
