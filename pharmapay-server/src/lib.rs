//! pharmapay-server: the pharmapay API over HTTP.
//!
//! A thin layer over [`pharmapay_core::PharmaPay`]: each route decodes its request into a core
//! input, calls one engine method and encodes the answer as the spec's JSON. No web framework:
//! hyper serves HTTP/1.1, [`routes::table`] is the route table and `matchit` matches paths.
//!
//! # Layout
//! - [`config`]: the command line and environment (D28).
//! - [`server`]: accepting connections, body limits and timeouts, request logs, graceful
//!   shutdown; [`start`] is the one start-up path, used by `main` and by the tests.
//! - [`app`]: the application state, the router, a route's shape and the dispatch; [`guard`]:
//!   what a route requires of its caller; [`routes`]: the route table, one file per resource
//!   with its rows, bodies and DTOs, the ways of answering routes share (`routes/call.rs`), and
//!   the application's constructors, which alone know the whole table.
//! - [`download`]: how report downloads stream and share the server; [`turns`]: the few turns
//!   at once that downloads and uploads each queue for.
//! - [`openapi`]: the OpenAPI document, built from the route table and served at
//!   `GET /api/openapi.json`.
//! - [`demo`]: the deterministic demo-data generator behind `pharmapay seed-demo`;
//!   [`import_command`]: `pharmapay import`, an imported file written without a server (D45).
//! - [`webhooks`]: the delivery task that posts events to webhooks (D47); [`render`]: how an
//!   event's `data` is rendered, as the record's `GET` answers it.
//! - [`decode`] and [`dto`]: what every body and DTO shares; [`problem`]: errors as RFC 9457
//!   problem details; [`http`]: request plumbing and CORS; [`reply`]: the reply, its bodies and
//!   trace ids.

pub mod app;
pub mod config;
pub mod decode;
pub mod demo;
pub mod download;
pub mod dto;
pub mod guard;
pub mod http;
pub mod import_command;
pub mod openapi;
pub mod problem;
pub mod render;
pub mod reply;
pub mod routes;
pub mod server;
pub mod turns;
pub mod webhooks;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pharmapay_core::auth::{MIN_SECRET_CHARS, Secret};
use pharmapay_core::engine::OpenError;
use pharmapay_core::jiff::SignedDuration;
use pharmapay_core::{BulkLoadStore, Clock, EngineOptions, PharmaPay, Store, StoreError};
use pharmapay_store_memory::MemoryStore;
use pharmapay_store_sqlx::SqlxStore;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tracing::info;

use crate::app::App;
use crate::config::{Config, Database};
use crate::http::Cors;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A setting is invalid.
    #[error("{0}")]
    Config(String),
    /// The database could not be opened or migrated.
    #[error("could not open the database: {0}")]
    Store(#[from] StoreError),
    /// The engine refused its settings.
    #[error(transparent)]
    Engine(#[from] OpenError),
    /// The listen address could not be bound.
    #[error("could not listen on the configured address: {0}")]
    Bind(#[from] std::io::Error),
}

/// `error`'s text followed by that of each cause under it (each after `: `, skipping a cause
/// whose text the line already ends with): what is printed when the server cannot start or
/// seed, and what a failed request's log line says, so that a store's "store backend failure"
/// also says what the database answered.
#[must_use]
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(under) = cause {
        let said = under.to_string();
        if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = under.source();
    }
    text
}

/// A running server.
pub struct Running {
    /// The address it listens on (the real port when configured with port 0).
    pub addr: SocketAddr,
    /// The store's kind: `sqlite`, `postgres` or `memory`.
    pub backend: &'static str,
    open_downloads: Arc<AtomicUsize>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
    deliveries: JoinHandle<()>,
}

impl Running {
    /// How many report downloads are being written right now; each holds a blocking thread and
    /// temporary files until it ends.
    pub fn open_downloads(&self) -> usize {
        self.open_downloads.load(Ordering::SeqCst)
    }

    /// Stops accepting connections, lets in-flight requests finish, and returns.
    ///
    /// # Errors
    /// When the server task failed.
    pub async fn stop(self) -> std::io::Result<()> {
        self.deliveries.abort();
        let _ = self.stop.send(());
        self.task.await.unwrap_or_else(|error| Err(std::io::Error::other(error)))
    }
}

/// Opens the configured store, starts the engine with `clock`, binds the listen address and
/// serves in a background task. `main` and the tests start servers only through here.
///
/// # Errors
/// [`StartError`] naming what failed: a setting, the database, or the address.
pub async fn start(config: &Config, clock: impl Clock) -> Result<Running, StartError> {
    if let Some(secret) = &config.jwt_secret
        && secret.0.chars().count() < MIN_SECRET_CHARS
    {
        return Err(StartError::Config(format!(
            "PHARMAPAY_JWT_SECRET must be at least {MIN_SECRET_CHARS} characters long (it has {}); \
             leave it unset to have one generated and kept in the database",
            secret.0.chars().count()
        )));
    }
    match config.database() {
        Database::Memory => launch(MemoryStore::new(), "memory", config, clock).await,
        Database::Sql(url) => match SqlxStore::connect_with(&url, config.store_options()).await? {
            SqlxStore::Sqlite(store) => launch(store, "sqlite", config, clock).await,
            SqlxStore::Postgres(store) => launch(store, "postgres", config, clock).await,
        },
    }
}

/// The demo pharmacy's admin, created by `seed-demo` on an empty database.
pub const DEMO_ADMIN_EMAIL: &str = "admin@demo.example";
/// The demo admin's password.
pub const DEMO_ADMIN_PASSWORD: &str = "demo-password";

/// The demo pharmacy and its admin, as `seed-demo` onboards them on an empty store.
pub fn demo_onboarding() -> pharmapay_core::Onboarding {
    pharmapay_core::Onboarding {
        pharmacy: pharmapay_core::PharmacyDetails {
            name: "Demo Pharmacy".into(),
            address: Some("1 Market Street".into()),
            phone: None,
            email: None,
            drug_license_number1: Some("DL-DEMO-0001".into()),
        },
        admin: pharmapay_core::AdminAccount {
            first_name: "Demo".into(),
            last_name: "Admin".into(),
            email: DEMO_ADMIN_EMAIL.into(),
            password: pharmapay_core::text::Password::parse(DEMO_ADMIN_PASSWORD)
                .expect("the demo password is long enough"),
        },
    }
}

/// Opens the configured store, onboards a demo pharmacy if the store is empty, and writes demo
/// data of `size` (see [`demo`]).
///
/// # Errors
/// [`StartError`] when the store cannot be opened or refuses the data.
pub async fn seed_demo(
    config: &Config,
    size: demo::DemoSize,
    clock: impl Clock,
) -> Result<demo::DemoReport, StartError> {
    match config.database() {
        Database::Memory => {
            tracing::warn!("seeding the in-memory store: the data is gone when this command ends");
            seed_store(MemoryStore::new(), config, size, clock).await
        }
        Database::Sql(url) => {
            let store = SqlxStore::connect_with(&url, config.store_options()).await?;
            let report = match store.clone() {
                SqlxStore::Sqlite(sqlite) => seed_store(sqlite, config, size, clock).await?,
                SqlxStore::Postgres(postgres) => seed_store(postgres, config, size, clock).await?,
            };
            // Fresh statistics let PostgreSQL plan the big tables well from the first request.
            store.analyze().await?;
            Ok(report)
        }
    }
}

async fn seed_store<S: Store + BulkLoadStore>(
    store: S,
    config: &Config,
    size: demo::DemoSize,
    clock: impl Clock,
) -> Result<demo::DemoReport, StartError> {
    let engine = PharmaPay::open(store, clock, engine_options(config)).await?;
    if !engine.onboarding_status().await.map_err(|error| StartError::Config(error.to_string()))? {
        let setup = demo_onboarding();
        engine.complete_onboarding(setup).await.map_err(|error| StartError::Config(error.to_string()))?;
        info!(email = DEMO_ADMIN_EMAIL, password = DEMO_ADMIN_PASSWORD, "onboarded a demo pharmacy");
    }
    let now = engine.now();
    // The load writes rows only; the indexes it does not read are built once at the end, also
    // when the load fails half way (the store would build them at its next start otherwise).
    engine.store().begin_bulk_load().await?;
    let seeded = demo::seed(engine.store(), size, now).await;
    let built = engine.store().finish_bulk_load().await;
    let report = seeded?;
    built?;
    Ok(report)
}

pub(crate) fn engine_options(config: &Config) -> EngineOptions {
    EngineOptions {
        jwt_secret: config.jwt_secret.as_ref().map(|secret| Secret::new(secret.0.clone())),
        jwt_issuer: config.jwt_issuer.clone(),
        jwt_audience: config.jwt_audience.clone(),
        token_lifetime: SignedDuration::from_hours(i64::from(config.token_hours)),
        // D47: every write of the ledger records its event, its data as the API's reads answer.
        events: config.events.then(|| Arc::new(render::ApiRenderer) as Arc<dyn pharmapay_core::events::Render>),
        ..EngineOptions::default()
    }
}

async fn launch<S: Store>(
    store: S,
    backend: &'static str,
    config: &Config,
    clock: impl Clock,
) -> Result<Running, StartError> {
    let engine = PharmaPay::open(store, clock, engine_options(config)).await?;
    let request_timeout = std::time::Duration::from_secs(config.request_timeout_secs);
    let max_connections = usize::try_from(config.max_connections).unwrap_or(usize::MAX);
    let app = App::with_limits(
        engine,
        Cors::new(config.cors_origins.clone()),
        backend,
        request_timeout,
        max_connections,
        config.download_limits(),
        config.upload_turns(),
    );
    let open_downloads = Arc::clone(&app.downloads.open);
    let settings = webhooks::DeliverySettings {
        allow_private: config.webhook_allow_private,
        retention: SignedDuration::from_hours(24 * i64::from(config.event_retention_days)),
    };
    let deliveries = if config.events { webhooks::spawn(Arc::clone(&app), settings) } else { tokio::spawn(async {}) };
    let listener = TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server::serve(listener, app, async {
        let _ = stopped.await;
    }));
    info!(%addr, backend, max_connections, "pharmapay is listening");
    Ok(Running { addr, backend, open_downloads, stop, task, deliveries })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_error_names_the_store_failure_under_it() {
        let cause = std::io::Error::other("file is not a database");
        let error = StartError::Store(StoreError::Backend(Box::new(cause)));
        assert_eq!(with_causes(&error), "could not open the database: store backend failure: file is not a database");
        // A cause the text already ends with is not said twice.
        let bound = StartError::Bind(std::io::Error::other("address in use"));
        assert_eq!(with_causes(&Quoting(bound)), "quoting: could not listen on the configured address: address in use");
        let config = StartError::Config("PHARMAPAY_JWT_SECRET is too short".into());
        assert_eq!(with_causes(&config), "PHARMAPAY_JWT_SECRET is too short");
    }

    /// An error whose text already ends with its cause's, as `#[error("...: {0}")]` writes it.
    #[derive(Debug)]
    struct Quoting(StartError);

    impl std::fmt::Display for Quoting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "quoting: {}", self.0)
        }
    }

    impl std::error::Error for Quoting {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
}
