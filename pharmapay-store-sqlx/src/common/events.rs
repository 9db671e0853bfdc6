//! The event feed (D47).
//!
//! A write records its events where it ends, with its audit entry (`commit_announcing` in
//! `mod.rs`): an event whose record the write holds goes in the write's closing script; one
//! whose record must be read (a delete, an invoice with its vendor, a bank line's statement,
//! an invoice the write paid in full) is read and written in the same transaction once the
//! script has run, so it reads the write's own changes.
//!
//! Events are numbered twice. `seq` is given as each is written, in no useful order on
//! PostgreSQL, where transactions commit in another order than they began; `position`, the
//! id readers see, is given by [`place`] to committed events only, under a lock that one
//! server holds at a time, counting on from the last position given. A later run places only
//! events committed later, so an event never becomes visible below a position already seen.

use pharmapay_core::Entity;
use pharmapay_core::events::{Announce, Announced, Announcement, Announcer, Event, kind_of};
use pharmapay_core::store::{EventStore, StoreResult, WriteContext};
use sqlx::Row;

use super::binds::{Binds, Script, rows_in};
use super::records::{INVOICE_DETAIL_SELECT, credit_in, detail_from, invoice_detail_in, statement_in};
use super::rows::{instant, micros, transaction_in, vendor_from, vendor_in};
use super::{Conn, LOOKUP_CHUNK, Result, SqlStore, answer};
use crate::Lock;

/// Events placed in the feed by one run of [`place`] at most: a bulk import's many events take
/// several short runs rather than one long one.
const PLACE_BATCH: i64 = 10_000;

/// The events of `announcements`: those about the write's `own` record, which it holds as
/// `record`, go in `script`; the others are answered, to be written by [`write_read`] once the
/// script has run.
pub(super) fn announce_held<T: Announce>(
    ctx: &WriteContext,
    announcements: Vec<Announcement>,
    own: (Entity, i64),
    record: &T,
    script: &mut Script,
) -> Result<Vec<Announcement>> {
    let Some(announcer) = &ctx.announce else { return Ok(Vec::new()) };
    let mut to_read = Vec::new();
    for announcement in announcements {
        match record.announced() {
            Some(held) if (announcement.entity, announcement.id) == own => {
                let data = announcer.render(held);
                script.push(|binds| {
                    Ok(format!(
                        "INSERT INTO events (kind, occurred_at, data) VALUES ({}, {}, {})",
                        binds.text(announcement.kind),
                        binds.int(micros(ctx.at)),
                        binds.text(data)
                    ))
                })?;
            }
            _ => to_read.push(announcement),
        }
    }
    Ok(to_read)
}

/// Writes the events of `announcements`, each with its record read on `conn` as it now stands.
pub(super) async fn write_read(conn: &mut Conn, ctx: &WriteContext, announcements: &[Announcement]) -> Result<()> {
    let Some(announcer) = &ctx.announce else { return Ok(()) };
    for announcement in announcements {
        let Some(data) = rendered(conn, announcer, *announcement).await? else { continue };
        sqlx::query("INSERT INTO events (kind, occurred_at, data) VALUES ($1, $2, $3)")
            .bind(announcement.kind)
            .bind(micros(ctx.at))
            .bind(data)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Writes the `created` events of the records `ids` of `entity` an import wrote (D45, D47),
/// reading them a chunk at a time and writing each chunk's events in one statement, so a
/// 100,000-row file costs a few hundred statements more, not 200,000.
pub(super) async fn write_created(conn: &mut Conn, ctx: &WriteContext, entity: Entity, ids: &[i64]) -> Result<()> {
    let (Some(announcer), Some(kind)) = (&ctx.announce, kind_of("create", entity)) else { return Ok(()) };
    let at = micros(ctx.at);
    for chunk in ids.chunks(LOOKUP_CHUNK) {
        let data: Vec<String> = match entity {
            Entity::Vendor => {
                let rows = rows_in(conn, chunk, |list| {
                    format!(
                        concat!("SELECT ", vendor_columns!(), " FROM vendors v WHERE v.id IN ({}) ORDER BY v.id"),
                        list
                    )
                })
                .await?;
                let vendors = rows.iter().map(vendor_from).collect::<Result<Vec<_>>>()?;
                vendors.iter().map(|vendor| announcer.render(Announced::Vendor(vendor))).collect()
            }
            Entity::Invoice => {
                let rows = rows_in(conn, chunk, |list| {
                    format!("{INVOICE_DETAIL_SELECT} WHERE i.id IN ({list}) ORDER BY i.id")
                })
                .await?;
                let invoices =
                    rows.iter().map(|row| detail_from(row, announcer.today_start())).collect::<Result<Vec<_>>>()?;
                invoices.iter().map(|invoice| announcer.render(Announced::Invoice(invoice))).collect()
            }
            _ => {
                let each: Vec<Announcement> = chunk.iter().map(|id| Announcement { kind, entity, id: *id }).collect();
                write_read(conn, ctx, &each).await?;
                continue;
            }
        };
        if data.is_empty() {
            continue;
        }
        let mut binds = Binds::default();
        let values: Vec<String> = data
            .into_iter()
            .map(|data| format!("({}, {}, {})", binds.text(kind), binds.int(at), binds.text(data)))
            .collect();
        binds
            .query(format!("INSERT INTO events (kind, occurred_at, data) VALUES {}", values.join(", ")))
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The record `announcement` carries, read on `conn` and rendered; a bank line's is its
/// statement.
async fn rendered(conn: &mut Conn, announcer: &Announcer, announcement: Announcement) -> Result<Option<String>> {
    let id = announcement.id;
    let data = match announcement.entity {
        Entity::Vendor => vendor_in(conn, id).await?.map(|vendor| announcer.render(Announced::Vendor(&vendor))),
        Entity::Invoice => invoice_detail_in(conn, id, announcer.today_start())
            .await?
            .map(|invoice| announcer.render(Announced::Invoice(&invoice))),
        Entity::Transaction => {
            transaction_in(conn, id).await?.map(|payment| announcer.render(Announced::Transaction(&payment)))
        }
        Entity::VendorPayment => SqlStore::vendor_payment_in(conn, id)
            .await?
            .map(|payment| announcer.render(Announced::VendorPayment(&payment))),
        Entity::VendorCredit => {
            credit_in(conn, id).await?.map(|credit| announcer.render(Announced::VendorCredit(&credit)))
        }
        Entity::BankStatement => {
            statement_in(conn, id).await?.map(|statement| announcer.render(Announced::BankStatement(&statement)))
        }
        Entity::BankLine => {
            let statement: Option<i64> = sqlx::query_scalar("SELECT statement_id FROM bank_lines WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
            match statement {
                Some(statement) => statement_in(conn, statement)
                    .await?
                    .map(|statement| announcer.render(Announced::BankStatement(&statement))),
                None => None,
            }
        }
        _ => None,
    };
    Ok(data)
}

impl SqlStore {
    /// Gives the committed events that have none their positions, in the order of their
    /// `seq`, under [`Lock::EventPositions`]; answers how many it placed.
    async fn place(&self) -> StoreResult<i64> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::EventPositions).await?;
            let placed = sqlx::query(
                "WITH todo AS (SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM events \
                 WHERE position IS NULL ORDER BY seq LIMIT $1) \
                 UPDATE events SET position = (SELECT last FROM event_positions) + todo.n \
                 FROM todo WHERE events.seq = todo.seq",
            )
            .bind(PLACE_BATCH)
            .execute(&mut *db_tx)
            .await?
            .rows_affected() as i64;
            if placed > 0 {
                sqlx::query("UPDATE event_positions SET last = last + $1").bind(placed).execute(&mut *db_tx).await?;
            }
            db_tx.commit().await?;
            Ok(placed)
        })
        .await
    }

    /// Whether some committed event waits for its position.
    async fn unplaced(&self) -> StoreResult<bool> {
        self.answer_read(|| async {
            let waiting: Option<i64> = sqlx::query_scalar("SELECT seq FROM events WHERE position IS NULL LIMIT 1")
                .fetch_optional(&mut *self.read().await?)
                .await?;
            Ok(waiting.is_some())
        })
        .await
    }
}

impl SqlStore {
    /// Gives every committed event that has none its position.
    pub(super) async fn place_events(&self) -> StoreResult<()> {
        if self.unplaced().await? {
            while self.place().await? == PLACE_BATCH {}
        }
        Ok(())
    }
}

impl EventStore for SqlStore {
    async fn events_after(&self, after: i64, limit: u32) -> StoreResult<Vec<Event>> {
        self.place_events().await?;
        self.answer_read(|| async move {
            let rows = sqlx::query(
                "SELECT position, kind, occurred_at, data FROM events WHERE position > $1 ORDER BY position LIMIT $2",
            )
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(&mut *self.read().await?)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok(Event {
                        id: row.try_get("position")?,
                        kind: row.try_get("kind")?,
                        occurred_at: instant(row.try_get("occurred_at")?)?,
                        data: row.try_get("data")?,
                    })
                })
                .collect()
        })
        .await
    }
}
