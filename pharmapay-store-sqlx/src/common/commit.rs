//! How every write ends: its audit entry (D22), its announcements and the figures they move
//! (D41, D47), and the commit, in the write's own transaction.

use pharmapay_core::Entity;
use pharmapay_core::events::{Announce, Announcement};
use pharmapay_core::figures::FigureChange;
use pharmapay_core::ids::UserId;
use pharmapay_core::reports::audit::NewAuditEntry;
use pharmapay_core::store::WriteContext;

use super::binds::{Binds, Script};
use super::conn::{Conn, Result, micros, written};
use super::{WriteTx, events, figures};

pub(super) async fn insert_audit(conn: &mut Conn, entry: NewAuditEntry) -> Result<()> {
    let mut binds = Binds::default();
    let sql = audit_statement(&mut binds, entry);
    binds.query(sql).execute(&mut *conn).await?;
    Ok(())
}

/// Binds `entry`'s values and answers the statement that records it:
/// [`crate::statements::INSERT_AUDIT`] when it is the first statement of its values, as on its own.
pub(super) fn audit_statement(binds: &mut Binds, entry: NewAuditEntry) -> String {
    let values = [
        binds.int(micros(entry.at)),
        binds.int(entry.user_id.map(UserId::get)),
        binds.text(entry.action),
        binds.text(entry.entity),
        binds.text(entry.entity.to_ascii_lowercase()),
        binds.int(entry.entity_id),
        binds.opt_text(entry.reason),
        binds.opt_text(entry.changes),
    ];
    format!(
        "INSERT INTO audit_log (at, user_id, action, entity, entity_key, entity_id, reason, changes) VALUES ({})",
        values.join(", ")
    )
}

/// Ends a write (D22, D23, D47): records its audit entry (`action` on `entity` number
/// `entity_id`) and its events and completes its idempotency claim in the transaction,
/// commits, and answers `record`, which the write read back inside the transaction.
pub(super) async fn commit<T: Announce>(
    db_tx: WriteTx,
    ctx: &WriteContext,
    action: &'static str,
    entity: Entity,
    entity_id: i64,
    record: Option<T>,
) -> Result<T> {
    commit_moving(db_tx, ctx, (action, entity, entity_id), record, None).await
}

/// [`commit`] for a write that moves kept figures (D41): `change` is applied in the same
/// transaction, with the audit entry and the idempotency claim in one script where the backend
/// runs one (`binds::Script`).
pub(super) async fn commit_moving<T: Announce>(
    db_tx: WriteTx,
    ctx: &WriteContext,
    head: (&'static str, Entity, i64),
    record: Option<T>,
    change: Option<&FigureChange>,
) -> Result<T> {
    commit_announcing(db_tx, ctx, head, (record, change), &[]).await
}

/// [`commit_moving`] for a write that also announces `also` (D47): the vendor payment a bank
/// line recorded, the credit whose application was undone. Every write ends here: the events
/// of its audit entry, of `also` and of the invoices `change` brought to FullyPaid are written
/// beside the audit entry, so none is announced by hand.
pub(super) async fn commit_announcing<T: Announce>(
    mut db_tx: WriteTx,
    ctx: &WriteContext,
    (action, entity, entity_id): (&'static str, Entity, i64),
    (record, change): (Option<T>, Option<&FigureChange>),
    also: &[Announcement],
) -> Result<T> {
    let record = written(record)?;
    let mut script = Script::default();
    script.push(|binds| Ok(audit_statement(binds, ctx.audit(action, entity, Some(entity_id)))))?;
    let paid: Vec<i64> = change.map(|change| change.paid_invoices().collect()).unwrap_or_default();
    let announcements = ctx.announcements((action, entity, entity_id), also, paid);
    let to_read = events::announce_held(ctx, announcements, (entity, entity_id), &record, &mut script)?;
    if let Some(change) = change
        && !figures::script(&mut script, change)?
    {
        figures::apply(&mut db_tx, change).await?;
    }
    if let Some(ticket) = &ctx.idempotency {
        script.push(|binds| {
            Ok(format!(
                "UPDATE idempotency_keys SET entity_id = {} WHERE user_id = {} AND key = {}",
                binds.int(entity_id),
                binds.int(ticket.user_id.get()),
                binds.text(ticket.key.as_str())
            ))
        })?;
    }
    script.run(&mut db_tx).await?;
    events::write_read(&mut db_tx, ctx, &to_read).await?;
    db_tx.commit().await?;
    Ok(record)
}
