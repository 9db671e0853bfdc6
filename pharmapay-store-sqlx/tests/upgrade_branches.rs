//! An installation onboarded before branches existed upgrades in place (D49): migration 19
//! makes branch 1 its head office, named after the pharmacy's own vendor, and adds the branch
//! permissions, `Branch:Read` among the Pharmacist Default policy's; migration 20 makes every
//! invoice already kept the head office's, and migration 21 every vendor credit and bank
//! statement, on SQLite and PostgreSQL.

mod common;

use pharmapay_core::branches::{HEAD_OFFICE_CODE, HEAD_OFFICE_ID, NewBranch};
use pharmapay_core::conformance::{Fixture, amount, created, engine, onboarding, ts};
use pharmapay_core::credits::{CreditKind, CreditQuery, NewVendorCredit};
use pharmapay_core::ids::PolicyId;
use pharmapay_core::invoices::InvoiceQuery;
use pharmapay_core::store::Store;
use pharmapay_core::transactions::TransactionQuery;
use pharmapay_core::{Error, UniqueKey};
use pharmapay_store_sqlx::{PostgresStore, SqliteStore};
use sqlx::Connection;

/// Takes a database back from version 22 to 18, as an earlier build left it.
const UNDO_19: &str = "ALTER TABLE users DROP COLUMN branch_ids; DELETE FROM _pharmapay_migrations WHERE version = 22; \
     ALTER TABLE vendor_credits DROP COLUMN branch_id; \
     ALTER TABLE bank_statements DROP COLUMN branch_id; DELETE FROM _pharmapay_migrations WHERE version = 21; \
     ALTER TABLE invoices DROP COLUMN branch_id; DELETE FROM _pharmapay_migrations WHERE version = 20; \
     DROP TABLE branches; DELETE FROM policy_permissions WHERE permission_id >= 42; \
     DELETE FROM permissions WHERE id >= 42; DELETE FROM _pharmapay_migrations WHERE version = 19";

/// Onboards `store` through the engine (the pharmacy's own vendor is `onboarding()`'s) and
/// records an invoice with a payment.
async fn onboard<S: Store + Clone>(store: &S) {
    let fx = Fixture::new(store.clone()).await;
    let vendor = fx.vendor("Cipla").await;
    let invoice = fx.invoice(vendor.id, "C-1", "100", "2024-06-01T00:00:00Z").await;
    fx.pay(invoice.id, "40").await;
    let claim = NewVendorCredit {
        vendor_id: vendor.id,
        branch_id: None,
        credit_number: "CN-1".into(),
        kind: CreditKind::Breakage,
        claimed_amount: amount("10"),
        claim_date: ts("2024-05-09T00:00:00Z"),
        against_invoice_id: Some(invoice.id),
        description: None,
    };
    fx.engine.create_credit(&fx.admin, claim, None).await.expect("a claim");
}

async fn assert_upgraded<S: Store + Clone>(store: &S) {
    let head = store.get_branch(HEAD_OFFICE_ID).await.unwrap().expect("branch 1 is there after the upgrade");
    assert_eq!(head.code, HEAD_OFFICE_CODE);
    assert_eq!(head.name, onboarding().pharmacy.name, "named after the pharmacy's own vendor");
    assert!(head.is_active && head.is_head_office());
    let branches = store.list_branches().await.unwrap();
    assert_eq!(branches.len(), 1, "{branches:?}");
    let codes: Vec<String> = store.list_permissions().await.unwrap().iter().map(|p| p.code()).collect();
    assert_eq!(codes[41..], ["Branch:Read", "Branch:Create", "Branch:Update", "Branch:Delete"]);
    let policy = store.get_policy(PolicyId(1)).await.unwrap().expect("the seeded policy");
    assert!(policy.permissions.iter().any(|p| p.id.get() == 42), "Pharmacist Default holds Branch:Read");
    let (engine, _clock) = engine(store.clone()).await;
    let session = engine.login("admin@example.com", "admin-password").await.expect("the admin signs in");
    let admin = engine.authenticate(&session.token.token).await.expect("the token works");
    let invoices = engine.list_invoices(&admin, &InvoiceQuery::default()).await.expect("listed");
    assert_eq!(invoices.items.len(), 1);
    assert_eq!((invoices.items[0].branch_id, invoices.items[0].branch_code.as_str()), (HEAD_OFFICE_ID, "HO"));
    let payments = engine.list_transactions(&admin, &TransactionQuery::default()).await.expect("listed");
    assert_eq!(payments.items[0].invoice.branch_id, HEAD_OFFICE_ID, "a payment is its invoice's branch's");
    let credits = engine.list_credits(&admin, &CreditQuery::default()).await.expect("listed");
    assert_eq!((credits.items[0].branch_id, credits.items[0].branch_code.as_str()), (HEAD_OFFICE_ID, "HO"));
}

/// A branch created after the upgrade takes the next id and any code but the head office's.
async fn a_new_branch_follows_the_head_office<S: Store + Clone>(store: &S) {
    let (engine, _clock) = engine(store.clone()).await;
    let session = engine.login("admin@example.com", "admin-password").await.expect("the admin signs in");
    let admin = engine.authenticate(&session.token.token).await.expect("the token works");
    let taken = engine.create_branch(&admin, NewBranch::new("ho", "Another"), None).await;
    assert!(matches!(taken, Err(Error::Conflict(UniqueKey::BranchCode))), "{taken:?}");
    let branch = created(engine.create_branch(&admin, NewBranch::new("AND", "Andheri"), None).await.unwrap());
    assert_eq!(branch.id.get(), 2);
}

#[tokio::test]
async fn sqlite_an_onboarded_database_gets_its_head_office_when_it_upgrades() {
    let (store, dir) = common::fresh_sqlite().await;
    onboard(&store).await;
    store.close().await;
    let path = dir.path().join("pharmapay.db");
    let url = format!("sqlite:{}", path.to_str().unwrap());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(UNDO_19).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();

    let store = SqliteStore::connect(path.to_str().unwrap()).await.unwrap();

    assert_upgraded(&store).await;
    a_new_branch_follows_the_head_office(&store).await;
}

#[tokio::test]
async fn postgres_an_onboarded_database_gets_its_head_office_when_it_upgrades() {
    let Some((store, database)) = common::fresh_postgres().await else { return };
    onboard(&store).await;
    store.close().await;
    let mut conn = sqlx::PgConnection::connect(database.url()).await.unwrap();
    sqlx::raw_sql(UNDO_19).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();

    let store = PostgresStore::connect(database.url()).await.unwrap();

    assert_upgraded(&store).await;
    a_new_branch_follows_the_head_office(&store).await;
}
