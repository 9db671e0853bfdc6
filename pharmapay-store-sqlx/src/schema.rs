//! The schema's vocabulary both backends share: the migrations and their checksums, the tables
//! ids are reserved in, the advisory locks a write may take, and the kind of search index.

/// How a backend looks search terms up (see `common/search.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SearchIndex {
    /// SQLite's FTS5 tables with the trigram tokenizer, queried by phrase.
    Fts5,
    /// PostgreSQL's `pg_trgm` GIN indexes, which serve `LIKE` directly.
    Trigram,
}

/// An embedded migration: applied once, in its own transaction, in version order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Migration {
    /// Its version: 1, 2, 3 ...
    pub(crate) version: i64,
    /// What it does.
    pub(crate) description: &'static str,
    /// Its SQL, possibly many statements.
    pub(crate) sql: &'static str,
    /// True for the migration whose transaction also writes the seed data (D27).
    pub(crate) seeds: bool,
    /// True for a migration after whose SQL every kept figure (D41) is recounted from the rows in
    /// the same transaction, so an existing database upgrades in place.
    pub(crate) recounts_figures: bool,
    /// True for a migration after whose SQL every stored payment reference's key is computed
    /// again by the core's rule (D30, D48), in the same transaction.
    pub(crate) rekeys_references: bool,
}

/// A text of a landed migration that an earlier build applied before the file was edited, and
/// the SQL that brings a database that build migrated to what the landed text makes. Three
/// migrations (4, 13 and 18) were edited after a first version was committed; a database made
/// by a build holding a first version is accepted, caught up and recorded with today's checksum.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Earlier {
    /// The migration's version.
    pub(crate) version: i64,
    /// The checksum the earlier build recorded for its text.
    pub(crate) checksum: &'static str,
    /// What the landed text adds or changes beyond the earlier one.
    pub(crate) catch_up: &'static str,
    /// True when the catch-up adds kept figures (D41), which a recount fills once every
    /// migration is applied.
    pub(crate) recounts_figures: bool,
}

/// A checksum of a migration's text, kept with the applied migration so an edited file is
/// noticed: 64-bit FNV-1a, in hexadecimal. It guards against accidents, not attackers.
pub(crate) fn checksum(text: &str) -> String {
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// 64-bit FNV-1a of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The tables whose ids imports reserve up front, so the ids they answer follow the input order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Table {
    /// `vendors`.
    Vendors,
    /// `invoices`.
    Invoices,
    /// `transactions`.
    Transactions,
    /// `vendor_credits`.
    Credits,
    /// `credit_applications`.
    CreditApplications,
}

/// Locks that serialise a kind of write across every connection (PostgreSQL advisory locks
/// held until the transaction ends; SQLite's writers are serialised already).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Lock {
    /// Applying migrations.
    Migrations,
    /// One-time onboarding.
    Onboarding,
    /// Changes to users, roles and policies: the last admin (D18), grants (D38) and the token
    /// revocations they cause (D39) are decided one change at a time, so these writes never
    /// wait on each other's row locks in a cycle.
    Access,
    /// Writes that make a payment reference active, by a hash of its type and key (D30): two
    /// writers of one reference are decided one after the other; a rare hash collision only
    /// makes two references wait for each other. Each also holds [`Lock::AllReferences`] shared.
    Reference(u32),
    /// Every payment reference at once, for an import that may bring thousands (one lock per
    /// reference would exhaust PostgreSQL's lock table): held alone, it waits for the writers
    /// of single references, which hold it shared, and keeps new ones out until it ends.
    AllReferences,
    /// Bank statements (D46): uploads and line actions are decided one at a time, so a payment
    /// is held by one line at most. Taken after the time zone setting and before any payment
    /// reference's lock.
    BankStatements,
    /// Giving committed events their positions in the feed (D47): one sequencer at a time
    /// across every server sharing the database, so positions follow the order it finds events
    /// in. Taken alone, by a transaction that writes nothing else.
    EventPositions,
    /// Queuing and claiming webhook deliveries (D47): one server at a time decides which
    /// deliveries exist and which it takes, so none is queued twice or tried by two at once.
    Deliveries,
    /// Vendor imports (D45, D51): one at a time, so two imports of the same new vendors never
    /// both create them; the later one finds the earlier one's. Taken after the time zone
    /// setting and before any vendor's row lock; no other write takes it.
    VendorImports,
}

impl Lock {
    /// The lock of the reference key `key` among payments of type `kind` (D30).
    pub(crate) fn reference(kind: &str, key: &str) -> Self {
        let hash = fnv1a(format!("{kind}\u{0}{key}").as_bytes());
        Lock::Reference((hash ^ (hash >> 32)) as u32)
    }

    /// The advisory lock key: "pharmapay" in ASCII in the high bytes, the lock's number below (or
    /// "ref" and a reference's hash).
    pub(crate) fn key(self) -> i64 {
        const BASE: i64 = 0x7068_6172_6d61_0000;
        // "ref" in ASCII in the high bytes, the reference's hash below.
        const REFERENCES: i64 = 0x7265_6600_0000_0000;
        match self {
            Lock::Migrations => BASE + 1,
            Lock::Onboarding => BASE + 2,
            Lock::Access => BASE + 3,
            Lock::AllReferences => BASE + 4,
            Lock::BankStatements => BASE + 5,
            Lock::EventPositions => BASE + 6,
            Lock::Deliveries => BASE + 7,
            Lock::VendorImports => BASE + 8,
            Lock::Reference(hash) => REFERENCES + i64::from(hash),
        }
    }
}
