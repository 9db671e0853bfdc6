//! Group commit for SQLite's one writer connection.
//!
//! With `synchronous = FULL`, every commit waits for the disk to confirm the write-ahead log, and
//! SQLite's one writer holds the database while it waits. Under concurrent writes, most of a
//! payment's time was that wait. Here, writes that queue for the writer share one database
//! transaction and one commit:
//!
//! - The first write of a batch begins the transaction (`BEGIN IMMEDIATE`); each write runs
//!   inside a savepoint of its own, so a write that fails or is refused rolls back alone and its
//!   batch goes on.
//! - A write that ends while others are queued for the writer releases its savepoint and hands
//!   the writer on; it then queues again, behind them. Whoever comes back to a batch that is
//!   still open commits it, for every write in it. A write that ends with nobody queued, or
//!   fills the batch ([`MAX_WRITES`]), commits at once.
//! - No write is answered before the commit that holds it: each one waits for its batch's
//!   outcome and reports it, so a failed commit fails every write of its batch and nothing is
//!   acknowledged that is not on disk.
//! - A write's reads see the writes before it in its batch, as they would had those committed
//!   first: they will be committed together, or not at all.
//! - A write's outcome belongs to the writer, not to the request that asked for it. Beginning a
//!   write, ending it (releasing its savepoint, handing the writer on, coming back) and
//!   committing a batch run on tasks of the store's own (`crate::to_the_end`), so a caller that
//!   goes away (a client that disconnects drops its request) can neither cut a commit short nor
//!   leave a savepoint half released: what every other write of the batch is told is what the
//!   database did. A caller that goes away while its write runs its own statements leaves the
//!   write to be rolled back to its savepoint on a task of its own; the rest of the batch goes
//!   on.
//!
//! Each write still is one transaction for the rules of the store (it locks, loads, asks core,
//! writes and reads back inside its savepoint), and the kept figures of D41 change in the same
//! database transaction as the rows they count.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use sqlx::sqlite::SqliteRow;
use sqlx::{AssertSqlSafe, Pool, Sqlite, SqliteConnection, Transaction};
use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::error::Error;

/// The most writes one commit holds: enough to spread the disk's wait over many writes, few
/// enough that the first write of a batch does not wait long for the last.
const MAX_WRITES: usize = 64;

/// How a batch ended: committed, or why it did not.
type Outcome = Result<(), Failure>;

/// Why a batch did not commit, kept so every write of it can report it.
#[derive(Clone, Debug)]
struct Failure {
    /// The database could not be reached (its error was an I/O error).
    unreachable: bool,
    /// The connection's worker thread went away while it ran the batch's statement, so whether
    /// a commit under way went through is unknown. Any other failed commit kept nothing: SQLite
    /// rolls back a transaction whose commit fails, and the dropped transaction rolls back what
    /// is left of it.
    unknown: bool,
    message: Arc<str>,
}

impl Failure {
    fn of(error: &sqlx::Error) -> Self {
        Self {
            unreachable: matches!(error, sqlx::Error::Io(_)),
            unknown: matches!(error, sqlx::Error::WorkerCrashed),
            message: error.to_string().into(),
        }
    }

    /// The failure as the error a write reports.
    fn error(&self) -> sqlx::Error {
        let message = format!("the batch of writes this one belonged to was not committed: {}", self.message);
        if self.unknown {
            sqlx::Error::WorkerCrashed
        } else if self.unreachable {
            sqlx::Error::Io(std::io::Error::other(message))
        } else {
            sqlx::Error::Protocol(message)
        }
    }
}

/// The open batch, if any.
#[derive(Default)]
struct Batch {
    /// The database transaction of the open batch.
    tx: Option<Transaction<'static, Sqlite>>,
    /// Set once when the open batch ends; every write of it reads it.
    outcome: Arc<OnceLock<Outcome>>,
    /// Writes in the open batch so far.
    writes: usize,
    /// A write ended without releasing or rolling back its savepoint (its caller went away or
    /// returned early): the next holder rolls it back first.
    savepoint_open: bool,
}

impl Batch {
    async fn execute(&mut self, sql: &'static str) -> Result<(), sqlx::Error> {
        match self.tx.as_mut() {
            Some(tx) => sqlx::query(sql).execute(&mut **tx).await.map(drop),
            None => Err(sqlx::Error::Protocol("no write transaction is open".into())),
        }
    }

    /// Rolls back the savepoint a write left open, if any; if that fails, the batch ends.
    async fn settle(&mut self) -> Result<(), sqlx::Error> {
        if self.savepoint_open {
            let rolled_back = match self.execute("ROLLBACK TO write").await {
                Ok(()) => self.execute("RELEASE write").await,
                Err(error) => Err(error),
            };
            if let Err(error) = rolled_back {
                self.abort(&error).await;
                return Err(error);
            }
            self.savepoint_open = false;
        }
        Ok(())
    }

    /// Commits the open batch and records the outcome for its writes. It runs on a task of
    /// the store's own, never on a request's, so it always ends with the database's answer.
    async fn commit(&mut self) -> Outcome {
        tracing::trace!(writes = self.writes, "committing a batch of writes");
        let outcome = match self.tx.take() {
            Some(tx) => tx.commit().await.map_err(|error| Failure::of(&error)),
            None => Ok(()),
        };
        self.end(outcome.clone());
        outcome
    }

    /// Rolls the open batch back after `error`, which every write of it will report.
    async fn abort(&mut self, error: &sqlx::Error) {
        if let Some(tx) = self.tx.take() {
            // The transaction may be gone already (SQLite rolls back by itself after some
            // errors); either way nothing of it stays.
            let _ = tx.rollback().await;
        }
        self.end(Err(Failure::of(error)));
    }

    fn end(&mut self, outcome: Outcome) {
        let _ = self.outcome.set(outcome);
        self.writes = 0;
        self.savepoint_open = false;
    }
}

/// The writer connection's pool and its batches. Cloning is cheap; clones share both.
#[derive(Clone)]
pub(crate) struct Writer {
    pool: Pool<Sqlite>,
    batch: Arc<Mutex<Batch>>,
    /// Writes queued for the writer, including those come back to commit.
    queued: Arc<AtomicUsize>,
}

impl Writer {
    /// Batches the writes on `pool`, a pool of one connection.
    pub(crate) fn new(pool: Pool<Sqlite>) -> Self {
        Self { pool, batch: Arc::default(), queued: Arc::default() }
    }

    /// The pool, for what runs outside batches: migrations, bulk loads and settings reads.
    /// They take the connection when no batch holds it.
    pub(crate) fn pool(&self) -> &Pool<Sqlite> {
        &self.pool
    }

    /// Waits for the writer; counted as queued while waiting.
    async fn queue(&self) -> OwnedMutexGuard<Batch> {
        struct Queued<'a>(&'a AtomicUsize);
        impl Drop for Queued<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        self.queued.fetch_add(1, Ordering::AcqRel);
        let _queued = Queued(&self.queued);
        Arc::clone(&self.batch).lock_owned().await
    }

    fn nobody_queued(&self) -> bool {
        self.queued.load(Ordering::Acquire) == 0
    }

    /// Begins a write: joins the open batch, or begins one, and opens the write's savepoint.
    ///
    /// It runs on a task of its own: a caller that goes away meanwhile leaves a write that is
    /// begun all the same and then rolled back as any dropped write is, never a savepoint or a
    /// transaction that nobody knows is open.
    ///
    /// # Errors
    /// The database's, when the batch cannot begin (the writer connection cannot be had, or
    /// another process holds the write lock past the busy timeout) or the savepoint fails.
    pub(crate) async fn begin(&self) -> Result<WriteTx, sqlx::Error> {
        let writer = self.clone();
        crate::to_the_end(async move { writer.begin_here().await }).await
    }

    async fn begin_here(&self) -> Result<WriteTx, sqlx::Error> {
        let mut batch = self.open_batch().await?;
        if let Err(error) = batch.execute("SAVEPOINT write").await {
            batch.abort(&error).await;
            return Err(error);
        }
        Ok(self.write_in(batch))
    }

    /// [`Writer::begin`], and the first row of `read` (a statement with the one text value
    /// `value` as `$1`) read inside the write's savepoint. Both go to the connection in one
    /// call, one hand-off to its worker thread less than beginning and then reading.
    ///
    /// # Errors
    /// As [`Writer::begin`], or the read's; a write whose read failed has ended.
    pub(crate) async fn begin_reading(
        &self,
        read: &'static str,
        value: &'static str,
    ) -> Result<(WriteTx, Option<SqliteRow>), sqlx::Error> {
        let writer = self.clone();
        crate::to_the_end(async move { writer.begin_reading_here(read, value).await }).await
    }

    async fn begin_reading_here(
        &self,
        read: &'static str,
        value: &'static str,
    ) -> Result<(WriteTx, Option<SqliteRow>), sqlx::Error> {
        let mut batch = self.open_batch().await?;
        // Both statements are the store's own texts; only `value` comes from outside, bound.
        let script = AssertSqlSafe(format!("SAVEPOINT write;\n{read}"));
        let rows = match batch.tx.as_mut() {
            Some(tx) => sqlx::query(script).bind(value).fetch_all(&mut **tx).await,
            None => Err(sqlx::Error::Protocol("no write transaction is open".into())),
        };
        match rows {
            Ok(rows) => Ok((self.write_in(batch), rows.into_iter().next())),
            Err(error) => {
                // The savepoint may have begun before the read failed: rolling back to it ends
                // this write alone, and should there be none to roll back to, the batch ends.
                batch.savepoint_open = true;
                let _ = batch.settle().await;
                Err(error)
            }
        }
    }

    /// Waits for the writer and makes sure a batch is open, for a write to begin in it.
    async fn open_batch(&self) -> Result<OwnedMutexGuard<Batch>, sqlx::Error> {
        let mut batch = self.queue().await;
        // A savepoint left open is rolled back first; should that fail, its batch has ended
        // (its writes report why) and this write begins the next.
        let _ = batch.settle().await;
        if batch.tx.is_none() {
            batch.tx = Some(self.pool.begin_with("BEGIN IMMEDIATE").await?);
            batch.outcome = Arc::default();
            batch.writes = 0;
        }
        Ok(batch)
    }

    /// The write whose savepoint `batch` has just begun.
    fn write_in(&self, mut batch: OwnedMutexGuard<Batch>) -> WriteTx {
        batch.writes += 1;
        batch.savepoint_open = true;
        WriteTx { writer: self.clone(), batch: Some(batch) }
    }

    /// Ends a write whose savepoint is released while others are queued: hands the writer on,
    /// and answers the outcome of the commit that holds the write.
    async fn end_write(&self, batch: OwnedMutexGuard<Batch>) -> Outcome {
        let outcome = Arc::clone(&batch.outcome);
        drop(batch);
        self.come_back(outcome).await
    }

    /// Comes back to the writer for the batch whose outcome is `outcome`: answers it if the
    /// batch has ended, else commits it (it is still the open one, as every end records its
    /// outcome).
    async fn come_back(&self, outcome: Arc<OnceLock<Outcome>>) -> Outcome {
        let mut batch = self.queue().await;
        if let Some(outcome) = outcome.get() {
            return outcome.clone();
        }
        if let Err(error) = batch.settle().await {
            return Err(Failure::of(&error));
        }
        batch.commit().await
    }
}

/// One write: a savepoint in its batch's transaction, holding the writer until it ends. It
/// reads and writes through the connection it dereferences to, and ends with
/// [`WriteTx::commit`] or [`WriteTx::rollback`]; dropped without either, it rolls back.
pub(crate) struct WriteTx {
    writer: Writer,
    /// Held from `begin` until the write ends; `None` only once it has.
    batch: Option<OwnedMutexGuard<Batch>>,
}

impl WriteTx {
    fn take(&mut self) -> OwnedMutexGuard<Batch> {
        self.batch.take().expect("a write holds its batch until it ends")
    }

    /// Keeps the write: releases its savepoint and answers once the batch holding it has been
    /// committed, with the commit's outcome. The release, the wait and the commit run on a task
    /// of their own, so the outcome is the same whether or not the caller still waits for it.
    ///
    /// # Errors
    /// The database's, when the savepoint cannot be released or the batch's commit fails:
    /// the write was not kept. [`Error::CommitUnknown`] when the connection's worker went away
    /// while the commit ran (or the runtime shut down meanwhile), so that nobody can tell (D48).
    pub(crate) async fn commit(self) -> Result<(), Error> {
        crate::to_the_end(self.commit_here()).await.map_err(|error| match error {
            sqlx::Error::WorkerCrashed => Error::CommitUnknown(error),
            other => Error::Sqlx(other),
        })
    }

    async fn commit_here(mut self) -> Result<(), sqlx::Error> {
        let batch = self.batch.as_mut().expect("a write holds its batch until it ends");
        if batch.writes >= MAX_WRITES || self.writer.nobody_queued() {
            // The commit releases the savepoint with the rest of the batch.
            let mut batch = self.take();
            batch.savepoint_open = false;
            return batch.commit().await.map_err(|failure| failure.error());
        }
        if let Err(error) = batch.execute("RELEASE write").await {
            batch.abort(&error).await;
            return Err(error);
        }
        batch.savepoint_open = false;
        let batch = self.take();
        self.writer.end_write(batch).await.map_err(|failure| failure.error())
    }

    /// Drops the write: rolls its savepoint back, on a task of its own; the rest of its batch
    /// goes on.
    ///
    /// # Errors
    /// The database's, when the savepoint cannot be rolled back (the batch then ends).
    pub(crate) async fn rollback(self) -> Result<(), sqlx::Error> {
        crate::to_the_end(self.rollback_here()).await
    }

    async fn rollback_here(mut self) -> Result<(), sqlx::Error> {
        let mut batch = self.take();
        batch.settle().await?;
        finish_if_alone(&self.writer, &mut batch).await;
        Ok(())
    }
}

/// Commits the open batch when nobody is queued to carry it on, so a write lock is never held
/// with no write to end it.
async fn finish_if_alone(writer: &Writer, batch: &mut Batch) {
    if batch.tx.is_some() && writer.nobody_queued() {
        // The writes of the batch learn the outcome from the batch itself.
        let _ = batch.commit().await;
    }
}

impl Drop for WriteTx {
    fn drop(&mut self) {
        let Some(mut batch) = self.batch.take() else { return };
        // Ended without a commit or a rollback: roll the savepoint back on a task of its own
        // (a drop cannot wait). Without a runtime to run it on, the next write does it first.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let writer = self.writer.clone();
            runtime.spawn(async move {
                if batch.settle().await.is_ok() {
                    finish_if_alone(&writer, &mut batch).await;
                }
            });
        }
    }
}

impl Deref for WriteTx {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        self.batch.as_ref().and_then(|batch| batch.tx.as_deref()).expect("a write holds its open batch until it ends")
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        self.batch
            .as_mut()
            .and_then(|batch| batch.tx.as_deref_mut())
            .expect("a write holds its open batch until it ends")
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;
    use std::time::Duration;

    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
    use sqlx::{Connection, Row};

    use super::*;

    async fn writer(dir: &tempfile::TempDir) -> (Writer, String) {
        let url = format!("sqlite:{}", dir.path().join("batches.db").display());
        let options =
            SqliteConnectOptions::from_str(&url).unwrap().create_if_missing(true).journal_mode(SqliteJournalMode::Wal);
        let pool = SqlitePoolOptions::new().max_connections(1).connect_with(options).await.unwrap();
        sqlx::query("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT NOT NULL UNIQUE)").execute(&pool).await.unwrap();
        (Writer::new(pool), url)
    }

    /// The notes a separate connection sees: what has been committed.
    async fn committed(url: &str) -> Vec<String> {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        let rows = sqlx::query("SELECT note FROM t ORDER BY id").fetch_all(&mut conn).await.unwrap();
        rows.iter().map(|row| row.get(0)).collect()
    }

    /// Commits `write`, its error as sqlx's, so that tests can mix it with the statements'.
    async fn keep(write: WriteTx) -> Result<(), sqlx::Error> {
        write.commit().await.map_err(|error| sqlx::Error::Protocol(error.to_string()))
    }

    async fn insert(write: &mut WriteTx, note: &str) -> Result<(), sqlx::Error> {
        sqlx::query("INSERT INTO t (note) VALUES ($1)").bind(note.to_owned()).execute(&mut **write).await.map(drop)
    }

    async fn until_queued(writer: &Writer, n: usize) {
        while writer.queued.load(Ordering::Acquire) != n {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_with_others_queued_is_answered_only_when_their_commit_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, url) = writer(&dir).await;
        let mut first = writer.begin().await.unwrap();
        insert(&mut first, "first").await.unwrap();
        let (begun, is_begun) = tokio::sync::oneshot::channel();
        let (go, goes) = tokio::sync::oneshot::channel::<()>();
        let second = tokio::spawn({
            let writer = writer.clone();
            async move {
                let mut write = writer.begin().await?;
                begun.send(()).unwrap();
                goes.await.unwrap();
                insert(&mut write, "second").await?;
                keep(write).await
            }
        });
        until_queued(&writer, 1).await;
        let first_commit = tokio::spawn(keep(first));
        is_begun.await.unwrap();
        // The first write has handed the writer on; it is not on disk, and not answered, yet.
        assert_eq!(committed(&url).await, Vec::<String>::new());
        assert!(!first_commit.is_finished());
        go.send(()).unwrap();
        second.await.unwrap().unwrap();
        first_commit.await.unwrap().unwrap();
        assert_eq!(committed(&url).await, ["first", "second"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_write_rolls_back_alone_and_its_batch_commits() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, url) = writer(&dir).await;
        let mut first = writer.begin().await.unwrap();
        insert(&mut first, "kept").await.unwrap();
        let second = tokio::spawn({
            let writer = writer.clone();
            async move {
                let mut write = writer.begin().await.unwrap();
                insert(&mut write, "also kept").await.unwrap();
                // A unique violation: this write fails; what it wrote before goes with it.
                let refused = insert(&mut write, "kept").await;
                write.rollback().await.unwrap();
                refused
            }
        });
        until_queued(&writer, 1).await;
        keep(first).await.unwrap();
        assert!(second.await.unwrap().is_err());
        assert_eq!(committed(&url).await, ["kept"]);
        let mut third = writer.begin().await.unwrap();
        insert(&mut third, "after").await.unwrap();
        keep(third).await.unwrap();
        assert_eq!(committed(&url).await, ["kept", "after"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_begun_with_a_read_sees_its_batch_and_a_failed_read_ends_it_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, url) = writer(&dir).await;
        let mut first = writer.begin().await.unwrap();
        insert(&mut first, "first").await.unwrap();
        let reading = tokio::spawn({
            let writer = writer.clone();
            async move {
                let (mut write, row) =
                    writer.begin_reading("SELECT COUNT(*) AS n FROM t WHERE note = $1", "first").await?;
                let seen: i64 = row.expect("a count has a row").get("n");
                insert(&mut write, "second").await?;
                keep(write).await?;
                Ok::<_, sqlx::Error>(seen)
            }
        });
        until_queued(&writer, 1).await;
        keep(first).await.unwrap();
        assert_eq!(reading.await.unwrap().unwrap(), 1, "the read ran inside the batch, after the first write");
        // A read that fails ends its write alone: the write before it in its batch commits.
        let mut third = writer.begin().await.unwrap();
        insert(&mut third, "third").await.unwrap();
        let failing = tokio::spawn({
            let writer = writer.clone();
            async move { writer.begin_reading("SELECT no_such_column FROM t WHERE note = $1", "x").await.map(drop) }
        });
        until_queued(&writer, 1).await;
        keep(third).await.expect("the batch outlived the failed read");
        assert!(failing.await.unwrap().is_err());
        assert_eq!(committed(&url).await, ["first", "second", "third"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_dropped_half_way_leaves_nothing_and_frees_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, url) = writer(&dir).await;
        let mut dropped = writer.begin().await.unwrap();
        insert(&mut dropped, "dropped").await.unwrap();
        drop(dropped);
        let mut next = tokio::time::timeout(Duration::from_secs(10), writer.begin()).await.unwrap().unwrap();
        insert(&mut next, "next").await.unwrap();
        keep(next).await.unwrap();
        assert_eq!(committed(&url).await, ["next"]);
        // The writer's connection is free again for work outside the batches.
        let mut conn = writer.pool().acquire().await.unwrap();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await.unwrap();
        sqlx::query("ROLLBACK").execute(&mut *conn).await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_whose_writes_all_went_away_still_commits() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, url) = writer(&dir).await;
        let mut write = writer.begin().await.unwrap();
        insert(&mut write, "left behind").await.unwrap();
        // Someone else queues for the writer and holds it for a while, doing nothing.
        let (holds, held) = tokio::sync::oneshot::channel();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let holder = tokio::spawn({
            let writer = writer.clone();
            async move {
                let _batch = writer.queue().await;
                holds.send(()).unwrap();
                released.await.unwrap();
            }
        });
        until_queued(&writer, 1).await;
        // The write hands the writer on and waits to come back; then its caller goes away.
        let commit = tokio::spawn(keep(write));
        held.await.unwrap();
        until_queued(&writer, 1).await;
        commit.abort();
        assert!(commit.await.unwrap_err().is_cancelled());
        assert_eq!(committed(&url).await, Vec::<String>::new());
        release.send(()).unwrap();
        holder.await.unwrap();
        // Nobody is left to end the batch but the task that came back in the write's place.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while committed(&url).await.is_empty() {
            assert!(tokio::time::Instant::now() < deadline, "the batch was left open");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(committed(&url).await, ["left behind"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_concurrent_writes_each_answer_what_became_of_them() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, url) = writer(&dir).await;
        let writes = (0..200).map(|n| {
            let writer = writer.clone();
            tokio::spawn(async move {
                let mut write = writer.begin().await?;
                // Every fifth write repeats a note and is refused by the unique index.
                let note = if n % 5 == 4 { format!("note {}", n - 1) } else { format!("note {n}") };
                match insert(&mut write, &note).await {
                    Ok(()) => keep(write).await.map(|()| note),
                    Err(error) => {
                        write.rollback().await?;
                        Err(error)
                    }
                }
            })
        });
        let mut kept = Vec::new();
        for write in writes.collect::<Vec<_>>() {
            if let Ok(note) = write.await.unwrap() {
                kept.push(note);
            }
        }
        assert_eq!(kept.len(), 160);
        let mut on_disk = committed(&url).await;
        on_disk.sort();
        kept.sort();
        assert_eq!(on_disk, kept);
    }
}
