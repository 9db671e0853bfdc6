//! The SQL store, written once for both backends.
//!
//! This folder is compiled twice, as `crate::sqlite::common` and `crate::postgres::common` (see
//! the `#[path]` attributes there). In each, `super::Db` is that backend's sqlx database, the
//! macros `for_update!` and `for_share!` expand to its row-lock clauses (empty for SQLite,
//! whose write transactions hold the whole database), and `super` provides the few functions
//! that differ: how a write transaction begins, advisory locks, id reservation for imports and
//! the identity sequences after seeding. Everything else is the same SQL text, with numbered
//! `$n` placeholders, which both drivers bind by number.
//!
//! Core decides, stores keep: every method that writes is one database transaction that locks
//! and loads the facts a rule of `pharmapay_core::rules` names, asks it, writes what it allows,
//! records its audit entry and completes its idempotency claim (D22, D23), and reads back what
//! it returns, all before committing. (On SQLite, a write's "transaction" is a savepoint in a
//! batch that commits for all its writes, see `crate::group_commit`; it is answered only once
//! that commit is done.) Reads go to the reader pool and use one statement where
//! a page and its total count must agree. The answers mirror the memory store exactly: the
//! same orders and tie-breaks, the same error for the same first failed check.
//!
//! # Layout
//! - `conn.rs`: [`SqlStore`], the backend's connection and row types, and the small reads and
//!   writes every family shares; `commit.rs`: how a write ends (`commit` records the audit
//!   entry, completes the idempotency claim and commits; `commit_moving` also applies the
//!   write's kept figures, all in one script). This file: the store's own methods (checks of
//!   kept figures, the statements benchmarks time). The SQL fragments statements share, and
//!   the statements worth naming, are `crate::statements`'.
//! - `records.rs` (records read by id as their GET answers them, which the feed renders too),
//!   `lines.rs` (what a bank line holds, and the lines a deleted payment frees, D51),
//!   `binds.rs` (statements built at run time, pages, `IN` lists, scripts), `figures.rs` (the kept
//!   figures of D41: applying a write's change, reading and recounting them), `rows.rs` (stored
//!   values and rows as domain values), `guards.rs` (the facts writes load under their locks: active
//!   parents, taken unique keys, grants, token bookkeeping), `migrate.rs` (migrations and the
//!   seed).
//! - One file per purpose of the contract, as `pharmapay_core::store` is split: `sessions.rs`,
//!   `vendors.rs`, `invoices.rs`, `transactions.rs` and `vendor_payments.rs` (the ledger),
//!   `credits.rs` (vendor credits, D44), `access.rs`, `reports.rs` with `aging.rs` (the aging,
//!   D34, D43), `search.rs` (trigram search), `bulk.rs` and `bulk_loads.rs` (bulk loads),
//!   `imports.rs` (imported files, D45), `bank.rs` (bank statements, D46), `events.rs`
//!   (the feed, D47), `webhooks.rs` (webhooks and their deliveries, D47) and `branches.rs` (the
//!   chain's branches, D49).

mod access;
mod aging;
mod bank;
mod binds;
mod branches;
mod bulk;
mod bulk_loads;
mod commit;
mod conn;
mod credits;
mod events;
mod figures;
mod guards;
mod imports;
mod invoices;
mod lines;
mod migrate;
mod records;
mod reports;
mod rows;
mod search;
mod sessions;
mod transactions;
mod vendor_payments;
mod vendors;
mod webhooks;

use pharmapay_core::BusinessCalendar;
use pharmapay_core::StoreError;
use pharmapay_core::invoices::InvoiceQuery;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::reports::setting::TIME_ZONE;
use pharmapay_core::store::StoreResult;
use pharmapay_core::vendors::VendorQuery;
use sqlx::Pool;
use tracing::warn;

use super::{
    BACKEND, Db, EARLIER, IN_ORDER_PLACEHOLDER, JSON_INTS, JSON_TEXTS, LICENCE_HOLDERS, LICENCE_HOLDERS_PACKED,
    LONG_READ_SETUP, MIGRATIONS, MIGRATIONS_TABLE, READ_SNAPSHOT, ROW_LOCKS, ReadConn, Reader, SCRIPTS_IN_ONE_CALL,
    SEARCH_INDEX, Table, WriteTx, Writer, after_seed, before_index_builds, begin_write, begin_write_reading,
    begin_write_tx, lock, rebuild_search, reserve_ids, schema_definitions, writer_pool,
};
use crate::error::Error;
use crate::read_pool::settled;
use crate::{Lock, SearchIndex};
use commit::*;
pub use conn::SqlStore;
use conn::*;
pub(crate) use migrate::migrate;
#[cfg(test)]
pub(crate) use migrate::{apply, migrate_with};

impl SqlStore {
    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        BACKEND
    }

    /// Checks that every kept figure (D41) equals the figure recounted from the rows; the
    /// property and differential tests call it after their steps.
    ///
    /// # Errors
    /// A description of both sets of figures when they differ, or a store failure.
    pub async fn check_figures(&self) -> Result<(), String> {
        let check = async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            let kept = figures::kept(&mut db_tx).await?;
            let recounted = figures::recount(&mut db_tx, &calendar).await?;
            db_tx.rollback().await?;
            Ok::<_, Error>((kept, recounted))
        };
        match check.await {
            Ok((kept, recounted)) if kept == recounted => Ok(()),
            Ok((kept, recounted)) => Err(format!("kept figures {kept:?} differ from the recount {recounted:?}")),
            Err(error) => Err(format!("the figures could not be read: {error}")),
        }
    }

    /// Applies the embedded migrations not yet applied; harmless to call again (connecting
    /// already does).
    ///
    /// # Errors
    /// [`StoreError::Backend`] when a migration fails or an applied one was edited.
    pub async fn migrate(&self) -> StoreResult<()> {
        migrate(self.writer()).await.map_err(StoreError::from)
    }

    /// The statement this store reads a page of vendors with for `query` (as the engine passes
    /// it on), with its values: for benchmarks that time the store's own SQL.
    pub fn vendor_page_statement(query: &VendorQuery) -> crate::BoundStatement {
        let (binds, sql) = vendors::vendor_page(query);
        binds.statement(sql)
    }

    /// The statement this store reads a page of invoices with for `query`, today starting at
    /// `today_start`, with its values: for benchmarks that time the store's own SQL.
    pub fn invoice_page_statement(query: &InvoiceQuery, today_start: Timestamp) -> crate::BoundStatement {
        let (binds, sql) = invoices::invoice_page(query, today_start);
        binds.statement(sql)
    }

    /// The pool write transactions use.
    pub(crate) fn writer(&self) -> &Pool<Db> {
        writer_pool(&self.writer)
    }

    /// Closes every connection; calls made afterwards fail with
    /// [`StoreError::Unavailable`].
    pub async fn close(&self) {
        self.reader.close().await;
        self.writer().close().await;
    }

    async fn begin(&self) -> Result<WriteTx> {
        Ok(begin_write_tx(&self.writer).await?)
    }

    /// Begins a write transaction and reads in it the calendar that files payments under their
    /// business days (as `figures::write_calendar`), in one call where the backend allows it.
    async fn begin_with_calendar(&self) -> Result<(WriteTx, BusinessCalendar)> {
        let (db_tx, row) = begin_write_reading(&self.writer, figures::CALENDAR_SETTING, TIME_ZONE).await?;
        Ok((db_tx, figures::calendar_from(row)?))
    }

    /// Begins a write transaction that holds `lock` until it ends.
    async fn begin_locked(&self, held: Lock) -> Result<WriteTx> {
        let mut db_tx = self.begin().await?;
        lock(&mut db_tx, held).await?;
        Ok(db_tx)
    }

    /// Answers a store method that only reads, as [`answer`] does; a read that found its
    /// reader connection dead (the database ended it: a restart) runs once more, after the
    /// reader pool was told to check its connections before lending them (`read_pool`). Every
    /// body that borrows a reader connection is answered here.
    async fn answer_read<T, F>(&self, read: impl Fn() -> F) -> StoreResult<T>
    where
        F: Future<Output = Result<T>>,
    {
        // Each run is `settled`: should the caller go away half way, the connection it holds is
        // waited out before anyone else borrows it (`read_pool`).
        match settled(read()).await {
            Err(error) if error.connection_lost() => {
                self.reader.suspect();
                warn!(%error, "a reader connection was lost; the read runs again on a checked connection");
                settled(read()).await.map_err(StoreError::from)
            }
            answered => answered.map_err(StoreError::from),
        }
    }

    /// Borrows a reader connection until the answer is dropped; only bodies given to
    /// [`Self::answer_read`] borrow one, so that a dead connection is noticed and its read
    /// run again.
    async fn read(&self) -> Result<ReadConn> {
        Ok(self.reader.acquire().await?)
    }

    /// Begins, on `reader` (borrowed with [`Self::read_long`]), the snapshot a long read runs in,
    /// set up as the backend's long reads are (`LONG_READ_SETUP`).
    async fn long_snapshot(reader: &mut ReadConn) -> Result<sqlx::Transaction<'_, Db>> {
        let mut snapshot = reader.begin_snapshot(READ_SNAPSHOT).await?;
        if let Some(setup) = LONG_READ_SETUP {
            sqlx::query(setup).execute(&mut *snapshot).await?;
        }
        Ok(snapshot)
    }

    /// Borrows a reader connection for a read that may take seconds (a chain's aging, a
    /// vendor's statement); only a few such reads run at once (`StoreOptions::long_reads`), so
    /// session
    /// checks and short reads keep the rest (`read_pool.rs`).
    async fn read_long(&self) -> Result<ReadConn> {
        Ok(self.reader.acquire_long().await?)
    }

    /// The row `query` reads, if any, decoded.
    async fn optional<T>(&self, query: Query, decode: impl Fn(&DbRow) -> Result<T>) -> Result<Option<T>> {
        query.fetch_optional(&mut *self.read().await?).await?.as_ref().map(decode).transpose()
    }

    /// Every row `sql` reads, decoded.
    async fn all<T>(&self, sql: &'static str, decode: impl Fn(&DbRow) -> Result<T>) -> Result<Vec<T>> {
        sqlx::query(sql).fetch_all(&mut *self.read().await?).await?.iter().map(decode).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use pharmapay_core::StoreError;
    use pharmapay_core::jiff::Timestamp;
    use pharmapay_core::reports::audit::NewAuditEntry;

    use super::binds::Binds;
    use super::{WRITE_ATTEMPTS, answer, audit_statement};
    use crate::error::Error;
    use crate::statements;

    #[tokio::test]
    async fn a_write_that_met_others_in_a_lock_cycle_runs_again() {
        let runs = AtomicU32::new(0);
        let answered = answer(|| async {
            match runs.fetch_add(1, Ordering::SeqCst) {
                0 | 1 => Err(Error::Moved("an invoice")),
                _ => Ok("kept"),
            }
        })
        .await;
        assert_eq!(answered.ok(), Some("kept"));
        assert_eq!(runs.load(Ordering::SeqCst), 3, "two contended runs, then the one that succeeded");
    }

    #[tokio::test]
    async fn a_write_contended_every_time_is_unavailable_after_its_attempts_and_other_errors_run_once() {
        let runs = AtomicU32::new(0);
        let answered: Result<(), StoreError> = answer(|| async {
            runs.fetch_add(1, Ordering::SeqCst);
            Err(Error::Moved("an invoice"))
        })
        .await;
        assert!(matches!(answered, Err(StoreError::Unavailable(_))), "{answered:?}");
        assert_eq!(runs.load(Ordering::SeqCst), WRITE_ATTEMPTS);
        let runs = AtomicU32::new(0);
        let refused: Result<(), StoreError> = answer(|| async {
            runs.fetch_add(1, Ordering::SeqCst);
            Err(Error::Refused(StoreError::NotFound(pharmapay_core::Entity::Invoice)))
        })
        .await;
        assert!(matches!(refused, Err(StoreError::NotFound(_))), "{refused:?}");
        assert_eq!(runs.load(Ordering::SeqCst), 1, "a refusal is the answer; it does not run again");
    }

    #[test]
    fn an_audit_entry_first_in_its_values_is_the_named_statement() {
        // The load harness times `INSERT_AUDIT` as the store's own and looks for it in the
        // server's statement log: the text the store writes must be that one.
        let entry = NewAuditEntry {
            at: Timestamp::UNIX_EPOCH,
            user_id: None,
            action: "create",
            entity: "Transaction",
            entity_id: Some(1),
            reason: None,
            changes: None,
        };
        assert_eq!(audit_statement(&mut Binds::default(), entry), statements::INSERT_AUDIT);
    }
}
