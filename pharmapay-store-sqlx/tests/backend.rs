//! What the conformance suite cannot see: files, settings, migrations, connection failures,
//! exact money at the bounds, and the unique-index path of a real race.

mod common;

use std::time::{Duration, Instant};

use pharmapay_core::conformance::{amount, dec, ts};
use pharmapay_core::ids::VendorId;
use pharmapay_core::invoices::{InvoiceQuery, NewInvoice};
use pharmapay_core::money::MAX_AMOUNT;
use pharmapay_core::store::{
    AccessStore, BulkInvoice, BulkLoadStore, BulkTransaction, InvoiceStore, SessionStore, TransactionStore,
    VendorStore, WriteContext,
};
use pharmapay_core::transactions::reference::PaymentReference;
use pharmapay_core::transactions::{NewTransaction, TransactionType};
use pharmapay_core::vendors::{NewVendor, VendorQuery, VendorType};
use pharmapay_core::{Authority, Store};
use pharmapay_core::{StoreError, StoreResult, UniqueKey};
use pharmapay_store_sqlx::testing::Notices;
use pharmapay_store_sqlx::{PostgresStore, SqliteStore, SqlxStore, StoreOptions};
use sqlx::{AssertSqlSafe, Connection, Row};

fn ctx() -> WriteContext {
    WriteContext::new(None, Authority::Full, ts("2024-05-10T10:00:00Z"))
}

fn today() -> pharmapay_core::jiff::Timestamp {
    ts("2024-05-10T00:00:00Z")
}

fn invoice(vendor: VendorId, number: &str, total: &str) -> NewInvoice {
    NewInvoice {
        vendor_id: vendor,
        branch_id: None,
        invoice_number: number.into(),
        amount: amount(total),
        invoice_date: ts("2024-05-01T00:00:00Z"),
        due_date: ts("2024-06-01T00:00:00Z"),
        description: None,
    }
}

fn sqlite_path(dir: &tempfile::TempDir) -> String {
    dir.path().join("pharmapay.db").to_str().expect("a UTF-8 path").to_owned()
}

#[tokio::test]
async fn a_sqlite_file_keeps_its_data_across_reopens_and_migrates_once() {
    // Arrange: a store with a vendor and an invoice.
    let dir = tempfile::tempdir().unwrap();
    let path = sqlite_path(&dir);
    let store = SqliteStore::connect(&path).await.unwrap();
    assert_eq!(store.backend(), "sqlite");
    let vendor = store.insert_vendor(NewVendor::new("Kept", VendorType::Dealer), ctx()).await.unwrap();
    store.insert_invoice(invoice(vendor.id, "K-1", "12.5"), ctx(), today()).await.unwrap();
    let secret = store.token_secret(pharmapay_core::auth::Secret::new("s".repeat(40))).await.unwrap();
    store.migrate().await.expect("migrating again is harmless");
    store.close().await;

    // Act: reopen the same file, twice over the URL forms.
    let reopened = SqliteStore::connect(&format!("sqlite://{path}")).await.expect("the URL form opens the same file");
    let again = SqliteStore::connect(&format!("sqlite:{path}")).await.expect("so does the short URL form");

    // Assert: the data, the seed and the migration record are as they were.
    let read = reopened.get_vendor(vendor.id).await.unwrap().expect("the vendor is still there");
    assert_eq!(read.totals.total_invoice_value, dec("12.5"));
    let kept = again.token_secret(pharmapay_core::auth::Secret::new("t".repeat(40))).await.unwrap();
    assert_eq!(kept.expose(), secret.expose(), "the first secret is kept across restarts");
    assert_eq!(again.list_roles().await.unwrap().len(), 2, "the seed is written once");
    assert_eq!(again.list_permissions().await.unwrap().len(), 45);
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{path}")).await.unwrap();
    let applied: i64 =
        sqlx::query("SELECT COUNT(*) FROM _pharmapay_migrations").fetch_one(&mut conn).await.unwrap().get(0);
    assert_eq!(applied, 22, "each of the twenty-two migrations is recorded once");
}

/// Writes a small ledger through `store`: an overdue, a fully paid and a partially paid
/// invoice, a canceled one, a deleted vendor and three payments (one deleted).
async fn small_ledger<S: Store>(store: &S) -> StoreResult<()> {
    let vendor = store.insert_vendor(NewVendor::new("Counted", VendorType::Dealer), ctx()).await?;
    let gone = store.insert_vendor(NewVendor::new("Gone", VendorType::Agency), ctx()).await?;
    store.delete_vendor(gone.id, ctx()).await?;
    let past = |number: &str| NewInvoice { due_date: ts("2024-05-01T00:00:00Z"), ..invoice(vendor.id, number, "10") };
    store.insert_invoice(past("C-1"), ctx(), today()).await?;
    let paid = store.insert_invoice(past("C-2"), ctx(), today()).await?;
    let partly = store.insert_invoice(invoice(vendor.id, "C-3", "10"), ctx(), today()).await?;
    let canceled = store.insert_invoice(invoice(vendor.id, "C-4", "7"), ctx(), today()).await?;
    store.delete_invoice(canceled.id, ctx()).await?;
    let payment = |invoice_id, paid: &str, date: &str| NewTransaction {
        invoice_id,
        amount: amount(paid),
        transaction_date: ts(date),
        transaction_type: TransactionType::Cash,
        reference: None,
        description: None,
    };
    store.insert_transaction(payment(paid.id, "10", "2024-05-09T00:00:00Z"), ctx()).await?;
    store.insert_transaction(payment(partly.id, "2.5", "2024-04-30T20:00:00Z"), ctx()).await?;
    let undone = store.insert_transaction(payment(partly.id, "1", "2024-05-02T00:00:00Z"), ctx()).await?;
    store.delete_transaction(undone.id, ctx()).await?;
    // D44: a claim accepted in part and one still undecided, which the figures of a database
    // upgraded past version 16 count too.
    let claim = |number: &str| pharmapay_core::credits::NewVendorCredit {
        vendor_id: vendor.id,
        branch_id: None,
        credit_number: number.into(),
        kind: pharmapay_core::credits::CreditKind::Breakage,
        claimed_amount: amount("4"),
        claim_date: ts("2024-05-02T00:00:00Z"),
        against_invoice_id: None,
        description: None,
    };
    let decided = store.insert_credit(claim("CN-1"), ctx()).await?;
    let decision = pharmapay_core::credits::CreditDecision {
        accepted_amount: dec("3"),
        decision_date: ts("2024-05-03T00:00:00Z"),
        distributor_reference: None,
    };
    store.decide_credit(decided.id, decision, ctx()).await?;
    store.insert_credit(claim("CN-2"), ctx()).await?;
    Ok(())
}

/// What `small_ledger` must read as, however its figures were made.
async fn reads_as_the_small_ledger<S: Store>(store: &S) {
    for (status, expected) in [("Overdue", 1), ("PartiallyPaid", 1), ("FullyPaid", 1), ("Canceled", 1)] {
        let query =
            pharmapay_core::invoices::InvoiceQuery::from_params(&vec![("status".to_owned(), status.to_owned())])
                .unwrap();
        let page = store.list_invoices(&query, today()).await.unwrap();
        assert_eq!(page.total_count, expected, "{status}");
        assert_eq!(page.items.len() as u64, expected, "{status}");
    }
    let figures = store.dashboard_figures("2024-05-01".parse().unwrap()).await.unwrap();
    let summary = figures.summary();
    assert_eq!((summary.total_vendors, summary.total_invoices), (2, 4));
    assert_eq!((summary.total_due, summary.total_paid), (dec("17.5"), dec("12.5")));
    assert_eq!(summary.recent_transactions, 1, "only the payment of May 9 is on or after May 1 (UTC)");
    let days = store.day_figures("2024-04-01".parse().unwrap(), "2024-05-31".parse().unwrap()).await.unwrap();
    let days: Vec<(String, i64)> = days.iter().map(|(day, figures)| (day.to_string(), figures.payments)).collect();
    assert_eq!(days, [("2024-04-30".to_owned(), 1), ("2024-05-09".to_owned(), 1)]);
    let top = store.top_vendors(5).await.unwrap();
    assert_eq!((top.len(), top[0].outstanding_balance, top[0].total_invoices), (1, dec("17.5"), 3));
}

/// Takes a database back from version 22 to 21: users without branches (D49).
const UNDO_22: &str = "ALTER TABLE users DROP COLUMN branch_ids; DELETE FROM _pharmapay_migrations WHERE version = 22";

/// Takes a database back from version 21 to 20: credits and statements without a branch (D49).
const UNDO_21: &str = "ALTER TABLE vendor_credits DROP COLUMN branch_id; ALTER TABLE bank_statements DROP COLUMN branch_id; \
     DELETE FROM _pharmapay_migrations WHERE version = 21";

/// Takes a database back from version 20 to 19: invoices without a branch (D49).
const UNDO_20: &str =
    "ALTER TABLE invoices DROP COLUMN branch_id; DELETE FROM _pharmapay_migrations WHERE version = 20";

/// Takes a database back from version 19 to 18: no branches and no permissions for them (D49);
/// the same text on both backends.
const UNDO_19: &str = "DROP TABLE branches; DELETE FROM policy_permissions WHERE permission_id >= 42; \
     DELETE FROM permissions WHERE id >= 42; DELETE FROM _pharmapay_migrations WHERE version = 19";

/// Takes a database back from version 18 to 17: no event feed, no webhook permissions (D47).
const UNDO_18: &str = "DROP TABLE webhook_deliveries; DROP TABLE webhooks; DROP TABLE events; DROP TABLE event_positions; DELETE FROM permissions WHERE id >= 38; \
     DELETE FROM _pharmapay_migrations WHERE version = 18";

/// Takes a database back from version 17 to 16: no bank statements and no permissions for them
/// (D46); the same text on both backends.
const UNDO_17: &str = "DROP TABLE bank_lines; DROP TABLE bank_statements; DROP INDEX vendor_payments_by_date; \
     DELETE FROM permissions WHERE id >= 34; DELETE FROM _pharmapay_migrations WHERE version = 17";

/// Takes a SQLite database back from version 16 to 15: no credit applications, and the figures
/// and indexes as they were before credits were set against bills (D44).
const UNDO_16_SQLITE: &str = "DROP TABLE credit_applications; DROP INDEX vendor_credits_by_vendor; \
     DROP INDEX invoices_by_pending; DROP INDEX invoices_open_by_vendor; ALTER TABLE invoices DROP COLUMN credited; \
     CREATE INDEX invoices_by_pending ON invoices ((amount - paid), id); \
     CREATE INDEX invoices_open_by_vendor ON invoices (vendor_id, due_date, amount, paid, is_active) \
     WHERE is_active AND amount > paid; \
     ALTER TABLE vendors DROP COLUMN credited_high; ALTER TABLE vendors DROP COLUMN credited_low; \
     ALTER TABLE vendors DROP COLUMN available_credit_high; ALTER TABLE vendors DROP COLUMN available_credit_low; \
     ALTER TABLE vendor_days DROP COLUMN credits; ALTER TABLE vendor_days DROP COLUMN credited_high; \
     ALTER TABLE vendor_days DROP COLUMN credited_low; \
     ALTER TABLE ledger_totals DROP COLUMN invoice_credited_high; ALTER TABLE ledger_totals DROP COLUMN invoice_credited_low; \
     ALTER TABLE ledger_totals DROP COLUMN credits_available; ALTER TABLE ledger_totals DROP COLUMN available_credit_high; \
     ALTER TABLE ledger_totals DROP COLUMN available_credit_low; ALTER TABLE ledger_totals DROP COLUMN pending_claims; \
     ALTER TABLE ledger_totals DROP COLUMN pending_claimed_high; ALTER TABLE ledger_totals DROP COLUMN pending_claimed_low; \
     DELETE FROM _pharmapay_migrations WHERE version = 16;";

/// [`UNDO_16_SQLITE`] for PostgreSQL, where dropping a column drops the indexes over it.
const UNDO_16_POSTGRES: &str = "DROP TABLE credit_applications; DROP INDEX vendor_credits_by_vendor; \
     ALTER TABLE invoices DROP COLUMN credited; \
     CREATE INDEX invoices_by_pending ON invoices ((amount - paid), id); \
     CREATE INDEX invoices_open_by_vendor ON invoices (vendor_id, due_date) INCLUDE (amount, paid) \
     WHERE is_active AND amount > paid; \
     ALTER TABLE vendors DROP COLUMN credited_high, DROP COLUMN credited_low, DROP COLUMN available_credit_high, \
     DROP COLUMN available_credit_low; \
     ALTER TABLE vendor_days DROP COLUMN credits, DROP COLUMN credited_high, DROP COLUMN credited_low; \
     ALTER TABLE ledger_totals DROP COLUMN invoice_credited_high, DROP COLUMN invoice_credited_low, \
     DROP COLUMN credits_available, DROP COLUMN available_credit_high, DROP COLUMN available_credit_low, \
     DROP COLUMN pending_claims, DROP COLUMN pending_claimed_high, DROP COLUMN pending_claimed_low; \
     DELETE FROM _pharmapay_migrations WHERE version = 16;";

#[tokio::test]
async fn sqlite_kept_figures_are_recounted_when_an_existing_database_upgrades() {
    // Arrange: a file holding a small ledger, taken back to the schema of version 3 (no kept
    // figures, open counts kept by triggers), as a database written by an earlier version is.
    let dir = tempfile::tempdir().unwrap();
    let path = sqlite_path(&dir);
    let store = SqliteStore::connect(&path).await.unwrap();
    small_ledger(&store).await.unwrap();
    store.close().await;
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{path}")).await.unwrap();
    sqlx::raw_sql(UNDO_22).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_21).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_20).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_19).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_18).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_17).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_16_SQLITE).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(
        "DROP INDEX vendors_by_outstanding; DROP INDEX vendors_ranked; \
         ALTER TABLE vendors DROP COLUMN active_invoices; ALTER TABLE vendors DROP COLUMN invoiced_high; \
         ALTER TABLE vendors DROP COLUMN invoiced_low; ALTER TABLE vendors DROP COLUMN outstanding_high; \
         ALTER TABLE vendors DROP COLUMN outstanding_low; DROP TABLE payment_days; DROP TABLE ledger_totals; \
         DROP TRIGGER invoice_number_search_insert; DROP TRIGGER invoice_number_search_update; \
         DROP TRIGGER invoice_number_search_delete; DROP TRIGGER vendor_name_search_insert; \
         DROP TRIGGER vendor_name_search_update; DROP TRIGGER vendor_name_search_delete; \
         DROP TABLE invoice_number_search; DROP TABLE vendor_name_search; DROP TABLE invoice_open_counts; \
         DROP INDEX vendors_by_owed; DROP INDEX vendors_owing; DROP INDEX invoices_open_by_vendor; \
         ALTER TABLE vendors DROP COLUMN open_invoices; \
         ALTER TABLE vendors DROP COLUMN owed_high; ALTER TABLE vendors DROP COLUMN owed_low; \
         DROP TABLE vendor_days; DROP INDEX transactions_by_vendor_date; DROP INDEX invoices_by_vendor_date; \
         ALTER TABLE transactions DROP COLUMN vendor_id; \
         DELETE FROM _pharmapay_migrations WHERE version IN (2, 4, 13, 14)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();

    // Act: open it again, which applies migrations 2, 4, 13, 14 and 16 over the existing rows.
    let store = SqliteStore::connect(&path).await.unwrap();

    // Assert: every figure is as the rows say.
    store.check_figures().await.expect("kept figures equal the recount");
    reads_as_the_small_ledger(&store).await;
}

#[tokio::test]
async fn postgres_kept_figures_are_recounted_when_an_existing_database_upgrades() {
    let Some((store, database)) = common::fresh_postgres().await else { return };
    small_ledger(&store).await.unwrap();
    store.close().await;
    let mut conn = sqlx::PgConnection::connect(database.url()).await.unwrap();
    sqlx::raw_sql(UNDO_22).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_21).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_20).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_19).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_18).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_17).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_16_POSTGRES).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(
        "ALTER TABLE vendors DROP COLUMN active_invoices, DROP COLUMN invoiced_high, DROP COLUMN invoiced_low, \
         DROP COLUMN outstanding_high, DROP COLUMN outstanding_low; DROP TABLE payment_days; \
         DROP TABLE ledger_totals; DROP INDEX invoices_number_trigrams; DROP INDEX vendors_name_trigrams; \
         DROP TABLE invoice_open_counts; DROP INDEX invoices_open_by_vendor; ALTER TABLE vendors \
         DROP COLUMN open_invoices, DROP COLUMN owed_high, DROP COLUMN owed_low; DROP TABLE vendor_days; \
         DROP INDEX invoices_by_vendor_date; ALTER TABLE transactions DROP COLUMN vendor_id; \
         DELETE FROM _pharmapay_migrations WHERE version IN (2, 4, 13, 14)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();

    let store = PostgresStore::connect(database.url()).await.unwrap();

    store.check_figures().await.expect("kept figures equal the recount");
    reads_as_the_small_ledger(&store).await;
}

/// Two payments whose references the old key told apart (`UTR.77` and `UTR 77`), with their
/// keys as the old rule wrote them and migration 12 forgotten, as in a database of an earlier
/// version; answers their ids.
async fn payments_keyed_the_old_way<S: Store>(store: &S) -> (i64, i64) {
    let vendor = store.insert_vendor(NewVendor::new("Keyed", VendorType::Wholesaler), ctx()).await.unwrap();
    let bill = store.insert_invoice(invoice(vendor.id, "K-1", "100"), ctx(), today()).await.unwrap();
    let pay = |text: &str, kind| NewTransaction {
        invoice_id: bill.id,
        amount: amount("1"),
        transaction_date: ts("2024-05-09T00:00:00Z"),
        transaction_type: kind,
        reference: Some(PaymentReference::parse(text).unwrap()),
        description: None,
    };
    let first = store.insert_transaction(pay("UTR 77", TransactionType::Upi), ctx()).await.unwrap();
    let second = store.insert_transaction(pay("ＵＴＲ.７７", TransactionType::Cash), ctx()).await.unwrap();
    (first.id.get(), second.id.get())
}

/// What migration 12 changes, and how the test undoes it.
const OLD_KEYS: &str = "UPDATE transactions SET reference_key = 'UTR77' WHERE reference = 'UTR 77'; \
     UPDATE transactions SET reference_key = 'ＵＴＲ.７７' WHERE reference <> 'UTR 77'; \
     DELETE FROM _pharmapay_migrations WHERE version = 12";

/// Each stored key, in payment order, read on the connection `$conn`.
macro_rules! stored_keys {
    ($conn:expr) => {{
        let rows = sqlx::query("SELECT reference_key FROM transactions ORDER BY id").fetch_all($conn).await.unwrap();
        rows.iter().map(|row| row.get::<String, _>(0)).collect::<Vec<_>>()
    }};
}

#[tokio::test]
async fn sqlite_reference_keys_are_computed_again_when_an_existing_database_upgrades() {
    let dir = tempfile::tempdir().unwrap();
    let path = sqlite_path(&dir);
    let store = SqliteStore::connect(&path).await.unwrap();
    payments_keyed_the_old_way(&store).await;
    store.close().await;
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{path}")).await.unwrap();
    sqlx::raw_sql(OLD_KEYS).execute(&mut conn).await.unwrap();
    assert_eq!(stored_keys!(&mut conn), ["UTR77", "ＵＴＲ.７７"]);
    conn.close().await.unwrap();

    let store = SqliteStore::connect(&path).await.unwrap();

    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{path}")).await.unwrap();
    assert_eq!(stored_keys!(&mut conn), ["UTR77", "UTR77"], "D48: one key for both spellings");
    let upi = PaymentReference::key_of("utr-77");
    let found = store
        .list_transactions(
            &pharmapay_core::transactions::TransactionQuery::from_params(&[("reference", "utr-77")]).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!((upi.as_str(), found.total_count), ("UTR77", 2), "the filter finds both by the new key");
}

#[tokio::test]
async fn postgres_reference_keys_are_computed_again_when_an_existing_database_upgrades() {
    let Some((store, database)) = common::fresh_postgres().await else { return };
    payments_keyed_the_old_way(&store).await;
    store.close().await;
    let mut conn = sqlx::PgConnection::connect(database.url()).await.unwrap();
    sqlx::raw_sql(OLD_KEYS).execute(&mut conn).await.unwrap();
    assert_eq!(stored_keys!(&mut conn), ["UTR77", "ＵＴＲ.７７"]);

    let _store = PostgresStore::connect(database.url()).await.unwrap();

    assert_eq!(stored_keys!(&mut conn), ["UTR77", "UTR77"], "D48: one key for both spellings");
}

/// Connections the server ended (as a restart does) cost no request: a read that meets a dead
/// reader connection runs again on a checked one (readers are lent without a ping), and
/// writes' pool pings its own before use.
#[tokio::test]
async fn postgres_reads_and_writes_survive_the_server_ending_their_connections() {
    let Some((store, database)) = common::fresh_postgres().await else { return };
    let vendor = store.insert_vendor(NewVendor::new("Kept", VendorType::Dealer), ctx()).await.unwrap();
    let (vendors, invoices) = (VendorQuery::default(), InvoiceQuery::default());
    // Four reads at once leave several reader connections idle, all of which will be ended.
    let reads = tokio::join!(
        store.get_vendor(vendor.id),
        store.get_vendor(vendor.id),
        store.list_vendors(&vendors),
        store.list_invoices(&invoices, today()),
    );
    assert!(reads.0.unwrap().is_some() && reads.1.unwrap().is_some());
    assert_eq!(reads.2.unwrap().total_count, 1);
    assert_eq!(reads.3.unwrap().total_count, 0);
    let mut admin = sqlx::PgConnection::connect(database.url()).await.unwrap();
    let ended: i64 = sqlx::query(
        "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()) AS ended",
    )
    .fetch_one(&mut admin)
    .await
    .unwrap()
    .get(0);
    assert!(ended >= 3, "the store's reader and writer connections were ended ({ended})");
    admin.close().await.unwrap();
    let read = store.get_vendor(vendor.id).await.expect("a read after its connection was ended");
    assert_eq!(read.map(|found| found.name), Some("Kept".to_owned()));
    let (page, again) = tokio::join!(store.list_vendors(&vendors), store.get_vendor(vendor.id));
    assert_eq!(page.expect("a list on the other ended connections").total_count, 1);
    assert!(again.expect("a read beside it").is_some());
    store.insert_vendor(NewVendor::new("Later", VendorType::Dealer), ctx()).await.expect("a write as well");
}

#[tokio::test]
async fn kept_figures_follow_every_write_on_both_backends() {
    let (sqlite, _dir) = common::fresh_sqlite().await;
    small_ledger(&sqlite).await.unwrap();
    sqlite.check_figures().await.expect("SQLite: kept figures equal the recount");
    reads_as_the_small_ledger(&sqlite).await;
    let Some((postgres, _database)) = common::fresh_postgres().await else { return };
    small_ledger(&postgres).await.unwrap();
    postgres.check_figures().await.expect("PostgreSQL: kept figures equal the recount");
    reads_as_the_small_ledger(&postgres).await;
}

#[tokio::test]
async fn sqlite_runs_in_wal_with_full_sync_foreign_keys_and_a_busy_timeout() {
    let (store, _dir) = common::fresh_sqlite().await;
    let facts = store.facts().await.unwrap();
    let fact = |name: &str| facts.iter().find(|(key, _)| *key == name).map(|(_, value)| value.as_str());
    assert_eq!(fact("journal_mode"), Some("wal"));
    assert_eq!(fact("synchronous"), Some("FULL"), "a money ledger syncs every commit");
    assert_eq!(fact("foreign_keys"), Some("on"));
    assert_eq!(fact("busy_timeout_ms"), Some("5000"));
    store.analyze().await.expect("SQLite needs no statistics refresh, and says so by succeeding");
}

#[tokio::test]
async fn an_edited_or_unknown_migration_stops_the_store_from_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = sqlite_path(&dir);
    SqlxStore::connect(&path).await.unwrap().close().await;
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{path}")).await.unwrap();
    let original: String = sqlx::query("SELECT checksum FROM _pharmapay_migrations WHERE version = 1")
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .get(0);

    sqlx::query("UPDATE _pharmapay_migrations SET checksum = 'edited' WHERE version = 1")
        .execute(&mut conn)
        .await
        .unwrap();
    match SqlxStore::connect(&path).await {
        Err(StoreError::Backend(error)) => {
            assert!(error.to_string().contains("never edit an applied migration"), "{error}")
        }
        other => panic!("an edited migration must be refused, got {:?}", other.map(|_| ())),
    }

    sqlx::query("UPDATE _pharmapay_migrations SET checksum = $1 WHERE version = 1")
        .bind(original)
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::query("INSERT INTO _pharmapay_migrations VALUES (99, 'from the future', 'x', 0)")
        .execute(&mut conn)
        .await
        .unwrap();
    match SqlxStore::connect(&path).await {
        Err(StoreError::Backend(error)) => assert!(error.to_string().contains("migration 99"), "{error}"),
        other => panic!("a database newer than the build must be refused, got {:?}", other.map(|_| ())),
    }
}

#[tokio::test]
async fn urls_that_name_no_supported_database_are_refused() {
    for (url, label) in [
        ("mysql://localhost/db", "another database"),
        ("sqlite::memory:", "in-memory SQLite"),
        ("sqlite://?mode=memory", "in-memory SQLite by mode"),
        ("   ", "blank"),
    ] {
        match SqlxStore::connect(url).await {
            Err(StoreError::Backend(error)) => eprintln!("{label}: {error}"),
            other => panic!("{label}: expected a configuration error, got {:?}", other.map(|_| ())),
        }
    }
}

#[tokio::test]
async fn an_unreachable_postgres_is_unavailable_within_seconds() {
    let options = StoreOptions { acquire_timeout: Duration::from_secs(2), ..StoreOptions::default() };
    let started = Instant::now();
    let result = SqlxStore::connect_with("postgres://postgres@127.0.0.1:1/test", options).await;
    assert!(matches!(result, Err(StoreError::Unavailable(_))), "got {:?}", result.map(|_| ()));
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn a_closed_store_reports_itself_unavailable() {
    let (store, _dir) = common::fresh_sqlite().await;
    store.health().await.expect("an open store is healthy");
    store.close().await;
    assert!(matches!(store.health().await, Err(StoreError::Unavailable(_))));
    assert!(matches!(store.list_roles().await, Err(StoreError::Unavailable(_))));
}

/// D1: the largest amount, paid totals at that ceiling and sums beyond it survive storage
/// exactly; a payment past the ceiling is refused and changes nothing.
async fn money_round_trips_at_the_bounds<S: Store>(store: S) -> StoreResult<()> {
    let max = MAX_AMOUNT.to_string();
    assert_eq!(max, "999999999999.9999");
    let vendor = store.insert_vendor(NewVendor::new("Big", VendorType::Manufacturer), ctx()).await?;
    let first = store.insert_invoice(invoice(vendor.id, "MAX-1", &max), ctx(), today()).await?;
    let second = store.insert_invoice(invoice(vendor.id, "MAX-2", &max), ctx(), today()).await?;
    assert_eq!(first.amount.get(), MAX_AMOUNT);
    let pay = |invoice_id, paid: &str| NewTransaction {
        invoice_id,
        amount: amount(paid),
        transaction_date: ts("2024-05-09T00:00:00Z"),
        transaction_type: TransactionType::NetBanking,
        reference: None,
        description: None,
    };
    let payment = store.insert_transaction(pay(first.id, &max), ctx()).await?;
    assert_eq!(payment.amount.get(), MAX_AMOUNT);
    assert_eq!(payment.invoice.pending_amount, dec("0"));
    let refused = store.insert_transaction(pay(first.id, "0.0001"), ctx()).await;
    assert!(
        matches!(refused, Err(StoreError::Rule(pharmapay_core::RuleBroken::PaidTotalTooLarge))),
        "a paid total past the largest amount is refused: {refused:?}"
    );
    store.insert_transaction(pay(second.id, &max), ctx()).await?;
    let read = store.get_invoice(first.id, today()).await?.expect("the invoice").invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (MAX_AMOUNT, dec("0")), "the refusal changed nothing");
    let vendor = store.get_vendor(vendor.id).await?.expect("the vendor");
    assert_eq!(vendor.totals.total_invoice_value, dec("1999999999999.9998"));
    assert_eq!(vendor.totals.total_paid_amount, dec("1999999999999.9998"));
    assert_eq!(vendor.totals.outstanding_balance, dec("0"));
    let summary = store.dashboard_figures("2024-04-01".parse().unwrap()).await?.summary();
    assert_eq!((summary.total_paid, summary.total_due), (dec("1999999999999.9998"), dec("0")));
    assert_eq!(summary.recent_transactions, 2, "both payments are dated after the first recent day");
    Ok(())
}

#[tokio::test]
async fn sqlite_keeps_money_exact_at_the_largest_amount() {
    let (store, _dir) = common::fresh_sqlite().await;
    money_round_trips_at_the_bounds(store).await.unwrap();
}

#[tokio::test]
async fn postgres_keeps_money_exact_at_the_largest_amount() {
    let Some((store, _database)) = common::fresh_postgres().await else { return };
    money_round_trips_at_the_bounds(store).await.unwrap();
}

#[tokio::test]
async fn postgres_reports_its_settings_and_migrates_once_when_servers_start_together() {
    let Some(admin_url) = common::postgres_admin_url() else { return };
    let database = common::PgDatabase::create(&admin_url).await;
    // Three servers starting at once on an empty database: the migration lock lets one apply
    // each migration and the others see it applied.
    let (a, b, c) = tokio::join!(
        PostgresStore::connect(database.url()),
        PostgresStore::connect(database.url()),
        PostgresStore::connect(database.url())
    );
    let store = a.unwrap();
    b.unwrap();
    c.unwrap();
    assert_eq!(store.backend(), "postgres");
    let facts = store.facts().await.unwrap();
    assert!(facts.iter().any(|(name, value)| *name == "default_transaction_isolation" && value == "read committed"));
    assert_eq!(store.list_roles().await.unwrap().len(), 2, "the seed is written once");
    // The identity sequences continue after the seeded ids.
    let role = store
        .insert_role(pharmapay_core::access::role::NewRole { name: "Clerk".into(), description: String::new() }, ctx())
        .await
        .unwrap();
    assert_eq!(role.id.get(), 3);
    store.analyze().await.expect("statistics refresh after a bulk load");
    store.close().await;
}

/// After a bulk load the store refreshes the statistics of its own tables. Run by the role the
/// README asks for (one that owns its database and nothing more), it says nothing: a `VACUUM`
/// of the whole database warned that such a role may not vacuum a shared catalogue.
#[tokio::test]
async fn postgres_refreshes_its_statistics_as_a_database_owner_without_warnings() {
    let Some(admin_url) = common::postgres_admin_url() else { return };
    let database = common::PgDatabase::create_with_owner(&admin_url).await;
    let url = database.url().to_owned();
    let store = PostgresStore::connect(&url).await.expect("a database owner may migrate it");
    small_ledger(&store).await.unwrap();
    let logged = Notices::default();

    let refreshed = {
        let _logged = tracing::dispatcher::set_default(&tracing::Dispatch::new(logged.clone()));
        store.analyze().await
    };

    refreshed.expect("the statistics are refreshed");
    assert_eq!(logged.notices(), Vec::<String>::new(), "PostgreSQL has nothing to warn about");
    assert_eq!(logged.warnings(), Vec::<String>::new());
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let unvacuumed: Vec<String> = sqlx::query_scalar(
        "SELECT relname::text FROM pg_stat_user_tables WHERE last_vacuum IS NULL OR last_analyze IS NULL ORDER BY 1",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(unvacuumed, Vec::<String>::new(), "every table of the store was vacuumed and analyzed");
    conn.close().await.unwrap();
    store.close().await;
}

#[tokio::test]
async fn postgres_turns_a_lost_race_on_the_unique_index_into_a_conflict() {
    let Some((store, database)) = common::fresh_postgres().await else { return };
    let vendor = store.insert_vendor(NewVendor::new("Racer", VendorType::Dealer), ctx()).await.unwrap();

    // Arrange: another session has inserted the number but not committed, so the store's own
    // check cannot see it and only the partial unique index can stop the second insert.
    let mut other = sqlx::PgConnection::connect(database.url()).await.unwrap();
    let mut other_tx = other.begin().await.unwrap();
    sqlx::query(AssertSqlSafe(format!(
        "INSERT INTO invoices (vendor_id, invoice_number, number_key, amount, invoice_date, due_date, created_at, \
         updated_at) VALUES ({}, 'RACE-1', 'race-1', 10000, 0, 0, 0, 0)",
        vendor.id.get()
    )))
    .execute(&mut *other_tx)
    .await
    .unwrap();

    // Act: the store's insert waits on the index entry; the other session then commits.
    let racing = tokio::spawn({
        let store = store.clone();
        async move { store.insert_invoice(invoice(vendor.id, "race-1", "5"), ctx(), today()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    other_tx.commit().await.unwrap();

    // Assert: D5, a Conflict naming the field, not a backend failure.
    match racing.await.unwrap() {
        Err(StoreError::Conflict(UniqueKey::InvoiceNumber)) => {}
        other => panic!("the loser of a race gets Conflict, got {other:?}"),
    }
}

#[test]
fn test_database_urls_replace_only_the_database_name() {
    assert_eq!(pharmapay_store_sqlx::testing::with_database("postgres://u@h:5432/test", "x"), "postgres://u@h:5432/x");
    assert_eq!(pharmapay_store_sqlx::testing::with_database("postgres://u@h:5432", "x"), "postgres://u@h:5432/x");
    assert_eq!(
        pharmapay_store_sqlx::testing::with_database("postgresql://u:p@h/test?sslmode=disable", "x"),
        "postgresql://u:p@h/x?sslmode=disable"
    );
}

/// Imports `numbers` as invoices of `vendor`, with one payment on the first.
async fn import_some<S: BulkLoadStore>(store: &S, vendor: VendorId, numbers: &[&str]) {
    let invoices = numbers
        .iter()
        .map(|number| BulkInvoice { invoice: invoice(vendor, number, "10"), is_active: true, created_at: today() })
        .collect();
    let ids = store.load_invoices(invoices).await.unwrap();
    let payment = NewTransaction {
        invoice_id: ids[0],
        amount: amount("4"),
        transaction_date: today(),
        transaction_type: TransactionType::Cash,
        reference: None,
        description: None,
    };
    let imported = BulkTransaction { transaction: payment, is_active: true, created_at: today() };
    store.load_transactions(vec![imported]).await.unwrap();
}

/// How many invoices a search for `term` finds (through the search index).
async fn found<S: Store>(store: &S, term: &str) -> u64 {
    let mut query = InvoiceQuery::default();
    query.filter.search = Some(term.into());
    store.list_invoices(&query, today()).await.unwrap().total_count
}

/// The first half of a bulk load: set aside (twice, the second changing nothing), two invoices
/// imported with a payment. Returns the vendor.
async fn begin_bulk_load_of_two<S: Store + BulkLoadStore>(store: &S) -> VendorId {
    let vendor = store.insert_vendor(NewVendor::new("Bulk", VendorType::Dealer), ctx()).await.unwrap().id;
    store.begin_bulk_load().await.unwrap();
    store.begin_bulk_load().await.expect("a second begin changes nothing");
    import_some(store, vendor, &["BULK-001", "BULK-002"]).await;
    vendor
}

/// A bulk load sets the indexes the imports do not read aside and builds them again at the
/// finish, search included; one that stops half way is finished when the store next opens.
#[tokio::test]
async fn sqlite_bulk_loads_set_indexes_aside_and_build_them_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = sqlite_path(&dir);
    let indexed = || async {
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{path}")).await.unwrap();
        let sql = "SELECT COUNT(*) FROM sqlite_master WHERE name IN \
                   ('invoices_by_due_date', 'invoice_number_search_insert', 'transactions_active_by_date')";
        let count: i64 = sqlx::query(sql).fetch_one(&mut conn).await.unwrap().get(0);
        count
    };
    let store = SqliteStore::connect(&path).await.unwrap();
    let vendor = begin_bulk_load_of_two(&store).await;
    assert_eq!(indexed().await, 0, "set aside during the load");
    store.finish_bulk_load().await.unwrap();
    assert_eq!(indexed().await, 3, "built again at the finish");
    assert_eq!(found(&store, "ulk-00").await, 2, "the search index was refilled");
    store.check_figures().await.expect("kept figures equal the recount");

    store.begin_bulk_load().await.unwrap();
    import_some(&store, vendor, &["BULK-003"]).await;
    store.close().await;
    assert_eq!(indexed().await, 0, "the load stopped before its finish");
    let store = SqliteStore::connect(&path).await.unwrap();
    assert_eq!(indexed().await, 3, "opening the store finished it");
    assert_eq!(found(&store, "bulk").await, 3);
    store.finish_bulk_load().await.expect("nothing left to build");
    store.check_figures().await.expect("kept figures equal the recount");
}

#[tokio::test]
async fn postgres_bulk_loads_set_indexes_aside_and_build_them_again() {
    let Some((store, database)) = common::fresh_postgres().await else { return };
    let indexed = || async {
        let mut conn = sqlx::PgConnection::connect(database.url()).await.unwrap();
        let sql = "SELECT COUNT(*) FROM pg_indexes WHERE indexname IN \
                   ('invoices_by_due_date', 'invoices_number_trigrams', 'transactions_active_by_date')";
        let count: i64 = sqlx::query(sql).fetch_one(&mut conn).await.unwrap().get(0);
        count
    };
    let vendor = begin_bulk_load_of_two(&store).await;
    assert_eq!(indexed().await, 0, "set aside during the load");
    store.finish_bulk_load().await.unwrap();
    assert_eq!(indexed().await, 3, "built again at the finish");
    assert_eq!(found(&store, "ulk-00").await, 2);
    store.begin_bulk_load().await.unwrap();
    import_some(&store, vendor, &["BULK-003"]).await;
    store.close().await;
    let store = PostgresStore::connect(database.url()).await.unwrap();
    assert_eq!(indexed().await, 3, "opening the store finished the stopped load");
    assert_eq!(found(&store, "bulk").await, 3);
    store.check_figures().await.expect("kept figures equal the recount");
}

/// The reloptions of the two trigram indexes, by name, as the catalogue holds them.
async fn trigram_index_options(url: &str) -> Vec<(String, Option<Vec<String>>)> {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let sql = "SELECT relname::text, reloptions FROM pg_class \
               WHERE relname IN ('invoices_number_trigrams', 'vendors_name_trigrams') ORDER BY relname";
    let rows = sqlx::query(sql).fetch_all(&mut conn).await.unwrap();
    rows.iter().map(|row| (row.get(0), row.get(1))).collect()
}

/// Every payment rewrites its invoice's and vendor's rows, adding their trigrams to the
/// indexes' pending lists, which every search reads whole; migration 11 holds those lists to
/// 64 kB, on a database that opens on a stopped bulk load too (its invoice-number index is
/// built again with the limit).
#[tokio::test]
async fn postgres_trigram_indexes_keep_short_pending_lists() {
    let Some((store, database)) = common::fresh_postgres().await else { return };
    let limited = Some(vec!["gin_pending_list_limit=64".to_owned()]);
    let expected = vec![
        ("invoices_number_trigrams".to_owned(), limited.clone()),
        ("vendors_name_trigrams".to_owned(), limited.clone()),
    ];
    assert_eq!(trigram_index_options(database.url()).await, expected, "a new database");

    // A database of version 10 stopped in a bulk load: the invoice-number index set aside
    // without the limit, the vendor-name index without it.
    let vendor = begin_bulk_load_of_two(&store).await;
    store.close().await;
    let mut conn = sqlx::PgConnection::connect(database.url()).await.unwrap();
    sqlx::raw_sql(
        "UPDATE deferred_schema SET definition = regexp_replace(definition, ' WITH \\(.*\\)$', '') \
         WHERE name = 'invoices_number_trigrams'; \
         ALTER INDEX vendors_name_trigrams RESET (gin_pending_list_limit); \
         DELETE FROM _pharmapay_migrations WHERE version = 11",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let deferred: String =
        sqlx::query("SELECT definition FROM deferred_schema WHERE name = 'invoices_number_trigrams'")
            .fetch_one(&mut conn)
            .await
            .unwrap()
            .get(0);
    assert!(!deferred.contains("WITH"), "set aside as version 10 kept it: {deferred}");
    conn.close().await.unwrap();
    assert_eq!(trigram_index_options(database.url()).await, vec![("vendors_name_trigrams".to_owned(), None)]);

    let store = PostgresStore::connect(database.url()).await.unwrap();

    assert_eq!(trigram_index_options(database.url()).await, expected, "after the upgrade");
    import_some(&store, vendor, &["BULK-003"]).await;
    assert_eq!(found(&store, "bulk").await, 3, "the rebuilt index answers");
}

/// Imports ten thousand payments, each with its own reference, in one call; then one that
/// repeats a stored reference, which is refused (D30).
async fn thousands_of_references_import_in_one_transaction<S: Store + BulkLoadStore>(store: &S) {
    let vendor = store.insert_vendor(NewVendor::new("Referenced", VendorType::Dealer), ctx()).await.unwrap().id;
    let invoices =
        vec![BulkInvoice { invoice: invoice(vendor, "REF-1", "100000"), is_active: true, created_at: today() }];
    let invoice_id = store.load_invoices(invoices).await.unwrap()[0];
    let payment = |n: u32| BulkTransaction {
        transaction: NewTransaction {
            invoice_id,
            amount: amount("1"),
            transaction_date: today(),
            transaction_type: TransactionType::NetBanking,
            reference: Some(PaymentReference::parse(&format!("UTR{n:08}")).unwrap()),
            description: None,
        },
        is_active: true,
        created_at: today(),
    };
    let ids =
        store.load_transactions((0..10_000).map(payment).collect()).await.expect("one transaction takes them all");
    assert_eq!(ids.len(), 10_000);
    let again = store.load_transactions(vec![payment(9_999)]).await;
    assert!(
        matches!(again, Err(StoreError::Conflict(UniqueKey::PaymentReference { existing })) if existing == ids[9_999])
    );
}

#[tokio::test]
async fn thousands_of_references_import_in_one_transaction_on_both_backends() {
    let (sqlite, _dir) = common::fresh_sqlite().await;
    thousands_of_references_import_in_one_transaction(&sqlite).await;
    let Some((postgres, _database)) = common::fresh_postgres().await else { return };
    thousands_of_references_import_in_one_transaction(&postgres).await;
}

/// Takes a database back to version 14: no credits, no credit permissions, and the Pharmacist
/// Default policy without them.
const BEFORE_CREDITS: &str = "DROP INDEX vendor_credits_number; DROP INDEX vendor_credits_by_claim_date; \
     DROP INDEX vendor_credits_undecided; DROP TABLE vendor_credits; DELETE FROM policy_permissions WHERE permission_id >= 30; \
     DELETE FROM permissions WHERE id >= 30; DELETE FROM _pharmapay_migrations WHERE version = 15";

/// The permissions a store holds, as `Collection:Action` by id, and those of the Pharmacist
/// Default policy, as the seed says they are (D27, D44).
async fn assert_seeded_permissions<S: Store>(store: &S) {
    let held: Vec<(i64, String)> = store
        .list_permissions()
        .await
        .unwrap()
        .into_iter()
        .map(|permission| (permission.id.get(), permission.code()))
        .collect();
    let seeded: Vec<(i64, String)> =
        pharmapay_core::seed::permissions().into_iter().map(|seed| (seed.id.get(), seed.access.to_string())).collect();
    assert_eq!(held, seeded, "D44, D46, D47, D49: permissions 30 to 45 after the audit log's");
    let policy = store.get_policy(pharmapay_core::ids::PolicyId(1)).await.unwrap().unwrap();
    let mut granted: Vec<i64> = policy.permissions.iter().map(|permission| permission.id.get()).collect();
    granted.sort_unstable();
    let seeded: Vec<i64> = pharmapay_core::seed::pharmacist_policy().permission_ids.iter().map(|id| id.get()).collect();
    assert_eq!(
        granted, seeded,
        "D44, D49: Pharmacist Default gains VendorCredit Read, Create and Update, and Branch:Read"
    );
}

#[tokio::test]
async fn sqlite_credit_permissions_are_added_when_an_existing_database_upgrades() {
    let dir = tempfile::tempdir().unwrap();
    let path = sqlite_path(&dir);
    let store = SqliteStore::connect(&path).await.unwrap();
    store.close().await;
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{path}")).await.unwrap();
    sqlx::raw_sql(UNDO_22).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_21).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_20).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_19).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_18).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_17).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_16_SQLITE).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(BEFORE_CREDITS).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();

    let store = SqliteStore::connect(&path).await.unwrap();

    assert_seeded_permissions(&store).await;
}

#[tokio::test]
async fn postgres_credit_permissions_are_added_when_an_existing_database_upgrades() {
    let Some((store, database)) = common::fresh_postgres().await else { return };
    store.close().await;
    let mut conn = sqlx::PgConnection::connect(database.url()).await.unwrap();
    sqlx::raw_sql(UNDO_22).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_21).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_20).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_19).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_18).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_17).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(UNDO_16_POSTGRES).execute(&mut conn).await.unwrap();
    sqlx::raw_sql(BEFORE_CREDITS).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();

    let store = PostgresStore::connect(database.url()).await.unwrap();

    assert_seeded_permissions(&store).await;
}
