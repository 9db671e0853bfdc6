//! Webhook delivery (D47): a background task of the server that queues the deliveries of new
//! events, claims those due, posts each with its Standard Webhooks signature, and records what
//! each try got; and, every few minutes, removes events older than the retention.
//!
//! The work is shared through the database: queuing and claims are decided one server at a
//! time (`pharmapay_core::store::WebhookStore`), so servers sharing a database never try one
//! delivery at once. A try runs in its own task with a 10 s timeout, never in a request
//! handler. A server holds up to `CLAIMED_PER_WEBHOOK` deliveries of a webhook claimed and
//! tries `IN_FLIGHT_PER_WEBHOOK` of them at once, the rest waiting for that webhook's turns
//! alone; it claims no more than `webhooks::rules::claim_limit` allows, so the tries that can
//! run never pass `TRIES_AT_ONCE` and a delivery whose turn is free starts at once. A receiver
//! that never answers so holds only its own webhook's deliveries (D51), and every claimed
//! delivery is tried well within its lease.
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
use pharmapay_core::ids::{DeliveryId, WebhookId};
use pharmapay_core::jiff::SignedDuration;
use pharmapay_core::webhooks::rules::{IN_FLIGHT_PER_WEBHOOK, claim_limit};
use pharmapay_core::webhooks::{Attempt, DueDelivery};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::app::App;
use crate::routes::events::EventDto;
use client::Deliverer;

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

/// The deliveries of one webhook this server holds claimed, and the turns they take to be tried.
struct Held {
    /// Claimed and not yet recorded as tried: waiting for a turn, or being tried.
    claimed: usize,
    /// [`IN_FLIGHT_PER_WEBHOOK`] turns, taken in the order the deliveries were claimed.
    turns: Arc<Semaphore>,
}

/// A try that ended: its webhook, its delivery and what it got.
type Ended = (WebhookId, DeliveryId, Attempt);

/// Starts the delivery task over `app`'s engine; it runs until aborted.
///
/// Each round queues the deliveries of new events (at most every [`QUEUE_EVERY`] unless a full
/// batch waits), then records the tries that ended since the last round and claims what
/// `claim_limit` allows, in one transaction; a round that claimed nothing rests until a try
/// ends or [`IDLE`] has passed.
pub fn spawn<S: Store>(app: Arc<App<S>>, settings: DeliverySettings) -> JoinHandle<()> {
    tokio::spawn(async move {
        let deliverer = Deliverer::new(settings.allow_private);
        let (ended, mut finished) = mpsc::unbounded_channel::<Ended>();
        let mut next_retention = tokio::time::Instant::now() + Duration::from_secs(60);
        let mut tries = Vec::new();
        let mut next_queue = tokio::time::Instant::now();
        let mut held: HashMap<WebhookId, Held> = HashMap::new();
        loop {
            while let Ok(tried) = finished.try_recv() {
                tries.push(release(&mut held, tried));
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
            // D51: ask only for what can start now beside the tries already running, so no
            // webhook's waiting deliveries hold another's share.
            let limit = claim_limit(held.values().map(|hook| hook.claimed));
            if limit > 0 || !tries.is_empty() {
                let recorded = std::mem::take(&mut tries);
                match app.engine.claim_deliveries(u32::try_from(limit).unwrap_or(u32::MAX), recorded).await {
                    Ok(due) => {
                        claimed = due.len();
                        for delivery in due {
                            let hook = held.entry(delivery.webhook_id).or_insert_with(|| Held {
                                claimed: 0,
                                turns: Arc::new(Semaphore::new(IN_FLIGHT_PER_WEBHOOK)),
                            });
                            hook.claimed += 1;
                            let turns = Arc::clone(&hook.turns);
                            let (app, deliverer, ended) = (Arc::clone(&app), deliverer.clone(), ended.clone());
                            tokio::spawn(async move {
                                let (webhook, id) = (delivery.webhook_id, delivery.id);
                                // Waits only for its own webhook's tries claimed before it.
                                let turn = turns.acquire_owned().await;
                                let attempt = attempt(&app, &deliverer, delivery).await;
                                drop(turn);
                                let _ = ended.send((webhook, id, attempt));
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
                    tried = finished.recv() => tries.extend(tried.map(|tried| release(&mut held, tried))),
                }
            }
        }
    })
}

/// Counts the try that ended off its webhook's held deliveries, forgetting a webhook with none
/// left, and answers it for recording.
fn release(held: &mut HashMap<WebhookId, Held>, (webhook, id, attempt): Ended) -> (DeliveryId, Attempt) {
    if let Some(hook) = held.get_mut(&webhook) {
        hook.claimed = hook.claimed.saturating_sub(1);
        if hook.claimed == 0 {
            held.remove(&webhook);
        }
    }
    (id, attempt)
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
