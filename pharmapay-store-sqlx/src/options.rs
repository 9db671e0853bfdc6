//! How a store is opened: pool sizes, timeouts and durability ([`StoreOptions`]), and which
//! backend a database URL names.

use std::time::Duration;

use crate::error;

/// Pool sizes, timeouts and durability; [`StoreOptions::default`] is what a server wants.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Most connections: PostgreSQL's reader connections and, as many again, its connections
    /// for writes; or the number of SQLite reader connections (SQLite always has exactly one
    /// writer connection besides them). `None` means [`StoreOptions::POSTGRES_CONNECTIONS`]
    /// or [`StoreOptions::SQLITE_READERS`].
    pub max_connections: Option<u32>,
    /// How long a call waits for a connection before failing with
    /// [`StoreError::Unavailable`]; it also bounds connecting, so an unreachable database is
    /// reported after this long instead of hanging. Default: 5 seconds.
    pub acquire_timeout: Duration,
    /// How long a read that may take seconds (a chain's aging, a vendor's statement) waits for
    /// its turn before failing with [`StoreError::Unavailable`]: only
    /// [`StoreOptions::long_reads`] such reads run at once, and the rest queue, first come
    /// first served. Its
    /// connection is then borrowed within `acquire_timeout`. Default: 30 seconds.
    pub long_read_wait: Duration,
    /// How many reads that may take seconds run at once. `None` means
    /// [`StoreOptions::default_long_reads`] of the reader connections.
    pub long_reads: Option<u32>,
    /// How long SQLite waits on a lock held by another process before giving up (writers in
    /// this process queue for the one writer connection instead). Default: 5 seconds.
    pub sqlite_busy_timeout: Duration,
    /// How SQLite makes a commit durable. Default: [`SqliteDurability::Full`].
    pub sqlite_durability: SqliteDurability,
}

/// How SQLite makes a commit durable (its `synchronous` setting in WAL mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SqliteDurability {
    /// `synchronous = FULL`: each commit is flushed to disk before the store answers, so an
    /// acknowledged payment survives a power cut. Costs about a third of the write rate.
    #[default]
    Full,
    /// `synchronous = NORMAL`: commits survive a crash of the process but the last ones may be
    /// lost on power loss or an operating-system crash; the database stays consistent.
    Normal,
}

impl StoreOptions {
    /// PostgreSQL's reader connections, and as many for writes, unless
    /// [`StoreOptions::max_connections`] says otherwise: more than two cores can keep busy, and
    /// two servers' 40 stay well under the database's default limit of 100.
    pub const POSTGRES_CONNECTIONS: u32 = 10;
    /// SQLite's reader connections unless [`StoreOptions::max_connections`] says otherwise.
    pub const SQLITE_READERS: u32 = 8;

    /// Long reads at once over `readers` reader connections, unless
    /// [`StoreOptions::long_reads`] says otherwise: half the readers, so short reads keep the
    /// rest, and half the cores, so that while long reads run the others keep a core to be
    /// answered on (D48; a chain's aging keeps a core busy for seconds: with as many running as
    /// cores, everyone's profile fetches took more than twice as long); at least one.
    pub fn default_long_reads(readers: u32) -> u32 {
        let cores = std::thread::available_parallelism().map_or(2, |cores| u32::try_from(cores.get()).unwrap_or(2));
        (readers / 2).min(cores / 2).max(1)
    }
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            max_connections: None,
            acquire_timeout: Duration::from_secs(5),
            long_read_wait: Duration::from_secs(30),
            long_reads: None,
            sqlite_busy_timeout: Duration::from_secs(5),
            sqlite_durability: SqliteDurability::Full,
        }
    }
}

/// Where a URL points.
pub(crate) enum Target<'a> {
    Sqlite(Location<'a>),
    Postgres(&'a str),
}

pub(crate) fn target(url: &str) -> Result<Target<'_>, error::Error> {
    let lower = url.trim_start().to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        Ok(Target::Postgres(url))
    } else if lower.starts_with("sqlite:") {
        Ok(Target::Sqlite(Location::Url(url)))
    } else if lower.contains("://") {
        Err(error::Error::Config(format!(
            "unsupported database URL scheme in {:?}: use sqlite:, postgres:// or a file path",
            url.split("://").next().unwrap_or_default()
        )))
    } else if url.trim().is_empty() {
        Err(error::Error::Config("the database URL is empty".into()))
    } else {
        Ok(Target::Sqlite(Location::Path(url)))
    }
}

/// How many long reads run at once over `readers` reader connections, and how long one waits
/// for its turn, as `options` say.
pub(crate) fn long_reads(options: &StoreOptions, readers: u32) -> (u32, Duration) {
    let at_once = options.long_reads.unwrap_or_else(|| StoreOptions::default_long_reads(readers));
    (at_once, options.long_read_wait)
}

/// A SQLite database to open.
pub(crate) enum Location<'a> {
    /// A `sqlite:` URL.
    Url(&'a str),
    /// A plain file path.
    Path(&'a str),
}
