//! What every file of the store body shares: the connection and row types of the backend it
//! is compiled for, the chunk sizes of bulk statements, the small helpers of reads and writes,
//! the retry of writes that met contention, and the [`SqlStore`] itself.

use pharmapay_core::StoreError;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::store::StoreResult;
use tracing::warn;

use super::{Db, Reader, Writer};
use crate::error::Error;

pub(super) type Result<T, E = Error> = std::result::Result<T, E>;

pub(super) type Conn = <Db as sqlx::Database>::Connection;

pub(super) type DbRow = <Db as sqlx::Database>::Row;

pub(super) type Args = <Db as sqlx::Database>::Arguments;

pub(super) type Query = sqlx::query::Query<'static, Db, Args>;

/// Rows per multi-row INSERT in imports: well under both backends' limits on bound values
/// (32,766 for SQLite, 65,535 for PostgreSQL) for the widest table.
pub(super) const IMPORT_CHUNK: usize = 1_000;

/// Values per `IN (...)` list when checking an import's references.
pub(super) const LOOKUP_CHUNK: usize = 500;

pub(super) fn refused<T>(error: StoreError) -> Result<T> {
    Err(Error::Refused(error))
}

pub(super) fn written<T>(record: Option<T>) -> Result<T> {
    record.ok_or_else(|| Error::corrupt("a record written in this transaction cannot be read back"))
}

/// The row `sql` reads for the id `id` (bound as `$1`), if any.
pub(super) async fn row_by_id(conn: &mut Conn, sql: &'static str, id: i64) -> Result<Option<DbRow>> {
    Ok(sqlx::query(sql).bind(id).fetch_optional(&mut *conn).await?)
}

/// Runs `sql`, which soft-deletes or restores the row `id` (`$1`), stamping `at` (`$2`) where
/// the table keeps a last change; answers how many rows it changed.
pub(super) async fn set_active(conn: &mut Conn, sql: &'static str, id: i64, at: Option<Timestamp>) -> Result<u64> {
    let mut query = sqlx::query(sql).bind(id);
    if let Some(at) = at {
        query = query.bind(micros(at));
    }
    Ok(query.execute(&mut *conn).await?.rows_affected())
}

/// How many times a write runs at most when the database ends it for how it met other writes
/// ([`Error::contended`]).
pub(super) const WRITE_ATTEMPTS: u32 = 8;

/// Answers a store method that writes: runs its body, a whole transaction, and maps the body's
/// error into the contract's once. A body the database ended to break a lock cycle or for a
/// serialisation failure runs again (D48: such a failure is never the caller's to see), after
/// a short pause that grows with each attempt and differs between writers, so the two sides of
/// a cycle do not meet again at once; each run is logged at `warn`. Every run begins a
/// transaction of its own, and a failed one left nothing behind, so running it again is safe.
pub(super) async fn answer<T, F>(body: impl Fn() -> F) -> StoreResult<T>
where
    F: Future<Output = Result<T>>,
{
    let mut attempt = 1;
    loop {
        match body().await {
            Err(error) if error.contended() && attempt < WRITE_ATTEMPTS => {
                let pause = contention_pause(attempt);
                warn!(%error, attempt, pause_ms = pause.as_millis(), "a write met others in a lock cycle; it runs again");
                tokio::time::sleep(pause).await;
                attempt += 1;
            }
            answered => return answered.map_err(StoreError::from),
        }
    }
}

/// The pause before a write's next attempt: up to 2^attempt milliseconds (at most 128), drawn
/// afresh each time.
pub(super) fn contention_pause(attempt: u32) -> std::time::Duration {
    use std::hash::{BuildHasher, Hasher};
    // A hasher's keys are random per `RandomState`: a cheap draw, with no generator to share.
    let draw = std::collections::hash_map::RandomState::new().build_hasher().finish();
    let ceiling_ms = 1_u64 << attempt.min(7);
    std::time::Duration::from_micros(draw % (ceiling_ms * 1_000) + 500)
}

/// The store over one backend: reader connections (`crate::read_pool`) and the connections of
/// write transactions (sqlx's pool on PostgreSQL; SQLite's one writer connection, whose writes
/// commit in groups). It implements each purpose of the contract in that purpose's file.
/// Cloning is cheap; clones share the connections.
#[derive(Clone)]
pub struct SqlStore {
    pub(super) reader: Reader,
    pub(super) writer: Writer,
}

impl SqlStore {
    pub(crate) fn new(reader: Reader, writer: Writer) -> Self {
        Self { reader, writer }
    }
}

/// An instant as the store keeps it: microseconds since the Unix epoch.
pub(super) fn micros(instant: Timestamp) -> i64 {
    instant.as_microsecond()
}

/// A stored instant, or a corrupt-data error naming it.
pub(super) fn instant(micros: i64) -> Result<Timestamp> {
    Timestamp::from_microsecond(micros).map_err(|error| Error::corrupt(format!("instant {micros}: {error}")))
}

/// A stored count, never negative.
pub(super) fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}
