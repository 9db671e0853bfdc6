//! Webhook delivery (D47): a background task of the server that queues the deliveries of new
//! events, claims those due, posts each with its Standard Webhooks signature, and records what
//! each try got; and, every few minutes, removes events older than the retention.
//!
//! The work is shared through the database: queuing and claims are decided one server at a
//! time (`pharmapay_core::store::WebhookStore`), so servers sharing a database never try one
//! delivery at once. A try runs in its own task, at most [`TRIES_AT_ONCE`] claimed at once
//! across the server and 4 tries of a webhook at once, with a 10 s timeout, so a slow or dead
//! receiver holds a few slots for seconds and never a request handler.
//!
//! `client.rs` posts (hyper's client over rustls, with a resolver that refuses internal
//! addresses); `sign.rs` signs.

pub mod client;
pub mod sign;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use pharmapay_core::Store;
use pharmapay_core::domain::webhook::{Attempt, DueDelivery};
use pharmapay_core::ids::{DeliveryId, WebhookId};
use pharmapay_core::jiff::SignedDuration;
use pharmapay_core::rules::webhooks::IN_FLIGHT_PER_WEBHOOK;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::app::App;
use crate::routes::events::EventDto;
use client::Deliverer;

/// Tries in flight at once across the server.
pub const TRIES_AT_ONCE: usize = 64;

/// Events queued per round.
const QUEUE_BATCH: u32 = 1_000;

/// How often new events are queued while there are fewer than a batch of them.
const QUEUE_EVERY: Duration = Duration::from_millis(100);

/// How long the task rests when it claimed nothing, unless a try ends first.
const IDLE: Duration = Duration::from_millis(250);

/// How often old events are looked for, and how many one statement removes.
const RETENTION_EVERY: Duration = Duration::from_secs(600);
const RETENTION_BATCH: u32 = 500;

/// How the delivery task runs.
#[derive(Clone, Copy, Debug)]
pub struct DeliverySettings {
    /// Whether deliveries may reach loopback, private and link-local addresses.
    pub allow_private: bool,
    /// How long events are kept once delivered (D47).
    pub retention: SignedDuration,
}

/// Starts the delivery task over `app`'s engine; it runs until aborted.
///
/// Each round queues the deliveries of new events (at most every [`QUEUE_EVERY`] unless a full
/// batch waits), then records the tries that ended since the last round and claims what slots
/// are free, in one transaction; a round that claimed nothing rests until a try ends or [`IDLE`]
/// has passed.
pub fn spawn<S: Store>(app: Arc<App<S>>, settings: DeliverySettings) -> JoinHandle<()> {
    tokio::spawn(async move {
        let deliverer = Deliverer::new(settings.allow_private);
        let slots = Arc::new(Semaphore::new(TRIES_AT_ONCE));
        let (ended, mut finished) = mpsc::unbounded_channel::<(DeliveryId, Attempt)>();
        let mut next_retention = tokio::time::Instant::now() + Duration::from_secs(60);
        let mut tries = Vec::new();
        let mut next_queue = tokio::time::Instant::now();
        // Each webhook's tries, a few at once (D47), in the order they were claimed.
        let mut per_webhook: HashMap<WebhookId, Arc<Semaphore>> = HashMap::new();
        loop {
            while let Ok(tried) = finished.try_recv() {
                tries.push(tried);
            }
            if tokio::time::Instant::now() >= next_queue {
                match app.engine.queue_deliveries(QUEUE_BATCH).await {
                    // A full batch leaves more to queue at once; otherwise new events wait a
                    // moment and are queued together.
                    Ok(queued) if queued == QUEUE_BATCH => {}
                    Ok(_) => next_queue = tokio::time::Instant::now() + QUEUE_EVERY,
                    Err(error) => warn!(%error, "could not queue webhook deliveries"),
                }
            }
            let mut claimed = 0;
            let free = slots.available_permits();
            if free > 0 || !tries.is_empty() {
                let recorded = std::mem::take(&mut tries);
                match app.engine.claim_deliveries(u32::try_from(free).unwrap_or(u32::MAX), recorded).await {
                    Ok(due) => {
                        claimed = due.len();
                        for delivery in due {
                            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else { break };
                            let turns = Arc::clone(
                                per_webhook
                                    .entry(delivery.webhook_id)
                                    .or_insert_with(|| Arc::new(Semaphore::new(IN_FLIGHT_PER_WEBHOOK))),
                            );
                            let (app, deliverer, ended) = (Arc::clone(&app), deliverer.clone(), ended.clone());
                            tokio::spawn(async move {
                                let id = delivery.id;
                                let Ok(turn) = turns.acquire_owned().await else { return };
                                let attempt = attempt(&app, &deliverer, delivery).await;
                                drop((turn, slot));
                                let _ = ended.send((id, attempt));
                            });
                        }
                    }
                    Err(error) => warn!(
                        %error,
                        "could not record tries or claim deliveries; each try is made again once its claim ends"
                    ),
                }
            }
            if tokio::time::Instant::now() >= next_retention {
                remove_old_events(&app, settings.retention).await;
                next_retention = tokio::time::Instant::now() + RETENTION_EVERY;
            }
            if claimed == 0 {
                tokio::select! {
                    () = tokio::time::sleep(IDLE) => {}
                    tried = finished.recv() => tries.extend(tried),
                }
            }
        }
    })
}

/// Posts one claimed delivery and answers what the try got.
async fn attempt<S: Store>(app: &App<S>, deliverer: &Deliverer, delivery: DueDelivery) -> Attempt {
    let id = delivery.event.id.to_string();
    let kind = delivery.event.kind.clone();
    let body = serde_json::to_vec(&EventDto::from(delivery.event)).unwrap_or_default();
    let timestamp = app.engine.now().as_second();
    let headers = [
        ("webhook-id", id.clone()),
        ("webhook-timestamp", timestamp.to_string()),
        ("webhook-signature", sign::signature(&delivery.secret, &id, timestamp, &body)),
    ];
    let outcome = deliverer.post(&delivery.url, &headers, Bytes::from(body)).await;
    let at = app.engine.now();
    let attempt = Attempt::ended(at, outcome);
    match &attempt.error {
        None => debug!(webhook = %delivery.webhook_id, event = %id, %kind, "delivered"),
        Some(error) => {
            info!(webhook = %delivery.webhook_id, event = %id, %kind, %error, "delivery failed; retried later")
        }
    }
    attempt
}

/// Removes the events older than `retention` that no delivery needs, a batch at a time.
async fn remove_old_events<S: Store>(app: &App<S>, retention: SignedDuration) {
    let mut removed = 0;
    loop {
        match app.engine.remove_old_events(retention, RETENTION_BATCH).await {
            Ok(count) => {
                removed += count;
                if count < u64::from(RETENTION_BATCH) {
                    break;
                }
                tokio::task::yield_now().await;
            }
            Err(error) => {
                warn!(%error, "could not remove old events");
                break;
            }
        }
    }
    if removed > 0 {
        info!(removed, "old events removed");
    }
}
