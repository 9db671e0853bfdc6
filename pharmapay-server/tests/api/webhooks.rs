//! Webhooks over HTTP (D47): their management, secrets and deliveries, posted to a receiver on
//! 127.0.0.1 and checked against the Standard Webhooks signature, retried after a failure; a
//! failure told as one of a fixed set of texts, and a receiver that never answers holding only
//! its own webhook's deliveries (D51).

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Full};
use hyper::Method;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use pharmapay_core::jiff::SignedDuration;
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::net::TcpListener;

use crate::helpers::{TestApp, spawn_app, spawn_app_with, test_config};

/// One request a receiver got: its `webhook-*` headers and its body.
#[derive(Clone, Debug)]
struct Received {
    id: String,
    timestamp: String,
    signature: String,
    body: Bytes,
    at: Instant,
}

/// A receiver on 127.0.0.1 answering each request with the next status of its script (the
/// last one once the script runs out), keeping what it got.
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    async fn start(script: Vec<u16>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks/pharmapay", listener.local_addr().unwrap());
        let got: Arc<Mutex<Vec<Received>>> = Arc::default();
        let kept = Arc::clone(&got);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (kept, script) = (Arc::clone(&kept), script.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request: hyper::Request<Incoming>| {
                        let (kept, script) = (Arc::clone(&kept), script.clone());
                        async move {
                            let header = |name: &str| {
                                request.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
                            };
                            let (id, timestamp, signature) =
                                (header("webhook-id"), header("webhook-timestamp"), header("webhook-signature"));
                            let body = request.into_body().collect().await.unwrap().to_bytes();
                            let mut got = kept.lock().unwrap();
                            got.push(Received { id, timestamp, signature, body, at: Instant::now() });
                            let status = script.get(got.len() - 1).or(script.last()).copied().unwrap_or(200);
                            let response = hyper::Response::builder().status(status).body(Full::new(Bytes::new()));
                            Ok::<_, Infallible>(response.unwrap())
                        }
                    });
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Self { url, got }
    }

    /// What it got, once it has got `n` requests (waiting up to 15 s).
    async fn wait_for(&self, n: usize) -> Vec<Received> {
        for _ in 0..300 {
            let got = self.got.lock().unwrap().clone();
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the receiver got {} requests, not {n}", self.got.lock().unwrap().len());
    }
}

/// Checks `received` as a Standard Webhooks receiver does: the HMAC-SHA256, keyed with the
/// base64-decoded secret after `whsec_`, of `<id>.<timestamp>.<body>`, as `v1,<base64>`.
fn verify(secret: &str, received: &Received) -> bool {
    let key = STANDARD.decode(secret.strip_prefix("whsec_").expect("whsec_")).expect("base64");
    let mut signed = format!("{}.{}.", received.id, received.timestamp).into_bytes();
    signed.extend_from_slice(&received.body);
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(&signed);
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    received.signature.split(' ').any(|signature| signature == expected)
}

impl TestApp {
    async fn deliveries(&self, webhook: i64) -> Value {
        self.get(&format!("/api/webhooks/{webhook}/deliveries")).await.expect(200).json()
    }

    /// The webhook's deliveries once the newest has left `Pending` or been tried `attempts`
    /// times (waiting up to 15 s).
    async fn deliveries_once_tried(&self, webhook: i64, attempts: u64) -> Value {
        for _ in 0..300 {
            let page = self.deliveries(webhook).await;
            if page["items"][0]["attempts"].as_u64().is_some_and(|tried| tried >= attempts) {
                return page;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no delivery was tried {attempts} times: {}", self.deliveries(webhook).await);
    }
}

#[tokio::test]
async fn webhooks_are_created_listed_replaced_rotated_and_deleted() {
    let app = spawn_app().await;
    let body = json!({ "url": "https://books.example.com/hooks", "events": ["invoice.paid", "vendor.created"],
        "description": "accounts" });
    let created = app.post("/api/webhooks", &body).await;
    let webhook = created.expect(201).json();
    let id = webhook["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/webhooks/{id}").as_str()));
    let secret = webhook["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_") && STANDARD.decode(&secret[6..]).unwrap().len() == 32, "{secret}");
    assert_eq!(
        (webhook["url"].clone(), webhook["events"].clone(), webhook["isActive"].clone()),
        (json!("https://books.example.com/hooks"), json!(["invoice.paid", "vendor.created"]), json!(true))
    );
    let read = app.get(&format!("/api/webhooks/{id}")).await.expect(200).json();
    assert!(read.get("secret").is_none(), "the secret is shown once: {read}");
    assert_eq!(app.get("/api/webhooks").await.expect(200).json(), json!([read]));

    let replaced = json!({ "url": "https://books.example.com/v2", "events": ["*"], "isActive": false });
    let replaced = app.put(&format!("/api/webhooks/{id}"), &replaced).await.expect(200).json();
    assert_eq!((replaced["events"].clone(), replaced["isActive"].clone()), (json!(["*"]), json!(false)));
    let rotated = app.post_empty(&format!("/api/webhooks/{id}/rotate-secret")).await.expect(200).json();
    let new_secret = rotated["secret"].as_str().unwrap();
    assert!(new_secret.starts_with("whsec_") && new_secret != secret);

    for (body, field) in [
        (json!({ "url": "ftp://example.com", "events": ["*"] }), "url"),
        (json!({ "url": "https://example.com", "events": [] }), "events"),
        (json!({ "url": "https://example.com", "events": ["invoice.eaten"] }), "events[0]"),
        (json!({ "events": ["*"] }), "url"),
    ] {
        app.post("/api/webhooks", &body).await.invalid(field);
    }
    let nobody = app.user_without_permissions("clerk@example.com").await;
    app.call(Method::GET, "/api/webhooks", Some(&nobody), None).await.problem(403);
    app.call(Method::POST, "/api/webhooks", Some(&nobody), Some(&body)).await.problem(403);

    app.delete(&format!("/api/webhooks/{id}")).await.expect(204);
    app.get(&format!("/api/webhooks/{id}")).await.problem(404);
    app.get(&format!("/api/webhooks/{id}/deliveries")).await.problem(404);
    app.post_empty(&format!("/api/webhooks/{id}/rotate-secret")).await.problem(404);
    let audit = app.get(&format!("/api/audit-log?entity=Webhook&entityId={id}")).await.expect(200).json();
    let actions: Vec<&str> = audit["items"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["delete", "rotate_secret", "update", "create"]);
    assert!(!audit.to_string().contains("whsec_"), "secrets never reach the audit log");
}

#[tokio::test]
async fn a_failed_delivery_is_tried_again_with_the_same_id_and_a_valid_signature() {
    let mut config = test_config();
    config.webhook_allow_private = true;
    let app = spawn_app_with(config).await;
    let receiver = Receiver::start(vec![500, 200]).await;
    let body = json!({ "url": receiver.url, "events": ["vendor.created"] });
    let webhook = app.post("/api/webhooks", &body).await.expect(201).json();
    let (id, secret) = (webhook["id"].as_i64().unwrap(), webhook["secret"].as_str().unwrap().to_owned());

    let vendor = app.vendor("Shree Medicals").await;
    app.invoice(vendor, "SM-1", "100", "2024-06-30").await;
    let first = receiver.wait_for(1).await;
    let page = app.deliveries_once_tried(id, 1).await;
    let delivery = &page["items"][0];
    assert_eq!(page["totalCount"], 1, "invoice.created is not among its events");
    assert_eq!(
        (delivery["status"].clone(), delivery["lastStatusCode"].clone(), delivery["type"].clone()),
        (json!("Pending"), json!(500), json!("vendor.created"))
    );
    assert_eq!(delivery["nextAttemptAt"], "2024-05-10T10:00:05Z", "tried again about 5 s later (D47)");

    // Five seconds on, the retry: the same event, the same id, signed anew.
    app.advance(SignedDuration::from_secs(6));
    let got = receiver.wait_for(2).await;
    let page = app.deliveries_once_tried(id, 2).await;
    let delivery = &page["items"][0];
    assert_eq!(
        (delivery["status"].clone(), delivery["attempts"].clone(), delivery["lastStatusCode"].clone()),
        (json!("Delivered"), json!(2), json!(200))
    );
    assert_eq!(got.len(), 2, "delivered once it was answered 2xx");
    assert_eq!(got[0].id, got[1].id, "a retry carries the same webhook-id");
    assert_eq!(got[0].body, got[1].body);
    for received in [&first[0], &got[1]] {
        assert!(verify(&secret, received), "{received:?}");
    }
    let event: Value = serde_json::from_slice(&got[1].body).unwrap();
    assert_eq!(event["id"].to_string(), got[1].id);
    assert_eq!(event["type"], "vendor.created");
    assert_eq!((event["data"]["id"].clone(), event["data"]["name"].clone()), (json!(vendor), json!("Shree Medicals")));
    let feed = app.get("/api/events").await.expect(200).json();
    assert!(feed["items"].as_array().unwrap().contains(&event), "the body is the feed's event");

    // A manual retry sends it once more.
    let retried = app.post_empty(&format!("/api/webhooks/{id}/deliveries/{}/retry", delivery["id"])).await;
    assert_eq!(retried.expect(200).json()["status"], "Pending");
    assert_eq!(receiver.wait_for(3).await[2].id, got[0].id);
    app.post_empty(&format!("/api/webhooks/{id}/deliveries/999999/retry")).await.problem(404);
}

#[tokio::test]
async fn deliveries_to_internal_addresses_are_refused_by_default() {
    let app = spawn_app().await;
    let receiver = Receiver::start(vec![200]).await;
    let webhook = app.post("/api/webhooks", &json!({ "url": receiver.url, "events": ["*"] })).await;
    let id = webhook.expect(201).json()["id"].as_i64().unwrap();
    let named = receiver.url.replace("127.0.0.1", "localhost");
    let webhook = app.post("/api/webhooks", &json!({ "url": named, "events": ["*"] })).await;
    let by_name = webhook.expect(201).json()["id"].as_i64().unwrap();
    let webhook =
        app.post("/api/webhooks", &json!({ "url": "https://no-such-host.invalid/hooks", "events": ["*"] })).await;
    let unresolved = webhook.expect(201).json()["id"].as_i64().unwrap();
    app.vendor("Shree Medicals").await;
    // D51: a fixed text, naming nothing of the server's network; and each is tried again.
    for (webhook, error) in [
        (id, "refused: internal address"),
        (by_name, "refused: internal address"),
        (unresolved, "could not resolve the host"),
    ] {
        let page = app.deliveries_once_tried(webhook, 1).await;
        let delivery = &page["items"][0];
        assert_eq!(
            (delivery["status"].clone(), delivery["lastStatusCode"].clone(), delivery["lastError"].clone()),
            (json!("Pending"), Value::Null, json!(error)),
            "{delivery}"
        );
        assert_eq!(delivery["nextAttemptAt"], "2024-05-10T10:00:05Z", "tried again about 5 s later (D47)");
    }
    assert!(receiver.got.lock().unwrap().is_empty(), "never connected to");
}

/// A listener on 127.0.0.1 that accepts connections and never answers them; its URL.
async fn silent_receiver() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            open.push(stream);
        }
    });
    url
}

/// D51: five webhooks whose receiver takes connections and never answers hold only their own
/// deliveries; a sixth, healthy webhook gets each of its events within a few seconds.
#[tokio::test]
async fn a_receiver_that_never_answers_holds_only_its_own_webhooks_deliveries() {
    let mut config = test_config();
    config.webhook_allow_private = true;
    let app = spawn_app_with(config).await;
    let mut dead = Vec::new();
    for _ in 0..5 {
        let body = json!({ "url": silent_receiver().await, "events": ["vendor.created"] });
        dead.push(app.post("/api/webhooks", &body).await.expect(201).json()["id"].as_i64().unwrap());
    }
    let receiver = Receiver::start(vec![204]).await;
    let body = json!({ "url": receiver.url, "events": ["vendor.created"] });
    app.post("/api/webhooks", &body).await.expect(201);

    let mut created = std::collections::HashMap::new();
    for n in 0..40 {
        let vendor = app.vendor(&format!("Vendor {n:02}")).await;
        created.insert(vendor, Instant::now());
    }
    let got = receiver.wait_for(40).await;
    let mut seen = std::collections::HashSet::new();
    for received in &got {
        let event: Value = serde_json::from_slice(&received.body).unwrap();
        let vendor = event["data"]["id"].as_i64().unwrap();
        let waited = received.at - created[&vendor];
        assert!(waited < Duration::from_secs(10), "vendor {vendor}'s event arrived {waited:?} after it was made");
        seen.insert(vendor);
    }
    assert_eq!(seen.len(), 40, "each event once");

    // The silent receivers' tries end at the timeout, told as such.
    let deadline = Instant::now() + Duration::from_secs(20);
    let tried = loop {
        let page = app.get(&format!("/api/webhooks/{}/deliveries?pageSize=100", dead[0])).await.expect(200).json();
        let items = page["items"].as_array().unwrap().clone();
        if let Some(tried) = items.into_iter().find(|item| item["attempts"].as_u64().is_some_and(|n| n > 0)) {
            break tried;
        }
        assert!(Instant::now() < deadline, "no try of a silent receiver ended in 20 s: {page}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        (tried["status"].clone(), tried["lastStatusCode"].clone(), tried["lastError"].clone()),
        (json!("Pending"), Value::Null, json!("no answer within 10 s"))
    );
}
