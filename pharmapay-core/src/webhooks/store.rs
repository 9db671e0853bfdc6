//! Storage of webhooks and their deliveries (D47): [`WebhookStore`], part of [`crate::store::Store`].

use std::future::Future;

use jiff::Timestamp;

use crate::ids::{DeliveryId, WebhookId};
use crate::paging::Page;
use crate::store::{StoreResult, WriteContext};
use crate::webhooks::{Attempt, Delivery, DeliveryQuery, DueDelivery, NewWebhook, Webhook, WebhookSecret};

/// Storage of webhooks, and the queue of deliveries every server sharing the store works off.
///
/// A webhook keeps a cursor in the feed: the last event it was given deliveries for, starting
/// at the feed's end when it is created. [`WebhookStore::queue_deliveries`] moves the cursors of
/// the active webhooks on, one queuer at a time, writing a delivery for each event a webhook
/// takes ([`crate::webhooks::rules::takes`]). A server claims due deliveries
/// ([`WebhookStore::claim_deliveries`]) for [`crate::webhooks::rules::CLAIM_LEASE`], a few of a
/// webhook at once ([`crate::webhooks::rules::claimable`]), so no two servers try one delivery
/// at once, and records each try's outcome as [`crate::webhooks::rules::after_attempt`] judges
/// it.
pub trait WebhookStore: Send + Sync + 'static {
    /// Keeps a new webhook with `secret`, its cursor at the feed's last event, with the audit
    /// entry of `ctx`.
    fn insert_webhook(
        &self,
        webhook: NewWebhook,
        secret: &WebhookSecret,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Webhook>> + Send;

    /// A webhook.
    fn get_webhook(&self, id: WebhookId) -> impl Future<Output = StoreResult<Option<Webhook>>> + Send;

    /// A webhook's signing secret as it is now, if the webhook exists.
    fn webhook_secret(&self, id: WebhookId) -> impl Future<Output = StoreResult<Option<WebhookSecret>>> + Send;

    /// Every webhook, by id.
    fn list_webhooks(&self) -> impl Future<Output = StoreResult<Vec<Webhook>>> + Send;

    /// Replaces a webhook's fields; its secret, cursor and deliveries stay.
    fn update_webhook(
        &self,
        id: WebhookId,
        webhook: NewWebhook,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Webhook>> + Send;

    /// Removes a webhook and its deliveries.
    fn delete_webhook(&self, id: WebhookId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Replaces a webhook's secret with `secret`: tries from then on are signed with it.
    fn rotate_webhook_secret(
        &self,
        id: WebhookId,
        secret: &WebhookSecret,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Webhook>> + Send;

    /// A webhook's deliveries, newest first (by event, then id).
    fn list_deliveries(
        &self,
        webhook: WebhookId,
        query: &DeliveryQuery,
    ) -> impl Future<Output = StoreResult<Page<Delivery>>> + Send;

    /// Makes a delivery of the webhook pending again, due at once, with a day of tries before
    /// it; its tries so far stay counted.
    fn retry_delivery(
        &self,
        webhook: WebhookId,
        delivery: DeliveryId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Delivery>> + Send;

    /// Gives the events committed since the last call their ids (as
    /// [`crate::store::EventStore::events_after`] does), then queues, for up to `limit` events past
    /// the lowest cursor of the active webhooks, a delivery to each active webhook that takes
    /// it, due at `now`, and moves the cursors past them; answers how many events it went
    /// through.
    fn queue_deliveries(&self, now: Timestamp, limit: u32) -> impl Future<Output = StoreResult<u32>> + Send;

    /// Records the tries that `ended` as [`WebhookStore::finish_deliveries`] does, then claims
    /// up to `limit` pending deliveries of active webhooks due at `now` and not claimed, oldest
    /// event first, as [`crate::webhooks::rules::claimable`] allows, until `now` plus
    /// [`crate::webhooks::rules::CLAIM_LEASE`], all in one transaction; answers them with what
    /// to send.
    fn claim_deliveries(
        &self,
        now: Timestamp,
        limit: u32,
        ended: Vec<(DeliveryId, Attempt)>,
    ) -> impl Future<Output = StoreResult<Vec<DueDelivery>>> + Send;

    /// Records the tries of claimed deliveries, in one transaction, and ends their claims,
    /// leaving each delivery as [`crate::webhooks::rules::after_attempt`] says. A delivery
    /// removed meanwhile is skipped.
    fn finish_deliveries(&self, tries: Vec<(DeliveryId, Attempt)>) -> impl Future<Output = StoreResult<()>> + Send;

    /// Removes up to `limit` events that occurred before `before`, that every active webhook
    /// has queued, and that no pending delivery still needs (D47's retention); answers how
    /// many it removed.
    fn remove_old_events(&self, before: Timestamp, limit: u32) -> impl Future<Output = StoreResult<u64>> + Send;
}
