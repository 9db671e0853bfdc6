//! Migrations and the seed data (D27): each embedded migration once, in its own write
//! transaction under the migrations lock, with a checksum that notices edited files.

use std::collections::BTreeSet;

use pharmapay_core::jiff::Timestamp;
use pharmapay_core::seed;
use pharmapay_core::text::key;
use pharmapay_core::transactions::reference::PaymentReference;
use sqlx::{Pool, Row};
use tracing::info;

use super::figures;
use super::guards::insert_policy_permissions;
use super::rows::micros;
use super::{BACKEND, Conn, Db, EARLIER, MIGRATIONS, MIGRATIONS_TABLE, Result, after_seed, begin_write, lock};
use crate::error::Error;
use crate::schema::Earlier;
use crate::{Lock, Migration, checksum};

/// Applies the embedded migrations that are not applied yet, each in its own write
/// transaction under the migrations lock, and writes the seed data (D27) with the first.
pub(crate) async fn migrate(pool: &Pool<Db>) -> Result<()> {
    migrate_with(pool, MIGRATIONS, EARLIER).await
}

/// [`migrate`] over `migrations`, accepting the `earlier` texts of edited ones: a database
/// whose recorded checksum is an earlier text's gets that text's catch-up and today's checksum,
/// in the transaction that finds it, and a recount of the kept figures once every migration is
/// applied when a catch-up added figures.
pub(crate) async fn migrate_with(pool: &Pool<Db>, migrations: &[Migration], earlier: &[Earlier]) -> Result<()> {
    apply(pool, migrations, earlier).await?;
    // A bulk load that stopped half way left indexes to build; build them before serving.
    super::bulk::rebuild_deferred(pool, true).await
}

/// The migrations and catch-ups of [`migrate_with`], without the deferred index builds that
/// only today's schema has tables for.
pub(crate) async fn apply(pool: &Pool<Db>, migrations: &[Migration], earlier: &[Earlier]) -> Result<()> {
    let mut recount_needed = false;
    let mut recounted = false;
    for migration in migrations {
        let mut db_tx = begin_write(pool).await?;
        lock(&mut db_tx, Lock::Migrations).await?;
        sqlx::raw_sql(MIGRATIONS_TABLE).execute(&mut *db_tx).await?;
        let applied = sqlx::query("SELECT version, description, checksum FROM _pharmapay_migrations ORDER BY version")
            .fetch_all(&mut *db_tx)
            .await?;
        let mut already = false;
        for row in &applied {
            let version: i64 = row.try_get("version")?;
            let stored_checksum: &str = row.try_get("checksum")?;
            let Some(known) = migrations.iter().find(|known| known.version == version) else {
                return Err(Error::UnknownMigration(version));
            };
            if checksum(known.sql) != stored_checksum {
                let Some(caught) =
                    earlier.iter().find(|text| text.version == version && text.checksum == stored_checksum)
                else {
                    return Err(Error::MigrationChanged { version, description: row.try_get("description")? });
                };
                sqlx::raw_sql(caught.catch_up).execute(&mut *db_tx).await?;
                sqlx::query("UPDATE _pharmapay_migrations SET checksum = $1 WHERE version = $2")
                    .bind(checksum(known.sql))
                    .bind(version)
                    .execute(&mut *db_tx)
                    .await?;
                recount_needed |= caught.recounts_figures;
                info!(
                    backend = BACKEND,
                    version,
                    earlier = caught.checksum,
                    "brought a migration an earlier build applied up to its landed text"
                );
            }
            already |= version == migration.version;
        }
        if already {
            db_tx.commit().await?;
            continue;
        }
        sqlx::raw_sql(migration.sql).execute(&mut *db_tx).await?;
        if migration.seeds {
            write_seed(&mut db_tx).await?;
        }
        // The figures are counted by this version's code, into the newest schema's columns:
        // only the last migration that recounts them can, and a database that had an earlier
        // one applied runs it too.
        let last_recount = migrations.iter().filter(|known| known.recounts_figures).map(|known| known.version).max();
        if migration.recounts_figures && last_recount == Some(migration.version) {
            recount(&mut db_tx).await?;
            recounted = true;
        }
        if migration.rekeys_references {
            rekey_references(&mut db_tx).await?;
        }
        sqlx::query(
            "INSERT INTO _pharmapay_migrations (version, description, checksum, applied_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(migration.version)
        .bind(migration.description)
        .bind(checksum(migration.sql))
        .bind(micros(Timestamp::now()))
        .execute(&mut *db_tx)
        .await?;
        db_tx.commit().await?;
        info!(backend = BACKEND, version = migration.version, description = migration.description, "applied migration");
    }
    if recount_needed && !recounted {
        let mut db_tx = begin_write(pool).await?;
        lock(&mut db_tx, Lock::Migrations).await?;
        recount(&mut db_tx).await?;
        db_tx.commit().await?;
    }
    Ok(())
}

/// Counts every kept figure (D41) again from the rows, by this version's code into the newest
/// schema's columns, and keeps the count.
async fn recount(conn: &mut Conn) -> Result<()> {
    let calendar = figures::write_calendar(conn).await?;
    let recounted = figures::recount(conn, &calendar).await?;
    figures::replace(conn, &recounted).await?;
    info!(
        backend = BACKEND,
        vendors = recounted.totals.vendors,
        invoices = recounted.totals.invoices,
        payments = recounted.totals.payments,
        "recounted the kept figures"
    );
    Ok(())
}

/// Payments read at a time when their reference keys are computed again.
const REKEY_CHUNK: i64 = 10_000;

/// Computes every stored payment reference's key again with the core's rule
/// ([`PaymentReference::key_of`], D48), in id order a chunk at a time, writing only the keys
/// that change. References that now share a key among active payments of one type stay as they
/// are (nothing is deleted), and are counted in the log: each is a payment recorded twice that
/// the old key let through, for someone to look at.
async fn rekey_references(conn: &mut Conn) -> Result<()> {
    let (mut after, mut changed) = (0_i64, 0_u64);
    loop {
        let rows = sqlx::query(
            "SELECT id, reference, reference_key FROM transactions \
             WHERE id > $1 AND reference IS NOT NULL ORDER BY id LIMIT $2",
        )
        .bind(after)
        .bind(REKEY_CHUNK)
        .fetch_all(&mut *conn)
        .await?;
        let Some(last) = rows.last() else { break };
        after = last.try_get("id")?;
        for row in &rows {
            let reference: String = row.try_get("reference")?;
            let stored: Option<String> = row.try_get("reference_key")?;
            let key = PaymentReference::key_of(&reference);
            if stored.as_deref() != Some(key.as_str()) {
                sqlx::query("UPDATE transactions SET reference_key = $2 WHERE id = $1")
                    .bind(row.try_get::<i64, _>("id")?)
                    .bind(key)
                    .execute(&mut *conn)
                    .await?;
                changed += 1;
            }
        }
    }
    let shared: i64 = sqlx::query(
        "SELECT COUNT(*) FROM (SELECT reference_key FROM transactions WHERE is_active AND reference_key IS NOT NULL \
         GROUP BY transaction_type, reference_key \
         HAVING COUNT(DISTINCT COALESCE(vendor_payment_id, -id)) > 1) s",
    )
    .fetch_one(&mut *conn)
    .await?
    .try_get(0)?;
    info!(backend = BACKEND, changed, "computed the payment reference keys again (D48)");
    if shared > 0 {
        tracing::warn!(
            backend = BACKEND,
            shared,
            "some references are now held by more than one active payment of one type: each is likely a payment \
             recorded twice; list them with GET /api/transactions?reference=..."
        );
    }
    Ok(())
}

/// The seed data of D27, with the fixed ids of `pharmapay_core::seed`. It is written once, in
/// the transaction of the first migration, so later changes (a role's description, the
/// pharmacist policy's permissions) are never undone by a restart.
pub(super) async fn write_seed(conn: &mut Conn) -> Result<()> {
    for role in seed::roles() {
        let sql = "INSERT INTO roles (id, name, name_key, description, is_system, is_active, created_at) \
                   VALUES ($1, $2, $3, $4, TRUE, TRUE, 0) ON CONFLICT DO NOTHING";
        insert_named(conn, sql, role.id.get(), role.name, role.description).await?;
    }
    for permission in seed::permissions() {
        sqlx::query(
            "INSERT INTO permissions (id, collection, action, description) VALUES ($1, $2, $3, $4) \
             ON CONFLICT DO NOTHING",
        )
        .bind(permission.id.get())
        .bind(permission.access.collection.name())
        .bind(permission.access.action.name())
        .bind(permission.description)
        .execute(&mut *conn)
        .await?;
    }
    let policy = seed::pharmacist_policy();
    let sql = "INSERT INTO policies (id, name, name_key, description, is_active, created_at) \
               VALUES ($1, $2, $3, $4, TRUE, 0) ON CONFLICT DO NOTHING";
    insert_named(conn, sql, policy.id.get(), policy.name, policy.description).await?;
    let permission_ids: BTreeSet<i64> = policy.permission_ids.iter().map(|id| id.get()).collect();
    insert_policy_permissions(conn, policy.id.get(), &permission_ids).await?;
    sqlx::query("INSERT INTO role_policies (role_id, policy_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
        .bind(policy.role_id.get())
        .bind(policy.id.get())
        .execute(&mut *conn)
        .await?;
    for setting in seed::settings() {
        sqlx::query("INSERT INTO settings (key, value, description) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
            .bind(setting.key)
            .bind(setting.value)
            .bind(setting.description)
            .execute(&mut *conn)
            .await?;
    }
    after_seed(conn).await?;
    Ok(())
}

/// Writes one seeded record with a unique name by `sql`, which takes its id, name, name key and
/// description.
async fn insert_named(conn: &mut Conn, sql: &'static str, id: i64, name: &str, description: &str) -> Result<()> {
    sqlx::query(sql).bind(id).bind(name).bind(key(name)).bind(description).execute(&mut *conn).await?;
    Ok(())
}
