//! Webhooks (D47): their management for admins, and the queue of deliveries a server's
//! delivery task works off.

use jiff::SignedDuration;
use tracing::instrument;

use crate::access::grants::Escalation;
use crate::access::{Access, Action, Collection, Principal, Requirement};
use crate::engine::{PharmaPay, store_error};
use crate::error::{Entity, Error, IdempotencyClash, Result};
use crate::events::unreadable;
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::{DeliveryId, WebhookId};
use crate::paging::Page;
use crate::store::Store;
use crate::webhooks::{
    Attempt, Delivery, DeliveryQuery, DueDelivery, NewWebhook, Webhook, WebhookSecret, WebhookWithSecret,
};

fn webhooks(action: Action) -> Access {
    Access::new(Collection::Webhook, action)
}

/// Refuses a webhook whose events `principal` could not read in the feed (D51), naming each
/// permission missing, as D38 refuses a widening; admins are not limited.
fn may_subscribe(principal: &Principal, webhook: &NewWebhook) -> Result<()> {
    let missing = unreadable(principal, webhook.events.iter().map(String::as_str));
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::Forbidden { required: Requirement::Grant(Escalation { admin_role: false, permissions: missing }) })
    }
}

impl<S: Store> PharmaPay<S> {
    /// Every webhook, by id (D47).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_webhooks(&self, principal: &Principal) -> Result<Vec<Webhook>> {
        principal.require(webhooks(Action::Read))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        self.store.list_webhooks().await.map_err(store_error)
    }

    /// One webhook.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; store failures.
    pub async fn get_webhook(&self, principal: &Principal, id: WebhookId) -> Result<Webhook> {
        principal.require(webhooks(Action::Read))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        self.store.get_webhook(id).await.map_err(store_error)?.ok_or(Error::NotFound { entity: Entity::Webhook })
    }

    /// Creates a webhook with a new secret, answered this once (D47); it is sent the events
    /// written from now on. An `Idempotency-Key` replays the first answer, secret included
    /// (D23).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; idempotency clashes; store failures.
    #[instrument(skip_all)]
    pub async fn create_webhook(
        &self,
        principal: &Principal,
        webhook: NewWebhook,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<WebhookWithSecret>> {
        principal.require(webhooks(Action::Create))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        let webhook = webhook.validate().map_err(Error::Validation)?;
        may_subscribe(principal, &webhook)?;
        let ctx = self.ctx_with(principal, webhook.audit_changes());
        let write = |ctx| async move {
            let secret = WebhookSecret::generate();
            let webhook = self.store.insert_webhook(webhook, &secret, ctx).await.map_err(store_error)?;
            Ok(WebhookWithSecret { webhook, secret })
        };
        // A replay answers the recorded body; without one the secret cannot be shown again.
        self.create_idempotently(principal, idempotency, ctx, write, |_| async { Ok(None) }).await
    }

    /// Whether the recorded answer of a webhook's create, which showed `secret`, may be replayed
    /// (D23, D51): only while that secret is still the webhook's.
    ///
    /// # Errors
    /// [`Error::Idempotency`] (409) once the secret was rotated or the webhook deleted; store
    /// failures.
    pub async fn check_webhook_replay(&self, id: WebhookId, secret: &str) -> Result<()> {
        match self.store.webhook_secret(id).await.map_err(store_error)? {
            Some(current) if current.expose() == secret => Ok(()),
            _ => Err(Error::Idempotency(IdempotencyClash::Superseded)),
        }
    }

    /// Replaces a webhook's URL, events, description and state; its secret stays.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; store failures.
    #[instrument(skip_all, fields(webhook_id = %id))]
    pub async fn update_webhook(&self, principal: &Principal, id: WebhookId, webhook: NewWebhook) -> Result<Webhook> {
        principal.require(webhooks(Action::Update))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        let webhook = webhook.validate().map_err(Error::Validation)?;
        may_subscribe(principal, &webhook)?;
        let ctx = self.ctx_with(principal, webhook.audit_changes());
        self.store.update_webhook(id, webhook, ctx).await.map_err(store_error)
    }

    /// Removes a webhook and its deliveries, keeping `reason` in the audit log (D16).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] for the reason; [`Error::NotFound`]; store
    /// failures.
    #[instrument(skip_all, fields(webhook_id = %id))]
    pub async fn delete_webhook(&self, principal: &Principal, id: WebhookId, reason: Option<String>) -> Result<()> {
        principal.require(webhooks(Action::Delete))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        let ctx = self.ctx_for_delete(principal, reason)?;
        self.store.delete_webhook(id, ctx).await.map_err(store_error)
    }

    /// Gives a webhook a new secret, answered this once (D47).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; store failures.
    #[instrument(skip_all, fields(webhook_id = %id))]
    pub async fn rotate_webhook_secret(&self, principal: &Principal, id: WebhookId) -> Result<WebhookWithSecret> {
        principal.require(webhooks(Action::Update))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        let secret = WebhookSecret::generate();
        let webhook = self.store.rotate_webhook_secret(id, &secret, self.ctx(principal)).await.map_err(store_error)?;
        Ok(WebhookWithSecret { webhook, secret })
    }

    /// A webhook's deliveries, newest first (D47).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; store failures.
    pub async fn list_deliveries(
        &self,
        principal: &Principal,
        id: WebhookId,
        query: &DeliveryQuery,
    ) -> Result<Page<Delivery>> {
        principal.require(webhooks(Action::Read))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        self.store.list_deliveries(id, query).await.map_err(store_error)
    }

    /// Makes a delivery pending again, due at once (D47).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; store failures.
    #[instrument(skip_all, fields(webhook_id = %webhook, delivery_id = %delivery))]
    pub async fn retry_delivery(
        &self,
        principal: &Principal,
        webhook: WebhookId,
        delivery: DeliveryId,
    ) -> Result<Delivery> {
        principal.require(webhooks(Action::Update))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        self.store.retry_delivery(webhook, delivery, self.ctx(principal)).await.map_err(store_error)
    }

    /// Queues the deliveries of up to `limit` more events (D47); answers how many events it
    /// went through. For the delivery task.
    ///
    /// # Errors
    /// Store failures.
    pub async fn queue_deliveries(&self, limit: u32) -> Result<u32> {
        self.store.queue_deliveries(self.now(), limit).await.map_err(store_error)
    }

    /// Records what the tries that `ended` got, then claims up to `limit` deliveries due now,
    /// for this server alone to try, in one transaction. For the delivery task.
    ///
    /// # Errors
    /// Store failures.
    pub async fn claim_deliveries(&self, limit: u32, ended: Vec<(DeliveryId, Attempt)>) -> Result<Vec<DueDelivery>> {
        self.store.claim_deliveries(self.now(), limit, ended).await.map_err(store_error)
    }

    /// Records what tries of claimed deliveries got, together. For the delivery task.
    ///
    /// # Errors
    /// Store failures.
    pub async fn finish_deliveries(&self, tries: Vec<(DeliveryId, Attempt)>) -> Result<()> {
        self.store.finish_deliveries(tries).await.map_err(store_error)
    }

    /// Removes up to `limit` events older than `retention` that no delivery still needs
    /// (D47); answers how many it removed.
    ///
    /// # Errors
    /// Store failures.
    pub async fn remove_old_events(&self, retention: SignedDuration, limit: u32) -> Result<u64> {
        let before = self.now().saturating_sub(retention).unwrap_or(self.now());
        self.store.remove_old_events(before, limit).await.map_err(store_error)
    }
}
