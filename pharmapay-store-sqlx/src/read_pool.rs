//! Reader connections, lent out without sqlx's pool.
//!
//! sqlx's pool tests every connection on its way back: it spawns a task that pings the
//! connection before the next caller may have it. A SQLite connection lives on a worker thread
//! of its own, so that ping is one more hand-off to that thread and back, as costly as a
//! statement; on PostgreSQL it is one more round trip, and a ping before lending another. A
//! read of one statement paid two hand-offs or three round trips, and an authenticated request
//! (the session check of D20, then its answer) twice that. Here a reader connection goes back
//! to the idle list the moment its borrower is done with it, on the borrower's own thread, and
//! is lent again without a ping.
//!
//! What the pings were for is covered otherwise:
//! - a connection the database ended (a PostgreSQL restart, an administrator's
//!   `pg_terminate_backend`) or whose driver worker died (SQLite's `WorkerCrashed`) fails the
//!   statement it is given. The store then calls [`ReadPool::suspect`] and runs its read once
//!   more (reads change nothing, so running one again is safe; `answer_read` in
//!   `common/mod.rs`). A suspected pool pings each connection that went idle before the
//!   suspicion the next time it would lend it, and closes those that fail, so a restart costs
//!   a retried read per request that met a dead connection, not a failed request;
//! - a borrower dropped mid-statement (a client that went away) may leave its statement
//!   running: sqlx's SQLite worker runs commands in order and its PostgreSQL connection reads
//!   the rest of an abandoned answer before the next statement, so whoever got the connection
//!   next would wait for a statement that was not theirs (an aging of every vendor takes
//!   seconds). A store read therefore runs inside [`settled`]: a connection dropped because its
//!   read was abandoned unfinished is waited out on a task of its own (a ping, which runs after
//!   whatever the connection still does) before it, its pool permit and its long read's turn
//!   are lent again. A read transaction dropped unfinished has its rollback queued the same way
//!   by sqlx, ahead of that ping. The one gap is a read transaction dropped while its `BEGIN` runs:
//!   sqlx's PostgreSQL driver counts the transaction only once `BEGIN` has answered, and
//!   queues no rollback for one it has not counted, so the connection would be lent on inside
//!   a transaction that nobody ends, and every later read on it would see that transaction's
//!   old snapshot. Read transactions therefore begin through [`ReadConn::begin_snapshot`],
//!   which closes the connection instead of returning it when the caller stops waiting (or
//!   `BEGIN` fails) before the transaction is counted.
//!
//! At most `size` connections are open at once; a borrower waits for one (and for connecting,
//! and any ping) up to the acquire timeout, then gets `sqlx::Error::PoolTimedOut` like the
//! pool's. Long reads (a chain's aging, a vendor's statement: seconds each at a chain's scale)
//! borrow through [`ReadPool::acquire_long`], which lets only a few of them run at once (by
//! default half the connections and half the cores, at least one: `StoreOptions::long_reads`):
//! however many are asked for together, the other connections stay for the session check
//! every request makes (D20) and the short reads, and the database and the cores keep time for
//! them, so a few desks opening a heavy report do not stop everyone else's requests. Long reads beyond that queue for a turn, first come first served, for up
//! to the long-read wait, which is longer than the acquire timeout: a report that takes
//! seconds is worth waiting seconds more for, and a refusal would only send its desk to the
//! back of the queue when it asks again. Once its turn comes, a long read borrows its
//! connection within the acquire timeout like any other.
//!
//! Connections open when first needed, except one opened with the pool so that a bad database
//! is found when the store opens; they are kept until the store closes and reused last-in
//! first-out, which keeps the busiest connections' caches warm.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use sqlx::{ConnectOptions, Connection, Database};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

thread_local! {
    /// How many abandoned reads this thread is dropping now ([`Settled`]): a connection dropped
    /// meanwhile may have a statement still running.
    static ABANDONING: Cell<u32> = const { Cell::new(0) };
}

/// Runs `read`, a store read that borrows reader connections: a connection it gives back while
/// it runs goes straight back to the idle list; one it still holds when it is dropped
/// unfinished (its caller went away) is waited out before it is lent again.
pub(crate) fn settled<F: Future>(read: F) -> Settled<F> {
    Settled { read: Some(Box::pin(read)) }
}

/// A read run by [`settled`].
pub(crate) struct Settled<F> {
    read: Option<Pin<Box<F>>>,
}

impl<F: Future> Future for Settled<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let read = this.read.as_mut().expect("a settled read is not polled once it has answered");
        let answered = read.as_mut().poll(cx);
        if answered.is_ready() {
            this.read = None;
        }
        answered
    }
}

impl<F> Drop for Settled<F> {
    fn drop(&mut self) {
        if let Some(read) = self.read.take() {
            ABANDONING.with(|abandoning| abandoning.set(abandoning.get() + 1));
            drop(read);
            ABANDONING.with(|abandoning| abandoning.set(abandoning.get() - 1));
        }
    }
}

/// The connection type of a database.
type Conn<DB> = <DB as Database>::Connection;

/// How connections of a database are opened.
type Options<DB> = <Conn<DB> as Connection>::Options;

/// The reader connections of one store. Cloning is cheap; clones share the connections.
pub(crate) struct ReadPool<DB: Database> {
    inner: Arc<Inner<DB>>,
}

impl<DB: Database> Clone for ReadPool<DB> {
    fn clone(&self) -> Self {
        Self { inner: Arc::clone(&self.inner) }
    }
}

struct Inner<DB: Database> {
    options: Options<DB>,
    /// One permit per connection that may be open; closed when the store closes.
    permits: Arc<Semaphore>,
    /// One permit per connection long reads may hold at once (`StoreOptions::long_reads`);
    /// closed with `permits`.
    long_reads: Arc<Semaphore>,
    /// Open connections nobody is using, the most recently used last, each with the
    /// suspicion count it was last known good at.
    idle: Mutex<Vec<(Conn<DB>, u64)>>,
    acquire_timeout: Duration,
    /// How long a long read waits for its turn ([`ReadPool::acquire_long`]).
    long_read_wait: Duration,
    /// How many times a borrower found a connection dead ([`ReadPool::suspect`]); an idle
    /// connection last known good at a lower count is pinged before it is lent.
    suspicions: AtomicU64,
}

impl<DB: Database> ReadPool<DB> {
    /// Opens the first connection (so that an unreachable database fails here) and answers a
    /// pool of at most `size` connections, whose long reads wait up to `long_read_wait` for
    /// their turn.
    pub(crate) async fn connect(
        options: Options<DB>,
        size: u32,
        acquire_timeout: Duration,
        (long_reads, long_read_wait): (u32, Duration),
    ) -> Result<Self, sqlx::Error> {
        let first =
            tokio::time::timeout(acquire_timeout, options.connect()).await.map_err(|_| sqlx::Error::PoolTimedOut)??;
        let size = usize::try_from(size.max(1)).unwrap_or(usize::MAX).min(Semaphore::MAX_PERMITS);
        Ok(Self {
            inner: Arc::new(Inner {
                options,
                permits: Arc::new(Semaphore::new(size)),
                long_reads: Arc::new(Semaphore::new(usize::try_from(long_reads).unwrap_or(1).clamp(1, size))),
                idle: Mutex::new(vec![(first, 0)]),
                acquire_timeout,
                long_read_wait,
                suspicions: AtomicU64::new(0),
            }),
        })
    }

    /// Borrows a connection: an idle one (pinged first if it went idle before the last
    /// suspicion; one that fails is closed and the next tried), or a new one while fewer than
    /// the pool's size are open; otherwise waits for one to come back. Waiting, connecting and
    /// pinging together take at most the acquire timeout.
    pub(crate) async fn acquire(&self) -> Result<ReadConn<DB>, sqlx::Error> {
        tokio::time::timeout(self.inner.acquire_timeout, self.lend()).await.unwrap_or(Err(sqlx::Error::PoolTimedOut))
    }

    /// Borrows a connection for a long read: waits up to the long-read wait for one of the
    /// long reads' turns (in the order they were asked for), then borrows as
    /// [`ReadPool::acquire`] does. The turn is given back with the connection.
    pub(crate) async fn acquire_long(&self) -> Result<ReadConn<DB>, sqlx::Error> {
        let turn = Arc::clone(&self.inner.long_reads).acquire_owned();
        let turn = match tokio::time::timeout(self.inner.long_read_wait, turn).await {
            Ok(turn) => turn.map_err(|_| sqlx::Error::PoolClosed)?,
            Err(_) => return Err(sqlx::Error::PoolTimedOut),
        };
        let mut conn = self.acquire().await?;
        conn.long_read = Some(turn);
        Ok(conn)
    }

    async fn lend(&self) -> Result<ReadConn<DB>, sqlx::Error> {
        let permit = Arc::clone(&self.inner.permits).acquire_owned().await.map_err(|_| sqlx::Error::PoolClosed)?;
        loop {
            let idle = self.inner.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
            let Some((mut conn, known_good)) = idle else { break };
            let suspicions = self.inner.suspicions.load(Ordering::Acquire);
            if known_good == suspicions || conn.ping().await.is_ok() {
                return Ok(self.lent(conn, suspicions, permit));
            }
            // The database ended it; close what is left of it and try the next.
            let _ = conn.close_hard().await;
        }
        let suspicions = self.inner.suspicions.load(Ordering::Acquire);
        let conn = self.inner.options.connect().await?;
        Ok(self.lent(conn, suspicions, permit))
    }

    fn lent(&self, conn: Conn<DB>, known_good: u64, permit: OwnedSemaphorePermit) -> ReadConn<DB> {
        ReadConn {
            conn: Some(conn),
            known_good,
            beginning: false,
            inner: Arc::clone(&self.inner),
            permit: Some(permit),
            long_read: None,
        }
    }

    /// Says that a borrower found one of the connections dead: every connection idle now, or
    /// borrowed now, is pinged before it is lent again (and closed if the ping fails).
    pub(crate) fn suspect(&self) {
        self.inner.suspicions.fetch_add(1, Ordering::AcqRel);
    }

    /// Closes every idle connection; borrowed ones close when they come back, and borrowing
    /// fails from now on with `sqlx::Error::PoolClosed`.
    pub(crate) async fn close(&self) {
        self.inner.permits.close();
        self.inner.long_reads.close();
        let idle = std::mem::take(&mut *self.inner.idle.lock().unwrap_or_else(PoisonError::into_inner));
        for (conn, _) in idle {
            // A connection that cannot close cleanly is dropped all the same.
            let _ = conn.close().await;
        }
    }
}

/// A borrowed reader connection; it goes back to the idle list when dropped.
pub(crate) struct ReadConn<DB: Database> {
    conn: Option<Conn<DB>>,
    /// The suspicion count at which it was last known good.
    known_good: u64,
    /// A read transaction is beginning on it and is not yet counted by the driver: dropped in
    /// this state, the connection is closed rather than lent again ([`ReadConn::begin_snapshot`]).
    beginning: bool,
    inner: Arc<Inner<DB>>,
    /// The pool's permit for it, given back with the connection.
    permit: Option<OwnedSemaphorePermit>,
    /// A long read's turn ([`ReadPool::acquire_long`]), given back with the connection.
    long_read: Option<OwnedSemaphorePermit>,
}

impl<DB: Database> ReadConn<DB> {
    /// Begins a read transaction with `statement` (such as a read-only snapshot). If the caller
    /// stops waiting before it has begun, or it fails to begin, the connection is closed when
    /// this borrow ends instead of going back to the idle list, so no transaction is left open
    /// on a connection lent to someone else. Once begun, an unfinished transaction is rolled
    /// back by sqlx before the connection's next statement, as usual.
    ///
    /// # Errors
    /// When the database refuses or cannot be reached.
    pub(crate) async fn begin_snapshot(
        &mut self,
        statement: &'static str,
    ) -> Result<sqlx::Transaction<'_, DB>, sqlx::Error> {
        let Self { conn, beginning, .. } = self;
        let conn = conn.as_mut().expect("a borrowed connection is present until it is dropped");
        *beginning = true;
        let begun = conn.begin_with(sqlx::SqlStr::from_static(statement)).await?;
        *beginning = false;
        Ok(begun)
    }
}

impl<DB: Database> Deref for ReadConn<DB> {
    type Target = Conn<DB>;

    fn deref(&self) -> &Conn<DB> {
        self.conn.as_ref().expect("a borrowed connection is present until it is dropped")
    }
}

impl<DB: Database> DerefMut for ReadConn<DB> {
    fn deref_mut(&mut self) -> &mut Conn<DB> {
        self.conn.as_mut().expect("a borrowed connection is present until it is dropped")
    }
}

impl<DB: Database> Drop for ReadConn<DB> {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else { return };
        // After `close`, a returning connection is dropped, which ends it; so is one whose read
        // transaction may have begun uncounted (the database rolls it back when it goes).
        if self.beginning || self.inner.permits.is_closed() {
            return;
        }
        if ABANDONING.with(Cell::get) > 0
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            // Its read was abandoned: the statement it left may still run. The ping runs after
            // it, and only then do the connection, its permit and its turn go back.
            let (inner, known_good) = (Arc::clone(&self.inner), self.known_good);
            let (permit, turn) = (self.permit.take(), self.long_read.take());
            runtime.spawn(async move {
                match conn.ping().await {
                    Ok(()) if !inner.permits.is_closed() => {
                        inner.idle.lock().unwrap_or_else(PoisonError::into_inner).push((conn, known_good));
                    }
                    Ok(()) => {}
                    Err(_) => {
                        let _ = conn.close_hard().await;
                    }
                }
                drop((permit, turn));
            });
            return;
        }
        self.inner.idle.lock().unwrap_or_else(PoisonError::into_inner).push((conn, self.known_good));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sqlx::Row;
    use sqlx::sqlite::SqliteConnectOptions;

    use super::ReadPool;

    type Pool = ReadPool<sqlx::Sqlite>;

    /// A pool whose long reads wait as long for their turn as any borrower for a connection.
    async fn pool(size: u32, timeout: Duration) -> (tempfile::TempDir, Pool) {
        pool_waiting(size, timeout, timeout).await
    }

    async fn pool_waiting(size: u32, timeout: Duration, long_read_wait: Duration) -> (tempfile::TempDir, Pool) {
        let dir = tempfile::tempdir().unwrap();
        let options = SqliteConnectOptions::new().filename(dir.path().join("read.db")).create_if_missing(true);
        (dir, Pool::connect(options, size, timeout, ((size / 2).max(1), long_read_wait)).await.unwrap())
    }

    /// Fails unless the pool lends nothing more while `lent` is out, and lends again once it
    /// comes back.
    async fn lent_until_returned<C>(pool: &Pool, lent: C, message: &str) {
        assert_timed_out(pool.acquire().await);
        drop(lent);
        pool.acquire().await.expect(message);
    }

    /// Fails unless `result` is the pool's timeout.
    fn assert_timed_out<T>(result: Result<T, sqlx::Error>) {
        assert!(matches!(result, Err(sqlx::Error::PoolTimedOut)), "{:?}", result.err());
    }

    async fn connection_id(conn: &mut sqlx::SqliteConnection) -> i64 {
        // Each connection gets its own temporary schema: a table created there tells them apart.
        sqlx::query("CREATE TEMP TABLE IF NOT EXISTS me (id INTEGER)").execute(&mut *conn).await.unwrap();
        let row = sqlx::query("SELECT COUNT(*) FROM me").fetch_one(&mut *conn).await.unwrap();
        let seen: i64 = row.try_get(0).unwrap();
        if seen == 0 {
            sqlx::query("INSERT INTO me VALUES (random())").execute(&mut *conn).await.unwrap();
        }
        sqlx::query("SELECT id FROM me").fetch_one(&mut *conn).await.unwrap().try_get(0).unwrap()
    }

    #[tokio::test]
    async fn a_returned_connection_is_lent_again() {
        let (_dir, pool) = pool(2, Duration::from_secs(5)).await;
        let first = connection_id(&mut pool.acquire().await.unwrap()).await;
        let again = connection_id(&mut pool.acquire().await.unwrap()).await;
        assert_eq!(first, again, "the idle connection is reused, not a new one opened");
    }

    #[tokio::test]
    async fn no_more_than_the_size_are_lent_at_once() {
        let (_dir, pool) = pool(2, Duration::from_millis(200)).await;
        let mut a = pool.acquire().await.unwrap();
        let mut b = pool.acquire().await.unwrap();
        assert_ne!(connection_id(&mut a).await, connection_id(&mut b).await);
        lent_until_returned(&pool, a, "a connection came back").await;
    }

    #[tokio::test]
    async fn long_reads_leave_half_the_connections_to_the_short_ones() {
        let (_dir, pool) = pool(4, Duration::from_millis(200)).await;
        let first = pool.acquire_long().await.unwrap();
        let second = pool.acquire_long().await.unwrap();
        // Two of four are out for long reads: a third long read waits for a turn, and gives up.
        assert_timed_out(pool.acquire_long().await);
        // Short reads (session checks) still get the other two at once.
        let mut short = [pool.acquire().await.unwrap(), pool.acquire().await.unwrap()];
        for conn in &mut short {
            connection_id(conn).await;
        }
        drop(short);
        // When a long read ends, its turn goes to the next.
        drop(first);
        let next = pool.acquire_long().await.expect("a long read's turn came back");
        drop((second, next));
        // With every turn back, the connections are all free again.
        let all = [pool.acquire().await, pool.acquire().await, pool.acquire().await, pool.acquire().await];
        assert!(all.iter().all(Result::is_ok), "every connection is free once the long reads end");
    }

    #[tokio::test]
    async fn a_long_read_queues_for_its_turn_beyond_the_acquire_timeout() {
        // Four connections, so two long reads at once; a borrower waits 100 ms for a
        // connection, a long read up to 5 s for its turn.
        let (_dir, pool) = pool_waiting(4, Duration::from_millis(100), Duration::from_secs(5)).await;
        let running = [pool.acquire_long().await.unwrap(), pool.acquire_long().await.unwrap()];
        let queued = tokio::spawn({
            let pool = pool.clone();
            async move {
                let started = tokio::time::Instant::now();
                let conn = pool.acquire_long().await;
                (conn.map(drop), started.elapsed())
            }
        });
        // Short reads are not held up by the queue.
        pool.acquire().await.expect("a short read borrows beside the queued long one");
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(!queued.is_finished(), "the third long read still waits for a turn");
        drop(running);
        let (conn, waited) = queued.await.unwrap();
        conn.expect("the queued long read got its turn instead of a refusal");
        assert!(waited >= Duration::from_millis(300), "it waited well past the acquire timeout: {waited:?}");
    }

    #[tokio::test]
    async fn a_long_read_gives_up_after_the_long_read_wait() {
        let (_dir, pool) = pool_waiting(2, Duration::from_secs(5), Duration::from_millis(100)).await;
        let _running = pool.acquire_long().await.unwrap();
        let started = tokio::time::Instant::now();
        assert_timed_out(pool.acquire_long().await);
        assert!(started.elapsed() < Duration::from_secs(5), "the turn's own wait, not the acquire timeout, ended it");
    }

    #[tokio::test]
    async fn a_pool_of_one_lets_a_long_read_have_it() {
        let (_dir, pool) = pool(1, Duration::from_millis(200)).await;
        let long = pool.acquire_long().await.expect("the only connection");
        lent_until_returned(&pool, long, "back after the long read").await;
    }

    #[tokio::test]
    async fn a_connection_dropped_mid_transaction_is_usable_by_the_next_borrower() {
        let (_dir, pool) = pool(1, Duration::from_secs(5)).await;
        {
            let mut conn = pool.acquire().await.unwrap();
            let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN").await.unwrap();
            sqlx::query("SELECT 1").execute(&mut *tx).await.unwrap();
            // Dropped without commit or rollback, as a read that lost its client.
        }
        let mut conn = pool.acquire().await.unwrap();
        let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN").await.expect("the earlier one was rolled back");
        sqlx::query("SELECT 1").execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
    }

    #[tokio::test]
    async fn a_suspected_pool_checks_its_idle_connections_and_keeps_the_live_ones() {
        let (_dir, pool) = pool(2, Duration::from_secs(5)).await;
        let first = connection_id(&mut pool.acquire().await.unwrap()).await;
        pool.suspect();
        // The idle connection is pinged before it is lent; it answers, so it is the one lent,
        // not a new one, then and afterwards.
        assert_eq!(connection_id(&mut pool.acquire().await.unwrap()).await, first);
        assert_eq!(connection_id(&mut pool.acquire().await.unwrap()).await, first);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_abandoned_read_gives_back_its_connection_and_turn_only_once_its_statement_ended() {
        // Two connections, so one long read at a time; a long read waits 50 ms for its turn.
        let (_dir, pool) = pool_waiting(2, Duration::from_secs(10), Duration::from_millis(50)).await;
        let count = |n: u128| {
            sqlx::AssertSqlSafe(format!(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) SELECT COUNT(*) FROM c"
            ))
        };
        // A statement that keeps SQLite busy for about two seconds on this machine.
        let mut conn = pool.acquire().await.unwrap();
        let busy = connection_id(&mut conn).await;
        let started = std::time::Instant::now();
        sqlx::query(count(100_000)).fetch_one(&mut *conn).await.unwrap();
        let rows = 100_000 * 2_000 / started.elapsed().as_millis().max(1);
        drop(conn);
        // A long read runs it on the idle connection, and its caller goes away at once.
        let read = super::settled(async {
            let mut conn = pool.acquire_long().await.unwrap();
            sqlx::query(count(rows)).fetch_one(&mut *conn).await.map(drop)
        });
        assert!(tokio::time::timeout(Duration::from_millis(100), read).await.is_err(), "the statement outlasts it");
        // While the statement runs, neither its turn nor its connection is lent.
        assert_timed_out(pool.acquire_long().await);
        let mut other = pool.acquire().await.unwrap();
        assert_ne!(connection_id(&mut other).await, busy, "the busy connection is not lent");
        drop(other);
        // Once it has ended, both come back.
        let back = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                if let Ok(conn) = pool.acquire_long().await {
                    return conn;
                }
            }
        });
        back.await.expect("the turn came back once the statement ended");
        let mut seen = std::collections::BTreeSet::new();
        let (mut first, mut second) = (pool.acquire().await.unwrap(), pool.acquire().await.unwrap());
        seen.insert(connection_id(&mut first).await);
        seen.insert(connection_id(&mut second).await);
        assert!(seen.contains(&busy), "the connection went back to the pool: {seen:?}");
    }

    #[tokio::test]
    async fn borrowing_after_close_fails_as_closed() {
        let (_dir, pool) = pool(2, Duration::from_secs(5)).await;
        pool.close().await;
        assert!(matches!(pool.acquire().await, Err(sqlx::Error::PoolClosed)));
    }
}
