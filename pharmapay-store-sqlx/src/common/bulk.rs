//! Bulk loads (`BulkLoadStore::begin_bulk_load` and `finish_bulk_load`): a long run of imports
//! writes its rows with only the indexes the imports themselves read (primary keys, the unique
//! keys they check, payment references), and the other indexes and the search triggers are
//! built again in one pass at the end, which costs a few seconds where keeping them row by row
//! cost minutes at a chain's scale. The definitions set aside are kept in `deferred_schema`,
//! taken from the database's own catalogue, so nothing is written twice and a load that stops
//! half way is finished by the next [`rebuild_deferred`] (which opening the store runs).

use sqlx::{AssertSqlSafe, Pool, Row};
use tracing::{info, warn};

use super::{BACKEND, Db, Result, before_index_builds, begin_write, lock, rebuild_search, schema_definitions};
use crate::Lock;

/// The indexes and triggers no import reads: the invoice and payment indexes of lists, sorts
/// and figures, and the invoice-number search (its FTS5 triggers on SQLite, its trigram index
/// on PostgreSQL). Names a backend does not have are skipped.
const DEFERRABLE: [&str; 15] = [
    "invoices_by_pending",
    "invoices_by_vendor_date",
    "transactions_by_vendor_date",
    "invoices_open_by_vendor",
    "invoices_by_vendor",
    "invoices_by_invoice_date",
    "invoices_by_due_date",
    "invoices_by_created_at",
    "invoices_number_trigrams",
    "invoice_number_search_insert",
    "invoice_number_search_update",
    "invoice_number_search_delete",
    "transactions_by_invoice",
    "transactions_by_date",
    "transactions_active_by_date",
];

/// Sets the deferrable indexes and triggers aside, keeping their definitions; nothing to do
/// when a bulk load is already under way.
pub(super) async fn defer(pool: &Pool<Db>) -> Result<()> {
    let mut db_tx = begin_write(pool).await?;
    lock(&mut db_tx, Lock::Migrations).await?;
    let pending: i64 = sqlx::query("SELECT COUNT(*) FROM deferred_schema").fetch_one(&mut *db_tx).await?.try_get(0)?;
    if pending > 0 {
        db_tx.commit().await?;
        return Ok(());
    }
    let definitions = schema_definitions(&mut db_tx, &DEFERRABLE).await?;
    for (kind, name, definition) in &definitions {
        sqlx::query("INSERT INTO deferred_schema (name, kind, definition) VALUES ($1, $2, $3)")
            .bind(name)
            .bind(kind)
            .bind(definition)
            .execute(&mut *db_tx)
            .await?;
        // The name comes from the catalogue and matched one of `DEFERRABLE`.
        let drop = if kind == "trigger" { format!("DROP TRIGGER {name}") } else { format!("DROP INDEX {name}") };
        sqlx::raw_sql(AssertSqlSafe(drop)).execute(&mut *db_tx).await?;
    }
    db_tx.commit().await?;
    info!(backend = BACKEND, set_aside = definitions.len(), "bulk load: indexes and search triggers set aside");
    Ok(())
}

/// Builds again whatever a bulk load set aside, indexes before triggers, then refills the
/// search index from the rows; nothing to do when nothing is set aside. `interrupted` says the
/// store is opening on a load that never finished.
pub(super) async fn rebuild_deferred(pool: &Pool<Db>, interrupted: bool) -> Result<()> {
    let mut db_tx = begin_write(pool).await?;
    lock(&mut db_tx, Lock::Migrations).await?;
    let rows = sqlx::query("SELECT name, kind, definition FROM deferred_schema ORDER BY kind, name")
        .fetch_all(&mut *db_tx)
        .await?;
    if rows.is_empty() {
        db_tx.commit().await?;
        return Ok(());
    }
    if interrupted {
        warn!(backend = BACKEND, "a bulk load did not finish: building its indexes now");
    }
    let started = std::time::Instant::now();
    before_index_builds(&mut db_tx).await?;
    for row in &rows {
        let name: String = row.try_get("name")?;
        let definition: String = row.try_get("definition")?;
        info!(backend = BACKEND, name, "bulk load: building");
        // The definition is the database's own, read from its catalogue when it was set aside.
        sqlx::raw_sql(AssertSqlSafe(definition)).execute(&mut *db_tx).await?;
    }
    rebuild_search(&mut db_tx).await?;
    sqlx::query("DELETE FROM deferred_schema").execute(&mut *db_tx).await?;
    db_tx.commit().await?;
    info!(
        backend = BACKEND,
        built = rows.len(),
        seconds = started.elapsed().as_secs_f64(),
        "bulk load: indexes and search built again"
    );
    Ok(())
}
