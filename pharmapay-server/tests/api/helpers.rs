//! The API test harness: start a real server on 127.0.0.1:0 through the same start-up code as
//! `main`, and talk to it over HTTP.
//!
//! Each test gets its own server and its own store, with a [`ManualClock`] starting at
//! 2024-05-10 10:00 UTC so tests can move time. Set `TEST_LOG=1` to see the server's logs.

use std::sync::{Arc, Once};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::HeaderMap;
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use pharmapay_core::ManualClock;
use pharmapay_core::jiff::{SignedDuration, Timestamp};
use pharmapay_server::config::{Config, SecretArg};
use pharmapay_server::{Running, start};
use serde_json::{Value, json};

/// The signing secret of test servers, so tests can forge tokens with the right key.
pub const SECRET: &str = "api-test-secret-api-test-secret-0123";

/// The admin's credentials.
pub const ADMIN_EMAIL: &str = "admin@example.com";
/// The admin's password.
pub const ADMIN_PASSWORD: &str = "admin-password";

/// A response, fully read.
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl TestResponse {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|error| panic!("body is not JSON ({error}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// Asserts the status, showing the body when it differs.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Self {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", String::from_utf8_lossy(&self.body));
        self
    }

    /// Asserts a problem-details answer (D6) with this status, and returns its JSON.
    #[track_caller]
    pub fn problem(&self, status: u16) -> Value {
        self.expect(status);
        assert_eq!(self.header("content-type"), Some("application/problem+json"), "problem details content type");
        let body = self.json();
        assert_eq!(body["status"], json!(status));
        assert!(body["type"].as_str().is_some_and(|t| t.starts_with("https://")), "type is a URL: {body}");
        assert!(body["title"].as_str().is_some_and(|t| !t.is_empty()), "title: {body}");
        assert_eq!(body["traceId"].as_str().map(str::len), Some(32), "traceId: {body}");
        assert_eq!(body["traceId"].as_str(), self.header("x-trace-id"), "the trace id is also a header");
        body
    }

    /// Asserts a 400 whose `errors` names `field`, and returns its JSON.
    #[track_caller]
    pub fn invalid(&self, field: &str) -> Value {
        let body = self.problem(400);
        assert!(body["errors"][field].is_array(), "expected an error on {field}: {body}");
        body
    }
}

/// A server under test.
pub struct TestApp {
    pub base: String,
    pub clock: ManualClock,
    client: Client<HttpConnector, Full<Bytes>>,
    running: std::sync::Mutex<Option<Running>>,
    /// The onboarded admin's token (empty before onboarding).
    pub admin_token: String,
    /// Keeps the test's database (a temporary file or PostgreSQL database) until the app goes.
    _database: Option<Box<dyn std::any::Any + Send + Sync>>,
}

/// Where a test server keeps its data.
#[derive(Clone, Copy, Debug)]
pub enum Backend {
    /// The in-memory store.
    Memory,
    /// A fresh SQLite file.
    Sqlite,
    /// A fresh PostgreSQL database (when `PHARMAPAY_TEST_POSTGRES_URL` is set).
    Postgres,
}

fn init_logs() {
    static ONCE: Once = Once::new();
    if let Some(filter) = std::env::var_os("TEST_LOG") {
        ONCE.call_once(|| {
            let filter = filter.to_str().filter(|f| *f != "1").unwrap_or("info").to_owned();
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
                .with_test_writer()
                .try_init();
        });
    }
}

/// The start time of every test server's clock.
pub fn start_time() -> Timestamp {
    "2024-05-10T10:00:00Z".parse().unwrap()
}

/// The configuration every test server starts from: in-memory store, port 0, fixed secret.
pub fn test_config() -> Config {
    let mut config = Config::defaults();
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.database_url = "memory:".into();
    config.jwt_secret = Some(SecretArg(SECRET.into()));
    config
}

/// The backend of the API suite: `PHARMAPAY_API_TEST_BACKEND` (`memory`, the default,
/// `sqlite` or `postgres`), so CI can run every API test on every store.
pub fn default_backend() -> Backend {
    match std::env::var("PHARMAPAY_API_TEST_BACKEND").as_deref() {
        Ok("sqlite") => Backend::Sqlite,
        Ok("postgres") => Backend::Postgres,
        _ => Backend::Memory,
    }
}

/// A fresh, not yet onboarded server on the suite's backend.
pub async fn spawn_fresh() -> TestApp {
    spawn_fresh_on(default_backend()).await.expect("the API suite's backend is configured")
}

/// A fresh, not yet onboarded server on `backend`, or `None` when it is not configured here.
pub async fn spawn_fresh_on(backend: Backend) -> Option<TestApp> {
    spawn_fresh_configured_on(backend, test_config()).await
}

/// An onboarded server with a signed-in admin on the suite's backend, started from `config`, a
/// [`test_config`] with some settings changed (the backend decides the database URL).
pub async fn spawn_app_with(config: Config) -> TestApp {
    let mut app =
        spawn_fresh_configured_on(default_backend(), config).await.expect("the API suite's backend is configured");
    let response = app.post_public("/api/onboarding/setup", &setup_body()).await;
    app.admin_token = response.expect(200).json()["token"].as_str().unwrap().to_owned();
    app
}

/// A fresh, not yet onboarded server on `backend` started from `config`, or `None` when the
/// backend is not configured here.
async fn spawn_fresh_configured_on(backend: Backend, mut config: Config) -> Option<TestApp> {
    let database: Option<Box<dyn std::any::Any + Send + Sync>> = match backend {
        Backend::Memory => None,
        Backend::Sqlite => {
            let dir = tempfile::tempdir().expect("a temporary directory");
            config.database_url = format!("sqlite:{}", dir.path().join("pharmapay.db").display());
            Some(Box::new(dir))
        }
        Backend::Postgres => {
            let admin_url = pharmapay_store_sqlx::testing::postgres_admin_url()?;
            let database = pharmapay_store_sqlx::testing::PgDatabase::create(&admin_url).await;
            config.database_url = database.url().to_owned();
            Some(Box::new(database))
        }
    };
    let mut app = spawn_with(config).await;
    app._database = database;
    Some(app)
}

/// An onboarded server with a signed-in admin on `backend`, or `None` when it is not
/// configured here.
pub async fn spawn_app_on(backend: Backend) -> Option<TestApp> {
    let mut app = spawn_fresh_on(backend).await?;
    let response = app.post_public("/api/onboarding/setup", &setup_body()).await;
    response.expect(200);
    app.admin_token = response.json()["token"].as_str().unwrap().to_owned();
    Some(app)
}

/// A fresh server with `config`.
pub async fn spawn_with(config: Config) -> TestApp {
    init_logs();
    let clock = ManualClock::new(start_time());
    let running = start(&config, clock.clone()).await.expect("the test server starts");
    let client = Client::builder(TokioExecutor::new()).build_http();
    TestApp {
        base: format!("http://{}", running.addr),
        clock,
        client,
        running: std::sync::Mutex::new(Some(running)),
        admin_token: String::new(),
        _database: None,
    }
}

/// An onboarded server with a signed-in admin.
pub async fn spawn_app() -> TestApp {
    let mut app = spawn_fresh().await;
    let response = app.post_public("/api/onboarding/setup", &setup_body()).await;
    response.expect(200);
    app.admin_token = response.json()["token"].as_str().unwrap().to_owned();
    app
}

/// The onboarding body every test uses.
pub fn setup_body() -> Value {
    json!({
        "pharmacy": { "name": "Apollo Pharmacy", "address": "12 MG Road", "drugLicenseNumber1": "DL-001" },
        "adminUser": { "firstName": "Asha", "lastName": "Rao", "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD }
    })
}

impl TestApp {
    /// Sends a request built by the caller.
    pub async fn send(&self, request: Request<Full<Bytes>>) -> TestResponse {
        let response = self.client.request(request).await.expect("the server answers");
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("the body is read").to_bytes();
        TestResponse { status: parts.status, headers: parts.headers, body }
    }

    /// A request with an optional token, an optional content type and a body sent as is.
    pub async fn call_raw(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        content_type: Option<&str>,
        body: impl Into<Bytes>,
    ) -> TestResponse {
        let mut builder = Request::builder().method(method).uri(format!("{}{path}", self.base));
        if let Some(token) = token {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        if let Some(content_type) = content_type {
            builder = builder.header("content-type", content_type);
        }
        self.send(builder.body(Full::new(body.into())).unwrap()).await
    }

    /// A request with an optional token and JSON body.
    pub async fn call(&self, method: Method, path: &str, token: Option<&str>, body: Option<&Value>) -> TestResponse {
        let mut builder = Request::builder().method(method).uri(format!("{}{path}", self.base));
        if let Some(token) = token {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        let bytes = match body {
            Some(body) => {
                builder = builder.header("content-type", "application/json");
                Bytes::from(serde_json::to_vec(body).unwrap())
            }
            None => Bytes::new(),
        };
        self.send(builder.body(Full::new(bytes)).unwrap()).await
    }

    /// GET as the admin.
    pub async fn get(&self, path: &str) -> TestResponse {
        self.call(Method::GET, path, Some(&self.admin_token), None).await
    }

    /// POST as the admin.
    pub async fn post(&self, path: &str, body: &Value) -> TestResponse {
        self.call(Method::POST, path, Some(&self.admin_token), Some(body)).await
    }

    /// POST without a body as the admin.
    pub async fn post_empty(&self, path: &str) -> TestResponse {
        self.call(Method::POST, path, Some(&self.admin_token), None).await
    }

    /// POST with no token.
    pub async fn post_public(&self, path: &str, body: &Value) -> TestResponse {
        self.call(Method::POST, path, None, Some(body)).await
    }

    /// PUT as the admin.
    /// A POST of `body` as `token` with the `Idempotency-Key` `key` (D23).
    pub async fn post_with_key_as(&self, token: &str, path: &str, key: &str, body: &Value) -> TestResponse {
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .header("idempotency-key", key)
            .body(Full::new(Bytes::from(serde_json::to_vec(body).expect("JSON serialises"))))
            .expect("a valid request");
        self.send(request).await
    }

    /// A POST of `body` as the admin with the `Idempotency-Key` `key` (D23).
    pub async fn post_with_key(&self, path: &str, body: &Value, key: &str) -> TestResponse {
        self.post_with_key_as(&self.admin_token, path, key, body).await
    }

    pub async fn put(&self, path: &str, body: &Value) -> TestResponse {
        self.call(Method::PUT, path, Some(&self.admin_token), Some(body)).await
    }

    /// PUT as the holder of `token`.
    pub async fn put_as(&self, token: &str, path: &str, body: &Value) -> TestResponse {
        self.call(Method::PUT, path, Some(token), Some(body)).await
    }

    /// DELETE as the admin, without a body.
    pub async fn delete(&self, path: &str) -> TestResponse {
        self.call(Method::DELETE, path, Some(&self.admin_token), None).await
    }

    /// DELETE as the admin, with a body (a reason, D16).
    pub async fn delete_with(&self, path: &str, body: &Value) -> TestResponse {
        self.call(Method::DELETE, path, Some(&self.admin_token), Some(body)).await
    }

    /// Signs in and returns the token.
    pub async fn login(&self, email: &str, password: &str) -> String {
        let response = self.post_public("/api/auth/login", &json!({ "email": email, "password": password })).await;
        response.expect(200);
        response.json()["token"].as_str().unwrap().to_owned()
    }

    /// Creates a vendor and returns its id.
    pub async fn vendor(&self, name: &str) -> i64 {
        let response = self.post("/api/vendors", &json!({ "name": name, "vendorType": "Wholesaler" })).await;
        response.expect(201);
        response.json()["id"].as_i64().unwrap()
    }

    /// Creates an invoice and returns its id.
    pub async fn invoice(&self, vendor: i64, number: &str, amount: &str, due: &str) -> i64 {
        let body: Value = serde_json::from_str(&format!(
            r#"{{"vendorId":{vendor},"invoiceNumber":"{number}","amount":{amount},"invoiceDate":"2024-05-01","dueDate":"{due}"}}"#
        ))
        .unwrap();
        let response = self.post("/api/invoices", &body).await;
        response.expect(201);
        response.json()["id"].as_i64().unwrap()
    }

    /// Creates invoices of `vendor` one after the other, each as [`Self::invoice`] does from its
    /// number, amount and due date, and returns their ids in the same order.
    pub async fn invoices<const N: usize>(&self, vendor: i64, invoices: [(&str, &str, &str); N]) -> [i64; N] {
        let mut ids = [0; N];
        for (id, (number, amount, due)) in ids.iter_mut().zip(invoices) {
            *id = self.invoice(vendor, number, amount, due).await;
        }
        ids
    }

    /// Records a payment dated 2024-05-05 and returns its id.
    pub async fn pay(&self, invoice: i64, amount: &str) -> i64 {
        let body: Value = serde_json::from_str(&format!(
            r#"{{"invoiceId":{invoice},"amount":{amount},"transactionDate":"2024-05-05","transactionType":"UPI"}}"#
        ))
        .unwrap();
        let response = self.post("/api/transactions", &body).await;
        response.expect(201);
        response.json()["id"].as_i64().unwrap()
    }

    /// Creates a user with `role_id` and returns (id, token).
    /// The token of a new user whose role holds exactly the permissions `permission_ids`.
    pub async fn token_with(&self, email: &str, permission_ids: &[i64]) -> String {
        let role = self.post("/api/roles", &json!({ "name": format!("Role of {email}") })).await;
        let role = role.json()["id"].as_i64().expect("a role id");
        let policy =
            json!({ "name": format!("Policy of {email}"), "description": "", "permissionIds": permission_ids });
        let policy = self.post("/api/policies", &policy).await.json()["id"].as_i64().expect("a policy id");
        self.post_empty(&format!("/api/roles/{role}/policies/{policy}")).await.expect(204);
        self.user(email, role).await.1
    }

    pub async fn user(&self, email: &str, role_id: i64) -> (i64, String) {
        let body = json!({ "firstName": "Ravi", "lastName": "Kumar", "email": email, "password": "user-password", "roleId": role_id });
        let response = self.post("/api/users", &body).await;
        response.expect(201);
        let id = response.json()["id"].as_i64().unwrap();
        (id, self.login(email, "user-password").await)
    }

    /// Creates a role with no policies and a user holding it, signs the user in and returns the
    /// token: a caller with a valid token and no permission at all.
    pub async fn user_without_permissions(&self, email: &str) -> String {
        let role = self
            .post("/api/roles", &json!({ "name": format!("Nothing for {email}"), "description": "No policies" }))
            .await;
        let role_id = role.expect(201).json()["id"].as_i64().unwrap();
        let (_, token) = self.user(email, role_id).await;
        let permissions = self.call(Method::GET, "/api/users/me/permissions", Some(&token), None).await;
        assert_eq!(permissions.expect(200).json(), json!([]), "the user holds no permission");
        token
    }

    /// How many report downloads the server is writing right now.
    pub fn open_downloads(&self) -> usize {
        self.running.lock().unwrap().as_ref().map_or(0, Running::open_downloads)
    }

    /// The server's address, for raw TCP clients.
    pub fn addr(&self) -> String {
        self.base.trim_start_matches("http://").to_owned()
    }

    /// Moves the server's clock.
    pub fn advance(&self, by: SignedDuration) {
        self.clock.advance(by);
    }

    /// The URL of the test's PostgreSQL database, when it runs on one.
    pub fn postgres_url(&self) -> Option<String> {
        self._database
            .as_ref()
            .and_then(|database| database.downcast_ref::<pharmapay_store_sqlx::testing::PgDatabase>())
            .map(|database| database.url().to_owned())
    }

    /// Stops the server gracefully, letting in-flight requests finish.
    pub async fn stop(&self) {
        let running = self.running.lock().unwrap().take();
        if let Some(running) = running {
            running.stop().await.expect("the server stops cleanly");
        }
    }
}

/// Base64url without padding, for forging tokens.
pub fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Sends `n` requests at once, the one numbered `index` (from 0) made by `request(app, index)`,
/// and answers their statuses sorted, as concurrent requests finish in no order of their own.
pub async fn statuses_at_once<F>(app: &Arc<TestApp>, n: usize, request: impl Fn(Arc<TestApp>, usize) -> F) -> Vec<u16>
where
    F: Future<Output = u16> + Send + 'static,
{
    let tasks: Vec<_> = (0..n).map(|index| tokio::spawn(request(Arc::clone(app), index))).collect();
    let mut statuses = Vec::with_capacity(n);
    for task in tasks {
        statuses.push(task.await.expect("no request task panics"));
    }
    statuses.sort();
    statuses
}

/// `template` with every path parameter replaced by `value`.
pub fn fill(template: &str, value: &str) -> String {
    let mut path = String::new();
    let mut in_param = false;
    for c in template.chars() {
        match c {
            '{' => {
                in_param = true;
                path.push_str(value);
            }
            '}' => in_param = false,
            _ if in_param => {}
            _ => path.push(c),
        }
    }
    path
}

/// Decodes a token's claims without checking it.
pub fn claims(token: &str) -> Value {
    jsonwebtoken::dangerous::insecure_decode_claims(token).unwrap()
}

/// Runs each of the named async functions, which take an onboarded `Arc<TestApp>`, as a test
/// on every backend: a module per backend (`memory`, `sqlite`, `postgres`) with one test per
/// function, the PostgreSQL ones skipping when no server is configured.
macro_rules! on_every_backend {
    ($($case:ident),* $(,)?) => {
        $crate::helpers::on_every_backend!(@backend memory, Memory; $($case),*);
        $crate::helpers::on_every_backend!(@backend sqlite, Sqlite; $($case),*);
        $crate::helpers::on_every_backend!(@backend postgres, Postgres; $($case),*);
    };
    (@backend $module:ident, $backend:ident; $($case:ident),*) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let backend = crate::helpers::Backend::$backend;
                    let Some(app) = crate::helpers::spawn_app_on(backend).await else { return };
                    super::$case(std::sync::Arc::new(app)).await;
                }
            )*
        }
    };
}
pub(crate) use on_every_backend;
