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

#[tokio::test]
async fn a_lost_database_answers_503_not_500() {
    let Some(admin_url) = pharmapay_store_sqlx::testing::postgres_admin_url() else { return };
    let database = pharmapay_store_sqlx::testing::PgDatabase::create(&admin_url).await;
    let mut config = test_config();
    config.database_url = database.url().to_owned();
    let mut app = spawn_with(config).await;
    let setup = app.post_public("/api/onboarding/setup", &crate::helpers::setup_body()).await;
    app.admin_token = setup.expect(200).json()["token"].as_str().unwrap().to_owned();
    app.get("/api/vendors").await.expect(200);
    // The database goes away under the running server, as when its host is lost.
    drop(database);
    let health = app.call(Method::GET, "/api/health", None, None).await;
    assert_eq!(health.expect(503).json()["status"], "unavailable");
    let listed = app.get("/api/vendors").await;
    assert!(listed.problem(503)["detail"].as_str().unwrap().contains("cannot be reached"), "a clear 503, not a 500");
    assert_eq!(listed.header("retry-after"), Some("1"), "the 503 says when to try again");
}

#[tokio::test]
async fn stalled_clients_are_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut config = test_config();
    config.request_timeout_secs = 1;
    let app = spawn_with(config).await;
    let addr = app.base.trim_start_matches("http://").to_owned();

    // Headers that never finish: the connection is closed.
    let mut stalled = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stalled.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let mut buffer = Vec::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), stalled.read_to_end(&mut buffer)).await;
    assert!(read.is_ok(), "the server closes a connection whose headers stall");

    // A body that never finishes: 408 problem details.
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\"").await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), slow.read(&mut answer))
        .await
        .expect("an answer in time")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
}

#[tokio::test]
async fn beyond_the_connection_limit_clients_wait_until_a_connection_closes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::time::{Duration, timeout};

    async fn ask_for_health(stream: &mut tokio::net::TcpStream) {
        stream.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    }

    async fn read_answer(stream: &mut tokio::net::TcpStream) -> String {
        let mut buffer = vec![0u8; 4096];
        let n = stream.read(&mut buffer).await.unwrap();
        String::from_utf8_lossy(&buffer[..n]).into_owned()
    }

    let mut config = test_config();
    config.max_connections = 1;
    let app = spawn_with(config).await;

    // The first connection is served and stays open (keep-alive).
    let mut first = tokio::net::TcpStream::connect(app.addr()).await.unwrap();
    ask_for_health(&mut first).await;
    assert!(read_answer(&mut first).await.starts_with("HTTP/1.1 200"), "the first client is served");

    // The second waits in the listener's backlog: connected, but not answered.
    let mut second = tokio::net::TcpStream::connect(app.addr()).await.unwrap();
    ask_for_health(&mut second).await;
    let waiting = timeout(Duration::from_millis(500), read_answer(&mut second)).await;
    assert!(waiting.is_err(), "a client beyond the limit is not served: {waiting:?}");

    // Once the first closes, the second is served.
    drop(first);
    let answer = timeout(Duration::from_secs(10), read_answer(&mut second)).await.expect("served once a slot frees");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
