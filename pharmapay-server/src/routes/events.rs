//! `GET /api/events` (D47): the feed of what writes changed, for integrations that poll, with
//! its DTOs and operation. An event's `data` is rendered by [`crate::render::ApiRenderer`].

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Webhook;
use pharmapay_core::events::{DEFAULT_EVENT_PAGE, EVENT_TYPES, Event, EventPage, EventQuery, MAX_EVENT_PAGE};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;
use serde_json::value::RawValue;

use super::Route;
use crate::dto::instant;
use crate::guard::needs;
use crate::openapi::schema;
use crate::openapi::{Json, Operation, Tag, describe, object, query, schema_ref};

/// The event routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![Route::get("/api/events", needs(Webhook, Read), list, |call| {
        Box::pin(call.page_like(EventQuery::from_params, PharmaPay::list_events, EventPageDto::from))
    })]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Events");

fn list() -> Operation {
    TAG.operation(
        "listEvents",
        "Read the event feed",
        " (D47). The events after `after`, in id order: each committed write of vendors, invoices, transactions, \
         vendor payments, vendor credits and bank statements, with the record as its read answered right after the \
         write. Only events the caller may read are answered (D51): `vendor.*` needs `Vendor:Read`, `invoice.*` \
         `Invoice:Read`, `transaction.*` and `vendorPayment.*` `Transaction:Read`, `vendorCredit.*` \
         `VendorCredit:Read`, `bankStatement.*` `BankStatement:Read` and `Transaction:Read`. Ask again with `after` \
         set to `nextAfter`, the id of the last event examined (so it moves past those left out): no event ever \
         becomes visible with an id below one already seen, so a reader that follows `nextAfter` misses none.",
    )
    .ok("The events after `after`.", schema_ref::<EventPageDto>())
    .parameter(query(
        "after",
        "The last id seen; 0 (the default) reads from the oldest event kept. An integer of at least 0, else 400.",
        object! { "type": "integer", "format": "int64", "minimum": 0, "maximum": i64::MAX, "default": 0 },
    ))
    .parameter(query(
        "limit",
        format!("How many events at most, 1 to {MAX_EVENT_PAGE} (default {DEFAULT_EVENT_PAGE}), else 400."),
        object! {
            "type": "integer", "format": "int32", "minimum": 1, "maximum": MAX_EVENT_PAGE, "default": DEFAULT_EVENT_PAGE,
        },
    ))
    .errors(&[400, 401, 403, 503])
}

/// One event (D47); `data` is the record as JSON.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventDto {
    id: i64,
    r#type: String,
    #[serde(serialize_with = "instant")]
    occurred_at: Timestamp,
    data: Box<RawValue>,
}

impl From<Event> for EventDto {
    fn from(event: Event) -> Self {
        // The store keeps what the renderer wrote, always a JSON value.
        let data = RawValue::from_string(event.data)
            .unwrap_or_else(|_| RawValue::from_string("null".to_owned()).expect("null is JSON"));
        Self { id: event.id, r#type: event.kind, occurred_at: event.occurred_at, data }
    }
}

/// A read of the feed (D47).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventPageDto {
    items: Vec<EventDto>,
    next_after: i64,
}

impl From<EventPage> for EventPageDto {
    fn from(page: EventPage) -> Self {
        Self { items: page.items.into_iter().map(EventDto::from).collect(), next_after: page.next_after }
    }
}

fn data_schema() -> Json {
    object! {
        "type": "object",
        "description": "The record as its `GET` answers (a vendor, an invoice with its vendor, a transaction, a vendor \
            payment with its transactions, a vendor credit with its applications, a bank statement with its counts); \
            a deleted one as it stands soft-deleted. `invoice.paid` carries the invoice.",
    }
}

describe! {
    EventDto as "Event": "One event (D47)." {
        id: schema::id("Its place in the feed: ids grow in the order events became visible."),
        r#type: schema::one_of(&EVENT_TYPES, "`<entity>.<action>`."),
        occurred_at: schema::instant("When the write happened."),
        data: data_schema(),
    }
}

describe! {
    EventPageDto as "EventPage": "A read of the event feed (D47)." {
        items: schema::array(schema_ref::<EventDto>())
            .with("maxItems", MAX_EVENT_PAGE)
            .with("description", "The events, in id order."),
        next_after: object! {
            "type": "integer",
            "format": "int64",
            "minimum": 0,
            "maximum": i64::MAX,
            "description": "The last item's id, or the `after` asked with when there is none: the next read's `after`.",
        },
    }
}
