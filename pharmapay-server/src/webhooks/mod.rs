//! Webhook delivery (D47): a background task of the server that queues the deliveries of new
//! events, claims those due, posts each with its Standard Webhooks signature, and records what
//! each try got; and, every few minutes, removes events older than the retention.
//!
//! The work is shared through the database: queuing and claims are decided one server at a
//! time (`pharmapay_core::store::WebhookStore`), so servers sharing a database never try one
//! delivery at once. A try runs in its own task, at most [`TRIES_AT_ONCE`] at once across the
//! server and a few per webhook, with a 10 s timeout, so a slow or dead receiver holds a few
//! slots for seconds and never a request handler.
//!
//! `client.rs` posts (hyper's client over rustls, with a resolver that refuses internal
//! addresses); `sign.rs` signs.

pub mod client;
pub mod sign;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use pharmapay_core::Store;
use pharmapay_core::domain::webhook::{Attempt, DueDelivery};
use pharmapay_core::jiff::SignedDuration;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::app::App;
use crate::routes::events::EventDto;
use client::Deliverer;

/// Tries in flight at once across the server.
pub const TRIES_AT_ONCE: usize = 64;

/// Events queued per round.
const QUEUE_BATCH: u32 = 1_000;

/// How long the task rests when it found nothing to do, unless a try ends first.
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
pub fn spawn<S: Store>(app: Arc<App<S>>, settings: DeliverySettings) -> JoinHandle<()> {
    tokio::spawn(async move {
        let deliverer = Deliverer::new(settings.allow_private);
        let slots = Arc::new(Semaphore::new(TRIES_AT_ONCE));
        let ended = Arc::new(Notify::new());
        let mut next_retention = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let mut busy = false;
            match app.engine.queue_deliveries(QUEUE_BATCH).await {
                Ok(queued) => busy |= queued > 0,
                Err(error) => warn!(%error, "could not queue webhook deliveries"),
            }
            let free = slots.available_permits();
            if free == 0 {
                // Every slot is taken: wait for a try to end.
                drop(Arc::clone(&slots).acquire_owned().await);
                continue;
            }
            match app.engine.claim_deliveries(u32::try_from(free).unwrap_or(u32::MAX)).await {
                Ok(due) => {
                    busy |= !due.is_empty();
                    for delivery in due {
                        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else { break };
                        let (app, deliverer, ended) = (Arc::clone(&app), deliverer.clone(), Arc::clone(&ended));
                        tokio::spawn(async move {
                            attempt(&app, &deliverer, delivery).await;
                            drop(slot);
                            ended.notify_one();
                        });
                    }
                }
                Err(error) => warn!(%error, "could not claim webhook deliveries"),
            }
            if tokio::time::Instant::now() >= next_retention {
                remove_old_events(&app, settings.retention).await;
                next_retention = tokio::time::Instant::now() + RETENTION_EVERY;
            }
            if !busy {
                tokio::select! {
                    () = tokio::time::sleep(IDLE) => {}
                    () = ended.notified() => {}
                }
            }
        }
    })
}

/// Posts one claimed delivery and records what it got.
async fn attempt<S: Store>(app: &App<S>, deliverer: &Deliverer, delivery: DueDelivery) {
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
    let attempt = match outcome {
        Ok(status) if (200..300).contains(&status) => Attempt { at, status_code: Some(status), error: None },
        Ok(status) => Attempt { at, status_code: Some(status), error: Some(format!("answered {status}")) },
        Err(error) => Attempt { at, status_code: None, error: Some(error) },
    };
    match &attempt.error {
        None => debug!(webhook = %delivery.webhook_id, event = %id, %kind, "delivered"),
        Some(error) => {
            info!(webhook = %delivery.webhook_id, event = %id, %kind, %error, "delivery failed; retried later")
        }
    }
    if let Err(error) = app.engine.finish_delivery(delivery.id, attempt).await {
        warn!(%error, delivery = %delivery.id, "could not record a delivery's try; it is tried again once its claim ends");
    }
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
