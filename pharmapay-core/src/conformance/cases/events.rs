//! Events (D47): every committed write of the ledger announces its record in its own
//! transaction, refused writes announce nothing, and a reader following `after` sees every
//! event once, in increasing ids, however writes interleave.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::conformance::{Fixture, amount, created};
use crate::error::Error;
use crate::events::{Event, EventQuery, MAX_EVENT_PAGE};
use crate::store::{Store, UniqueKey};
use crate::transactions::TransactionType;
use crate::vendor_payments::NewVendorPayment;
use crate::vendors::{NewVendor, VendorType};
use crate::webhooks::NewWebhook;

impl<S: Store> Fixture<S> {
    /// Every event after `after`, read a page at a time.
    pub(crate) async fn events_after(&self, mut after: i64) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let query = EventQuery { after, limit: MAX_EVENT_PAGE };
            let page = self.engine.list_events(&self.admin, &query).await.expect("the feed reads");
            if page.items.is_empty() {
                assert_eq!(page.next_after, after, "an empty read stays where it was");
                return events;
            }
            after = page.next_after;
            events.extend(page.items);
        }
    }

    /// The last event id now.
    pub(crate) async fn last_event(&self) -> i64 {
        self.events_after(0).await.last().map_or(0, |event| event.id)
    }

    /// The types and data of the events after `after`.
    async fn announced(&self, after: i64) -> Vec<(String, Value)> {
        let events = self.events_after(after).await;
        let mut ids = events.iter().map(|event| event.id);
        let first = ids.next();
        assert!(ids.try_fold(first, |last, id| (Some(id) > last).then_some(Some(id))).is_some(), "{events:?}");
        events
            .into_iter()
            .map(|event| (event.kind, serde_json::from_str(&event.data).expect("an event's data is JSON")))
            .collect()
    }
}

fn kinds(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(kind, _)| kind.as_str()).collect()
}

/// The ledger's writes announce themselves with their records as they then stand; refused writes
/// announce nothing; the feed needs `Webhook:Read`.
pub async fn writes_announce_their_records_and_refusals_nothing<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let start = fx.last_event().await;
    assert_eq!(fx.announced(start).await, [], "onboarding announces nothing");

    let vendor = fx.vendor("Shree Medicals").await;
    let invoice = fx.invoice(vendor.id, "SM-1", "1000", "2024-06-30T00:00:00Z").await;
    let taken =
        fx.engine.create_invoice(&fx.admin, fx.new_invoice(vendor.id, "sm-1", "5", "2024-06-30T00:00:00Z"), None);
    assert!(matches!(taken.await, Err(Error::Conflict(UniqueKey::InvoiceNumber))));
    let part = fx.pay(invoice.id, "400").await;
    let rest = fx.pay(invoice.id, "600").await;
    let announced = fx.announced(start).await;
    assert_eq!(
        kinds(&announced),
        ["vendor.created", "invoice.created", "transaction.created", "transaction.created", "invoice.paid"],
        "the refused invoice announces nothing; the payment in full announces the invoice paid"
    );
    assert_eq!(announced[0].1["name"], "Shree Medicals");
    assert_eq!(announced[1].1["status"], invoice.status.name());
    assert_eq!(announced[1].1["vendor"], "Shree Medicals", "an invoice carries its vendor (D13)");
    assert_eq!((announced[2].1["id"].clone(), announced[2].1["amount"].clone()), (part.id.get().into(), "400".into()));
    assert_eq!(announced[3].1["id"], rest.id.get());
    assert_eq!((announced[4].1["status"].clone(), announced[4].1["pending"].clone()), ("FullyPaid".into(), "0".into()));

    let mark = fx.last_event().await;
    fx.engine.delete_transaction(&fx.admin, rest.id, Some("twice".into())).await.expect("deleted");
    let renamed = NewVendor::new("Shree Medicals Pvt", VendorType::Wholesaler);
    fx.engine.update_vendor(&fx.admin, vendor.id, renamed).await.expect("updated");
    let second = fx.invoice(vendor.id, "SM-2", "300", "2024-07-30T00:00:00Z").await;
    let payment = NewVendorPayment {
        amount: amount("900"),
        transaction_date: fx.engine.now(),
        transaction_type: TransactionType::NetBanking,
        reference: None,
        description: None,
        allocations: None,
        branch_id: None,
    };
    created(fx.engine.create_vendor_payment(&fx.admin, vendor.id, payment, None).await.expect("paid"));
    let announced = fx.announced(mark).await;
    assert_eq!(
        kinds(&announced),
        [
            "transaction.deleted",
            "vendor.updated",
            "invoice.created",
            "vendorPayment.created",
            "invoice.paid",
            "invoice.paid"
        ],
        "a vendor payment announces itself once, and each invoice it pays in full"
    );
    assert_eq!(announced[0].1["isActive"], false, "a deleted record as it stands soft-deleted");
    assert_eq!(announced[1].1["name"], "Shree Medicals Pvt");
    assert_eq!(announced[3].1["parts"], 2);
    let paid: BTreeSet<i64> = announced[4..].iter().map(|(_, data)| data["id"].as_i64().unwrap()).collect();
    assert_eq!(paid, BTreeSet::from([invoice.id.get(), second.id.get()]));

    let mark = fx.last_event().await;
    let again = fx.engine.delete_transaction(&fx.admin, rest.id, None).await;
    assert!(matches!(again, Err(Error::NotFound { .. })), "{again:?}");
    assert_eq!(fx.announced(mark).await, [], "a refused delete announces nothing");

    let (_, pharmacist) = fx.pharmacist("clerk@example.com").await;
    let query = EventQuery { after: 0, limit: 10 };
    assert!(matches!(fx.engine.list_events(&pharmacist, &query).await, Err(Error::Forbidden { .. })));
}

/// Writes racing on every connection a store has: a reader following `after` while they run,
/// then to the end, sees every write's event exactly once, in increasing ids.
pub async fn concurrent_writes_announce_once_each_in_increasing_ids<S: Store>(store: S) {
    const WRITERS: usize = 6;
    const EACH: usize = 12;
    let fx = Arc::new(Fixture::new(store).await);
    let start = fx.last_event().await;
    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let fx = Arc::clone(&fx);
        writers.push(tokio::spawn(async move {
            for n in 0..EACH {
                fx.vendor(&format!("Vendor {writer}-{n}")).await;
            }
        }));
    }
    let reader = {
        let fx = Arc::clone(&fx);
        tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut after = start;
            while seen.len() < WRITERS * EACH {
                let query = EventQuery { after, limit: 7 };
                let page = fx.engine.list_events(&fx.admin, &query).await.expect("the feed reads");
                after = page.next_after;
                seen.extend(page.items);
                tokio::task::yield_now().await;
            }
            seen
        })
    };
    for writer in writers {
        writer.await.expect("a writer finishes");
    }
    let seen = reader.await.expect("the reader finishes");
    let ids: Vec<i64> = seen.iter().map(|event| event.id).collect();
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "ids increase: {ids:?}");
    let names: BTreeSet<String> = seen
        .iter()
        .map(|event| serde_json::from_str::<Value>(&event.data).expect("JSON")["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.len(), WRITERS * EACH, "each write once");
    assert_eq!(fx.events_after(*ids.last().unwrap()).await, [], "nothing after the last write's event");
}

/// D51 amending D47: the feed answers only the events whose resource the caller may read, and
/// `nextAfter` moves past those left out; a webhook may take only events its author could read
/// in the feed (`*` holding them all), a 403 naming each permission missing; admins are not
/// limited.
pub async fn the_feed_and_webhooks_show_only_what_the_caller_may_read<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let start = fx.last_event().await;
    let vendor = fx.vendor("Cipla").await;
    let invoice = fx.invoice(vendor.id, "F-1", "100", "2024-06-01T00:00:00Z").await;
    fx.pay(invoice.id, "10").await;
    let last = fx.last_event().await;
    let codes = ["Webhook:Read", "Webhook:Create", "Webhook:Update", "Vendor:Read"];
    let (_, watcher) = fx.user_with("watcher@example.com", &codes).await;
    let read = async |after: i64, limit: u32| {
        let page = fx.engine.list_events(&watcher, &EventQuery { after, limit }).await.expect("the feed reads");
        (page.items.into_iter().map(|event| event.kind).collect::<Vec<_>>(), page.next_after)
    };
    let (kinds, next_after) = read(start, 100).await;
    assert_eq!(kinds, ["vendor.created"], "the invoice's and the payment's events are left out");
    assert_eq!(next_after, last, "nextAfter is the last event examined");
    let (kinds, first) = read(start, 1).await;
    assert_eq!(kinds, ["vendor.created"]);
    assert_eq!(read(first, 1).await, (Vec::<String>::new(), last), "past what it may not read, to the end");
    assert_eq!(read(last, 10).await, (Vec::<String>::new(), last), "nothing after the end");
    let everything = fx.engine.list_events(&fx.admin, &EventQuery { after: start, limit: 100 }).await.unwrap();
    assert_eq!(everything.items.len(), 3, "an admin reads every event: {everything:?}");

    let webhook = |events: &[&str]| NewWebhook {
        url: "https://books.example.com/hooks".into(),
        events: events.iter().map(|kind| (*kind).to_owned()).collect(),
        description: None,
        is_active: true,
    };
    let missing = |result: Result<(), Error>| match result {
        Err(Error::Forbidden { required }) => required.to_string(),
        other => panic!("expected 403, got {other:?}"),
    };
    let all = missing(fx.engine.create_webhook(&watcher, webhook(&["*"]), None).await.map(drop));
    for needed in ["Invoice:Read", "Transaction:Read", "VendorCredit:Read", "BankStatement:Read"] {
        assert!(all.contains(needed), "{needed} in {all}");
    }
    assert!(!all.contains("Vendor:Read"), "held: {all}");
    let paid =
        missing(fx.engine.create_webhook(&watcher, webhook(&["vendor.created", "invoice.paid"]), None).await.map(drop));
    assert_eq!(paid, "Invoice:Read");
    let made = fx.engine.create_webhook(&watcher, webhook(&["vendor.created"]), None).await.expect("readable events");
    let id = created(made).webhook.id;
    let widened = fx.engine.update_webhook(&watcher, id, webhook(&["bankStatement.updated"])).await.map(drop);
    assert_eq!(missing(widened), "Transaction:Read, BankStatement:Read");
    fx.engine.create_webhook(&fx.admin, webhook(&["*"]), None).await.expect("admins are not limited");
}
