//! Webhooks (D47): where events are sent, with the secret they are signed with, and the
//! deliveries of each event to each webhook.

mod engine;
pub mod rules;
pub mod store;

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use jiff::Timestamp;

use crate::error::FieldErrors;
use crate::events::{ALL_EVENTS, EVENT_TYPES, Event};
use crate::ids::{DeliveryId, WebhookId};
use crate::paging::{ListQuery, Unfiltered};
use crate::text::{self, Lines, TEXT_MAX};

/// The longest webhook URL.
pub const URL_MAX: usize = 2_000;

/// A webhook: where the events it subscribes to are sent (D47).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    /// Id.
    pub id: WebhookId,
    /// The `http` or `https` URL events are posted to.
    pub url: String,
    /// The event types it takes, or `["*"]` for all.
    pub events: Vec<String>,
    /// Free text.
    pub description: Option<String>,
    /// False while it is paused: its events wait, undelivered, until it is active again.
    pub is_active: bool,
    /// When created.
    pub created_at: Timestamp,
}

/// A webhook with its secret, as its create and a rotation answer it: the only answers that
/// show the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookWithSecret {
    /// The webhook.
    pub webhook: Webhook,
    /// Its signing secret.
    pub secret: WebhookSecret,
}

/// The fields of a webhook's create and of its replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewWebhook {
    /// The URL.
    pub url: String,
    /// The event types, or `["*"]`.
    pub events: Vec<String>,
    /// Free text.
    pub description: Option<String>,
    /// Whether deliveries are made.
    pub is_active: bool,
}

impl NewWebhook {
    /// Checks and normalises the fields: an `http` or `https` URL with a host, without spaces
    /// or credentials, of at most [`URL_MAX`] characters; at least one event type, each one of
    /// [`EVENT_TYPES`] or `*` alone, duplicates dropped; a description of at most [`TEXT_MAX`]
    /// characters.
    ///
    /// # Errors
    /// The messages by field.
    pub fn validate(self) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let url = self.url.trim().to_owned();
        if let Err(message) = check_url(&url) {
            errors.add("url", message);
        }
        let mut events: Vec<String> = Vec::new();
        for (index, kind) in self.events.iter().enumerate() {
            let kind = kind.trim();
            if kind != ALL_EVENTS && !EVENT_TYPES.contains(&kind) {
                errors.add(format!("events[{index}]"), "must be an event type, such as invoice.paid, or *");
            } else if !events.iter().any(|seen| seen == kind) {
                events.push(kind.to_owned());
            }
        }
        if self.events.is_empty() {
            errors.add("events", "must name at least one event type, or *");
        } else if events.len() > 1 && events.iter().any(|kind| kind == ALL_EVENTS) {
            errors.add("events", "* takes every type and stands alone");
        }
        let description = match text::optional(self.description.as_deref(), TEXT_MAX, Lines::Multi) {
            Ok(description) => description,
            Err(error) => {
                errors.add("description", error.to_string());
                None
            }
        };
        if errors.is_empty() { Ok(Self { url, events, description, is_active: self.is_active }) } else { Err(errors) }
    }

    /// The values written, as a JSON object for the audit log (D22); never the secret.
    pub fn audit_changes(&self) -> String {
        serde_json::json!({
            "url": self.url, "events": self.events, "description": self.description, "isActive": self.is_active,
        })
        .to_string()
    }
}

fn check_url(url: &str) -> Result<(), &'static str> {
    if url.chars().count() > URL_MAX {
        return Err("must be at most 2000 characters");
    }
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
        .ok_or("must be an http or https URL")?;
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("must not hold spaces or control characters");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err("must not carry a user name or password");
    }
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    if host.is_empty() {
        return Err("must name a host");
    }
    if let Some((_, port)) = authority.rsplit_once(':')
        && !port.ends_with(']')
        && port.parse::<u16>().map_or(true, |port| port == 0)
    {
        return Err("must have a port from 1 to 65535");
    }
    Ok(())
}

/// A webhook's signing secret: `whsec_` and the base64 of 32 random bytes (D47), as Standard
/// Webhooks names them. Printing it shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    /// The prefix of every secret.
    pub const PREFIX: &'static str = "whsec_";

    /// A new random secret.
    ///
    /// # Panics
    /// When the operating system has no randomness to give.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the operating system provides randomness");
        Self(format!("{}{}", Self::PREFIX, STANDARD.encode(bytes)))
    }

    /// A secret as kept.
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret's text, to show once or to keep.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The key signatures are made with: the base64 after the prefix, decoded.
    pub fn key(&self) -> Vec<u8> {
        let encoded = self.0.strip_prefix(Self::PREFIX).unwrap_or(&self.0);
        STANDARD.decode(encoded).unwrap_or_else(|_| encoded.as_bytes().to_vec())
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(..)")
    }
}

/// Where a delivery stands (D47).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    /// Not yet answered with a 2xx; tried again on schedule.
    Pending,
    /// Answered with a 2xx.
    Delivered,
    /// Not delivered within 24 hours of tries.
    Failed,
}

impl DeliveryStatus {
    /// The name the API and the stores write.
    pub fn name(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "Pending",
            DeliveryStatus::Delivered => "Delivered",
            DeliveryStatus::Failed => "Failed",
        }
    }

    /// The status a stored name names.
    pub fn parse(name: &str) -> Option<Self> {
        [DeliveryStatus::Pending, DeliveryStatus::Delivered, DeliveryStatus::Failed]
            .into_iter()
            .find(|status| status.name() == name)
    }
}

/// One event's delivery to one webhook (D47).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Id.
    pub id: DeliveryId,
    /// The webhook.
    pub webhook_id: WebhookId,
    /// The event's id in the feed.
    pub event_id: i64,
    /// The event's type.
    pub kind: String,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// The tries made.
    pub attempts: u32,
    /// The last try's answer status, if it got one.
    pub last_status_code: Option<u16>,
    /// Why the last try failed, if it did.
    pub last_error: Option<String>,
    /// When it is tried next, while pending.
    pub next_attempt_at: Option<Timestamp>,
    /// When it was delivered.
    pub delivered_at: Option<Timestamp>,
    /// When it was queued: its tries end 24 hours later.
    pub created_at: Timestamp,
}

/// A page of a webhook's deliveries, newest first (D47, D8).
pub type DeliveryQuery = ListQuery<Unfiltered<20>>;

/// A delivery a server has claimed to try now: what to send, where, signed with what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueDelivery {
    /// The delivery.
    pub id: DeliveryId,
    /// Its webhook.
    pub webhook_id: WebhookId,
    /// The webhook's URL.
    pub url: String,
    /// The webhook's secret.
    pub secret: WebhookSecret,
    /// The event.
    pub event: Event,
}

/// Why a try of a delivery failed: one of a fixed set (D51), so a delivery's `lastError` tells
/// the webhook's owner what went wrong without revealing anything of the server's own network
/// (no resolver or connector texts, no addresses). Every one is retried alike (D47's schedule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryFailure {
    /// The host is, or resolves only to, an internal address (D47, D51) and the server does
    /// not allow those.
    RefusedInternal,
    /// The host's name did not resolve, or resolved to no address that can be connected to.
    Unresolved,
    /// No connection was made to an address the host resolved to, or it closed before an answer.
    NotConnected,
    /// No answer's status came within the 10 s a try may take (D47).
    NoAnswer,
    /// The receiver answered with this status, not a 2xx.
    Answered(u16),
    /// The TLS handshake failed: a certificate not trusted or not the host's, or no TLS spoken.
    Tls,
}

impl DeliveryFailure {
    /// Every text a failure is shown as, `<status>` standing for the answer's status (D51).
    pub const TEXTS: [&'static str; 6] = [
        "refused: internal address",
        "could not resolve the host",
        "could not connect",
        "no answer within 10 s",
        "answered <status>",
        "TLS failed",
    ];
}

impl fmt::Display for DeliveryFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [internal, unresolved, unconnected, silent, _, tls] = Self::TEXTS;
        match self {
            Self::RefusedInternal => f.write_str(internal),
            Self::Unresolved => f.write_str(unresolved),
            Self::NotConnected => f.write_str(unconnected),
            Self::NoAnswer => f.write_str(silent),
            Self::Answered(status) => write!(f, "answered {status}"),
            Self::Tls => f.write_str(tls),
        }
    }
}

impl std::error::Error for DeliveryFailure {}

/// What one try of a delivery got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// When it ended.
    pub at: Timestamp,
    /// The answer's status, if one came.
    pub status_code: Option<u16>,
    /// Why it failed, if it did; kept as the delivery's `lastError`, its text (D51).
    pub error: Option<DeliveryFailure>,
}

impl Attempt {
    /// The try that ended `at` with `outcome`, the answer's status or why none came: delivered
    /// on a 2xx, [`DeliveryFailure::Answered`] on any other status.
    pub fn ended(at: Timestamp, outcome: Result<u16, DeliveryFailure>) -> Self {
        match outcome {
            Ok(status) if (200..300).contains(&status) => Self { at, status_code: Some(status), error: None },
            Ok(status) => Self { at, status_code: Some(status), error: Some(DeliveryFailure::Answered(status)) },
            Err(failure) => Self { at, status_code: None, error: Some(failure) },
        }
    }

    /// Whether the receiver took the event (a 2xx answer).
    pub fn delivered(&self) -> bool {
        self.status_code.is_some_and(|status| (200..300).contains(&status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(url: &str, events: &[&str]) -> NewWebhook {
        NewWebhook {
            url: url.into(),
            events: events.iter().map(|kind| (*kind).to_owned()).collect(),
            description: None,
            is_active: true,
        }
    }

    #[test]
    fn a_webhook_names_an_http_url_and_known_event_types() {
        let valid = hook(" https://books.example.com/hooks/pharmapay ", &["invoice.paid", "invoice.paid"]).validate();
        let valid = valid.expect("valid");
        assert_eq!((valid.url.as_str(), valid.events.len()), ("https://books.example.com/hooks/pharmapay", 1));
        assert!(hook("http://127.0.0.1:8080/x", &["*"]).validate().is_ok(), "addresses are checked at delivery");
        assert!(hook("http://[::1]:8080/x", &["*"]).validate().is_ok());
        for url in [
            "ftp://example.com",
            "https://",
            "https://user:pw@example.com",
            "https://exa mple.com",
            "https://example.com:0/",
            "https://example.com:99999/",
            "example.com",
        ] {
            assert!(hook(url, &["*"]).validate().expect_err(url).contains("url"), "{url}");
        }
        assert!(hook("https://example.com", &[]).validate().expect_err("none").contains("events"));
        assert!(hook("https://example.com", &["invoice.eaten"]).validate().expect_err("unknown").contains("events[0]"));
        assert!(hook("https://example.com", &["*", "vendor.created"]).validate().expect_err("both").contains("events"));
    }

    #[test]
    fn a_secret_is_whsec_and_32_random_bytes() {
        let secret = WebhookSecret::generate();
        assert!(secret.expose().starts_with("whsec_"));
        assert_eq!(secret.key().len(), 32);
        assert_ne!(secret, WebhookSecret::generate());
        assert_eq!(format!("{secret:?}"), "WebhookSecret(..)", "never printed");
        assert_eq!(WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").key().len(), 24);
    }

    #[test]
    fn only_a_2xx_delivers() {
        use DeliveryFailure::{Answered, Tls};
        let at = Timestamp::UNIX_EPOCH;
        assert!(Attempt { at, status_code: Some(204), error: None }.delivered());
        let answered = Some(DeliveryFailure::Answered(500));
        assert!(!Attempt { at, status_code: Some(500), error: answered }.delivered());
        let refused = Some(DeliveryFailure::RefusedInternal);
        assert!(!Attempt { at, status_code: None, error: refused }.delivered());
        assert_eq!(Attempt::ended(at, Ok(204)), Attempt { at, status_code: Some(204), error: None });
        assert_eq!(Attempt::ended(at, Ok(302)), Attempt { at, status_code: Some(302), error: Some(Answered(302)) });
        assert_eq!(Attempt::ended(at, Err(Tls)), Attempt { at, status_code: None, error: Some(Tls) });
        assert!(!Attempt::ended(at, Ok(500)).delivered() && Attempt::ended(at, Ok(200)).delivered());
    }

    #[test]
    fn a_failure_is_shown_as_one_of_the_fixed_texts() {
        use DeliveryFailure::*;
        let shown: Vec<String> = [RefusedInternal, Unresolved, NotConnected, NoAnswer, Answered(503), Tls]
            .iter()
            .map(|f| f.to_string())
            .collect();
        assert_eq!(
            shown,
            [
                "refused: internal address",
                "could not resolve the host",
                "could not connect",
                "no answer within 10 s",
                "answered 503",
                "TLS failed"
            ]
        );
        for (text, listed) in shown.iter().zip(DeliveryFailure::TEXTS) {
            assert_eq!(text.as_str(), listed.replace("<status>", "503"));
        }
    }
}
