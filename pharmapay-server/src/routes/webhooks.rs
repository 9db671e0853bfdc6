//! `/api/webhooks` (D47): where events are posted, their secrets, their deliveries and a
//! delivery's retry, with their bodies, DTOs and operations. The delivery itself is
//! `crate::webhooks`'.

use pharmapay_core::Action::{Create, Delete, Read, Update};
use pharmapay_core::Collection::Webhook as Webhooks;
use pharmapay_core::error::IdempotencyClash;
use pharmapay_core::events::{ALL_EVENTS, EVENT_TYPES};
use pharmapay_core::idempotency::{Created, IdempotencyRequest, Replay};
use pharmapay_core::ids::{DeliveryId, WebhookId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::text::TEXT_MAX;
use pharmapay_core::webhooks::{
    Delivery, DeliveryFailure, DeliveryQuery, DeliveryStatus, NewWebhook, URL_MAX, Webhook, WebhookWithSecret,
};
use pharmapay_core::{Error, PharmaPay, Principal, Store};
use serde::{Deserialize, Serialize};

use super::{Call, Route, each, ok};
use crate::decode::{List, ReasonBody, Slot, bodies};
use crate::dto::{PageDto, instant, optional_instant, page_schema};
use crate::guard::needs;
use crate::http::Reply;
use crate::openapi::schema::{self, names};
use crate::openapi::{
    IDEMPOTENCY_KEY, Json, Operation, PAGE, Schema, Tag, created, describe, link_by_id, no_content, object, page_size,
    path_id, schema_ref,
};
use crate::problem::ApiError;

/// A webhook's create, whose replay (D23) shows the recorded secret only while it is still
/// the webhook's: after a rotation or a delete the replay is a 409 (D51).
async fn create_webhook<S: Store>(
    engine: &PharmaPay<S>,
    principal: &Principal,
    webhook: NewWebhook,
    key: Option<&IdempotencyRequest>,
) -> Result<Created<WebhookWithSecret>, Error> {
    let result = engine.create_webhook(principal, webhook, key).await?;
    if let Created::Replayed(Replay::Recorded(body)) = &result {
        let shown: ShownSecret =
            serde_json::from_slice(body).map_err(|_| Error::Idempotency(IdempotencyClash::Superseded))?;
        engine.check_webhook_replay(WebhookId(shown.id), &shown.secret).await?;
    }
    Ok(result)
}

/// What a recorded create answered: the webhook's id and the secret shown.
#[derive(Deserialize)]
struct ShownSecret {
    id: i64,
    secret: String,
}

/// The webhook routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/webhooks", needs(Webhooks, Read), list, |call| {
            Box::pin(call.read(PharmaPay::list_webhooks, each(WebhookDto::from)))
        }),
        Route::post("/api/webhooks", needs(Webhooks, Create), create, |call| {
            let id_of = |created: &WebhookWithSecret| created.webhook.id.get();
            Box::pin(call.create("webhooks", create_webhook, id_of, WebhookSecretDto::from))
        }),
        Route::get("/api/webhooks/{id}", needs(Webhooks, Read), get, |call| {
            Box::pin(call.by_id(PharmaPay::get_webhook, WebhookDto::from))
        }),
        Route::put("/api/webhooks/{id}", needs(Webhooks, Update), update, |call| {
            Box::pin(call.replace(PharmaPay::update_webhook, WebhookDto::from))
        }),
        Route::delete("/api/webhooks/{id}", needs(Webhooks, Delete), delete, |call| {
            Box::pin(call.delete(PharmaPay::delete_webhook))
        }),
        Route::post("/api/webhooks/{id}/rotate-secret", needs(Webhooks, Update), rotate, |call| {
            Box::pin(call.by_id(PharmaPay::rotate_webhook_secret, WebhookSecretDto::from))
        }),
        Route::get("/api/webhooks/{id}/deliveries", needs(Webhooks, Read), deliveries, |call| {
            Box::pin(list_deliveries(call))
        }),
        Route::post("/api/webhooks/{id}/deliveries/{deliveryId}/retry", needs(Webhooks, Update), retry, |call| {
            Box::pin(retry_delivery(call))
        }),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Webhooks");

async fn list_deliveries<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let webhook = WebhookId(call.req.id("id")?);
    let query = DeliveryQuery::from_params(&call.req.query)?;
    let page = call.app.engine.list_deliveries(principal, webhook, &query).await?;
    Ok(ok(&PageDto::from_page(page, DeliveryDto::from)))
}

async fn retry_delivery<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let (webhook, delivery) = (WebhookId(call.req.id("id")?), DeliveryId(call.req.id("deliveryId")?));
    let delivery = call.app.engine.retry_delivery(principal, webhook, delivery).await?;
    Ok(ok(&DeliveryDto::from(delivery)))
}

bodies! {
    /// A webhook's create and replacement (D47).
    WebhookBody => NewWebhook as "WebhookInput":
        "A webhook's create and full replacement (D47). Unknown fields are ignored." {
        url: Slot => string("url") as url_input(),
        events: List => strings("events") as events_input(),
        description: Slot => optional_string("description")
            as schema::free_text("Free text.").with("maxLength", TEXT_MAX),
        is_active: bool => flag_or("isActive", true)
            as "Whether events are delivered; absent or null means true. A paused webhook's events wait for it.",
    }
}

fn url_input() -> Json {
    object! {
        "maxLength": URL_MAX,
        "pattern": "^\\s*[hH][tT][tT][pP][sS]?://\\S+\\s*$",
        "format": "uri",
        "description": format!(
            "The http or https URL events are posted to, at most {URL_MAX} characters, without credentials. Loopback, \
             private and link-local addresses are refused when a delivery is tried (checked on the address the name \
             resolves to), unless the server runs with PHARMAPAY_WEBHOOK_ALLOW_PRIVATE=true."
        ),
    }
}

/// What a webhook's `events` may hold: `*` or an event type.
fn event_filters() -> Vec<&'static str> {
    let mut types: Vec<&str> = vec![ALL_EVENTS];
    types.extend(EVENT_TYPES);
    types
}

fn events_input() -> Json {
    let types = event_filters();
    object! {
        "minItems": 1,
        "maxItems": types.len(),
        "description": "The event types delivered, exactly as written here, or [\"*\"] for every type; duplicates \
            are dropped.",
        "items": object! { "type": "string", "enum": types },
    }
}

fn webhook_id() -> Json {
    path_id("id", "Webhook id.")
}

fn list() -> Operation {
    TAG.operation("listWebhooks", "List webhooks", ". Every webhook, by id; secrets are never listed.")
        .ok("The webhooks.", schema::array(schema_ref::<WebhookDto>()))
        .errors(&[401, 403, 503])
}

fn create() -> Operation {
    TAG.operation(
        "createWebhook",
        "Create a webhook",
        ". Events written from now on that it takes are posted to `url` (D47), signed as Standard Webhooks sign them: \
         headers `webhook-id` (the event id), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` and \
         the base64 of the HMAC-SHA256, keyed with the secret's bytes after `whsec_`, of `<id>.<timestamp>.<body>`). \
         A try that is not answered with a 2xx within 10 s is made again after about 5 s, 30 s, 2 min, 10 min, 1 h, \
         then hourly for a day. Events of a type the caller could not read in the feed (D51; `*` holds every type) \
         are a 403 naming each permission missing; admins are not limited. The answer alone shows `secret`. Accepts \
         an `Idempotency-Key` (D23): a replay shows the secret only while it is still the webhook's, and is a 409 \
         after a rotation or a delete (D51).",
    )
    .parameter(IDEMPOTENCY_KEY)
    .body::<WebhookBody>()
    .response(
        "201",
        created(
            "The webhook, with its secret.",
            schema_ref::<WebhookSecretDto>(),
            link_by_id("getWebhook", "The webhook."),
        ),
    )
    .errors(&[400, 401, 403, 409, 413, 415, 422, 503])
}

fn get() -> Operation {
    TAG.operation("getWebhook", "Get a webhook", ". 404 when missing.")
        .path_parameter(webhook_id())
        .ok("The webhook.", schema_ref::<WebhookDto>())
        .errors(&[400, 401, 403, 404, 503])
}

fn update() -> Operation {
    TAG.operation(
        "updateWebhook",
        "Replace a webhook",
        ". Every field as on create, with the same 403 for events the caller could not read (D51); its secret and \
         its deliveries stay. 404 when missing.",
    )
    .path_parameter(webhook_id())
    .body::<WebhookBody>()
    .ok("The webhook as it now stands.", schema_ref::<WebhookDto>())
    .errors(&[400, 401, 403, 404, 413, 415, 503])
}

fn delete() -> Operation {
    TAG.operation(
        "deleteWebhook",
        "Delete a webhook",
        ". Removes it and its deliveries; the optional body `{reason}` is kept in the audit log (D16). 404 when missing.",
    )
    .path_parameter(webhook_id())
    .optional_body::<ReasonBody>()
    .response("204", no_content("Deleted; no body."))
    .errors(&[400, 401, 403, 404, 413, 415, 503])
}

fn rotate() -> Operation {
    TAG.operation(
        "rotateWebhookSecret",
        "Rotate a webhook's secret",
        ". A new secret, shown in this answer alone; tries from now on are signed with it. 404 when missing.",
    )
    .path_parameter(webhook_id())
    .ok("The webhook, with its new secret.", schema_ref::<WebhookSecretDto>())
    .errors(&[400, 401, 403, 404, 503])
}

fn deliveries() -> Operation {
    TAG.operation(
        "listWebhookDeliveries",
        "List a webhook's deliveries",
        ". Newest event first, paginated (D8). 404 when the webhook is missing.",
    )
    .path_parameter(webhook_id())
    .parameter(PAGE)
    .parameter(page_size(DeliveryQuery::PAGE_SIZE))
    .ok("A page of deliveries.", schema_ref::<PageDto<DeliveryDto>>())
    .errors(&[400, 401, 403, 404, 503])
}

fn retry() -> Operation {
    TAG.operation(
        "retryWebhookDelivery",
        "Retry a delivery",
        ". Makes the delivery `Pending` again, due at once, with a day of tries before it (D47). 404 when the webhook \
         is missing or the delivery is not one of its.",
    )
    .path_parameter(webhook_id())
    .path_parameter(path_id("deliveryId", "Delivery id: a delivery of this webhook, else 404."))
    .ok("The delivery as it now stands.", schema_ref::<DeliveryDto>())
    .errors(&[400, 401, 403, 404, 503])
}

/// A webhook (D47); its secret is shown by its create and a rotation alone.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDto {
    id: i64,
    url: String,
    events: Vec<String>,
    description: Option<String>,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<Webhook> for WebhookDto {
    fn from(webhook: Webhook) -> Self {
        Self {
            id: webhook.id.get(),
            url: webhook.url,
            events: webhook.events,
            description: webhook.description,
            is_active: webhook.is_active,
            created_at: webhook.created_at,
        }
    }
}

describe! {
    WebhookDto as "Webhook": "A webhook (D47)." {
        id: schema::id("Webhook id."),
        url: schema::text(URL_MAX, "Where events are posted."),
        events: schema::array(object! { "type": "string", "enum": event_filters() })
            .with("maxItems", EVENT_TYPES.len() + 1)
            .with("description", "The event types delivered, or [\"*\"] for all."),
        description: schema::nullable_text(TEXT_MAX, "Free text, or null."),
        is_active: schema::boolean("Whether events are delivered."),
        created_at: schema::instant("When created."),
    }
}

/// A webhook with its secret: the answer of its create and of a rotation.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSecretDto {
    #[serde(flatten)]
    webhook: WebhookDto,
    secret: String,
}

impl From<WebhookWithSecret> for WebhookSecretDto {
    fn from(created: WebhookWithSecret) -> Self {
        Self { webhook: WebhookDto::from(created.webhook), secret: created.secret.expose().to_owned() }
    }
}

describe! {
    WebhookSecretDto as "WebhookWithSecret": "A webhook with its signing secret, shown this once (D47)." {
        webhook: crate::openapi::flatten::<WebhookDto>(),
        secret: object! {
            "type": "string",
            "pattern": "^whsec_[A-Za-z0-9+/]{43}=$",
            "maxLength": 50,
            "description": "`whsec_` and the base64 of 32 random bytes: sign-checks use the decoded bytes.",
        },
    }
}

/// One event's delivery to a webhook (D47).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryDto {
    id: i64,
    event_id: i64,
    r#type: String,
    status: &'static str,
    attempts: u32,
    last_status_code: Option<u16>,
    last_error: Option<String>,
    #[serde(serialize_with = "optional_instant")]
    next_attempt_at: Option<Timestamp>,
    #[serde(serialize_with = "optional_instant")]
    delivered_at: Option<Timestamp>,
}

impl From<Delivery> for DeliveryDto {
    fn from(delivery: Delivery) -> Self {
        Self {
            id: delivery.id.get(),
            event_id: delivery.event_id,
            r#type: delivery.kind,
            status: delivery.status.name(),
            attempts: delivery.attempts,
            last_status_code: delivery.last_status_code,
            last_error: delivery.last_error,
            next_attempt_at: delivery.next_attempt_at,
            delivered_at: delivery.delivered_at,
        }
    }
}

describe! {
    DeliveryDto as "WebhookDelivery": "One event's delivery to a webhook (D47)." {
        id: schema::id("Delivery id."),
        event_id: schema::id("The event's id in the feed."),
        r#type: schema::one_of(&EVENT_TYPES, "The event's type."),
        status: schema::one_of(
            &names(&[DeliveryStatus::Pending, DeliveryStatus::Delivered, DeliveryStatus::Failed], DeliveryStatus::name),
            "Pending until a 2xx answer (Delivered) or a day of tries (Failed).",
        ),
        attempts: schema::count("The tries made."),
        last_status_code: object! {
            "type": ["integer", "null"], "format": "int32", "minimum": 100, "maximum": 599,
            "description": "The last try's answer status, or null when it got none.",
        },
        last_error: schema::nullable_text(
            TEXT_MAX,
            format!(
                "Why the last try failed, or null: one of {} (D51); a failed try is tried again as `nextAttemptAt` says.",
                DeliveryFailure::TEXTS.map(|text| format!("`{text}`")).join(", ")
            ),
        ),
        next_attempt_at: schema::nullable_instant("When it is tried next, or null unless pending."),
        delivered_at: schema::nullable_instant("When it was delivered, or null."),
    }
}

impl Schema for PageDto<DeliveryDto> {
    const NAME: &'static str = "WebhookDeliveryPage";

    fn schema() -> Json {
        page_schema::<DeliveryDto>("A page of a webhook's deliveries, newest first.")
    }
}
