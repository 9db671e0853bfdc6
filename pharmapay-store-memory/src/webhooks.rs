//! Webhooks and their deliveries (D47), under the store's one lock: queuing, claims and tries
//! are decided one at a time, as `pharmapay_core::webhooks::rules` says.

use std::collections::HashMap;

use pharmapay_core::ids::{DeliveryId, WebhookId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::paging::Page;
use pharmapay_core::store::{StoreResult, WebhookStore, WriteContext};
use pharmapay_core::webhooks::rules as webhook_rules;
use pharmapay_core::webhooks::rules::CLAIM_LEASE;
use pharmapay_core::webhooks::{
    Attempt, Delivery, DeliveryQuery, DeliveryStatus, DueDelivery, NewWebhook, Webhook, WebhookSecret,
};
use pharmapay_core::{Entity, StoreError};

use crate::rows::{DeliveryRow, WebhookRow};
use crate::{MemoryStore, State};

impl State {
    fn webhook(&self, id: i64) -> Option<Webhook> {
        let row = self.webhooks.get(&id)?;
        Some(Webhook {
            id: WebhookId(id),
            url: row.fields.url.clone(),
            events: row.fields.events.clone(),
            description: row.fields.description.clone(),
            is_active: row.fields.is_active,
            created_at: row.created_at,
        })
    }

    /// Records each try of `tries` and ends its claim, as `webhooks::rules::after_attempt` says.
    fn record_tries(&mut self, tries: Vec<(DeliveryId, Attempt)>) {
        for (delivery, attempt) in tries {
            let Some(row) = self.deliveries.get_mut(&delivery.get()) else { continue };
            let after = webhook_rules::after_attempt(row.delivery.created_at, row.delivery.attempts, &attempt);
            row.claimed_until = None;
            row.delivery.attempts += 1;
            row.delivery.status = after.status;
            row.delivery.next_attempt_at = after.next_attempt_at;
            row.delivery.delivered_at = after.delivered_at;
            row.delivery.last_status_code = attempt.status_code;
            row.delivery.last_error = attempt.error.map(|failure| failure.to_string());
        }
    }

    fn webhook_row(&mut self, id: WebhookId) -> StoreResult<&mut WebhookRow> {
        self.webhooks.get_mut(&id.get()).ok_or(StoreError::NotFound(Entity::Webhook))
    }
}

impl WebhookStore for MemoryStore {
    async fn insert_webhook(
        &self,
        webhook: NewWebhook,
        secret: &WebhookSecret,
        ctx: WriteContext,
    ) -> StoreResult<Webhook> {
        let mut state = self.write();
        let id = state.next("webhook");
        let cursor = state.last_event;
        let row = WebhookRow { fields: webhook, secret: secret.clone(), cursor, created_at: ctx.at };
        state.webhooks.insert(id, row);
        state.finish_write(&ctx, "create", Entity::Webhook, id);
        Ok(state.webhook(id).expect("just written"))
    }

    async fn get_webhook(&self, id: WebhookId) -> StoreResult<Option<Webhook>> {
        Ok(self.read().webhook(id.get()))
    }

    async fn webhook_secret(&self, id: WebhookId) -> StoreResult<Option<WebhookSecret>> {
        Ok(self.read().webhooks.get(&id.get()).map(|row| row.secret.clone()))
    }

    async fn list_webhooks(&self) -> StoreResult<Vec<Webhook>> {
        let state = self.read();
        Ok(state.webhooks.keys().filter_map(|id| state.webhook(*id)).collect())
    }

    async fn update_webhook(&self, id: WebhookId, webhook: NewWebhook, ctx: WriteContext) -> StoreResult<Webhook> {
        let mut state = self.write();
        state.webhook_row(id)?.fields = webhook;
        state.finish_write(&ctx, "update", Entity::Webhook, id.get());
        Ok(state.webhook(id.get()).expect("updated above"))
    }

    async fn delete_webhook(&self, id: WebhookId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        state.webhooks.remove(&id.get()).ok_or(StoreError::NotFound(Entity::Webhook))?;
        state.deliveries.retain(|_, row| row.delivery.webhook_id != id);
        state.finish_write(&ctx, "delete", Entity::Webhook, id.get());
        Ok(())
    }

    async fn rotate_webhook_secret(
        &self,
        id: WebhookId,
        secret: &WebhookSecret,
        ctx: WriteContext,
    ) -> StoreResult<Webhook> {
        let mut state = self.write();
        state.webhook_row(id)?.secret = secret.clone();
        state.finish_write(&ctx, "rotate_secret", Entity::Webhook, id.get());
        Ok(state.webhook(id.get()).expect("rotated above"))
    }

    async fn list_deliveries(&self, webhook: WebhookId, query: &DeliveryQuery) -> StoreResult<Page<Delivery>> {
        let state = self.read();
        if !state.webhooks.contains_key(&webhook.get()) {
            return Err(StoreError::NotFound(Entity::Webhook));
        }
        let mut rows: Vec<Delivery> = state
            .deliveries
            .values()
            .filter(|row| row.delivery.webhook_id == webhook)
            .map(|row| row.delivery.clone())
            .collect();
        rows.sort_by_key(|delivery| std::cmp::Reverse((delivery.event_id, delivery.id)));
        Ok(query.page.slice(rows))
    }

    async fn retry_delivery(
        &self,
        webhook: WebhookId,
        delivery: DeliveryId,
        ctx: WriteContext,
    ) -> StoreResult<Delivery> {
        let mut state = self.write();
        let row = state
            .deliveries
            .get_mut(&delivery.get())
            .filter(|row| row.delivery.webhook_id == webhook)
            .ok_or(StoreError::NotFound(Entity::WebhookDelivery))?;
        row.delivery.status = DeliveryStatus::Pending;
        row.delivery.next_attempt_at = Some(ctx.at);
        row.delivery.created_at = ctx.at;
        let retried = row.delivery.clone();
        state.finish_write(&ctx, "retry", Entity::WebhookDelivery, delivery.get());
        Ok(retried)
    }

    async fn queue_deliveries(&self, now: Timestamp, limit: u32) -> StoreResult<u32> {
        let mut state = self.write();
        let active: Vec<(i64, i64)> =
            state.webhooks.iter().filter(|(_, row)| row.fields.is_active).map(|(id, row)| (*id, row.cursor)).collect();
        let Some(from) = active.iter().map(|(_, cursor)| *cursor).min() else { return Ok(0) };
        let events: Vec<(i64, String)> =
            state.events.range(from + 1..).take(limit as usize).map(|(id, event)| (*id, event.kind.clone())).collect();
        let Some(upto) = events.last().map(|(id, _)| *id) else { return Ok(0) };
        for (webhook, cursor) in active {
            let takes = state.webhooks[&webhook].fields.events.clone();
            for (event, kind) in
                events.iter().filter(|(event, kind)| *event > cursor && webhook_rules::takes(&takes, kind))
            {
                let id = state.next("delivery");
                let delivery = Delivery {
                    id: DeliveryId(id),
                    webhook_id: WebhookId(webhook),
                    event_id: *event,
                    kind: kind.clone(),
                    status: DeliveryStatus::Pending,
                    attempts: 0,
                    last_status_code: None,
                    last_error: None,
                    next_attempt_at: Some(now),
                    delivered_at: None,
                    created_at: now,
                };
                state.deliveries.insert(id, DeliveryRow { delivery, claimed_until: None });
            }
            if let Some(row) = state.webhooks.get_mut(&webhook) {
                row.cursor = row.cursor.max(upto);
            }
        }
        Ok(events.len() as u32)
    }

    async fn claim_deliveries(
        &self,
        now: Timestamp,
        limit: u32,
        ended: Vec<(DeliveryId, Attempt)>,
    ) -> StoreResult<Vec<DueDelivery>> {
        let mut state = self.write();
        state.record_tries(ended);
        let mut in_flight: HashMap<i64, usize> = HashMap::new();
        let mut candidates: Vec<(i64, i64, i64)> = Vec::new();
        for (id, row) in &state.deliveries {
            let webhook = row.delivery.webhook_id.get();
            if row.claimed_until.is_some_and(|until| until > now) {
                *in_flight.entry(webhook).or_default() += 1;
            } else if row.delivery.status == DeliveryStatus::Pending
                && row.delivery.next_attempt_at.is_some_and(|due| due <= now)
                && state.webhooks.get(&webhook).is_some_and(|hook| hook.fields.is_active)
            {
                candidates.push((row.delivery.event_id, *id, webhook));
            }
        }
        candidates.sort_unstable();
        let candidates: Vec<(i64, i64)> = candidates.into_iter().map(|(_, id, webhook)| (id, webhook)).collect();
        let until = now.saturating_add(CLAIM_LEASE).unwrap_or(now);
        let mut due = Vec::new();
        for id in webhook_rules::claimable(&candidates, &in_flight, limit as usize) {
            let Some(row) = state.deliveries.get_mut(&id) else { continue };
            row.claimed_until = Some(until);
            let delivery = row.delivery.clone();
            let (Some(hook), Some(event)) =
                (state.webhooks.get(&delivery.webhook_id.get()), state.events.get(&delivery.event_id))
            else {
                continue;
            };
            due.push(DueDelivery {
                id: delivery.id,
                webhook_id: delivery.webhook_id,
                url: hook.fields.url.clone(),
                secret: hook.secret.clone(),
                event: event.clone(),
            });
        }
        Ok(due)
    }

    async fn finish_deliveries(&self, tries: Vec<(DeliveryId, Attempt)>) -> StoreResult<()> {
        self.write().record_tries(tries);
        Ok(())
    }

    async fn remove_old_events(&self, before: Timestamp, limit: u32) -> StoreResult<u64> {
        let mut state = self.write();
        let queued_to = state.webhooks.values().filter(|row| row.fields.is_active).map(|row| row.cursor).min();
        let pending: std::collections::HashSet<i64> = state
            .deliveries
            .values()
            .filter(|row| row.delivery.status == DeliveryStatus::Pending)
            .map(|row| row.delivery.event_id)
            .collect();
        let removable: Vec<i64> = state
            .events
            .iter()
            .filter(|(id, event)| {
                event.occurred_at < before && queued_to.is_none_or(|cursor| **id <= cursor) && !pending.contains(id)
            })
            .map(|(id, _)| *id)
            .take(limit as usize)
            .collect();
        for id in &removable {
            state.events.remove(id);
        }
        Ok(removable.len() as u64)
    }
}
