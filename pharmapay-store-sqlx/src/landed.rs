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
