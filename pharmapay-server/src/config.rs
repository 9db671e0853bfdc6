//! Configuration (D28): environment variables, each overridable by the flag of the same name.
//!
//! Every option has a sensible default, so `pharmapay` with no configuration serves on
//! 127.0.0.1:8080 from a SQLite file `pharmapay.db` in the working directory. The JWT secret
//! is wrapped so it never appears in logs or `Debug` output.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use pharmapay_store_sqlx::StoreOptions;

use crate::turns::DownloadLimits;
use crate::turns::Turns;

/// The pharmapay command line.
#[derive(Debug, Parser)]
#[command(
    name = "pharmapay",
    version,
    about = "pharmapay: what a pharmacy owes its vendors, served as a JSON API.",
    long_about = "pharmapay tracks vendors, their invoices and the partial payments made against them, \
with exact balances, statuses, role-based access, a live dashboard and Excel exports.\n\n\
With no subcommand it serves the API. Every option can also be set by the environment variable \
shown; the flag wins when both are given."
)]
pub struct Cli {
    /// What to do; serving the API is the default.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Server settings.
    #[command(flatten)]
    pub config: Config,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (the default).
    Serve,
    /// Fill the database with deterministic demo data: vendors, invoices and payments over three
    /// years, for trying the product and for benchmarks. Onboards a demo pharmacy first when the
    /// database is empty (admin: admin@demo.example, password: demo-password).
    SeedDemo(SeedDemoArgs),
    /// Import vendors or invoices from a CSV or xlsx file straight into the configured database,
    /// without a running server: the same checks and the same all-or-nothing write as
    /// POST /api/imports/{vendors,invoices} (D45), audited as the chosen admin's.
    Import(ImportArgs),
    /// Write the OpenAPI document the server serves at /api/openapi.json, as it builds it from
    /// the route table; the repository keeps a copy in pharmapay-server/openapi.json.
    Openapi(OpenapiArgs),
}

/// What to import, from where.
#[derive(Clone, Debug, Args)]
pub struct ImportArgs {
    /// What the file holds.
    #[arg(value_enum)]
    pub kind: ImportKind,
    /// The file: `.csv` or `.xlsx` (its first worksheet). Download a template with
    /// GET /api/imports/{vendors,invoices}/template.
    pub file: std::path::PathBuf,
    /// Check every row and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The email of the active admin the audit log names as the author; the first admin
    /// without one.
    #[arg(long = "as", value_name = "EMAIL")]
    pub admin_email: Option<String>,
}

/// What an imported file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportKind {
    /// Vendors, with the vendors report's columns.
    Vendors,
    /// Invoices of existing vendors.
    Invoices,
}

/// Where to write the API document.
#[derive(Clone, Debug, Args)]
pub struct OpenapiArgs {
    /// The file to write; standard output without one.
    pub path: Option<std::path::PathBuf>,
}

/// How much demo data to write.
#[derive(Clone, Copy, Debug, Args)]
pub struct SeedDemoArgs {
    /// Vendors to create.
    #[arg(long, default_value_t = 300)]
    pub vendors: u64,
    /// Invoices to create, spread over the vendors.
    #[arg(long, default_value_t = 30_000)]
    pub invoices: u64,
    /// Payments to create, spread over the invoices.
    #[arg(long, default_value_t = 90_000)]
    pub payments: u64,
    /// Branches to spread the invoices over, the head office among them (D49): those missing
    /// are created as ST002, ST003 and on.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub branches: u64,
    /// Random seed: the same seed gives the same data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Where the data lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Database {
    /// The in-memory store: nothing is kept after the process ends.
    Memory,
    /// A SQLite file or a PostgreSQL server, by URL.
    Sql(String),
}

impl Database {
    /// Reads `memory:`, `sqlite:...`, `postgres://...` or a bare SQLite file path.
    pub fn parse(url: &str) -> Self {
        if url.trim().eq_ignore_ascii_case("memory:") { Database::Memory } else { Database::Sql(url.trim().to_owned()) }
    }
}

/// A secret whose `Debug` output never shows it.
#[derive(Clone)]
pub struct SecretArg(pub String);

impl fmt::Debug for SecretArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl std::str::FromStr for SecretArg {
    type Err = std::convert::Infallible;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Ok(SecretArg(value.to_owned()))
    }
}

/// The server's settings (D28).
#[derive(Clone, Debug, Args)]
pub struct Config {
    /// Where the data lives: a SQLite file (`pharmapay.db`, `sqlite:path/to/file.db`), a
    /// PostgreSQL server (`postgres://user@host/db`), or `memory:` for a store that keeps
    /// nothing. A SQLite file is created on first start; migrations run at every start.
    #[arg(long, global = true, env = "PHARMAPAY_DATABASE_URL", default_value = "sqlite:pharmapay.db")]
    pub database_url: String,

    /// The address and port to listen on.
    #[arg(long, global = true, env = "PHARMAPAY_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// The HS256 signing secret, at least 32 characters. When unset, a random secret is
    /// generated once and kept in the database, so every server sharing it agrees.
    #[arg(long, global = true, env = "PHARMAPAY_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<SecretArg>,

    /// The `iss` claim written into tokens and required of them.
    #[arg(long, global = true, env = "PHARMAPAY_JWT_ISSUER", default_value = "pharmapay")]
    pub jwt_issuer: String,

    /// The `aud` claim written into tokens and required of them.
    #[arg(long, global = true, env = "PHARMAPAY_JWT_AUDIENCE", default_value = "pharmapay")]
    pub jwt_audience: String,

    /// How many hours a token stays valid (1 to 8760).
    #[arg(long, global = true, env = "PHARMAPAY_TOKEN_HOURS", default_value_t = 24,
        value_parser = clap::value_parser!(u32).range(1..=8760))]
    pub token_hours: u32,

    /// Browser origins allowed to call the API, comma-separated (`*` for any). None by default.
    #[arg(long, global = true, env = "PHARMAPAY_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,

    /// Seconds a client may take to send a request's headers, and again its body, and may leave
    /// an answer (such as a report download) unread; slower or stalled clients are cut off
    /// (1 to 3600).
    #[arg(long, global = true, env = "PHARMAPAY_REQUEST_TIMEOUT_SECS", default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_timeout_secs: u64,

    /// How many client connections are served at once (at least 1). Further clients wait to be
    /// accepted until a connection closes; a warning is logged the first time the limit is
    /// reached.
    #[arg(long, global = true, env = "PHARMAPAY_MAX_CONNECTIONS", default_value_t = 1024,
        value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// Seconds a request waits for a free database connection before it is answered 503
    /// (1 to 600). It also bounds connecting at start.
    #[arg(long, global = true, env = "PHARMAPAY_DB_ACQUIRE_TIMEOUT_SECS", default_value_t = 5,
        value_parser = clap::value_parser!(u64).range(1..=600))]
    pub db_acquire_timeout_secs: u64,

    /// Seconds a report that takes seconds at a chain's scale (aging across vendors, a vendor's
    /// statement) waits for its turn before it is answered 503 (1 to 600). Only
    /// `--db-long-reads` of them run at once; the rest queue in the order they came.
    #[arg(long, global = true, env = "PHARMAPAY_DB_LONG_READ_WAIT_SECS", default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=600))]
    pub db_long_read_wait_secs: u64,

    /// How many reports that take seconds at a chain's scale run at once (1 to 1000). Unset:
    /// half the database readers and half the cores, at least 1, so everyone else keeps
    /// readers and a core while they run. Raise it where the database has cores to spare.
    #[arg(long, global = true, env = "PHARMAPAY_DB_LONG_READS",
        value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub db_long_reads: Option<u32>,

    /// Database connections of each kind this server may open (1 to 1000): PostgreSQL reader
    /// connections, and as many again for writes; or SQLite reader connections, beside SQLite's
    /// one writer. Unset: 10 for PostgreSQL, 8 for SQLite. Lower it where many servers share
    /// one PostgreSQL database, whose own limit (`max_connections`, 100 by default) holds
    /// their sum.
    #[arg(long, global = true, env = "PHARMAPAY_DB_CONNECTIONS",
        value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub db_connections: Option<u32>,

    /// How many report downloads (the Excel files under `/api/reports`) this server generates
    /// and sends at once (1 to 64). Each keeps a core busy while it is built and holds a
    /// temporary file as large as the report while it is sent; further reports queue for a
    /// turn. Unset: half the cores, at least 1.
    #[arg(long, global = true, env = "PHARMAPAY_REPORTS_AT_ONCE",
        value_parser = clap::value_parser!(u32).range(1..=64))]
    pub reports_at_once: Option<u32>,

    /// Seconds a report waits for its turn before it is answered 503 (1 to 600).
    #[arg(long, global = true, env = "PHARMAPAY_REPORT_WAIT_SECS", default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=600))]
    pub report_wait_secs: u64,

    /// How many uploaded files (imports, D45, and bank statements, D46) this server reads and
    /// writes at once (1 to 64). Reading one may grow the server's memory by up to 256 MiB
    /// (D51), so further uploads queue for a turn.
    #[arg(long, global = true, env = "PHARMAPAY_UPLOADS_AT_ONCE", default_value_t = 2,
        value_parser = clap::value_parser!(u32).range(1..=64))]
    pub uploads_at_once: u32,

    /// Seconds an upload waits for its turn before it is answered 503 (1 to 600).
    #[arg(long, global = true, env = "PHARMAPAY_UPLOAD_WAIT_SECS", default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=600))]
    pub upload_wait_secs: u64,

    /// The slowest a client may take a report download, in KiB a second, averaged over each
    /// request timeout (1 to 1048576). A client that takes less in one such window is cut off and
    /// the report's temporary file removed, so slow readers cannot hold the report turns for
    /// hours.
    #[arg(long, global = true, env = "PHARMAPAY_DOWNLOAD_MIN_KIB_PER_SEC", default_value_t = 32,
        value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub download_min_kib_per_sec: u64,

    /// Record an event for every write of the ledger (D47). `false` records none: the feed
    /// stays empty and webhooks are sent nothing, for an installation that follows its books
    /// from nowhere else and would rather not keep a row per write.
    #[arg(long, global = true, env = "PHARMAPAY_EVENTS", default_value_t = true, action = clap::ArgAction::Set)]
    pub events: bool,

    /// Let webhook deliveries reach loopback, private and link-local addresses (D47), which
    /// are refused by default so a webhook cannot be pointed at the server's own network.
    #[arg(long, global = true, env = "PHARMAPAY_WEBHOOK_ALLOW_PRIVATE", default_value_t = false,
        action = clap::ArgAction::Set)]
    pub webhook_allow_private: bool,

    /// Days an event stays in the feed once no delivery still needs it (1 to 3650, D47); older
    /// ones are removed in small batches.
    #[arg(long, global = true, env = "PHARMAPAY_EVENT_RETENTION_DAYS", default_value_t = 30,
        value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub event_retention_days: u32,

    /// Log filter, such as `info`, `debug` or `pharmapay=debug,info`.
    #[arg(long = "log", global = true, env = "RUST_LOG", default_value = "info")]
    pub log_filter: String,
}

impl Config {
    /// The settings a server would run with given no flags and no environment.
    pub fn defaults() -> Self {
        Cli::parse_from(["pharmapay"]).config
    }

    /// The database to open.
    pub fn database(&self) -> Database {
        Database::parse(&self.database_url)
    }

    /// How report downloads share the server.
    pub fn download_limits(&self) -> DownloadLimits {
        DownloadLimits {
            at_once: self
                .reports_at_once
                .map_or_else(DownloadLimits::default_at_once, |at_once| usize::try_from(at_once).unwrap_or(1)),
            queue_wait: Duration::from_secs(self.report_wait_secs),
            min_bytes_per_second: self.download_min_kib_per_sec * 1024,
        }
    }

    /// How uploaded files share the server (D51): how many are read at once, and how long the
    /// others wait for a turn.
    pub fn upload_turns(&self) -> Turns {
        Turns::new(usize::try_from(self.uploads_at_once).unwrap_or(1), Duration::from_secs(self.upload_wait_secs))
    }

    /// How the SQL store is opened: the defaults, with the configured connections and wait for
    /// one.
    pub fn store_options(&self) -> StoreOptions {
        StoreOptions {
            max_connections: self.db_connections,
            acquire_timeout: Duration::from_secs(self.db_acquire_timeout_secs),
            long_read_wait: Duration::from_secs(self.db_long_read_wait_secs),
            long_reads: self.db_long_reads,
            ..StoreOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_and_secrets_stay_hidden() {
        let cli = Cli::parse_from([
            "pharmapay",
            "--listen",
            "0.0.0.0:9000",
            "--jwt-secret",
            "s3cret-s3cret-s3cret-s3cret-s3cret",
            "--cors-origins",
            "https://a.example,https://b.example",
            "--token-hours",
            "8",
            "--max-connections",
            "3",
            "--db-acquire-timeout-secs",
            "60",
            "--db-long-read-wait-secs",
            "90",
            "--db-connections",
            "4",
            "--db-long-reads",
            "3",
        ]);
        assert_eq!(cli.config.store_options().long_reads, Some(3));
        assert_eq!(cli.config.store_options().acquire_timeout, Duration::from_secs(60));
        assert_eq!(cli.config.store_options().long_read_wait, Duration::from_secs(90));
        assert_eq!(cli.config.store_options().max_connections, Some(4));
        assert_eq!(cli.config.listen.port(), 9000);
        assert_eq!(cli.config.max_connections, 3);
        assert_eq!(cli.config.cors_origins, ["https://a.example", "https://b.example"]);
        assert_eq!(cli.config.token_hours, 8);
        assert!(!format!("{:?}", cli.config).contains("s3cret"));
        assert!(Cli::try_parse_from(["pharmapay", "--token-hours", "0"]).is_err());
        assert!(Cli::try_parse_from(["pharmapay", "--max-connections", "0"]).is_err());
        assert_eq!(Config::defaults().max_connections, 1024);
        assert!(Cli::try_parse_from(["pharmapay", "--db-acquire-timeout-secs", "0"]).is_err());
        assert_eq!(Config::defaults().store_options().acquire_timeout, StoreOptions::default().acquire_timeout);
        assert_eq!(Config::defaults().store_options().long_read_wait, StoreOptions::default().long_read_wait);
        assert!(Cli::try_parse_from(["pharmapay", "--db-long-read-wait-secs", "0"]).is_err());
        assert_eq!(Config::defaults().store_options().max_connections, None, "the store's defaults");
        assert!(Cli::try_parse_from(["pharmapay", "--db-connections", "0"]).is_err());
        assert_eq!(Config::defaults().download_limits(), DownloadLimits::default(), "the server's defaults");
        let slow = Cli::parse_from(["pharmapay", "--reports-at-once", "3", "--download-min-kib-per-sec", "8"]);
        assert_eq!(slow.config.download_limits().at_once, 3);
        assert_eq!(slow.config.download_limits().min_bytes_per_second, 8192);
        assert!(Cli::try_parse_from(["pharmapay", "--reports-at-once", "0"]).is_err());
    }

    #[test]
    fn memory_and_sql_urls_are_told_apart() {
        assert_eq!(Database::parse("memory:"), Database::Memory);
        assert_eq!(Database::parse("postgres://x@y/z"), Database::Sql("postgres://x@y/z".into()));
    }
}
