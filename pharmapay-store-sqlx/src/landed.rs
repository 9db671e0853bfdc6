//! Migrations are immutable once landed (a database migrated by an earlier build refuses an
//! edited one with `MigrationChanged`): each file's checksum as it landed. A change of schema is
//! a new migration, and its line is added here; an existing line never changes.
const LANDED: &[(&str, i64, &str)] = &[
    ("sqlite", 1, "f27fa89b45644005"),
    ("sqlite", 2, "449d72e0792e4d8b"),
    ("sqlite", 3, "f320d65dcaecce6f"),
    ("sqlite", 4, "38af93f3017d297d"),
    ("sqlite", 5, "2e09c6d73d21961b"),
    ("sqlite", 6, "b0a4852a5b663c0d"),
    ("sqlite", 7, "e8d528ca7ef9d973"),
    ("sqlite", 8, "15e1554fc3678b32"),
    ("sqlite", 9, "47ef5be36ecbe5c6"),
    ("sqlite", 10, "35fcfb981c236315"),
    ("sqlite", 11, "b48a0b5b28c86077"),
    ("sqlite", 12, "ffc53f395a9ff8c5"),
    ("sqlite", 13, "de1590225f68ee7e"),
    ("sqlite", 14, "475025f1a639db9e"),
    ("sqlite", 15, "dc2a002bc6eb2365"),
    ("sqlite", 16, "ce14df8c470e2c2c"),
    ("sqlite", 17, "cad401faa799f6d0"),
    ("sqlite", 18, "0e212299da496765"),
    ("sqlite", 19, "d9d1171bd809f107"),
    ("sqlite", 20, "bc7ed6a4878de73c"),
    ("sqlite", 21, "3e5de7c98e909356"),
    ("sqlite", 22, "e8b0b872ae3718fd"),
    ("postgres", 1, "fa05d1aa612d1170"),
    ("postgres", 2, "dd40d21edd789e41"),
    ("postgres", 3, "961bcc497a50ece0"),
    ("postgres", 4, "5f39841e24235613"),
    ("postgres", 5, "bcc5017c220a55ae"),
    ("postgres", 6, "59f1d1f30605c562"),
    ("postgres", 7, "766e5c0f3afea458"),
    ("postgres", 8, "15e1554fc3678b32"),
    ("postgres", 9, "47ef5be36ecbe5c6"),
    ("postgres", 10, "b1c64d421644b455"),
    ("postgres", 11, "be995c7e41f7ef87"),
    ("postgres", 12, "ffc53f395a9ff8c5"),
    ("postgres", 13, "994a7b19ebdcf348"),
    ("postgres", 14, "4e9f8372860ad03b"),
    ("postgres", 15, "ded273abd9066ce3"),
    ("postgres", 16, "3fb5a5493bc3d8b3"),
    ("postgres", 17, "f445ce1249f10f4a"),
    ("postgres", 18, "83035d413cc78f06"),
    ("postgres", 19, "462a9ae6d36eeb29"),
    ("postgres", 20, "5c3a187115bf5fb3"),
    ("postgres", 21, "68fc4a5e567ed5a1"),
    ("postgres", 22, "5bd91cc1fea71c33"),
];

#[test]
fn landed_migrations_never_change_and_both_dialects_hold_the_same_versions() {
    for (backend, migrations) in [("sqlite", crate::sqlite::MIGRATIONS), ("postgres", crate::postgres::MIGRATIONS)] {
        let landed: Vec<(i64, &str)> =
            LANDED.iter().filter(|(b, ..)| *b == backend).map(|(_, version, sum)| (*version, *sum)).collect();
        for (version, sum) in &landed {
            let Some(migration) = migrations.iter().find(|migration| migration.version == *version) else {
                panic!("{backend} migration {version} landed and is gone");
            };
            assert_eq!(
                crate::checksum(migration.sql),
                *sum,
                "{backend} migration {version} was edited after it landed: write a new migration instead"
            );
        }
        let versions: Vec<i64> = migrations.iter().map(|migration| migration.version).collect();
        let expected: Vec<i64> = (1..=versions.len() as i64).collect();
        assert_eq!(versions, expected, "{backend}: versions run from 1 without a gap");
        assert!(versions.len() >= landed.len(), "{backend}: every landed migration is embedded");
    }
    let sqlite: Vec<i64> = crate::sqlite::MIGRATIONS.iter().map(|migration| migration.version).collect();
    let postgres: Vec<i64> = crate::postgres::MIGRATIONS.iter().map(|migration| migration.version).collect();
    assert_eq!(sqlite, postgres, "both dialects hold the same versions");
}

/// The texts earlier builds applied of the migrations edited after their first commit, as they
/// were then: by backend, version, and text.
const EARLIER_TEXTS: &[(&str, i64, &str)] = &[
    ("sqlite", 4, include_str!("../migrations/sqlite/earlier/0004_v1.sql")),
    ("sqlite", 13, include_str!("../migrations/sqlite/earlier/0013_v1.sql")),
    ("sqlite", 13, include_str!("../migrations/sqlite/earlier/0013_v2.sql")),
    ("sqlite", 18, include_str!("../migrations/sqlite/earlier/0018_v1.sql")),
    ("sqlite", 18, include_str!("../migrations/sqlite/earlier/0018_v2.sql")),
    ("postgres", 4, include_str!("../migrations/postgres/earlier/0004_v1.sql")),
    ("postgres", 13, include_str!("../migrations/postgres/earlier/0013_v1.sql")),
    ("postgres", 18, include_str!("../migrations/postgres/earlier/0018_v1.sql")),
    ("postgres", 18, include_str!("../migrations/postgres/earlier/0018_v2.sql")),
];

#[test]
fn every_earlier_text_is_accepted_by_its_checksum_and_only_those() {
    for (backend, earlier) in [("sqlite", crate::sqlite::EARLIER), ("postgres", crate::postgres::EARLIER)] {
        let texts: Vec<(i64, String)> = EARLIER_TEXTS
            .iter()
            .filter(|(b, ..)| *b == backend)
            .map(|(_, version, text)| (*version, crate::checksum(text)))
            .collect();
        let accepted: Vec<(i64, String)> = earlier.iter().map(|e| (e.version, e.checksum.to_owned())).collect();
        assert_eq!(texts, accepted, "{backend}: the accepted checksums are those of the recovered texts");
        for (version, sum) in &accepted {
            let landed = LANDED.iter().find(|(b, v, _)| *b == backend && v == version).expect("a landed version");
            assert_ne!(landed.2, sum, "{backend} {version}: an earlier text differs from the landed one");
        }
    }
}

/// The migrations an earlier build held: today's up to `version`, with `text` for `version`,
/// recounting nothing (the databases made here hold the seed alone).
fn earlier_build(migrations: &[crate::Migration], version: i64, text: &'static str) -> Vec<crate::Migration> {
    migrations
        .iter()
        .filter(|migration| migration.version <= version)
        .map(|migration| crate::Migration {
            sql: if migration.version == version { text } else { migration.sql },
            recounts_figures: false,
            rekeys_references: false,
            ..*migration
        })
        .collect()
}

/// The schema's statements with comments and runs of white space folded, in name order.
async fn sqlite_schema(pool: &sqlx::SqlitePool) -> Vec<String> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type, name",
    )
    .fetch_all(pool)
    .await
    .expect("the schema reads");
    rows.into_iter().map(|(kind, name, sql)| format!("{kind} {name}: {}", folded(&sql))).collect()
}

/// `sql` without `--` comments, its white space folded to single spaces.
fn folded(sql: &str) -> String {
    let text: Vec<&str> = sql.lines().map(|line| line.split("--").next().unwrap_or_default()).collect();
    text.join(" ").split_whitespace().collect::<Vec<_>>().join(" ")
}

async fn sqlite_pool(dir: &std::path::Path, name: &str) -> sqlx::SqlitePool {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(dir.join(name)).create_if_missing(true);
    sqlx::SqlitePool::connect_with(options).await.expect("SQLite opens")
}

#[tokio::test]
async fn sqlite_databases_of_earlier_texts_upgrade_to_todays_schema() {
    use crate::sqlite::{EARLIER, MIGRATIONS, apply, migrate_with};
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fresh = sqlite_pool(dir.path(), "fresh.db").await;
    migrate_with(&fresh, MIGRATIONS, EARLIER).await.expect("a new database migrates");
    let today = sqlite_schema(&fresh).await;
    for (index, (_, version, text)) in EARLIER_TEXTS.iter().filter(|(b, ..)| *b == "sqlite").enumerate() {
        let name = format!("earlier-{index}.db");
        let pool = sqlite_pool(dir.path(), &name).await;
        apply(&pool, &earlier_build(MIGRATIONS, *version, text), &[]).await.expect("the earlier build migrates");
        let refused = migrate_with(&pool, MIGRATIONS, &[]).await;
        assert!(
            matches!(refused, Err(crate::error::Error::MigrationChanged { version: v, .. }) if v == *version),
            "without its earlier text the database is refused: {refused:?}"
        );
        migrate_with(&pool, MIGRATIONS, EARLIER).await.expect("the earlier text is caught up");
        assert_eq!(sqlite_schema(&pool).await, today, "version {version}: the schema is today's");
        let recorded: Vec<(i64, String)> = sqlx::query_as("SELECT version, checksum FROM _pharmapay_migrations")
            .fetch_all(&pool)
            .await
            .expect("the migrations read");
        for (recorded_version, sum) in recorded {
            let landed = LANDED.iter().find(|(b, v, _)| *b == "sqlite" && *v == recorded_version);
            if let Some(landed) = landed {
                assert_eq!(landed.2, sum, "version {recorded_version} is recorded with its landed checksum");
            }
        }
        pool.close().await;
        let store = crate::SqliteStore::connect(dir.path().join(&name).to_str().expect("a UTF-8 path"))
            .await
            .expect("today's store opens the upgraded database");
        store.check_figures().await.expect("its kept figures equal a recount");
    }
}

#[cfg(feature = "test-support")]
#[tokio::test]
async fn postgres_databases_of_earlier_texts_upgrade_to_todays_schema() {
    use crate::postgres::{EARLIER, MIGRATIONS, apply, migrate_with};
    let Some(admin) = crate::testing::postgres_admin_url() else { return };
    async fn schema(pool: &sqlx::PgPool) -> Vec<String> {
        let columns: Vec<(String,)> = sqlx::query_as(
            "SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' \
             || coalesce(column_default, '') FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1",
        )
        .fetch_all(pool)
        .await
        .expect("the columns read");
        let indexes: Vec<(String,)> = sqlx::query_as(
            "SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
        )
        .fetch_all(pool)
        .await
        .expect("the indexes read");
        let constraints: Vec<(String,)> = sqlx::query_as(
            "SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) FROM pg_constraint \
             WHERE connamespace = 'public'::regnamespace ORDER BY 1",
        )
        .fetch_all(pool)
        .await
        .expect("the constraints read");
        columns.into_iter().chain(indexes).chain(constraints).map(|(line,)| line).collect()
    }
    let fresh = crate::testing::PgDatabase::create(&admin).await;
    let fresh_pool = sqlx::PgPool::connect(fresh.url()).await.expect("PostgreSQL connects");
    migrate_with(&fresh_pool, MIGRATIONS, EARLIER).await.expect("a new database migrates");
    let today = schema(&fresh_pool).await;
    fresh_pool.close().await;
    for (_, version, text) in EARLIER_TEXTS.iter().filter(|(b, ..)| *b == "postgres") {
        let db = crate::testing::PgDatabase::create(&admin).await;
        let pool = sqlx::PgPool::connect(db.url()).await.expect("PostgreSQL connects");
        apply(&pool, &earlier_build(MIGRATIONS, *version, text), &[]).await.expect("the earlier build migrates");
        let refused = migrate_with(&pool, MIGRATIONS, &[]).await;
        assert!(
            matches!(refused, Err(crate::error::Error::MigrationChanged { version: v, .. }) if v == *version),
            "without its earlier text the database is refused: {refused:?}"
        );
        migrate_with(&pool, MIGRATIONS, EARLIER).await.expect("the earlier text is caught up");
        assert_eq!(schema(&pool).await, today, "version {version}: the schema is today's");
        pool.close().await;
        let store = crate::PostgresStore::connect(db.url()).await.expect("today's store opens the upgraded database");
        store.check_figures().await.expect("its kept figures equal a recount");
    }
}
