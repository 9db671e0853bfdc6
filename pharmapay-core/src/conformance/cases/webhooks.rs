//! Webhook deliveries (D47): each event queued once per webhook that takes it, claimed by one
//! server at a time and a few of a webhook at once, tried again on schedule, and events kept
//! while a delivery needs them; a webhook's backlog never keeps another's deliveries from a
//! claim (D51).

use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::SignedDuration;

use crate::conformance::{Fixture, created};
use crate::error::Error;
use crate::events::EventQuery;
use crate::ids::WebhookId;
use crate::paging::PageRequest;
use crate::store::Store;
use crate::webhooks::rules::CLAIMED_PER_WEBHOOK;
use crate::webhooks::{Attempt, DeliveryQuery, DeliveryStatus, NewWebhook};

impl<S: Store> Fixture<S> {
    async fn webhook(&self, events: &[&str]) -> WebhookId {
        let webhook = NewWebhook {
            url: "https://books.example.com/hooks".into(),
            events: events.iter().map(|kind| (*kind).to_owned()).collect(),
            description: None,
            is_active: true,
        };
        created(self.engine.create_webhook(&self.admin, webhook, None).await.expect("webhook created")).webhook.id
    }

    async fn statuses(&self, webhook: WebhookId) -> Vec<(i64, DeliveryStatus, u32)> {
        let query = DeliveryQuery { page: PageRequest::new(1, 100), ..DeliveryQuery::default() };
        let page = self.engine.list_deliveries(&self.admin, webhook, &query).await.expect("deliveries listed");
        page.items.iter().map(|delivery| (delivery.event_id, delivery.status, delivery.attempts)).collect()
    }
}

/// Deliveries are queued once, claimed by one claimer at a time and a few of a webhook at once,
/// retried on schedule, and events are removed only once no delivery needs them.
pub async fn deliveries_are_queued_once_and_claimed_by_one_server_at_a_time<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    fx.vendor("Before Any Webhook").await;
    let all = fx.webhook(&["*"]).await;
    let paid_only = fx.webhook(&["invoice.paid"]).await;
    for n in 0..CLAIMED_PER_WEBHOOK + 2 {
        fx.vendor(&format!("Vendor {n}")).await;
    }
    let queued = fx.engine.queue_deliveries(1_000).await.expect("queued");
    assert!(queued as usize >= CLAIMED_PER_WEBHOOK + 2, "{queued}");
    assert_eq!(fx.engine.queue_deliveries(1_000).await.expect("queued again"), 0, "each event once");
    assert_eq!(fx.statuses(all).await.len(), CLAIMED_PER_WEBHOOK + 2, "a webhook gets the events after its creation");
    assert_eq!(fx.statuses(paid_only).await, [], "and only those it takes");

    // Two claimers at once: disjoint, and a few of the webhook in flight in all.
    let (one, two) =
        tokio::join!(fx.engine.claim_deliveries(100, Vec::new()), fx.engine.claim_deliveries(100, Vec::new()));
    let (one, two) = (one.expect("claimed"), two.expect("claimed"));
    let ids: BTreeSet<i64> = one.iter().chain(&two).map(|due| due.id.get()).collect();
    assert_eq!(ids.len(), one.len() + two.len(), "no delivery claimed twice");
    assert_eq!(ids.len(), CLAIMED_PER_WEBHOOK);
    let first = one.iter().chain(&two).map(|due| due.event.id).min().expect("claimed some");
    assert!(one.iter().chain(&two).all(|due| due.url == "https://books.example.com/hooks"));
    assert!(one.iter().chain(&two).all(|due| due.secret.expose().starts_with("whsec_")));
    assert!(
        fx.engine.claim_deliveries(100, Vec::new()).await.expect("claimed").is_empty(),
        "the webhook's slots are taken"
    );

    // One try fails, the others deliver.
    let now = fx.engine.now();
    let tries = one.iter().chain(&two).map(|due| {
        let status = if due.event.id == first { 503 } else { 200 };
        (due.id, Attempt::ended(now, Ok(status)))
    });
    fx.engine.finish_deliveries(tries.collect()).await.expect("finished");
    let statuses = fx.statuses(all).await;
    assert!(statuses.contains(&(first, DeliveryStatus::Pending, 1)), "{statuses:?}");
    assert_eq!(
        statuses.iter().filter(|(_, status, _)| *status == DeliveryStatus::Delivered).count(),
        CLAIMED_PER_WEBHOOK - 1
    );
    let rest = fx.engine.claim_deliveries(100, Vec::new()).await.expect("claimed");
    assert_eq!(rest.len(), 2, "the two not yet tried, not the failed one before its time");
    assert!(rest.iter().all(|due| due.event.id != first));
    let tries = rest.iter().map(|due| (due.id, Attempt { at: now, status_code: Some(204), error: None }));
    fx.engine.finish_deliveries(tries.collect()).await.expect("finished");
    fx.advance(SignedDuration::from_secs(6));
    let again = fx.engine.claim_deliveries(100, Vec::new()).await.expect("claimed");
    assert_eq!(again.iter().map(|due| due.event.id).collect::<Vec<_>>(), [first], "tried again after about 5 s");

    // Retention: a month on, events no pending delivery needs are removed; the pending one stays.
    let before = fx.engine.list_events(&fx.admin, &EventQuery { after: 0, limit: 100 }).await.expect("the feed reads");
    let last = before.next_after;
    fx.advance(SignedDuration::from_hours(24 * 31));
    let removed = fx.engine.remove_old_events(SignedDuration::from_hours(24 * 30), 2).await.expect("removed");
    assert_eq!(removed, 2, "in batches of the size asked");
    while fx.engine.remove_old_events(SignedDuration::from_hours(24 * 30), 2).await.expect("removed") > 0 {}
    let kept = fx.engine.list_events(&fx.admin, &EventQuery { after: 0, limit: 100 }).await.expect("the feed reads");
    assert_eq!(kept.items.iter().map(|event| event.id).collect::<Vec<_>>(), [first], "{kept:?}");
    let next = fx.vendor("After The Clean").await;
    let page = fx.engine.list_events(&fx.admin, &EventQuery { after: first, limit: 100 }).await.expect("read");
    assert!(page.items[0].id > last, "ids are never given twice: {page:?}");
    assert!(page.items[0].data.contains(&next.name));

    // A paused webhook's deliveries wait; a deleted one's are gone.
    let paused = NewWebhook {
        url: "https://books.example.com/hooks".into(),
        events: vec!["*".into()],
        description: None,
        is_active: false,
    };
    fx.engine.update_webhook(&fx.admin, all, paused).await.expect("paused");
    fx.engine.queue_deliveries(1_000).await.expect("queued");
    assert!(fx.engine.claim_deliveries(100, Vec::new()).await.expect("claimed").is_empty(), "paused");
    fx.engine.delete_webhook(&fx.admin, all, None).await.expect("deleted");
    let gone = fx
        .engine
        .list_deliveries(&fx.admin, all, &DeliveryQuery { page: PageRequest::new(1, 10), ..DeliveryQuery::default() })
        .await;
    assert!(matches!(gone, Err(Error::NotFound { .. })));
    let (_, pharmacist) = fx.pharmacist("clerk@example.com").await;
    assert!(matches!(fx.engine.list_webhooks(&pharmacist).await, Err(Error::Forbidden { .. })));
}

/// A webhook whose receiver is slow or dead holds a full claim and a backlog of older events;
/// another webhook's deliveries are still claimed at once, even by a claim of a few (D51).
pub async fn a_webhook_with_a_backlog_leaves_the_claim_to_others<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let slow = fx.webhook(&["*"]).await;
    for n in 0..60 {
        fx.vendor(&format!("Backlog {n}")).await;
    }
    fx.engine.queue_deliveries(1_000).await.expect("queued");
    // The slow webhook's oldest fill its claim; its other 44 stay due.
    let first = fx.engine.claim_deliveries(100, Vec::new()).await.expect("claimed");
    assert_eq!(first.len(), CLAIMED_PER_WEBHOOK);
    assert!(first.iter().all(|due| due.webhook_id == slow));

    // Another webhook's events come after all of the slow one's backlog.
    let healthy = fx.webhook(&["*"]).await;
    for n in 0..3 {
        fx.vendor(&format!("Later {n}")).await;
    }
    fx.engine.queue_deliveries(1_000).await.expect("queued");
    assert_eq!(fx.statuses(slow).await.len(), 63);

    let next = fx.engine.claim_deliveries(2, Vec::new()).await.expect("claimed");
    assert_eq!(next.iter().map(|due| due.webhook_id).collect::<Vec<_>>(), [healthy, healthy], "{next:?}");
    let ids: Vec<i64> = next.iter().map(|due| due.event.id).collect();
    assert!(ids[0] < ids[1], "in id order: {ids:?}");
    let last = fx.engine.claim_deliveries(100, Vec::new()).await.expect("claimed");
    assert_eq!(last.iter().map(|due| due.webhook_id).collect::<Vec<_>>(), [healthy], "the slow one is still full");
}
