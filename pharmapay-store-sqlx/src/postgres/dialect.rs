//! What the shared store body needs of PostgreSQL: its database type, the dialect's statement texts and
//! flags, how writes begin and lock, and how ids are reserved and the schema is read.

use sqlx::{Pool, Row, Transaction};

use crate::error::Error;
use crate::schema::Earlier;
use crate::{Lock, Migration, SearchIndex, Table};

/// The database the shared store body is compiled for.
pub(super) type Db = sqlx::Postgres;

/// The backend's name, for logs.
pub(super) const BACKEND: &str = "postgres";

/// Writes lock the rows they rely on, in one order (`for_update!`, `guards::lock_vendors_of`).
pub(super) const ROW_LOCKS: bool = true;

/// Search terms are looked up in `pg_trgm` GIN indexes (migration 4), which serve `LIKE`.
pub(super) const SEARCH_INDEX: SearchIndex = SearchIndex::Trigram;

/// PostgreSQL prepares one statement at a time: a script's statements are sent one by one.
pub(super) const SCRIPTS_IN_ONE_CALL: bool = false;

/// PostgreSQL binds `$n` by position already: no other placeholder is needed.
pub(super) const IN_ORDER_PLACEHOLDER: Option<&str> = None;

/// The texts of the JSON array bound as `$1`, as a subquery: a list of thousands of keys (an
/// imported file's invoice numbers, D45) in one bound value and one statement.
pub(super) const JSON_TEXTS: &str = "SELECT json_array_elements_text($1::json)";

/// The integers of the JSON array bound as `$1`, as a subquery: a bank statement's thousands of
/// amounts (D46) in one bound value, so the days around its lines are read once.
pub(super) const JSON_INTS: &str = "SELECT json_array_elements_text($1::json)::bigint";

/// How a read that spans statements begins: one snapshot for all of them.
pub(super) const READ_SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/// What a long read (a chain's aging, a vendor's statement) runs first in its snapshot: no
/// parallel workers (D48). PostgreSQL would otherwise give one such query every core it may
/// (two workers by default): the few long reads at once are bounded to leave the others cores
/// to be answered on, which parallel workers took back (other users' profile fetches took four
/// times as long beside agings at a chain's scale on two cores).
pub(super) const LONG_READ_SETUP: Option<&str> = Some("SET LOCAL max_parallel_workers_per_gather = 0");

/// The licence alerts' vendors (D36), a row each: active, with a licence valid until before
/// `$1`, read along the index `vendors_by_licence`. Packed into one JSON value as on SQLite,
/// the list took a quarter longer here: sqlx reads PostgreSQL's rows from its buffer without a
/// thread between, and `json_agg` costs more than it saves.
pub(super) const LICENCE_HOLDERS: &str = "SELECT v.id, v.name, v.drug_license_number1, v.drug_license_valid_until \
     FROM vendors v WHERE v.is_active AND v.drug_license_valid_until < $1";

/// Whether [`LICENCE_HOLDERS`] answers one JSON value rather than a row each.
pub(super) const LICENCE_HOLDERS_PACKED: bool = false;

/// The embedded migrations, in version order.
pub(crate) const MIGRATIONS: &[Migration] = &migrations!("postgres");

/// The texts earlier builds applied of migrations edited after their first version was
/// committed, with what brings their databases up to the landed texts (`migrations/postgres/earlier/`).
pub(crate) const EARLIER: &[Earlier] = &[
    Earlier {
        version: 4,
        checksum: "cf6ed37e423da6cb",
        catch_up: include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/postgres/earlier/0004_v1_catch_up.sql"
        )),
        recounts_figures: true,
    },
    Earlier {
        version: 13,
        checksum: "6912234f86c3ad70",
        catch_up: include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/postgres/earlier/0013_v1_catch_up.sql"
        )),
        recounts_figures: false,
    },
    Earlier {
        version: 18,
        checksum: "26e154839ac2cd7a",
        catch_up: include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/postgres/earlier/0018_v1_catch_up.sql"
        )),
        recounts_figures: false,
    },
    Earlier {
        version: 18,
        checksum: "8c8623255cc22ed7",
        catch_up: include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/postgres/earlier/0018_v2_catch_up.sql"
        )),
        recounts_figures: false,
    },
];

/// The table that records applied migrations, created when missing. Written as a check rather
/// than `CREATE TABLE IF NOT EXISTS`, whose notice for an existing table ("already exists,
/// skipping") sqlx logs at `info`: once for each migration at every start.
pub(super) const MIGRATIONS_TABLE: &str = "DO $$ BEGIN IF to_regclass('_pharmapay_migrations') IS NULL THEN \
     CREATE TABLE _pharmapay_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, \
     checksum TEXT NOT NULL, applied_at BIGINT NOT NULL); END IF; END $$";

/// Begins a write transaction (READ COMMITTED, the server's default).
pub(super) async fn begin_write(pool: &Pool<Db>) -> Result<Transaction<'static, Db>, sqlx::Error> {
    pool.begin().await
}

/// Writes take connections from the one pool; each commits by itself.
pub(super) type Writer = Pool<Db>;

/// The reader connections (`read_pool`), lent without a ping.
pub(super) type Reader = crate::read_pool::ReadPool<Db>;

/// A borrowed reader connection.
pub(super) type ReadConn = crate::read_pool::ReadConn<Db>;

/// One write of a store method: a transaction of its own, whose commit, once asked for, runs to
/// its end even when the caller stops waiting.
///
/// A server drops a request's future when its client disconnects. Dropped while sqlx awaited
/// `COMMIT`, the transaction still counted as open, so sqlx sent a `ROLLBACK` after the commit
/// had gone through, and PostgreSQL's "there is no transaction in progress" came back as a
/// warning in the log. Committed on a task of its own, the transaction is closed when the
/// commit ends, whoever still waits for it. A write dropped before its commit is rolled back,
/// as any unfinished transaction is.
pub(super) struct WriteTx(pub(super) Transaction<'static, Db>);

impl WriteTx {
    /// Commits the transaction on a task of its own and waits for it. A commit whose connection
    /// was lost before PostgreSQL answered may have gone through or not: it fails with
    /// [`Error::CommitUnknown`], never as a write known not to be kept (D48).
    pub(super) async fn commit(self) -> Result<(), Error> {
        crate::to_the_end(self.0.commit()).await.map_err(|error| Error::Sqlx(error).of_commit())
    }

    /// Rolls the transaction back (dropping it would too, a little later).
    pub(super) async fn rollback(self) -> Result<(), sqlx::Error> {
        self.0.rollback().await
    }
}

impl std::ops::Deref for WriteTx {
    type Target = sqlx::PgConnection;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// Begins one write of a store method, on a task of its own.
///
/// sqlx counts a transaction only once `BEGIN` has answered, and queues a rollback only for a
/// counted one. A caller dropped while `BEGIN` ran (a client that went away) handed its
/// connection back to the pool inside a transaction nobody ended; the next write on it then
/// met "there is already a transaction in progress", and its commit ended both. On a task of
/// its own, `BEGIN` finishes whoever waits, and a transaction nobody took is dropped there,
/// counted, and rolled back as usual.
pub(super) async fn begin_write_tx(writer: &Writer) -> Result<WriteTx, sqlx::Error> {
    let pool = writer.clone();
    crate::to_the_end(async move { begin_write(&pool).await }).await.map(WriteTx)
}

/// Begins one write of a store method and reads the first row of `read` (binding `value` as
/// `$1`) in it.
pub(super) async fn begin_write_reading(
    writer: &Writer,
    read: &'static str,
    value: &'static str,
) -> Result<(WriteTx, Option<sqlx::postgres::PgRow>), sqlx::Error> {
    let mut db_tx = begin_write_tx(writer).await?;
    let row = sqlx::query(read).bind(value).fetch_optional(&mut *db_tx).await?;
    Ok((db_tx, row))
}

/// The pool behind the writer.
pub(super) fn writer_pool(writer: &Writer) -> &Pool<Db> {
    writer
}

/// Takes `lock` until the transaction ends; a single reference's lock comes with
/// [`Lock::AllReferences`] held shared, taken first.
pub(super) async fn lock(conn: &mut sqlx::PgConnection, lock: Lock) -> Result<(), sqlx::Error> {
    if let Lock::Reference(_) = lock {
        sqlx::query("SELECT pg_advisory_xact_lock_shared($1)")
            .bind(Lock::AllReferences.key())
            .execute(&mut *conn)
            .await?;
    }
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(lock.key()).execute(&mut *conn).await?;
    Ok(())
}

/// `n` fresh ids for `table` from its identity sequence, ascending.
pub(super) async fn reserve_ids(conn: &mut sqlx::PgConnection, table: Table, n: usize) -> Result<Vec<i64>, Error> {
    let sql = match table {
        Table::Vendors => "SELECT nextval(pg_get_serial_sequence('vendors', 'id')) FROM generate_series(1, $1)",
        Table::Invoices => "SELECT nextval(pg_get_serial_sequence('invoices', 'id')) FROM generate_series(1, $1)",
        Table::Transactions => {
            "SELECT nextval(pg_get_serial_sequence('transactions', 'id')) FROM generate_series(1, $1)"
        }
        Table::Credits => "SELECT nextval(pg_get_serial_sequence('vendor_credits', 'id')) FROM generate_series(1, $1)",
        Table::CreditApplications => {
            "SELECT nextval(pg_get_serial_sequence('credit_applications', 'id')) FROM generate_series(1, $1)"
        }
    };
    let n = i64::try_from(n).map_err(|_| Error::corrupt("too many rows for one import"))?;
    let rows = sqlx::query(sql).bind(n).fetch_all(&mut *conn).await?;
    let mut ids = rows.iter().map(|row| row.try_get::<i64, _>(0)).collect::<Result<Vec<_>, _>>()?;
    ids.sort_unstable();
    Ok(ids)
}

/// The kind (always `index`: the search is an index here), name and definition of those of
/// `names` the current schema has.
pub(super) async fn schema_definitions(
    conn: &mut sqlx::PgConnection,
    names: &[&str],
) -> Result<Vec<(String, String, String)>, sqlx::Error> {
    let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
    let rows = sqlx::query(
        "SELECT 'index' AS kind, indexname, indexdef FROM pg_indexes \
         WHERE schemaname = current_schema() AND indexname = ANY($1) ORDER BY indexname",
    )
    .bind(names)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))).collect()
}

/// Gives this transaction's index builds more sorting memory than the server's default.
pub(super) async fn before_index_builds(conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SET LOCAL maintenance_work_mem = '256MB'").execute(conn).await?;
    Ok(())
}

/// Nothing to refill: the trigram index is built with the other indexes.
pub(super) async fn rebuild_search(_conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    Ok(())
}

/// Moves the identity sequences of the seeded tables past the fixed seed ids (D27).
pub(super) async fn after_seed(conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    for sql in [
        "SELECT setval(pg_get_serial_sequence('roles', 'id'), (SELECT MAX(id) FROM roles))",
        "SELECT setval(pg_get_serial_sequence('permissions', 'id'), (SELECT MAX(id) FROM permissions))",
        "SELECT setval(pg_get_serial_sequence('policies', 'id'), (SELECT MAX(id) FROM policies))",
    ] {
        sqlx::query(sql).execute(&mut *conn).await?;
    }
    Ok(())
}
