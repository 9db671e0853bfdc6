//! Health, CORS, configuration refusals and graceful shutdown.

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request};
use pharmapay_core::ManualClock;
use pharmapay_server::config::SecretArg;
use serde_json::json;

use crate::helpers::{ADMIN_EMAIL, ADMIN_PASSWORD, spawn_app, spawn_with, start_time, test_config};

#[tokio::test]
async fn health_is_public() {
    let app = spawn_app().await;
    let health = app.call(Method::GET, "/api/health", None, None).await;
    let expected = match crate::helpers::default_backend() {
        crate::helpers::Backend::Memory => "memory",
        crate::helpers::Backend::Sqlite => "sqlite",
        crate::helpers::Backend::Postgres => "postgres",
    };
    assert_eq!(health.expect(200).json(), json!({ "status": "ok", "database": expected }));
}

#[tokio::test]
async fn cors_answers_configured_origins_only() {
    let mut config = test_config();
    config.cors_origins = vec!["https://app.example".into()];
    let app = spawn_with(config).await;
    let preflight = Request::builder()
        .method(Method::OPTIONS)
        .uri(format!("{}/api/vendors", app.base))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = app.send(preflight).await;
    response.expect(204);
    assert_eq!(response.header("access-control-allow-origin"), Some("https://app.example"));
    assert!(response.header("access-control-allow-headers").unwrap().contains("authorization"));
    let simple = Request::builder()
        .uri(format!("{}/api/health", app.base))
        .header("origin", "https://app.example")
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(app.send(simple).await.header("access-control-allow-origin"), Some("https://app.example"));
    let stranger = Request::builder()
        .uri(format!("{}/api/health", app.base))
        .header("origin", "https://evil.example")
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(app.send(stranger).await.header("access-control-allow-origin"), None);
}

#[tokio::test]
async fn a_short_jwt_secret_stops_start_up_with_a_clear_message() {
    let mut config = test_config();
    config.jwt_secret = Some(SecretArg("too-short".into()));
    let error =
        pharmapay_server::start(&config, ManualClock::new(start_time())).await.err().expect("start-up is refused");
    let message = error.to_string();
    assert!(message.contains("at least 32 characters"), "{message}");
    assert!(!message.contains("too-short"), "the secret is never printed");
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish() {
    let app = std::sync::Arc::new(spawn_app().await);
    let mut logins = Vec::new();
    // Five logins, the D21 limit, so none is throttled.
    for _ in 0..5 {
        let app = std::sync::Arc::clone(&app);
        logins.push(tokio::spawn(async move {
            app.post_public("/api/auth/login", &json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD }))
                .await
                .status
                .as_u16()
        }));
    }
    // Five Argon2 verifications queue behind the hashing limit, so they are still running here.
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    app.stop().await;
    for login in logins {
        assert_eq!(login.await.unwrap(), 200, "an in-flight login completes during shutdown");
    }
    let refused = tokio::net::TcpStream::connect(app.base.trim_start_matches("http://")).await;
    assert!(refused.is_err(), "the listener is closed after shutdown");
}
