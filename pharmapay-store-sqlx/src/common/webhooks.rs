//! Webhooks and their deliveries (D47).
//!
//! Queuing and claiming are decided one server at a time, under `Lock::Deliveries` (an
//! advisory lock on PostgreSQL; SQLite's one writer): the queuer moves each active webhook's
//! cursor in the feed on and writes a delivery for each event the webhook takes
//! (`webhooks::rules::takes`); a claim marks due deliveries `claimed_until` a lease's end, a few
//! of a webhook at once (`webhooks::rules::claimable`, offered each webhook's oldest due ones),
//! so no two servers try one delivery at once. A try's outcome is what `webhooks::rules::after_attempt` says of it.

use std::collections::HashMap;

use pharmapay_core::events::Event;
use pharmapay_core::ids::{DeliveryId, WebhookId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::paging::Page;
use pharmapay_core::store::{StoreResult, WebhookStore, WriteContext};
use pharmapay_core::webhooks::rules as webhook_rules;
use pharmapay_core::webhooks::rules::{CLAIM_LEASE, CLAIMED_PER_WEBHOOK};
use pharmapay_core::webhooks::{
    Attempt, Delivery, DeliveryQuery, DeliveryStatus, DueDelivery, NewWebhook, Webhook, WebhookSecret,
};
use pharmapay_core::{Entity, StoreError};
use sqlx::Row;

use super::binds::{Binds, Script, page_limits, rows_in};
use super::rows::{instant, micros};
use super::{Conn, DbRow, Result, SqlStore, answer, commit, refused, row_by_id};
use crate::Lock;
use crate::error::Error;

const WEBHOOK_COLUMNS: &str = "id, url, events, description, is_active, created_at";

const DELIVERY_COLUMNS: &str = "id, webhook_id, event_id, kind, status, attempts, last_status_code, last_error, \
     next_attempt_at, delivered_at, created_at";

fn webhook_from(row: &DbRow) -> Result<Webhook> {
    let events: String = row.try_get("events")?;
    Ok(Webhook {
        id: WebhookId(row.try_get("id")?),
        url: row.try_get("url")?,
        events: serde_json::from_str(&events).map_err(|_| Error::corrupt("a webhook's events are not a JSON list"))?,
        description: row.try_get("description")?,
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
    })
}

fn delivery_from(row: &DbRow) -> Result<Delivery> {
    let status: String = row.try_get("status")?;
    let optional =
        |column: &str| -> Result<Option<Timestamp>> { row.try_get::<Option<i64>, _>(column)?.map(instant).transpose() };
    Ok(Delivery {
        id: DeliveryId(row.try_get("id")?),
        webhook_id: WebhookId(row.try_get("webhook_id")?),
        event_id: row.try_get("event_id")?,
        kind: row.try_get("kind")?,
        status: DeliveryStatus::parse(&status).ok_or_else(|| Error::corrupt("an unknown delivery status"))?,
        attempts: u32::try_from(row.try_get::<i64, _>("attempts")?).unwrap_or(u32::MAX),
        last_status_code: row.try_get::<Option<i64>, _>("last_status_code")?.and_then(|code| u16::try_from(code).ok()),
        last_error: row.try_get("last_error")?,
        next_attempt_at: optional("next_attempt_at")?,
        delivered_at: optional("delivered_at")?,
        created_at: instant(row.try_get("created_at")?)?,
    })
}

fn events_json(webhook: &NewWebhook) -> String {
    serde_json::to_string(&webhook.events).unwrap_or_else(|_| "[]".to_owned())
}

async fn webhook_in(conn: &mut Conn, id: i64) -> Result<Option<Webhook>> {
    let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut *conn).await?;
    row.as_ref().map(webhook_from).transpose()
}

/// The last position the feed gave: where a new webhook's cursor starts.
async fn last_position(conn: &mut Conn) -> Result<i64> {
    Ok(sqlx::query_scalar("SELECT last FROM event_positions").fetch_one(&mut *conn).await?)
}

/// Records each try of `tries` and ends its claim, as `webhooks::rules::after_attempt` says;
/// a delivery removed meanwhile is skipped.
async fn record_tries(conn: &mut Conn, tries: &[(DeliveryId, Attempt)]) -> Result<()> {
    if tries.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = tries.iter().map(|(delivery, _)| delivery.get()).collect();
    let found: HashMap<i64, (i64, i64)> = rows_in(&mut *conn, &ids, |list| {
        format!("SELECT id, created_at, attempts FROM webhook_deliveries WHERE id IN ({list})")
    })
    .await?
    .iter()
    .map(|row| Ok((row.try_get("id")?, (row.try_get("created_at")?, row.try_get("attempts")?))))
    .collect::<Result<_>>()?;
    let mut script = Script::default();
    for (delivery, attempt) in tries {
        let Some((created_at, attempts)) = found.get(&delivery.get()) else { continue };
        let attempts = u32::try_from(*attempts).unwrap_or(u32::MAX);
        let after = webhook_rules::after_attempt(instant(*created_at)?, attempts, attempt);
        script.push(|binds| {
            Ok(format!(
                "UPDATE webhook_deliveries SET status = {}, attempts = attempts + 1, last_status_code = {}, \
         last_error = {}, next_attempt_at = {}, delivered_at = {}, claimed_until = NULL WHERE id = {}",
                binds.text(after.status.name()),
                binds.int(attempt.status_code.map(i64::from)),
                binds.opt_text(attempt.error.map(|failure| failure.to_string())),
                binds.int(after.next_attempt_at.map(micros)),
                binds.int(after.delivered_at.map(micros)),
                binds.int(delivery.get())
            ))
        })?;
    }
    script.run(&mut *conn).await?;
    Ok(())
}

impl WebhookStore for SqlStore {
    async fn insert_webhook(
        &self,
        webhook: NewWebhook,
        secret: &WebhookSecret,
        ctx: WriteContext,
    ) -> StoreResult<Webhook> {
        // The events committed before it are placed first, so its cursor is past all of them.
        self.place_events().await?;
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let cursor = last_position(&mut db_tx).await?;
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO webhooks (url, events, description, is_active, secret, cursor, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
            )
            .bind(&webhook.url)
            .bind(events_json(&webhook))
            .bind(&webhook.description)
            .bind(webhook.is_active)
            .bind(secret.expose())
            .bind(cursor)
            .bind(micros(ctx.at))
            .fetch_one(&mut *db_tx)
            .await?;
            let written = webhook_in(&mut db_tx, id).await?;
            commit(db_tx, &ctx, "create", Entity::Webhook, id, written).await
        })
        .await
    }

    async fn get_webhook(&self, id: WebhookId) -> StoreResult<Option<Webhook>> {
        self.answer_read(|| async move { webhook_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn webhook_secret(&self, id: WebhookId) -> StoreResult<Option<WebhookSecret>> {
        self.answer_read(|| async move {
            let row =
                row_by_id(&mut *self.read().await?, "SELECT secret FROM webhooks WHERE id = $1", id.get()).await?;
            Ok(row.map(|row| row.try_get::<String, _>("secret")).transpose()?.map(WebhookSecret::new))
        })
        .await
    }

    async fn list_webhooks(&self) -> StoreResult<Vec<Webhook>> {
        self.answer_read(|| async move {
            let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks ORDER BY id");
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(&mut *self.read().await?).await?;
            rows.iter().map(webhook_from).collect()
        })
        .await
    }

    async fn update_webhook(&self, id: WebhookId, webhook: NewWebhook, ctx: WriteContext) -> StoreResult<Webhook> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let changed = sqlx::query(
                "UPDATE webhooks SET url = $2, events = $3, description = $4, is_active = $5 WHERE id = $1",
            )
            .bind(id.get())
            .bind(&webhook.url)
            .bind(events_json(&webhook))
            .bind(&webhook.description)
            .bind(webhook.is_active)
            .execute(&mut *db_tx)
            .await?
            .rows_affected();
            if changed == 0 {
                return refused(StoreError::NotFound(Entity::Webhook));
            }
            let written = webhook_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "update", Entity::Webhook, id.get(), written).await
        })
        .await
    }

    async fn delete_webhook(&self, id: WebhookId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            sqlx::query("DELETE FROM webhook_deliveries WHERE webhook_id = $1")
                .bind(id.get())
                .execute(&mut *db_tx)
                .await?;
            let removed = sqlx::query("DELETE FROM webhooks WHERE id = $1")
                .bind(id.get())
                .execute(&mut *db_tx)
                .await?
                .rows_affected();
            if removed == 0 {
                return refused(StoreError::NotFound(Entity::Webhook));
            }
            commit(db_tx, &ctx, "delete", Entity::Webhook, id.get(), Some(())).await
        })
        .await
    }

    async fn rotate_webhook_secret(
        &self,
        id: WebhookId,
        secret: &WebhookSecret,
        ctx: WriteContext,
    ) -> StoreResult<Webhook> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let changed = sqlx::query("UPDATE webhooks SET secret = $2 WHERE id = $1")
                .bind(id.get())
                .bind(secret.expose())
                .execute(&mut *db_tx)
                .await?
                .rows_affected();
            if changed == 0 {
                return refused(StoreError::NotFound(Entity::Webhook));
            }
            let written = webhook_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "rotate_secret", Entity::Webhook, id.get(), written).await
        })
        .await
    }

    async fn list_deliveries(&self, webhook: WebhookId, query: &DeliveryQuery) -> StoreResult<Page<Delivery>> {
        self.answer_read(|| async move {
            let mut conn = self.read().await?;
            if webhook_in(&mut conn, webhook.get()).await?.is_none() {
                return refused(StoreError::NotFound(Entity::Webhook));
            }
            drop(conn);
            let (limit, offset) = page_limits(query.page);
            let mut binds = Binds::default();
            let hook = binds.int(webhook.get());
            let sql = format!(
                "SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = {hook}) AS total_count, \
                 {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = {hook} \
                 ORDER BY event_id DESC, id DESC LIMIT {limit} OFFSET {offset}"
            );
            let recount = || {
                let mut binds = Binds::default();
                let hook = binds.int(webhook.get());
                binds.query(format!("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = {hook}"))
            };
            self.page(binds, sql, query.page, delivery_from, recount).await
        })
        .await
    }

    async fn retry_delivery(
        &self,
        webhook: WebhookId,
        delivery: DeliveryId,
        ctx: WriteContext,
    ) -> StoreResult<Delivery> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let sql = format!(
                "UPDATE webhook_deliveries SET status = 'Pending', next_attempt_at = $3, created_at = $3 \
                 WHERE id = $1 AND webhook_id = $2 RETURNING {DELIVERY_COLUMNS}"
            );
            let row = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(delivery.get())
                .bind(webhook.get())
                .bind(micros(ctx.at))
                .fetch_optional(&mut *db_tx)
                .await?;
            let Some(row) = row else { return refused(StoreError::NotFound(Entity::WebhookDelivery)) };
            let retried = delivery_from(&row)?;
            commit(db_tx, &ctx, "retry", Entity::WebhookDelivery, delivery.get(), Some(retried)).await
        })
        .await
    }

    async fn queue_deliveries(&self, now: Timestamp, limit: u32) -> StoreResult<u32> {
        // Without an active webhook there is nothing to queue, and no write to make.
        let active: Option<i64> = self
            .answer_read(|| async {
                let mut conn = self.read().await?;
                Ok(sqlx::query_scalar("SELECT id FROM webhooks WHERE is_active LIMIT 1")
                    .fetch_optional(&mut *conn)
                    .await?)
            })
            .await?;
        if active.is_none() {
            return Ok(0);
        }
        self.place_events().await?;
        // Nothing past every active webhook's cursor: nothing to queue, and no write to make.
        let waiting: Option<i64> = self
            .answer_read(|| async {
                let mut conn = self.read().await?;
                let sql = "SELECT position FROM events WHERE position > \
                           (SELECT MIN(cursor) FROM webhooks WHERE is_active) ORDER BY position LIMIT 1";
                Ok(sqlx::query_scalar(sql).fetch_optional(&mut *conn).await?)
            })
            .await?;
        if waiting.is_none() {
            return Ok(0);
        }
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Deliveries).await?;
            let hooks = sqlx::query("SELECT id, events, cursor FROM webhooks WHERE is_active ORDER BY id")
                .fetch_all(&mut *db_tx)
                .await?;
            let mut active = Vec::with_capacity(hooks.len());
            for row in &hooks {
                let events: String = row.try_get("events")?;
                let events: Vec<String> = serde_json::from_str(&events).unwrap_or_default();
                active.push((row.try_get::<i64, _>("id")?, events, row.try_get::<i64, _>("cursor")?));
            }
            let Some(from) = active.iter().map(|(_, _, cursor)| *cursor).min() else { return Ok(0) };
            let events: Vec<(i64, String)> =
                sqlx::query_as("SELECT position, kind FROM events WHERE position > $1 ORDER BY position LIMIT $2")
                    .bind(from)
                    .bind(i64::from(limit))
                    .fetch_all(&mut *db_tx)
                    .await?;
            let Some(upto) = events.last().map(|(position, _)| *position) else { return Ok(0) };
            let at = micros(now);
            for (webhook, takes, cursor) in &active {
                let queued: Vec<&(i64, String)> =
                    events.iter().filter(|(event, kind)| event > cursor && webhook_rules::takes(takes, kind)).collect();
                for chunk in queued.chunks(500) {
                    let mut binds = Binds::default();
                    let rows: Vec<String> = chunk
                        .iter()
                        .map(|(event, kind)| {
                            let (hook, event, kind) =
                                (binds.int(*webhook), binds.int(*event), binds.text(kind.as_str()));
                            let at = binds.int(at);
                            format!("({hook}, {event}, {kind}, 'Pending', 0, {at}, {at})")
                        })
                        .collect();
                    let sql = format!(
                        "INSERT INTO webhook_deliveries (webhook_id, event_id, kind, status, attempts, \
                         next_attempt_at, created_at) VALUES {}",
                        rows.join(", ")
                    );
                    binds.query(sql).execute(&mut *db_tx).await?;
                }
            }
            sqlx::query("UPDATE webhooks SET cursor = $1 WHERE is_active AND cursor < $1")
                .bind(upto)
                .execute(&mut *db_tx)
                .await?;
            db_tx.commit().await?;
            Ok(events.len() as u32)
        })
        .await
    }

    async fn claim_deliveries(
        &self,
        now: Timestamp,
        limit: u32,
        ended: Vec<(DeliveryId, Attempt)>,
    ) -> StoreResult<Vec<DueDelivery>> {
        answer(|| async {
            let at = micros(now);
            let mut db_tx = self.begin_locked(Lock::Deliveries).await?;
            record_tries(&mut db_tx, &ended).await?;
            let busy: Vec<(i64, i64)> = sqlx::query_as(
                "SELECT webhook_id, COUNT(*) FROM webhook_deliveries WHERE claimed_until > $1 GROUP BY webhook_id",
            )
            .bind(at)
            .fetch_all(&mut *db_tx)
            .await?;
            let in_flight: HashMap<i64, usize> =
                busy.into_iter().map(|(webhook, count)| (webhook, usize::try_from(count).unwrap_or(0))).collect();
            // Each webhook's oldest due deliveries, no more than it could hold claimed, so a
            // webhook with a backlog never crowds another's out of the candidates (D51).
            let candidates: Vec<(i64, i64)> = sqlx::query_as(
                "SELECT id, webhook_id FROM (SELECT d.id, d.webhook_id, d.event_id, \
                 ROW_NUMBER() OVER (PARTITION BY d.webhook_id ORDER BY d.event_id, d.id) AS turn \
                 FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id \
                 WHERE d.status = 'Pending' AND d.next_attempt_at <= $1 \
                 AND (d.claimed_until IS NULL OR d.claimed_until <= $1) AND w.is_active) due \
                 WHERE turn <= $2 ORDER BY event_id, id",
            )
            .bind(at)
            .bind(i64::try_from(CLAIMED_PER_WEBHOOK).unwrap_or(i64::MAX))
            .fetch_all(&mut *db_tx)
            .await?;
            let claimed = webhook_rules::claimable(&candidates, &in_flight, limit as usize);
            if claimed.is_empty() {
                db_tx.commit().await?;
                return Ok(Vec::new());
            }
            let until = micros(now.saturating_add(CLAIM_LEASE).unwrap_or(now));
            rows_in(&mut db_tx, &claimed, |list| {
                format!("UPDATE webhook_deliveries SET claimed_until = {until} WHERE id IN ({list}) RETURNING id")
            })
            .await?;
            let rows = rows_in(&mut db_tx, &claimed, |list| {
                format!(
                    "SELECT d.id, d.webhook_id, w.url, w.secret, e.position, e.kind, e.occurred_at, e.data \
                     FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id \
                     JOIN events e ON e.position = d.event_id WHERE d.id IN ({list}) ORDER BY e.position, d.id"
                )
            })
            .await?;
            let mut due = Vec::with_capacity(rows.len());
            for row in &rows {
                due.push(DueDelivery {
                    id: DeliveryId(row.try_get("id")?),
                    webhook_id: WebhookId(row.try_get("webhook_id")?),
                    url: row.try_get("url")?,
                    secret: WebhookSecret::new(row.try_get::<String, _>("secret")?),
                    event: Event {
                        id: row.try_get("position")?,
                        kind: row.try_get("kind")?,
                        occurred_at: instant(row.try_get("occurred_at")?)?,
                        data: row.try_get("data")?,
                    },
                });
            }
            db_tx.commit().await?;
            Ok(due)
        })
        .await
    }

    async fn finish_deliveries(&self, tries: Vec<(DeliveryId, Attempt)>) -> StoreResult<()> {
        if tries.is_empty() {
            return Ok(());
        }
        answer(|| async {
            let mut db_tx = self.begin().await?;
            record_tries(&mut db_tx, &tries).await?;
            db_tx.commit().await?;
            Ok(())
        })
        .await
    }

    async fn remove_old_events(&self, before: Timestamp, limit: u32) -> StoreResult<u64> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Deliveries).await?;
            let removed = sqlx::query(
                "DELETE FROM events WHERE seq IN (SELECT e.seq FROM events e WHERE e.occurred_at < $1 \
                 AND e.position IS NOT NULL \
                 AND e.position <= COALESCE((SELECT MIN(cursor) FROM webhooks WHERE is_active), e.position) \
                 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.position \
                 AND d.status = 'Pending') ORDER BY e.seq LIMIT $2)",
            )
            .bind(micros(before))
            .bind(i64::from(limit))
            .execute(&mut *db_tx)
            .await?
            .rows_affected();
            db_tx.commit().await?;
            Ok(removed)
        })
        .await
    }
}
