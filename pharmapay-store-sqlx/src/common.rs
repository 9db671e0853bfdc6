//! The SQL store, written once for both backends.
//!
//! This file is compiled twice, as `crate::sqlite::common` and `crate::postgres::common` (see
//! the `#[path]` attributes there). In each, `super::Db` is that backend's sqlx database, the
//! macros `for_update!` and `for_share!` expand to its row-lock clauses (empty for SQLite,
//! whose write transactions hold the whole database), and `super` provides the few functions
//! that differ: how a write transaction begins, advisory locks, id reservation for imports and
//! the identity sequences after seeding. Everything else is the same SQL text, with numbered
//! `$n` placeholders, which both drivers bind by number.
//!
//! Every `Store` method that writes is one database transaction: it checks what the contract
//! requires (active parents, free unique values, the rules of D14, D15 and D18), writes, records
//! its audit entry and completes its idempotency claim (D22, D23), and reads back what it
//! returns, all before committing. Reads go to the reader pool and use one statement where a
//! page and its total count must agree. The answers mirror the memory store exactly: the same
//! orders and tie-breaks, the same error for the same first failed check.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use pharmapay_core::access::{ADMIN_ROLE_ID, Permission};
use pharmapay_core::auth::Secret;
use pharmapay_core::dashboard::{PeriodTotal, Summary, TopVendor};
use pharmapay_core::domain::{
    AuditEntry, AuditQuery, Invoice, InvoiceBrief, InvoiceDetail, InvoiceFilter, InvoiceQuery, InvoiceSortKey,
    InvoiceStatus, NewAuditEntry, NewInvoice, NewPolicy, NewRole, NewTransaction, NewVendor, Policy, ProfileUpdate,
    Role, Setting, Transaction, TransactionFilter, TransactionQuery, TransactionSortKey, TransactionType, User,
    UserUpdate, Vendor, VendorBrief, VendorFilter, VendorQuery, VendorSortKey, VendorTotals, VendorType,
};
use pharmapay_core::idempotency::{ClaimOutcome, IdempotencyClaim, IdempotencyKey};
use pharmapay_core::ids::{AuditId, InvoiceId, PermissionId, PolicyId, RoleId, TransactionId, UserId, VendorId};
use pharmapay_core::jiff::{SignedDuration, Timestamp};
use pharmapay_core::money::{SCALE_FACTOR, from_scaled};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{
    Credentials, ImportedInvoice, ImportedTransaction, ImportedVendor, LoginGate, NewUserRecord, SessionState,
    WriteContext,
};
use pharmapay_core::text::key;
use pharmapay_core::{Amount, Entity, Page, PageRequest, RuleBroken, SortDir, StoreError, seed};
use sqlx::{AssertSqlSafe, Pool, Row};
use tracing::info;

use super::{
    BACKEND, Db, IN_ORDER_PLACEHOLDER, MIGRATIONS, MIGRATIONS_TABLE, Table, after_seed, begin_write, lock, reserve_ids,
};
use crate::error::Error;
use crate::{Lock, checksum};

type Result<T, E = Error> = std::result::Result<T, E>;
type Conn = <Db as sqlx::Database>::Connection;
type DbRow = <Db as sqlx::Database>::Row;
type Args = <Db as sqlx::Database>::Arguments;
type Query = sqlx::query::Query<'static, Db, Args>;

/// Rows per multi-row INSERT in imports: well under both backends' limits on bound values
/// (32,766 for SQLite, 65,535 for PostgreSQL) for the widest table.
const IMPORT_CHUNK: usize = 1_000;

/// Values per `IN (...)` list when checking an import's references.
const LOOKUP_CHUNK: usize = 500;

// SQL fragments shared by several statements. They are macros, not constants, so that
// `concat!` can build whole statements from them at compile time.

/// A vendor's columns and its totals over its active invoices (D11), from `vendors v`. The
/// totals are correlated sub-queries over the covering index `invoices_by_vendor`, so they are
/// computed only for the rows returned.
macro_rules! vendor_columns {
    () => {
        concat!(
            "v.id, v.name, v.vendor_type, v.address, v.phone, v.email, v.drug_license_number1, \
             v.drug_license_number2, v.additional_drug_license_numbers, v.is_active, v.created_at, v.updated_at, ",
            vendor_total!("amount", "/", "total_value_high"),
            ", ",
            vendor_total!("amount", "%", "total_value_low"),
            ", ",
            vendor_total!("paid", "/", "total_paid_high"),
            ", ",
            vendor_total!("paid", "%", "total_paid_low")
        )
    };
}

/// One half (`/`: the high part, `%`: the low part, see [`exact_sum`]) of the sum of a column
/// over the active invoices of vendor `v`.
macro_rules! vendor_total {
    ($column:literal, $op:literal, $alias:literal) => {
        concat!(
            "(SELECT CAST(COALESCE(SUM(vi.",
            $column,
            " ",
            $op,
            " 4294967296), 0) AS BIGINT) FROM invoices vi WHERE vi.vendor_id = v.id AND vi.is_active) AS ",
            $alias
        )
    };
}

/// The exact sum of a non-negative integer expression, as two columns `<alias>_high` and
/// `<alias>_low` that [`exact_sum`] adds up. One `SUM` of scaled amounts can pass `i64::MAX`
/// (a thousand invoices of the largest amount do), where SQLite fails with "integer overflow"
/// and PostgreSQL's cast back from NUMERIC fails too; the sums of the values' high and low 32
/// bits stay far inside 64 bits for any number of rows a table can hold.
macro_rules! exact_sum {
    ($expression:literal, $alias:literal) => {
        concat!(
            "CAST(COALESCE(SUM((",
            $expression,
            ") / 4294967296), 0) AS BIGINT) AS ",
            $alias,
            "_high, CAST(COALESCE(SUM((",
            $expression,
            ") % 4294967296), 0) AS BIGINT) AS ",
            $alias,
            "_low"
        )
    };
}

/// Each active vendor's outstanding balance (D11) as an exact pair (`balance_high`,
/// `balance_low`) that sorts like the balance itself: balance = high * 2^32 + low with low in
/// [0, 2^32). Pending amounts can be negative, so each is first offset by 2^54 (larger than any
/// amount or paid total) to split it into non-negative halves; the offsets are taken off again
/// with the invoice count and the carry of the low sums is moved into the high part.
macro_rules! vendor_balances {
    () => {
        "SELECT vendor_id, \
         CAST(SUM((amount - paid + 18014398509481984) / 4294967296) AS BIGINT) - COUNT(*) * 4194304 \
           + CAST(SUM((amount - paid + 18014398509481984) % 4294967296) AS BIGINT) / 4294967296 AS balance_high, \
         CAST(SUM((amount - paid + 18014398509481984) % 4294967296) AS BIGINT) % 4294967296 AS balance_low, \
         COUNT(*) AS n_invoices \
         FROM invoices WHERE is_active GROUP BY vendor_id"
    };
}

/// An invoice's columns with its vendor's name, from `invoices i JOIN vendors v`.
macro_rules! invoice_columns {
    () => {
        "i.id, i.vendor_id, v.name AS vendor_name, i.invoice_number, i.amount, i.paid, i.invoice_date, \
         i.due_date, i.description, i.is_active, i.created_at, i.updated_at"
    };
}

/// A payment's columns with the invoice it pays (D13), from `transactions t JOIN invoices i
/// JOIN vendors v`.
macro_rules! transaction_columns {
    () => {
        "t.id, t.invoice_id, t.amount, t.transaction_date, t.transaction_type, t.description, t.is_active, \
         t.created_at, t.updated_at, i.invoice_number, i.vendor_id, v.name AS vendor_name, \
         i.amount AS invoice_amount, i.paid AS invoice_paid"
    };
}

macro_rules! invoices_with_vendor {
    () => {
        "invoices i JOIN vendors v ON v.id = i.vendor_id"
    };
}

macro_rules! transactions_with_invoice {
    () => {
        "transactions t JOIN invoices i ON i.id = t.invoice_id JOIN vendors v ON v.id = i.vendor_id"
    };
}

macro_rules! user_columns {
    () => {
        "u.id, u.first_name, u.last_name, u.email, u.role_id, u.is_active, u.created_at"
    };
}

macro_rules! role_columns {
    () => {
        "r.id, r.name, r.description, r.is_system, r.is_active, r.created_at"
    };
}

// Binding values to statements built at run time.

/// A value bound to a statement built at run time.
enum Arg {
    Int(Option<i64>),
    Text(Option<String>),
}

/// The values of a statement built at run time; each `bind` answers the placeholder to write.
#[derive(Default)]
struct Binds {
    args: Vec<Arg>,
    in_order: bool,
}

impl Binds {
    /// Values whose placeholders are written once each, in the order they are bound, so the
    /// backend's cheapest placeholder can be used (see `IN_ORDER_PLACEHOLDER`). For the large
    /// statements of imports and lookups.
    fn in_order() -> Self {
        Self { args: Vec::new(), in_order: true }
    }

    fn push(&mut self, arg: Arg) -> String {
        self.args.push(arg);
        match IN_ORDER_PLACEHOLDER {
            Some(placeholder) if self.in_order => placeholder.to_owned(),
            _ => format!("${}", self.args.len()),
        }
    }

    fn int(&mut self, value: impl Into<Option<i64>>) -> String {
        self.push(Arg::Int(value.into()))
    }

    fn text(&mut self, value: impl Into<String>) -> String {
        self.push(Arg::Text(Some(value.into())))
    }

    fn opt_text(&mut self, value: Option<String>) -> String {
        self.push(Arg::Text(value))
    }

    /// The statement `sql` with every bound value. `sql` is assembled only from this file's
    /// literals and from placeholders: no value ever becomes SQL text.
    fn query(self, sql: String) -> Query {
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for arg in self.args {
            query = match arg {
                Arg::Int(value) => query.bind(value),
                Arg::Text(value) => query.bind(value),
            };
        }
        query
    }
}

/// A `LIKE` pattern matching `term` anywhere, with `%`, `_` and the escape character itself
/// matched literally (used with `ESCAPE '\'`).
fn contains_pattern(term: &str) -> String {
    let mut pattern = String::with_capacity(term.len() + 2);
    pattern.push('%');
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

fn direction(dir: SortDir) -> &'static str {
    match dir {
        SortDir::Asc => "ASC",
        SortDir::Desc => "DESC",
    }
}

fn page_binds(binds: &mut Binds, page: PageRequest) -> (String, String) {
    let limit = binds.int(i64::from(page.page_size()));
    let offset = binds.int(i64::try_from(page.offset()).unwrap_or(i64::MAX));
    (limit, offset)
}

fn conditions(parts: Vec<String>) -> String {
    if parts.is_empty() { "TRUE".to_owned() } else { parts.join(" AND ") }
}

// Conversions between domain values and stored ones.

fn micros(instant: Timestamp) -> i64 {
    instant.as_microsecond()
}

fn instant(micros: i64) -> Result<Timestamp> {
    Timestamp::from_microsecond(micros).map_err(|error| Error::corrupt(format!("instant {micros}: {error}")))
}

fn amount(scaled: i64) -> Result<Amount> {
    Amount::from_scaled(scaled).map_err(|error| Error::corrupt(format!("amount {scaled}: {error}")))
}

/// `a - b` of two scaled amounts, exactly (wider than `i64`, so it never overflows).
fn difference(a: i64, b: i64) -> Decimal {
    Decimal::from_i128_with_scale(i128::from(a) - i128::from(b), pharmapay_core::money::MAX_FRACTION_DIGITS).normalize()
}

/// The largest amount in ten-thousandths: the ceiling of every paid total (D1).
fn max_scaled() -> i64 {
    Amount::try_from(pharmapay_core::money::MAX_AMOUNT).map(Amount::to_scaled).unwrap_or(i64::MAX)
}

/// A scaled value wider than 64 bits, as a normalised decimal.
fn wide_decimal(scaled: i128) -> Decimal {
    Decimal::from_i128_with_scale(scaled, pharmapay_core::money::MAX_FRACTION_DIGITS).normalize()
}

/// Adds up the two columns written by `exact_sum!` (or a balance pair) under `alias`.
fn exact_sum(row: &DbRow, alias: &str) -> Result<i128> {
    let high: i64 = row.try_get(format!("{alias}_high").as_str())?;
    let low: i64 = row.try_get(format!("{alias}_low").as_str())?;
    Ok(i128::from(high) * 4_294_967_296 + i128::from(low))
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// The smallest scaled amount at or above `bound` (for `amount >= bound`).
fn scaled_at_least(bound: Decimal) -> i64 {
    match bound.checked_mul(Decimal::from(SCALE_FACTOR)) {
        Some(scaled) => {
            i64::try_from(scaled.ceil()).unwrap_or(if scaled.is_sign_negative() { i64::MIN } else { i64::MAX })
        }
        None if bound.is_sign_negative() => i64::MIN,
        None => i64::MAX,
    }
}

/// The largest scaled amount at or below `bound` (for `amount <= bound`).
fn scaled_at_most(bound: Decimal) -> i64 {
    match bound.checked_mul(Decimal::from(SCALE_FACTOR)) {
        Some(scaled) => {
            i64::try_from(scaled.floor()).unwrap_or(if scaled.is_sign_negative() { i64::MIN } else { i64::MAX })
        }
        None if bound.is_sign_negative() => i64::MIN,
        None => i64::MAX,
    }
}

fn vendor_type(name: &str) -> Result<VendorType> {
    VendorType::ALL
        .into_iter()
        .find(|vendor_type| vendor_type.name() == name)
        .ok_or_else(|| Error::corrupt(format!("vendor type {name:?}")))
}

fn transaction_type(name: &str) -> Result<TransactionType> {
    TransactionType::ALL
        .into_iter()
        .find(|kind| kind.name() == name)
        .ok_or_else(|| Error::corrupt(format!("transaction type {name:?}")))
}

fn licences_json(numbers: &[String]) -> String {
    // A list of strings always serialises.
    serde_json::to_string(numbers).unwrap_or_else(|_| "[]".to_owned())
}

fn refused<T>(error: StoreError) -> Result<T> {
    Err(Error::Refused(error))
}

// Decoding rows.

fn vendor_from(row: &DbRow) -> Result<Vendor> {
    let licences: &str = row.try_get("additional_drug_license_numbers")?;
    let total_value = wide_decimal(exact_sum(row, "total_value")?);
    let total_paid = wide_decimal(exact_sum(row, "total_paid")?);
    Ok(Vendor {
        id: VendorId(row.try_get("id")?),
        name: row.try_get("name")?,
        vendor_type: vendor_type(row.try_get("vendor_type")?)?,
        address: row.try_get("address")?,
        phone: row.try_get("phone")?,
        email: row.try_get("email")?,
        drug_license_number1: row.try_get("drug_license_number1")?,
        drug_license_number2: row.try_get("drug_license_number2")?,
        additional_drug_license_numbers: serde_json::from_str(licences)
            .map_err(|error| Error::corrupt(format!("licence numbers {licences:?}: {error}")))?,
        is_active: row.try_get("is_active")?,
        totals: VendorTotals::new(total_value, total_paid),
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
    })
}

fn invoice_from(row: &DbRow, today_start: Timestamp) -> Result<Invoice> {
    let scaled_amount: i64 = row.try_get("amount")?;
    let paid: i64 = row.try_get("paid")?;
    let is_active: bool = row.try_get("is_active")?;
    let due_date = instant(row.try_get("due_date")?)?;
    Ok(Invoice {
        id: InvoiceId(row.try_get("id")?),
        vendor_id: VendorId(row.try_get("vendor_id")?),
        vendor_name: row.try_get("vendor_name")?,
        invoice_number: row.try_get("invoice_number")?,
        amount: amount(scaled_amount)?,
        paid_amount: from_scaled(paid),
        invoice_date: instant(row.try_get("invoice_date")?)?,
        due_date,
        description: row.try_get("description")?,
        is_active,
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
        status: InvoiceStatus::compute(is_active, difference(scaled_amount, paid), due_date, today_start),
    })
}

/// The payment's nested invoice from a row with `invoice_number`, `vendor_id`, `vendor_name`,
/// `invoice_amount` and `invoice_paid`.
fn invoice_brief_from(row: &DbRow, invoice_id: InvoiceId) -> Result<InvoiceBrief> {
    let invoice_amount: i64 = row.try_get("invoice_amount")?;
    let invoice_paid: i64 = row.try_get("invoice_paid")?;
    Ok(InvoiceBrief {
        id: invoice_id,
        invoice_number: row.try_get("invoice_number")?,
        vendor_id: VendorId(row.try_get("vendor_id")?),
        vendor_name: row.try_get("vendor_name")?,
        amount: amount(invoice_amount)?,
        pending_amount: difference(invoice_amount, invoice_paid),
    })
}

fn transaction_from(row: &DbRow) -> Result<Transaction> {
    let invoice_id = InvoiceId(row.try_get("invoice_id")?);
    Ok(Transaction {
        id: TransactionId(row.try_get("id")?),
        invoice_id,
        amount: amount(row.try_get("amount")?)?,
        transaction_date: instant(row.try_get("transaction_date")?)?,
        transaction_type: transaction_type(row.try_get("transaction_type")?)?,
        description: row.try_get("description")?,
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
        invoice: invoice_brief_from(row, invoice_id)?,
    })
}

fn user_from(row: &DbRow) -> Result<User> {
    Ok(User {
        id: UserId(row.try_get("id")?),
        first_name: row.try_get("first_name")?,
        last_name: row.try_get("last_name")?,
        email: row.try_get("email")?,
        role_id: RoleId(row.try_get("role_id")?),
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
    })
}

fn credentials_from(row: &DbRow) -> Result<Credentials> {
    Ok(Credentials {
        user: user_from(row)?,
        password_hash: row.try_get("password_hash")?,
        tokens_revoked_at: instant(row.try_get("tokens_revoked_at")?)?,
    })
}

fn role_from(row: &DbRow) -> Result<Role> {
    Ok(Role {
        id: RoleId(row.try_get("id")?),
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        is_system: row.try_get("is_system")?,
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
    })
}

fn permission_from(row: &DbRow) -> Result<Permission> {
    Ok(Permission {
        id: PermissionId(row.try_get("id")?),
        collection: row.try_get("collection")?,
        action: row.try_get("action")?,
        description: row.try_get("description")?,
    })
}

fn setting_from(row: &DbRow) -> Result<Setting> {
    Ok(Setting { key: row.try_get("key")?, value: row.try_get("value")?, description: row.try_get("description")? })
}

fn audit_from(row: &DbRow) -> Result<AuditEntry> {
    let user_id: Option<i64> = row.try_get("user_id")?;
    Ok(AuditEntry {
        id: AuditId(row.try_get("id")?),
        at: instant(row.try_get("at")?)?,
        user_id: user_id.map(UserId),
        action: row.try_get("action")?,
        entity: row.try_get("entity")?,
        entity_id: row.try_get("entity_id")?,
        reason: row.try_get("reason")?,
        changes: row.try_get("changes")?,
    })
}

// Reads shared by the read methods and by writes that return what they wrote (inside their
// own transaction, so they see their own changes).

async fn vendor_in(conn: &mut Conn, id: i64) -> Result<Option<Vendor>> {
    let row = sqlx::query(concat!("SELECT ", vendor_columns!(), " FROM vendors v WHERE v.id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(vendor_from).transpose()
}

async fn invoice_in(conn: &mut Conn, id: i64, today_start: Timestamp) -> Result<Option<Invoice>> {
    let row =
        sqlx::query(concat!("SELECT ", invoice_columns!(), " FROM ", invoices_with_vendor!(), " WHERE i.id = $1"))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    row.as_ref().map(|row| invoice_from(row, today_start)).transpose()
}

async fn transaction_in(conn: &mut Conn, id: i64) -> Result<Option<Transaction>> {
    let row = sqlx::query(concat!(
        "SELECT ",
        transaction_columns!(),
        " FROM ",
        transactions_with_invoice!(),
        " WHERE t.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    row.as_ref().map(transaction_from).transpose()
}

async fn user_in(conn: &mut Conn, id: i64) -> Result<Option<User>> {
    let row = sqlx::query(concat!("SELECT ", user_columns!(), " FROM users u WHERE u.id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(user_from).transpose()
}

async fn role_in(conn: &mut Conn, id: i64) -> Result<Option<Role>> {
    let row = sqlx::query(concat!("SELECT ", role_columns!(), " FROM roles r WHERE r.id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(role_from).transpose()
}

/// Which policies [`policies_in`] reads.
#[derive(Clone, Copy)]
enum PolicySet {
    /// The policy with this id, whatever its state.
    One(i64),
    /// Every active policy.
    Active,
    /// The active policies attached directly to this user (D19).
    OfUser(i64),
}

/// Policies with their permissions, by id.
async fn policies_in(conn: &mut Conn, set: PolicySet) -> Result<Vec<Policy>> {
    let (condition, arg) = match set {
        PolicySet::One(id) => ("po.id = $1", Some(id)),
        PolicySet::Active => ("po.is_active", None),
        PolicySet::OfUser(user_id) => (
            "po.is_active AND po.id IN (SELECT up.policy_id FROM user_policies up WHERE up.user_id = $1)",
            Some(user_id),
        ),
    };
    let bind = |sql: String| {
        let mut binds = Binds::default();
        if let Some(arg) = arg {
            binds.int(arg);
        }
        binds.query(sql)
    };
    let policy_rows = bind(format!(
        "SELECT po.id, po.name, po.description, po.is_active, po.created_at FROM policies po \
         WHERE {condition} ORDER BY po.id"
    ))
    .fetch_all(&mut *conn)
    .await?;
    let permission_rows = bind(format!(
        "SELECT pp.policy_id, p.id, p.collection, p.action, p.description \
         FROM policy_permissions pp JOIN permissions p ON p.id = pp.permission_id \
         WHERE pp.policy_id IN (SELECT po.id FROM policies po WHERE {condition}) ORDER BY pp.policy_id, p.id"
    ))
    .fetch_all(&mut *conn)
    .await?;
    let mut permissions: BTreeMap<i64, Vec<Permission>> = BTreeMap::new();
    for row in &permission_rows {
        permissions.entry(row.try_get("policy_id")?).or_default().push(permission_from(row)?);
    }
    policy_rows
        .iter()
        .map(|row| {
            let id: i64 = row.try_get("id")?;
            Ok(Policy {
                id: PolicyId(id),
                name: row.try_get("name")?,
                description: row.try_get("description")?,
                is_active: row.try_get("is_active")?,
                permissions: permissions.remove(&id).unwrap_or_default(),
                created_at: instant(row.try_get("created_at")?)?,
            })
        })
        .collect()
}

async fn policy_in(conn: &mut Conn, id: i64) -> Result<Option<Policy>> {
    Ok(policies_in(conn, PolicySet::One(id)).await?.pop())
}

fn written<T>(record: Option<T>) -> Result<T> {
    record.ok_or_else(|| Error::corrupt("a record written in this transaction cannot be read back"))
}

// Checks shared by writes. Each runs inside the caller's transaction; the row-lock clauses keep
// what was checked from changing before the transaction ends (PostgreSQL).

/// The `is_active` of a vendor, locked against concurrent deletes; `None` when missing.
async fn vendor_state(conn: &mut Conn, id: i64) -> Result<Option<bool>> {
    let row = sqlx::query(concat!("SELECT is_active FROM vendors WHERE id = $1", for_share!()))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|row| row.try_get("is_active")).transpose()?)
}

async fn active_vendor(conn: &mut Conn, id: i64) -> Result<bool> {
    Ok(vendor_state(conn, id).await? == Some(true))
}

async fn active_role(conn: &mut Conn, id: i64) -> Result<bool> {
    let row = sqlx::query(concat!("SELECT is_active FROM roles WHERE id = $1", for_share!()))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|row| row.try_get::<bool, _>("is_active")).transpose()? == Some(true))
}

async fn active_policy(conn: &mut Conn, id: i64) -> Result<bool> {
    let row = sqlx::query(concat!("SELECT is_active FROM policies WHERE id = $1", for_share!()))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|row| row.try_get::<bool, _>("is_active")).transpose()? == Some(true))
}

async fn active_user(conn: &mut Conn, id: i64) -> Result<bool> {
    let row = sqlx::query(concat!("SELECT is_active FROM users WHERE id = $1", for_share!()))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|row| row.try_get::<bool, _>("is_active")).transpose()? == Some(true))
}

async fn exists(conn: &mut Conn, query: Query) -> Result<bool> {
    let row = query.fetch_one(&mut *conn).await?;
    Ok(row.try_get(0)?)
}

/// D4: is `number_key` used by an active invoice other than `except`?
async fn number_taken(conn: &mut Conn, number_key: &str, except: Option<i64>) -> Result<bool> {
    let query = sqlx::query("SELECT EXISTS (SELECT 1 FROM invoices WHERE number_key = $1 AND is_active AND id <> $2)")
        .bind(number_key.to_owned())
        .bind(except.unwrap_or(0));
    exists(conn, query).await
}

/// D4: is `email_key` used by an active user other than `except`?
async fn email_taken(conn: &mut Conn, email_key: &str, except: Option<i64>) -> Result<bool> {
    let query = sqlx::query("SELECT EXISTS (SELECT 1 FROM users WHERE email_key = $1 AND is_active AND id <> $2)")
        .bind(email_key.to_owned())
        .bind(except.unwrap_or(0));
    exists(conn, query).await
}

/// D4: is `name_key` used by any role, active or not, other than `except`?
async fn role_name_taken(conn: &mut Conn, name_key: &str, except: Option<i64>) -> Result<bool> {
    let query = sqlx::query("SELECT EXISTS (SELECT 1 FROM roles WHERE name_key = $1 AND id <> $2)")
        .bind(name_key.to_owned())
        .bind(except.unwrap_or(0));
    exists(conn, query).await
}

/// D4: is `name_key` used by an active policy other than `except`?
async fn policy_name_taken(conn: &mut Conn, name_key: &str, except: Option<i64>) -> Result<bool> {
    let query = sqlx::query("SELECT EXISTS (SELECT 1 FROM policies WHERE name_key = $1 AND is_active AND id <> $2)")
        .bind(name_key.to_owned())
        .bind(except.unwrap_or(0));
    exists(conn, query).await
}

async fn active_admins(conn: &mut Conn) -> Result<i64> {
    let row = sqlx::query("SELECT COUNT(*) FROM users WHERE role_id = $1 AND is_active")
        .bind(ADMIN_ROLE_ID.get())
        .fetch_one(&mut *conn)
        .await?;
    Ok(row.try_get(0)?)
}

/// Which of `ids` exist in `table` (one of this file's table names).
async fn existing_ids(conn: &mut Conn, table: &'static str, ids: &BTreeSet<i64>) -> Result<HashSet<i64>> {
    let ids: Vec<i64> = ids.iter().copied().collect();
    let mut found = HashSet::with_capacity(ids.len());
    for chunk in ids.chunks(LOOKUP_CHUNK) {
        let mut binds = Binds::in_order();
        let list: Vec<String> = chunk.iter().map(|id| binds.int(*id)).collect();
        let sql = format!("SELECT id FROM {table} WHERE id IN ({})", list.join(", "));
        for row in binds.query(sql).fetch_all(&mut *conn).await? {
            found.insert(row.try_get::<i64, _>(0)?);
        }
    }
    Ok(found)
}

/// The permission ids, deduplicated, when every one exists (`ParentInactive(Permission)`
/// otherwise).
async fn checked_permissions(conn: &mut Conn, ids: &[PermissionId]) -> Result<BTreeSet<i64>> {
    let wanted: BTreeSet<i64> = ids.iter().map(|id| id.get()).collect();
    let found = existing_ids(conn, "permissions", &wanted).await?;
    if found.len() == wanted.len() { Ok(wanted) } else { refused(StoreError::ParentInactive(Entity::Permission)) }
}

async fn insert_policy_permissions(conn: &mut Conn, policy_id: i64, permission_ids: &BTreeSet<i64>) -> Result<()> {
    if permission_ids.is_empty() {
        return Ok(());
    }
    let mut binds = Binds::default();
    let policy = binds.int(policy_id);
    let values: Vec<String> =
        permission_ids.iter().map(|permission| format!("({policy}, {})", binds.int(*permission))).collect();
    let sql = format!(
        "INSERT INTO policy_permissions (policy_id, permission_id) VALUES {} ON CONFLICT DO NOTHING",
        values.join(", ")
    );
    binds.query(sql).execute(&mut *conn).await?;
    Ok(())
}

async fn insert_audit(conn: &mut Conn, entry: NewAuditEntry) -> Result<()> {
    sqlx::query(
        "INSERT INTO audit_log (at, user_id, action, entity, entity_key, entity_id, reason, changes) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(micros(entry.at))
    .bind(entry.user_id.map(UserId::get))
    .bind(entry.action)
    .bind(entry.entity)
    .bind(entry.entity.to_ascii_lowercase())
    .bind(entry.entity_id)
    .bind(entry.reason)
    .bind(entry.changes)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records the write's audit entry and completes its idempotency claim, as the last step of a
/// write, in its transaction (D22, D23).
async fn finish_write(
    conn: &mut Conn,
    ctx: &WriteContext,
    action: &'static str,
    entity: Entity,
    entity_id: i64,
) -> Result<()> {
    insert_audit(conn, ctx.audit(action, entity, Some(entity_id))).await?;
    if let Some(ticket) = &ctx.idempotency {
        sqlx::query("UPDATE idempotency_keys SET entity_id = $3 WHERE user_id = $1 AND key = $2")
            .bind(ticket.user_id.get())
            .bind(ticket.key.as_str().to_owned())
            .bind(entity_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

async fn insert_vendor_row(conn: &mut Conn, vendor: &NewVendor, at: Timestamp) -> Result<i64> {
    let row = sqlx::query(
        "INSERT INTO vendors (name, name_key, vendor_type, address, phone, email, drug_license_number1, \
         drug_license_number2, additional_drug_license_numbers, is_active, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, TRUE, $10, $10) RETURNING id",
    )
    .bind(vendor.name.clone())
    .bind(key(&vendor.name))
    .bind(vendor.vendor_type.name())
    .bind(vendor.address.clone())
    .bind(vendor.phone.clone())
    .bind(vendor.email.clone())
    .bind(vendor.drug_license_number1.clone())
    .bind(vendor.drug_license_number2.clone())
    .bind(licences_json(&vendor.additional_drug_license_numbers))
    .bind(micros(at))
    .fetch_one(&mut *conn)
    .await?;
    Ok(row.try_get(0)?)
}

/// Inserts a user after the checks of the memory store's `insert_user_row`: an active role
/// (`ParentInactive(Role)`), then a free email (`Conflict`).
async fn insert_user_row(conn: &mut Conn, user: &NewUserRecord, at: Timestamp) -> Result<i64> {
    let email_key = key(&user.email);
    if !active_role(conn, user.role_id.get()).await? {
        return refused(StoreError::ParentInactive(Entity::Role));
    }
    if email_taken(conn, &email_key, None).await? {
        return refused(StoreError::Conflict { field: "email" });
    }
    let row = sqlx::query(
        "INSERT INTO users (first_name, last_name, email, email_key, role_id, password_hash, tokens_revoked_at, \
         is_active, created_at) VALUES ($1, $2, $3, $4, $5, $6, 0, TRUE, $7) RETURNING id",
    )
    .bind(user.first_name.clone())
    .bind(user.last_name.clone())
    .bind(user.email.clone())
    .bind(email_key)
    .bind(user.role_id.get())
    .bind(user.password_hash.clone())
    .bind(micros(at))
    .fetch_one(&mut *conn)
    .await?;
    Ok(row.try_get(0)?)
}

// List filters, written as SQL conditions over the aliases used by the list statements.

fn vendor_conditions(binds: &mut Binds, filter: &VendorFilter) -> String {
    let mut parts = vec![if filter.is_active { "v.is_active" } else { "NOT v.is_active" }.to_owned()];
    if let Some(vendor_type) = filter.vendor_type {
        parts.push(format!("v.vendor_type = {}", binds.text(vendor_type.name())));
    }
    if let Some(search) = &filter.search {
        parts.push(format!("v.name_key LIKE {} ESCAPE '\\'", binds.text(contains_pattern(search))));
    }
    conditions(parts)
}

/// The invoice list's conditions over `invoices i JOIN vendors v`; status is computed for the
/// day starting at `today_start` exactly as `InvoiceStatus::compute` does (D10).
fn invoice_conditions(binds: &mut Binds, filter: &InvoiceFilter, today_start: Timestamp) -> String {
    let mut parts = Vec::new();
    match filter.is_active {
        Some(true) => parts.push("i.is_active".to_owned()),
        Some(false) => parts.push("NOT i.is_active".to_owned()),
        None => {}
    }
    if let Some(vendor_id) = filter.vendor_id {
        parts.push(format!("i.vendor_id = {}", binds.int(vendor_id.get())));
    }
    if let Some(number) = &filter.invoice_number {
        parts.push(format!("i.number_key LIKE {} ESCAPE '\\'", binds.text(contains_pattern(number))));
    }
    if let Some(search) = &filter.search {
        let pattern = binds.text(contains_pattern(search));
        parts.push(format!("(i.number_key LIKE {pattern} ESCAPE '\\' OR v.name_key LIKE {pattern} ESCAPE '\\')"));
    }
    if let Some(from) = filter.from_date {
        parts.push(format!("i.invoice_date >= {}", binds.int(micros(from))));
    }
    if let Some(to) = filter.to_date {
        parts.push(format!("i.invoice_date <= {}", binds.int(micros(to))));
    }
    if let Some(min) = filter.min_amount {
        parts.push(format!("i.amount >= {}", binds.int(scaled_at_least(min))));
    }
    if let Some(max) = filter.max_amount {
        parts.push(format!("i.amount <= {}", binds.int(scaled_at_most(max))));
    }
    if let Some(status) = filter.status {
        parts.push(match status {
            InvoiceStatus::Canceled => "NOT i.is_active".to_owned(),
            InvoiceStatus::FullyPaid => "i.is_active AND i.amount - i.paid <= 0".to_owned(),
            InvoiceStatus::Overdue => {
                format!("i.is_active AND i.amount - i.paid > 0 AND i.due_date < {}", binds.int(micros(today_start)))
            }
            InvoiceStatus::PartiallyPaid => {
                format!("i.is_active AND i.amount - i.paid > 0 AND i.due_date >= {}", binds.int(micros(today_start)))
            }
        });
    }
    conditions(parts)
}

fn transaction_conditions(binds: &mut Binds, filter: &TransactionFilter) -> String {
    let mut parts = vec![if filter.is_active { "t.is_active" } else { "NOT t.is_active" }.to_owned()];
    if let Some(invoice_id) = filter.invoice_id {
        parts.push(format!("t.invoice_id = {}", binds.int(invoice_id.get())));
    }
    if let Some(kind) = filter.transaction_type {
        parts.push(format!("t.transaction_type = {}", binds.text(kind.name())));
    }
    if let Some(from) = filter.from_date {
        parts.push(format!("t.transaction_date >= {}", binds.int(micros(from))));
    }
    if let Some(to) = filter.to_date {
        parts.push(format!("t.transaction_date <= {}", binds.int(micros(to))));
    }
    conditions(parts)
}

fn invoice_sort(key: InvoiceSortKey) -> &'static str {
    match key {
        InvoiceSortKey::InvoiceDate => "i.invoice_date",
        InvoiceSortKey::DueDate => "i.due_date",
        InvoiceSortKey::Amount => "i.amount",
        // The same expression as the index `invoices_by_pending`, so the planner uses it.
        InvoiceSortKey::PendingAmount => "(i.amount - i.paid)",
        InvoiceSortKey::PaidAmount => "i.paid",
        InvoiceSortKey::InvoiceNumber => "i.number_key",
        InvoiceSortKey::VendorName => "v.name_key",
    }
}

fn transaction_sort(key: TransactionSortKey) -> &'static str {
    match key {
        TransactionSortKey::TransactionDate => "t.transaction_date",
        TransactionSortKey::Amount => "t.amount",
        TransactionSortKey::TransactionType => "t.transaction_type",
        TransactionSortKey::CreatedAt => "t.created_at",
    }
}

/// The invoices a search needs joined to their vendors; other filters read invoices alone.
fn invoice_count_source(filter: &InvoiceFilter) -> &'static str {
    if filter.search.is_some() { invoices_with_vendor!() } else { "invoices i" }
}

/// The statement counting an invoice list's matches (`conditions` is the list's `WHERE`).
///
/// A list filtered by `Overdue` or `PartiallyPaid` alone is counted from `invoice_open_counts`
/// (migration 2): open invoices are exactly the active ones with something pending, split by
/// whether their due date is before the start of today (D10), so the sum over the buckets on
/// one side of today equals the count of the filter. Any other filter counts the invoices.
fn invoice_count(binds: &mut Binds, filter: &InvoiceFilter, today_start: Timestamp, conditions: &str) -> String {
    let status_alone = InvoiceFilter { status: filter.status, is_active: filter.is_active, ..InvoiceFilter::default() };
    let side = match filter.status {
        Some(InvoiceStatus::Overdue) => Some("<"),
        Some(InvoiceStatus::PartiallyPaid) => Some(">="),
        _ => None,
    };
    match side {
        Some(side) if *filter == status_alone && filter.is_active != Some(false) => format!(
            "SELECT CAST(COALESCE(SUM(open_count), 0) AS BIGINT) FROM invoice_open_counts WHERE due_date {side} {}",
            binds.int(micros(today_start))
        ),
        _ => format!("SELECT COUNT(*) FROM {} WHERE {conditions}", invoice_count_source(filter)),
    }
}

/// The page's total: read with the page when it has rows (one statement, one snapshot),
/// counted apart only for pages past the end.
async fn page_total(conn: &mut Conn, rows: &[DbRow], page: PageRequest, recount: Query) -> Result<u64> {
    if let Some(row) = rows.first() {
        return Ok(count(row.try_get("total_count")?));
    }
    if page.offset() == 0 {
        return Ok(0);
    }
    Ok(count(recount.fetch_one(&mut *conn).await?.try_get(0)?))
}

/// Applies the embedded migrations that are not applied yet, each in its own write
/// transaction under the migrations lock, and writes the seed data (D27) with the first.
pub(crate) async fn migrate(pool: &Pool<Db>) -> Result<()> {
    for migration in MIGRATIONS {
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
            let Some(known) = MIGRATIONS.iter().find(|known| known.version == version) else {
                return Err(Error::UnknownMigration(version));
            };
            if checksum(known.sql) != stored_checksum {
                return Err(Error::MigrationChanged { version, description: row.try_get("description")? });
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
    Ok(())
}

/// The seed data of D27, with the fixed ids of `pharmapay_core::seed`. It is written once, in
/// the transaction of the first migration, so later changes (a role's description, the
/// pharmacist policy's permissions) are never undone by a restart.
async fn write_seed(conn: &mut Conn) -> Result<()> {
    for role in seed::roles() {
        sqlx::query(
            "INSERT INTO roles (id, name, name_key, description, is_system, is_active, created_at) \
             VALUES ($1, $2, $3, $4, TRUE, TRUE, 0) ON CONFLICT DO NOTHING",
        )
        .bind(role.id.get())
        .bind(role.name)
        .bind(key(role.name))
        .bind(role.description)
        .execute(&mut *conn)
        .await?;
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
    sqlx::query(
        "INSERT INTO policies (id, name, name_key, description, is_active, created_at) \
         VALUES ($1, $2, $3, $4, TRUE, 0) ON CONFLICT DO NOTHING",
    )
    .bind(policy.id.get())
    .bind(policy.name)
    .bind(key(policy.name))
    .bind(policy.description)
    .execute(&mut *conn)
    .await?;
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

/// The store over one backend: a pool for reads and a pool for write transactions (the same
/// pool for PostgreSQL; for SQLite, readers plus the one writer connection).
#[derive(Clone)]
pub(crate) struct SqlStore {
    reader: Pool<Db>,
    writer: Pool<Db>,
}

impl SqlStore {
    pub(crate) fn new(reader: Pool<Db>, writer: Pool<Db>) -> Self {
        Self { reader, writer }
    }

    pub(crate) async fn migrate(&self) -> Result<()> {
        migrate(&self.writer).await
    }

    /// The pool write transactions use.
    pub(crate) fn writer(&self) -> &Pool<Db> {
        &self.writer
    }

    pub(crate) async fn close(&self) {
        self.reader.close().await;
        self.writer.close().await;
    }

    async fn begin(&self) -> Result<sqlx::Transaction<'static, Db>> {
        Ok(begin_write(&self.writer).await?)
    }

    async fn read(&self) -> Result<sqlx::pool::PoolConnection<Db>> {
        Ok(self.reader.acquire().await?)
    }

    // Installation

    pub(crate) async fn health(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        Ok(())
    }

    pub(crate) async fn is_onboarded(&self) -> Result<bool> {
        let query = sqlx::query(
            "SELECT EXISTS (SELECT 1 FROM vendors WHERE vendor_type = 'OwnPharmacy') \
             AND EXISTS (SELECT 1 FROM users)",
        );
        exists(&mut *self.read().await?, query).await
    }

    pub(crate) async fn complete_onboarding(
        &self,
        pharmacy: NewVendor,
        admin: NewUserRecord,
        ctx: WriteContext,
    ) -> Result<(Vendor, User)> {
        let mut db_tx = self.begin().await?;
        // One onboarding at a time: the checks below see the winner's commit.
        lock(&mut db_tx, Lock::Onboarding).await?;
        let existing = sqlx::query(concat!("SELECT id FROM vendors WHERE vendor_type = 'OwnPharmacy'", for_update!()))
            .fetch_optional(&mut *db_tx)
            .await?
            .map(|row| row.try_get::<i64, _>(0))
            .transpose()?;
        let has_users = exists(&mut db_tx, sqlx::query("SELECT EXISTS (SELECT 1 FROM users)")).await?;
        if existing.is_some() && has_users {
            return refused(StoreError::Rule(RuleBroken::AlreadyOnboarded));
        }
        // Check the admin first so that nothing changes when it is refused.
        if email_taken(&mut db_tx, &key(&admin.email), None).await? {
            return refused(StoreError::Conflict { field: "email" });
        }
        let vendor_id = match existing {
            Some(id) => {
                sqlx::query(
                    "UPDATE vendors SET name = $2, name_key = $3, address = $4, phone = $5, email = $6, \
                     drug_license_number1 = $7, is_active = TRUE, updated_at = $8 WHERE id = $1",
                )
                .bind(id)
                .bind(pharmacy.name.clone())
                .bind(key(&pharmacy.name))
                .bind(pharmacy.address.clone())
                .bind(pharmacy.phone.clone())
                .bind(pharmacy.email.clone())
                .bind(pharmacy.drug_license_number1.clone())
                .bind(micros(ctx.at))
                .execute(&mut *db_tx)
                .await?;
                id
            }
            None => insert_vendor_row(&mut db_tx, &pharmacy, ctx.at).await?,
        };
        let user_id = insert_user_row(&mut db_tx, &admin, ctx.at).await?;
        insert_audit(&mut db_tx, ctx.audit("create", Entity::Vendor, Some(vendor_id))).await?;
        insert_audit(&mut db_tx, ctx.audit("create", Entity::User, Some(user_id))).await?;
        let vendor = written(vendor_in(&mut db_tx, vendor_id).await?)?;
        let user = written(user_in(&mut db_tx, user_id).await?)?;
        db_tx.commit().await?;
        Ok((vendor, user))
    }

    pub(crate) async fn token_secret(&self, candidate: Secret) -> Result<Secret> {
        let mut db_tx = self.begin().await?;
        sqlx::query("INSERT INTO store_meta (name, value) VALUES ('token_secret', $1) ON CONFLICT DO NOTHING")
            .bind(candidate.expose().to_owned())
            .execute(&mut *db_tx)
            .await?;
        let row =
            sqlx::query("SELECT value FROM store_meta WHERE name = 'token_secret'").fetch_one(&mut *db_tx).await?;
        let kept: String = row.try_get(0)?;
        db_tx.commit().await?;
        Ok(Secret::new(kept))
    }

    // Authentication

    pub(crate) async fn find_credentials(&self, email_key: &str) -> Result<Option<Credentials>> {
        // The active account wins; among inactive ones, the newest.
        let row = sqlx::query(concat!(
            "SELECT ",
            user_columns!(),
            ", u.password_hash, u.tokens_revoked_at FROM users u WHERE u.email_key = $1 \
             ORDER BY u.is_active DESC, u.id DESC LIMIT 1"
        ))
        .bind(email_key.to_owned())
        .fetch_optional(&self.reader)
        .await?;
        row.as_ref().map(credentials_from).transpose()
    }

    pub(crate) async fn credentials(&self, user_id: UserId) -> Result<Option<Credentials>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            user_columns!(),
            ", u.password_hash, u.tokens_revoked_at FROM users u WHERE u.id = $1"
        ))
        .bind(user_id.get())
        .fetch_optional(&self.reader)
        .await?;
        row.as_ref().map(credentials_from).transpose()
    }

    pub(crate) async fn session_state(&self, user_id: UserId) -> Result<Option<SessionState>> {
        let row = sqlx::query("SELECT is_active, tokens_revoked_at FROM users WHERE id = $1")
            .bind(user_id.get())
            .fetch_optional(&self.reader)
            .await?;
        row.map(|row| {
            Ok(SessionState {
                is_active: row.try_get("is_active")?,
                tokens_revoked_at: instant(row.try_get("tokens_revoked_at")?)?,
            })
        })
        .transpose()
    }

    pub(crate) async fn resolve_permissions(&self, user_id: UserId) -> Result<Vec<Permission>> {
        // D19: the active policies of the user's role (when the role is active) and of the user.
        let rows = sqlx::query(
            "SELECT p.id, p.collection, p.action, p.description FROM permissions p WHERE p.id IN ( \
                SELECT pp.permission_id FROM policy_permissions pp \
                JOIN policies po ON po.id = pp.policy_id \
                WHERE po.is_active AND pp.policy_id IN ( \
                    SELECT rp.policy_id FROM role_policies rp \
                    JOIN roles r ON r.id = rp.role_id \
                    JOIN users u ON u.role_id = r.id \
                    WHERE u.id = $1 AND r.is_active \
                    UNION \
                    SELECT up.policy_id FROM user_policies up WHERE up.user_id = $1)) \
             ORDER BY p.id",
        )
        .bind(user_id.get())
        .fetch_all(&self.reader)
        .await?;
        rows.iter().map(permission_from).collect()
    }

    pub(crate) async fn begin_login_attempt(
        &self,
        email_key: &str,
        now: Timestamp,
        limit: u32,
        window: SignedDuration,
    ) -> Result<LoginGate> {
        let mut db_tx = self.begin().await?;
        sqlx::query(
            "INSERT INTO login_attempts (email_key, window_start, n_attempts) VALUES ($1, $2, 0) \
             ON CONFLICT DO NOTHING",
        )
        .bind(email_key.to_owned())
        .bind(micros(now))
        .execute(&mut *db_tx)
        .await?;
        // Counting and checking are one step: the row stays locked until the commit (D21).
        let row = sqlx::query(concat!(
            "SELECT window_start, n_attempts FROM login_attempts WHERE email_key = $1",
            for_update!()
        ))
        .bind(email_key.to_owned())
        .fetch_one(&mut *db_tx)
        .await?;
        let mut window_start = instant(row.try_get("window_start")?)?;
        let mut n_attempts = u32::try_from(row.try_get::<i64, _>("n_attempts")?).unwrap_or(u32::MAX);
        let window_end = window_start.saturating_add(window).unwrap_or(Timestamp::MAX);
        if now >= window_end {
            window_start = now;
            n_attempts = 0;
        }
        let gate = if n_attempts >= limit {
            LoginGate::Throttled { until: window_start.saturating_add(window).unwrap_or(Timestamp::MAX) }
        } else {
            n_attempts += 1;
            LoginGate::Allowed
        };
        sqlx::query("UPDATE login_attempts SET window_start = $2, n_attempts = $3 WHERE email_key = $1")
            .bind(email_key.to_owned())
            .bind(micros(window_start))
            .bind(i64::from(n_attempts))
            .execute(&mut *db_tx)
            .await?;
        db_tx.commit().await?;
        Ok(gate)
    }

    pub(crate) async fn clear_login_attempts(&self, email_key: &str) -> Result<()> {
        let mut db_tx = self.begin().await?;
        sqlx::query("DELETE FROM login_attempts WHERE email_key = $1")
            .bind(email_key.to_owned())
            .execute(&mut *db_tx)
            .await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn append_audit(&self, entry: NewAuditEntry) -> Result<()> {
        let mut db_tx = self.begin().await?;
        insert_audit(&mut db_tx, entry).await?;
        db_tx.commit().await?;
        Ok(())
    }

    // Idempotency (D23)

    pub(crate) async fn claim_idempotency_key(&self, claim: IdempotencyClaim) -> Result<ClaimOutcome> {
        let mut db_tx = self.begin().await?;
        let user_id = claim.user_id.get();
        let claim_key = claim.key.as_str().to_owned();
        let inserted = sqlx::query(
            "INSERT INTO idempotency_keys (user_id, key, fingerprint, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT DO NOTHING",
        )
        .bind(user_id)
        .bind(claim_key.clone())
        .bind(claim.fingerprint.clone())
        .bind(micros(claim.now))
        .execute(&mut *db_tx)
        .await?
        .rows_affected();
        if inserted == 1 {
            db_tx.commit().await?;
            return Ok(ClaimOutcome::Claimed);
        }
        let row = sqlx::query(concat!(
            "SELECT fingerprint, created_at, entity_id, response FROM idempotency_keys \
             WHERE user_id = $1 AND key = $2",
            for_update!()
        ))
        .bind(user_id)
        .bind(claim_key.clone())
        .fetch_one(&mut *db_tx)
        .await?;
        let fingerprint: String = row.try_get("fingerprint")?;
        let created_at = instant(row.try_get("created_at")?)?;
        let entity_id: Option<i64> = row.try_get("entity_id")?;
        let response: Option<Vec<u8>> = row.try_get("response")?;
        // The same decisions, in the same order, as the memory store.
        let answer = if created_at < claim.expired_before() {
            None
        } else if fingerprint != claim.fingerprint {
            Some(ClaimOutcome::Mismatch)
        } else if let Some(entity_id) = entity_id {
            Some(ClaimOutcome::Completed { entity_id, response })
        } else if created_at < claim.abandoned_before() {
            None
        } else {
            Some(ClaimOutcome::InProgress)
        };
        if let Some(answer) = answer {
            // Nothing was written: dropping the transaction ends it.
            return Ok(answer);
        }
        // An expired or abandoned claim is taken over by this request.
        sqlx::query(
            "UPDATE idempotency_keys SET fingerprint = $3, created_at = $4, entity_id = NULL, response = NULL \
             WHERE user_id = $1 AND key = $2",
        )
        .bind(user_id)
        .bind(claim_key)
        .bind(claim.fingerprint)
        .bind(micros(claim.now))
        .execute(&mut *db_tx)
        .await?;
        db_tx.commit().await?;
        Ok(ClaimOutcome::Claimed)
    }

    pub(crate) async fn record_idempotent_response(
        &self,
        user_id: UserId,
        key: &IdempotencyKey,
        response: Vec<u8>,
    ) -> Result<()> {
        let mut db_tx = self.begin().await?;
        sqlx::query(
            "UPDATE idempotency_keys SET response = $3 WHERE user_id = $1 AND key = $2 AND entity_id IS NOT NULL",
        )
        .bind(user_id.get())
        .bind(key.as_str().to_owned())
        .bind(response)
        .execute(&mut *db_tx)
        .await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn release_idempotency_key(&self, user_id: UserId, key: &IdempotencyKey) -> Result<()> {
        let mut db_tx = self.begin().await?;
        sqlx::query("DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND entity_id IS NULL")
            .bind(user_id.get())
            .bind(key.as_str().to_owned())
            .execute(&mut *db_tx)
            .await?;
        db_tx.commit().await?;
        Ok(())
    }

    // Vendors

    pub(crate) async fn insert_vendor(&self, vendor: NewVendor, ctx: WriteContext) -> Result<Vendor> {
        let mut db_tx = self.begin().await?;
        let id = insert_vendor_row(&mut db_tx, &vendor, ctx.at).await?;
        finish_write(&mut db_tx, &ctx, "create", Entity::Vendor, id).await?;
        let vendor = written(vendor_in(&mut db_tx, id).await?)?;
        db_tx.commit().await?;
        Ok(vendor)
    }

    pub(crate) async fn get_vendor(&self, id: VendorId) -> Result<Option<Vendor>> {
        vendor_in(&mut *self.read().await?, id.get()).await
    }

    /// The type and state of a vendor, locked for a change.
    async fn vendor_for_change(conn: &mut Conn, id: i64) -> Result<Option<(VendorType, bool)>> {
        let row = sqlx::query(concat!("SELECT vendor_type, is_active FROM vendors WHERE id = $1", for_update!()))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        row.map(|row| Ok((vendor_type(row.try_get("vendor_type")?)?, row.try_get("is_active")?))).transpose()
    }

    pub(crate) async fn update_vendor(&self, id: VendorId, vendor: NewVendor, ctx: WriteContext) -> Result<Vendor> {
        let mut db_tx = self.begin().await?;
        let Some((current_type, true)) = Self::vendor_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Vendor));
        };
        // D14: a vendor cannot become, or stop being, the OwnPharmacy.
        if (current_type == VendorType::OwnPharmacy) != (vendor.vendor_type == VendorType::OwnPharmacy) {
            return refused(StoreError::Rule(RuleBroken::OwnPharmacyType));
        }
        sqlx::query(
            "UPDATE vendors SET name = $2, name_key = $3, vendor_type = $4, address = $5, phone = $6, email = $7, \
             drug_license_number1 = $8, drug_license_number2 = $9, additional_drug_license_numbers = $10, \
             updated_at = $11 WHERE id = $1",
        )
        .bind(id.get())
        .bind(vendor.name.clone())
        .bind(key(&vendor.name))
        .bind(vendor.vendor_type.name())
        .bind(vendor.address)
        .bind(vendor.phone)
        .bind(vendor.email)
        .bind(vendor.drug_license_number1)
        .bind(vendor.drug_license_number2)
        .bind(licences_json(&vendor.additional_drug_license_numbers))
        .bind(micros(ctx.at))
        .execute(&mut *db_tx)
        .await?;
        finish_write(&mut db_tx, &ctx, "update", Entity::Vendor, id.get()).await?;
        let vendor = written(vendor_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(vendor)
    }

    pub(crate) async fn delete_vendor(&self, id: VendorId, ctx: WriteContext) -> Result<()> {
        let mut db_tx = self.begin().await?;
        let Some((current_type, true)) = Self::vendor_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Vendor));
        };
        if current_type == VendorType::OwnPharmacy {
            return refused(StoreError::Rule(RuleBroken::OwnPharmacyDelete));
        }
        sqlx::query("UPDATE vendors SET is_active = FALSE, updated_at = $2 WHERE id = $1")
            .bind(id.get())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "delete", Entity::Vendor, id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn restore_vendor(&self, id: VendorId, ctx: WriteContext) -> Result<Vendor> {
        let mut db_tx = self.begin().await?;
        let Some((_, false)) = Self::vendor_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Vendor));
        };
        sqlx::query("UPDATE vendors SET is_active = TRUE, updated_at = $2 WHERE id = $1")
            .bind(id.get())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "restore", Entity::Vendor, id.get()).await?;
        let vendor = written(vendor_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(vendor)
    }

    pub(crate) async fn list_vendors(&self, query: &VendorQuery) -> Result<Page<Vendor>> {
        let mut binds = Binds::default();
        let filter = vendor_conditions(&mut binds, &query.filter);
        let dir = direction(query.sort.dir);
        // The page is chosen first (ids and sort values only), then its rows and totals are
        // read, so totals are computed for the page alone unless the sort needs them all.
        let (balances, sort_values): (&str, &[&str]) = match query.sort.key {
            VendorSortKey::Name => ("", &["v.name_key"]),
            VendorSortKey::VendorType => ("", &["v.vendor_type"]),
            VendorSortKey::OutstandingBalance => (
                concat!(" LEFT JOIN (", vendor_balances!(), ") b ON b.vendor_id = v.id"),
                &["COALESCE(b.balance_high, 0)", "COALESCE(b.balance_low, 0)"],
            ),
        };
        let page_columns: Vec<String> =
            sort_values.iter().enumerate().map(|(index, value)| format!("{value} AS sort_{index}")).collect();
        let page_order: Vec<String> = sort_values.iter().map(|value| format!("{value} {dir}")).collect();
        let order: Vec<String> = (0..sort_values.len()).map(|index| format!("page.sort_{index} {dir}")).collect();
        let (limit, offset) = page_binds(&mut binds, query.page);
        let sql = format!(
            "SELECT (SELECT COUNT(*) FROM vendors v WHERE {filter}) AS total_count, {columns} \
             FROM (SELECT v.id AS page_id, {page_columns} FROM vendors v{balances} WHERE {filter} \
                   ORDER BY {page_order}, v.id {dir} LIMIT {limit} OFFSET {offset}) page \
             JOIN vendors v ON v.id = page.page_id \
             ORDER BY {order}, v.id {dir}",
            columns = vendor_columns!(),
            page_columns = page_columns.join(", "),
            page_order = page_order.join(", "),
            order = order.join(", "),
        );
        let mut conn = self.read().await?;
        let rows = binds.query(sql).fetch_all(&mut *conn).await?;
        let items = rows.iter().map(vendor_from).collect::<Result<Vec<_>>>()?;
        let mut binds = Binds::default();
        let filter = vendor_conditions(&mut binds, &query.filter);
        let recount = binds.query(format!("SELECT COUNT(*) FROM vendors v WHERE {filter}"));
        let total_count = page_total(&mut conn, &rows, query.page, recount).await?;
        Ok(Page { items, total_count, page: query.page.page(), page_size: query.page.page_size() })
    }

    // Invoices

    pub(crate) async fn insert_invoice(
        &self,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> Result<Invoice> {
        let mut db_tx = self.begin().await?;
        let number_key = key(&invoice.invoice_number);
        if !active_vendor(&mut db_tx, invoice.vendor_id.get()).await? {
            return refused(StoreError::ParentInactive(Entity::Vendor));
        }
        if number_taken(&mut db_tx, &number_key, None).await? {
            return refused(StoreError::Conflict { field: "invoiceNumber" });
        }
        // Under a race the partial unique index decides; its violation maps to the same
        // Conflict (D5).
        let row = sqlx::query(
            "INSERT INTO invoices (vendor_id, invoice_number, number_key, amount, paid, invoice_date, due_date, \
             description, is_active, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, 0, $5, $6, $7, TRUE, $8, $8) RETURNING id",
        )
        .bind(invoice.vendor_id.get())
        .bind(invoice.invoice_number)
        .bind(number_key)
        .bind(invoice.amount.to_scaled())
        .bind(micros(invoice.invoice_date))
        .bind(micros(invoice.due_date))
        .bind(invoice.description)
        .bind(micros(ctx.at))
        .fetch_one(&mut *db_tx)
        .await?;
        let id: i64 = row.try_get(0)?;
        finish_write(&mut db_tx, &ctx, "create", Entity::Invoice, id).await?;
        let invoice = written(invoice_in(&mut db_tx, id, today_start).await?)?;
        db_tx.commit().await?;
        Ok(invoice)
    }

    pub(crate) async fn get_invoice(&self, id: InvoiceId, today_start: Timestamp) -> Result<Option<InvoiceDetail>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            invoice_columns!(),
            ", v.vendor_type AS vendor_type, v.address AS vendor_address, v.phone AS vendor_phone, \
             v.email AS vendor_email, v.drug_license_number1 AS vendor_licence1, \
             v.drug_license_number2 AS vendor_licence2, v.is_active AS vendor_is_active FROM ",
            invoices_with_vendor!(),
            " WHERE i.id = $1"
        ))
        .bind(id.get())
        .fetch_optional(&self.reader)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let invoice = invoice_from(&row, today_start)?;
        let vendor = VendorBrief {
            id: invoice.vendor_id,
            name: invoice.vendor_name.clone(),
            vendor_type: vendor_type(row.try_get("vendor_type")?)?,
            address: row.try_get("vendor_address")?,
            phone: row.try_get("vendor_phone")?,
            email: row.try_get("vendor_email")?,
            drug_license_number1: row.try_get("vendor_licence1")?,
            drug_license_number2: row.try_get("vendor_licence2")?,
            is_active: row.try_get("vendor_is_active")?,
        };
        Ok(Some(InvoiceDetail { invoice, vendor }))
    }

    /// The vendor, number key and state of an invoice, locked for a change.
    async fn invoice_for_change(conn: &mut Conn, id: i64) -> Result<Option<(i64, String, bool)>> {
        let row =
            sqlx::query(concat!("SELECT vendor_id, number_key, is_active FROM invoices WHERE id = $1", for_update!()))
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        row.map(|row| Ok((row.try_get("vendor_id")?, row.try_get("number_key")?, row.try_get("is_active")?)))
            .transpose()
    }

    pub(crate) async fn update_invoice(
        &self,
        id: InvoiceId,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> Result<Invoice> {
        let mut db_tx = self.begin().await?;
        let Some((_, _, true)) = Self::invoice_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Invoice));
        };
        let number_key = key(&invoice.invoice_number);
        if !active_vendor(&mut db_tx, invoice.vendor_id.get()).await? {
            return refused(StoreError::ParentInactive(Entity::Vendor));
        }
        if number_taken(&mut db_tx, &number_key, Some(id.get())).await? {
            return refused(StoreError::Conflict { field: "invoiceNumber" });
        }
        // The paid total is kept: it belongs to the payments, not to the replaced fields.
        sqlx::query(
            "UPDATE invoices SET vendor_id = $2, invoice_number = $3, number_key = $4, amount = $5, \
             invoice_date = $6, due_date = $7, description = $8, updated_at = $9 WHERE id = $1",
        )
        .bind(id.get())
        .bind(invoice.vendor_id.get())
        .bind(invoice.invoice_number)
        .bind(number_key)
        .bind(invoice.amount.to_scaled())
        .bind(micros(invoice.invoice_date))
        .bind(micros(invoice.due_date))
        .bind(invoice.description)
        .bind(micros(ctx.at))
        .execute(&mut *db_tx)
        .await?;
        finish_write(&mut db_tx, &ctx, "update", Entity::Invoice, id.get()).await?;
        let invoice = written(invoice_in(&mut db_tx, id.get(), today_start).await?)?;
        db_tx.commit().await?;
        Ok(invoice)
    }

    pub(crate) async fn delete_invoice(&self, id: InvoiceId, ctx: WriteContext) -> Result<()> {
        let mut db_tx = self.begin().await?;
        let changed = sqlx::query("UPDATE invoices SET is_active = FALSE, updated_at = $2 WHERE id = $1 AND is_active")
            .bind(id.get())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?
            .rows_affected();
        if changed == 0 {
            return refused(StoreError::NotFound(Entity::Invoice));
        }
        finish_write(&mut db_tx, &ctx, "delete", Entity::Invoice, id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn restore_invoice(
        &self,
        id: InvoiceId,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> Result<Invoice> {
        let mut db_tx = self.begin().await?;
        let Some((vendor_id, number_key, false)) = Self::invoice_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Invoice));
        };
        if !active_vendor(&mut db_tx, vendor_id).await? {
            return refused(StoreError::ParentInactive(Entity::Vendor));
        }
        if number_taken(&mut db_tx, &number_key, Some(id.get())).await? {
            return refused(StoreError::Conflict { field: "invoiceNumber" });
        }
        sqlx::query("UPDATE invoices SET is_active = TRUE, updated_at = $2 WHERE id = $1")
            .bind(id.get())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "restore", Entity::Invoice, id.get()).await?;
        let invoice = written(invoice_in(&mut db_tx, id.get(), today_start).await?)?;
        db_tx.commit().await?;
        Ok(invoice)
    }

    pub(crate) async fn list_invoices(&self, query: &InvoiceQuery, today_start: Timestamp) -> Result<Page<Invoice>> {
        let mut binds = Binds::default();
        let filter = invoice_conditions(&mut binds, &query.filter, today_start);
        let dir = direction(query.sort.dir);
        let sort = invoice_sort(query.sort.key);
        let (limit, offset) = page_binds(&mut binds, query.page);
        let count = invoice_count(&mut binds, &query.filter, today_start, &filter);
        let sql = format!(
            "SELECT ({count}) AS total_count, {columns} \
             FROM {from} WHERE {filter} ORDER BY {sort} {dir}, i.id {dir} LIMIT {limit} OFFSET {offset}",
            columns = invoice_columns!(),
            from = invoices_with_vendor!(),
        );
        let mut conn = self.read().await?;
        let rows = binds.query(sql).fetch_all(&mut *conn).await?;
        let items = rows.iter().map(|row| invoice_from(row, today_start)).collect::<Result<Vec<_>>>()?;
        let mut binds = Binds::default();
        let filter = invoice_conditions(&mut binds, &query.filter, today_start);
        let recount = invoice_count(&mut binds, &query.filter, today_start, &filter);
        let recount = binds.query(recount);
        let total_count = page_total(&mut conn, &rows, query.page, recount).await?;
        Ok(Page { items, total_count, page: query.page.page(), page_size: query.page.page_size() })
    }

    // Transactions

    pub(crate) async fn insert_transaction(
        &self,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> Result<Transaction> {
        let mut db_tx = self.begin().await?;
        let scaled = transaction.amount.to_scaled();
        let invoice = Self::add_to_active_invoice(&mut db_tx, transaction.invoice_id.get(), scaled).await?;
        let row = sqlx::query(
            "INSERT INTO transactions (invoice_id, amount, transaction_date, transaction_type, description, \
             is_active, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, TRUE, $6, $6) RETURNING id",
        )
        .bind(transaction.invoice_id.get())
        .bind(scaled)
        .bind(micros(transaction.transaction_date))
        .bind(transaction.transaction_type.name())
        .bind(transaction.description.clone())
        .bind(micros(ctx.at))
        .fetch_one(&mut *db_tx)
        .await?;
        let id: i64 = row.try_get(0)?;
        finish_write(&mut db_tx, &ctx, "create", Entity::Transaction, id).await?;
        db_tx.commit().await?;
        // The payment as a read would give it: instants at the stored precision (microseconds)
        // and the amount through the stored scale, exactly as `transaction_from` builds it.
        let created_at = instant(micros(ctx.at))?;
        Ok(Transaction {
            id: TransactionId(id),
            invoice_id: transaction.invoice_id,
            amount: amount(scaled)?,
            transaction_date: instant(micros(transaction.transaction_date))?,
            transaction_type: transaction.transaction_type,
            description: transaction.description,
            is_active: true,
            created_at,
            updated_at: created_at,
            invoice,
        })
    }

    pub(crate) async fn get_transaction(&self, id: TransactionId) -> Result<Option<Transaction>> {
        transaction_in(&mut *self.read().await?, id.get()).await
    }

    /// The invoice, amount and state of a payment, locked for a change. Payments are always
    /// locked before invoices, and invoices before vendors, so writers never wait in a cycle.
    async fn payment_for_change(conn: &mut Conn, id: i64) -> Result<Option<(i64, i64, bool)>> {
        let row =
            sqlx::query(concat!("SELECT invoice_id, amount, is_active FROM transactions WHERE id = $1", for_update!()))
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        row.map(|row| Ok((row.try_get("invoice_id")?, row.try_get("amount")?, row.try_get("is_active")?))).transpose()
    }

    /// Adds a payment to an active invoice's paid total: one atomic statement checks that the
    /// invoice is active and that the total stays within the largest amount (D1), adds, and
    /// locks the invoice row, so concurrent payments queue instead of losing updates. When it
    /// changes nothing, the invoice says why: inactive or missing (`ParentInactive`), or full
    /// (`Rule(PaidTotalTooLarge)`).
    async fn add_to_active_invoice(conn: &mut Conn, invoice_id: i64, scaled: i64) -> Result<InvoiceBrief> {
        // RETURNING gives the payment's nested invoice as it stands after the change, so the
        // new payment need not be read back inside the write transaction.
        let changed = sqlx::query(
            "UPDATE invoices SET paid = paid + $2 WHERE id = $1 AND is_active AND paid <= $3 \
             RETURNING invoice_number, vendor_id, amount AS invoice_amount, paid AS invoice_paid, \
             (SELECT v.name FROM vendors v WHERE v.id = invoices.vendor_id) AS vendor_name",
        )
        .bind(invoice_id)
        .bind(scaled)
        .bind(max_scaled() - scaled)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = changed {
            return invoice_brief_from(&row, InvoiceId(invoice_id));
        }
        let active = sqlx::query("SELECT is_active FROM invoices WHERE id = $1")
            .bind(invoice_id)
            .fetch_optional(&mut *conn)
            .await?
            .map(|row| row.try_get::<bool, _>(0))
            .transpose()?;
        if active == Some(true) {
            refused(StoreError::Rule(RuleBroken::PaidTotalTooLarge))
        } else {
            refused(StoreError::ParentInactive(Entity::Invoice))
        }
    }

    async fn add_paid(conn: &mut Conn, invoice_id: i64, scaled: i64) -> Result<()> {
        sqlx::query("UPDATE invoices SET paid = paid + $2 WHERE id = $1")
            .bind(invoice_id)
            .bind(scaled)
            .execute(&mut *conn)
            .await?;
        Ok(())
    }

    pub(crate) async fn update_transaction(
        &self,
        id: TransactionId,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> Result<Transaction> {
        let mut db_tx = self.begin().await?;
        let Some((old_invoice, old_amount, true)) = Self::payment_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Transaction));
        };
        let new_invoice = transaction.invoice_id.get();
        // Lock both invoices in id order, so two moves in opposite directions cannot deadlock.
        let locked = sqlx::query(concat!(
            "SELECT id, is_active, paid FROM invoices WHERE id = $1 OR id = $2 ORDER BY id",
            for_update!()
        ))
        .bind(old_invoice)
        .bind(new_invoice)
        .fetch_all(&mut *db_tx)
        .await?;
        let mut target = None;
        for row in &locked {
            if row.try_get::<i64, _>("id")? == new_invoice && row.try_get::<bool, _>("is_active")? {
                target = Some(row.try_get::<i64, _>("paid")?);
            }
        }
        let Some(target_paid) = target else {
            return refused(StoreError::ParentInactive(Entity::Invoice));
        };
        let new_amount = transaction.amount.to_scaled();
        // D1: the target's paid total stays within the largest amount; a payment that stays on
        // its invoice frees its old amount first.
        let freed = if old_invoice == new_invoice { old_amount } else { 0 };
        if i128::from(target_paid) + i128::from(new_amount) - i128::from(freed) > i128::from(max_scaled()) {
            return refused(StoreError::Rule(RuleBroken::PaidTotalTooLarge));
        }
        // One statement for both invoices: PostgreSQL's open-count trigger then sees both
        // changes at once and locks the buckets they touch in due-date order (migration 2).
        sqlx::query(
            "UPDATE invoices SET paid = paid + CASE WHEN id = $1 THEN $2 ELSE 0 END \
             + CASE WHEN id = $3 THEN $4 ELSE 0 END WHERE id = $1 OR id = $3",
        )
        .bind(old_invoice)
        .bind(-old_amount)
        .bind(new_invoice)
        .bind(new_amount)
        .execute(&mut *db_tx)
        .await?;
        sqlx::query(
            "UPDATE transactions SET invoice_id = $2, amount = $3, transaction_date = $4, transaction_type = $5, \
             description = $6, updated_at = $7 WHERE id = $1",
        )
        .bind(id.get())
        .bind(new_invoice)
        .bind(new_amount)
        .bind(micros(transaction.transaction_date))
        .bind(transaction.transaction_type.name())
        .bind(transaction.description)
        .bind(micros(ctx.at))
        .execute(&mut *db_tx)
        .await?;
        finish_write(&mut db_tx, &ctx, "update", Entity::Transaction, id.get()).await?;
        let transaction = written(transaction_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(transaction)
    }

    pub(crate) async fn delete_transaction(&self, id: TransactionId, ctx: WriteContext) -> Result<()> {
        let mut db_tx = self.begin().await?;
        let Some((invoice_id, scaled, true)) = Self::payment_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Transaction));
        };
        sqlx::query("UPDATE transactions SET is_active = FALSE, updated_at = $2 WHERE id = $1")
            .bind(id.get())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
        Self::add_paid(&mut db_tx, invoice_id, -scaled).await?;
        finish_write(&mut db_tx, &ctx, "delete", Entity::Transaction, id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn restore_transaction(&self, id: TransactionId, ctx: WriteContext) -> Result<Transaction> {
        let mut db_tx = self.begin().await?;
        let Some((invoice_id, scaled, false)) = Self::payment_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Transaction));
        };
        Self::add_to_active_invoice(&mut db_tx, invoice_id, scaled).await?;
        sqlx::query("UPDATE transactions SET is_active = TRUE, updated_at = $2 WHERE id = $1")
            .bind(id.get())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "restore", Entity::Transaction, id.get()).await?;
        let transaction = written(transaction_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(transaction)
    }

    pub(crate) async fn list_transactions(&self, query: &TransactionQuery) -> Result<Page<Transaction>> {
        let mut binds = Binds::default();
        let filter = transaction_conditions(&mut binds, &query.filter);
        let dir = direction(query.sort.dir);
        let sort = transaction_sort(query.sort.key);
        let (limit, offset) = page_binds(&mut binds, query.page);
        let sql = format!(
            "SELECT (SELECT COUNT(*) FROM transactions t WHERE {filter}) AS total_count, {columns} \
             FROM {from} WHERE {filter} ORDER BY {sort} {dir}, t.id {dir} LIMIT {limit} OFFSET {offset}",
            columns = transaction_columns!(),
            from = transactions_with_invoice!(),
        );
        let mut conn = self.read().await?;
        let rows = binds.query(sql).fetch_all(&mut *conn).await?;
        let items = rows.iter().map(transaction_from).collect::<Result<Vec<_>>>()?;
        let mut binds = Binds::default();
        let filter = transaction_conditions(&mut binds, &query.filter);
        let recount = binds.query(format!("SELECT COUNT(*) FROM transactions t WHERE {filter}"));
        let total_count = page_total(&mut conn, &rows, query.page, recount).await?;
        Ok(Page { items, total_count, page: query.page.page(), page_size: query.page.page_size() })
    }

    // Users

    pub(crate) async fn insert_user(&self, user: NewUserRecord, ctx: WriteContext) -> Result<User> {
        let mut db_tx = self.begin().await?;
        let id = insert_user_row(&mut db_tx, &user, ctx.at).await?;
        finish_write(&mut db_tx, &ctx, "create", Entity::User, id).await?;
        let user = written(user_in(&mut db_tx, id).await?)?;
        db_tx.commit().await?;
        Ok(user)
    }

    pub(crate) async fn get_user(&self, id: UserId) -> Result<Option<User>> {
        user_in(&mut *self.read().await?, id.get()).await
    }

    pub(crate) async fn list_users(&self) -> Result<Vec<User>> {
        let rows = sqlx::query(concat!("SELECT ", user_columns!(), " FROM users u WHERE u.is_active ORDER BY u.id"))
            .fetch_all(&self.reader)
            .await?;
        rows.iter().map(user_from).collect()
    }

    /// The role, email key and state of a user, locked for a change.
    async fn user_for_change(conn: &mut Conn, id: i64) -> Result<Option<(i64, String, bool)>> {
        let row = sqlx::query(concat!("SELECT role_id, email_key, is_active FROM users WHERE id = $1", for_update!()))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        row.map(|row| Ok((row.try_get("role_id")?, row.try_get("email_key")?, row.try_get("is_active")?))).transpose()
    }

    pub(crate) async fn update_user(&self, id: UserId, user: UserUpdate, ctx: WriteContext) -> Result<User> {
        let mut db_tx = self.begin().await?;
        // D18: changes that may remove an admin run one at a time, so two cannot both see
        // "another admin remains".
        lock(&mut db_tx, Lock::Admins).await?;
        let Some((current_role, _, true)) = Self::user_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::User));
        };
        let email_key = key(&user.email);
        let leaves_admin = current_role == ADMIN_ROLE_ID.get() && user.role_id != ADMIN_ROLE_ID;
        if user.role_id.get() != current_role && !active_role(&mut db_tx, user.role_id.get()).await? {
            return refused(StoreError::ParentInactive(Entity::Role));
        }
        if email_taken(&mut db_tx, &email_key, Some(id.get())).await? {
            return refused(StoreError::Conflict { field: "email" });
        }
        if leaves_admin && active_admins(&mut db_tx).await? <= 1 {
            return refused(StoreError::Rule(RuleBroken::LastAdmin));
        }
        sqlx::query(
            "UPDATE users SET first_name = $2, last_name = $3, email = $4, email_key = $5, role_id = $6 WHERE id = $1",
        )
        .bind(id.get())
        .bind(user.first_name)
        .bind(user.last_name)
        .bind(user.email)
        .bind(email_key)
        .bind(user.role_id.get())
        .execute(&mut *db_tx)
        .await?;
        finish_write(&mut db_tx, &ctx, "update", Entity::User, id.get()).await?;
        let user = written(user_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(user)
    }

    pub(crate) async fn delete_user(&self, id: UserId, ctx: WriteContext) -> Result<()> {
        let mut db_tx = self.begin().await?;
        lock(&mut db_tx, Lock::Admins).await?;
        let Some((role_id, _, true)) = Self::user_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::User));
        };
        if role_id == ADMIN_ROLE_ID.get() && active_admins(&mut db_tx).await? <= 1 {
            return refused(StoreError::Rule(RuleBroken::LastAdmin));
        }
        // D20: deleting a user also revokes their tokens.
        sqlx::query("UPDATE users SET is_active = FALSE, tokens_revoked_at = $2 WHERE id = $1")
            .bind(id.get())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "delete", Entity::User, id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn restore_user(&self, id: UserId, ctx: WriteContext) -> Result<User> {
        let mut db_tx = self.begin().await?;
        let Some((role_id, email_key, false)) = Self::user_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::User));
        };
        if !active_role(&mut db_tx, role_id).await? {
            return refused(StoreError::ParentInactive(Entity::Role));
        }
        if email_taken(&mut db_tx, &email_key, Some(id.get())).await? {
            return refused(StoreError::Conflict { field: "email" });
        }
        sqlx::query("UPDATE users SET is_active = TRUE WHERE id = $1").bind(id.get()).execute(&mut *db_tx).await?;
        finish_write(&mut db_tx, &ctx, "restore", Entity::User, id.get()).await?;
        let user = written(user_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(user)
    }

    pub(crate) async fn update_profile(&self, id: UserId, profile: ProfileUpdate, ctx: WriteContext) -> Result<User> {
        let mut db_tx = self.begin().await?;
        let Some((_, _, true)) = Self::user_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::User));
        };
        let email_key = key(&profile.email);
        if email_taken(&mut db_tx, &email_key, Some(id.get())).await? {
            return refused(StoreError::Conflict { field: "email" });
        }
        sqlx::query("UPDATE users SET first_name = $2, last_name = $3, email = $4, email_key = $5 WHERE id = $1")
            .bind(id.get())
            .bind(profile.first_name)
            .bind(profile.last_name)
            .bind(profile.email)
            .bind(email_key)
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "update", Entity::User, id.get()).await?;
        let user = written(user_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(user)
    }

    pub(crate) async fn set_password(&self, id: UserId, password_hash: String, ctx: WriteContext) -> Result<()> {
        let mut db_tx = self.begin().await?;
        // D20: tokens issued before the change stop working.
        let changed =
            sqlx::query("UPDATE users SET password_hash = $2, tokens_revoked_at = $3 WHERE id = $1 AND is_active")
                .bind(id.get())
                .bind(password_hash)
                .bind(micros(ctx.at))
                .execute(&mut *db_tx)
                .await?
                .rows_affected();
        if changed == 0 {
            return refused(StoreError::NotFound(Entity::User));
        }
        finish_write(&mut db_tx, &ctx, "password_change", Entity::User, id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn list_user_policies(&self, user_id: UserId) -> Result<Vec<Policy>> {
        policies_in(&mut *self.read().await?, PolicySet::OfUser(user_id.get())).await
    }

    pub(crate) async fn attach_user_policy(
        &self,
        user_id: UserId,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> Result<()> {
        let mut db_tx = self.begin().await?;
        if !active_user(&mut db_tx, user_id.get()).await? {
            return refused(StoreError::NotFound(Entity::User));
        }
        if !active_policy(&mut db_tx, policy_id.get()).await? {
            return refused(StoreError::NotFound(Entity::Policy));
        }
        sqlx::query("INSERT INTO user_policies (user_id, policy_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(user_id.get())
            .bind(policy_id.get())
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "attach_policy", Entity::User, user_id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn detach_user_policy(
        &self,
        user_id: UserId,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> Result<()> {
        let mut db_tx = self.begin().await?;
        if !active_user(&mut db_tx, user_id.get()).await? {
            return refused(StoreError::NotFound(Entity::User));
        }
        sqlx::query("DELETE FROM user_policies WHERE user_id = $1 AND policy_id = $2")
            .bind(user_id.get())
            .bind(policy_id.get())
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "detach_policy", Entity::User, user_id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    // Roles

    pub(crate) async fn insert_role(&self, role: NewRole, ctx: WriteContext) -> Result<Role> {
        let mut db_tx = self.begin().await?;
        let name_key = key(&role.name);
        if role_name_taken(&mut db_tx, &name_key, None).await? {
            return refused(StoreError::Conflict { field: "name" });
        }
        let row = sqlx::query(
            "INSERT INTO roles (name, name_key, description, is_system, is_active, created_at) \
             VALUES ($1, $2, $3, FALSE, TRUE, $4) RETURNING id",
        )
        .bind(role.name)
        .bind(name_key)
        .bind(role.description)
        .bind(micros(ctx.at))
        .fetch_one(&mut *db_tx)
        .await?;
        let id: i64 = row.try_get(0)?;
        finish_write(&mut db_tx, &ctx, "create", Entity::Role, id).await?;
        let role = written(role_in(&mut db_tx, id).await?)?;
        db_tx.commit().await?;
        Ok(role)
    }

    pub(crate) async fn get_role(&self, id: RoleId) -> Result<Option<Role>> {
        role_in(&mut *self.read().await?, id.get()).await
    }

    pub(crate) async fn list_roles(&self) -> Result<Vec<Role>> {
        let rows = sqlx::query(concat!("SELECT ", role_columns!(), " FROM roles r ORDER BY r.id"))
            .fetch_all(&self.reader)
            .await?;
        rows.iter().map(role_from).collect()
    }

    /// The name, system flag and state of a role, locked for a change.
    async fn role_for_change(conn: &mut Conn, id: i64) -> Result<Option<(String, bool, bool)>> {
        let row = sqlx::query(concat!("SELECT name, is_system, is_active FROM roles WHERE id = $1", for_update!()))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        row.map(|row| Ok((row.try_get("name")?, row.try_get("is_system")?, row.try_get("is_active")?))).transpose()
    }

    pub(crate) async fn update_role(&self, id: RoleId, role: NewRole, ctx: WriteContext) -> Result<Role> {
        let mut db_tx = self.begin().await?;
        let Some((current_name, is_system, true)) = Self::role_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Role));
        };
        let name_key = key(&role.name);
        if is_system && current_name != role.name {
            return refused(StoreError::Rule(RuleBroken::SystemRoleRename));
        }
        if role_name_taken(&mut db_tx, &name_key, Some(id.get())).await? {
            return refused(StoreError::Conflict { field: "name" });
        }
        sqlx::query("UPDATE roles SET name = $2, name_key = $3, description = $4 WHERE id = $1")
            .bind(id.get())
            .bind(role.name)
            .bind(name_key)
            .bind(role.description)
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "update", Entity::Role, id.get()).await?;
        let role = written(role_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(role)
    }

    pub(crate) async fn delete_role(&self, id: RoleId, ctx: WriteContext) -> Result<()> {
        let mut db_tx = self.begin().await?;
        let Some((_, is_system, true)) = Self::role_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Role));
        };
        if is_system {
            return refused(StoreError::Rule(RuleBroken::SystemRoleDelete));
        }
        sqlx::query("UPDATE roles SET is_active = FALSE WHERE id = $1").bind(id.get()).execute(&mut *db_tx).await?;
        finish_write(&mut db_tx, &ctx, "delete", Entity::Role, id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn restore_role(&self, id: RoleId, ctx: WriteContext) -> Result<Role> {
        let mut db_tx = self.begin().await?;
        let Some((_, _, false)) = Self::role_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Role));
        };
        sqlx::query("UPDATE roles SET is_active = TRUE WHERE id = $1").bind(id.get()).execute(&mut *db_tx).await?;
        finish_write(&mut db_tx, &ctx, "restore", Entity::Role, id.get()).await?;
        let role = written(role_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(role)
    }

    pub(crate) async fn attach_role_policy(
        &self,
        role_id: RoleId,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> Result<()> {
        let mut db_tx = self.begin().await?;
        if !active_role(&mut db_tx, role_id.get()).await? {
            return refused(StoreError::NotFound(Entity::Role));
        }
        if !active_policy(&mut db_tx, policy_id.get()).await? {
            return refused(StoreError::NotFound(Entity::Policy));
        }
        sqlx::query("INSERT INTO role_policies (role_id, policy_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(role_id.get())
            .bind(policy_id.get())
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "attach_policy", Entity::Role, role_id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn detach_role_policy(
        &self,
        role_id: RoleId,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> Result<()> {
        let mut db_tx = self.begin().await?;
        if !active_role(&mut db_tx, role_id.get()).await? {
            return refused(StoreError::NotFound(Entity::Role));
        }
        sqlx::query("DELETE FROM role_policies WHERE role_id = $1 AND policy_id = $2")
            .bind(role_id.get())
            .bind(policy_id.get())
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "detach_policy", Entity::Role, role_id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    // Permissions and policies

    pub(crate) async fn list_permissions(&self) -> Result<Vec<Permission>> {
        let rows = sqlx::query("SELECT id, collection, action, description FROM permissions ORDER BY id")
            .fetch_all(&self.reader)
            .await?;
        rows.iter().map(permission_from).collect()
    }

    pub(crate) async fn insert_policy(&self, policy: NewPolicy, ctx: WriteContext) -> Result<Policy> {
        let mut db_tx = self.begin().await?;
        let name_key = key(&policy.name);
        let permission_ids = checked_permissions(&mut db_tx, &policy.permission_ids).await?;
        if policy_name_taken(&mut db_tx, &name_key, None).await? {
            return refused(StoreError::Conflict { field: "name" });
        }
        let row = sqlx::query(
            "INSERT INTO policies (name, name_key, description, is_active, created_at) \
             VALUES ($1, $2, $3, TRUE, $4) RETURNING id",
        )
        .bind(policy.name)
        .bind(name_key)
        .bind(policy.description)
        .bind(micros(ctx.at))
        .fetch_one(&mut *db_tx)
        .await?;
        let id: i64 = row.try_get(0)?;
        insert_policy_permissions(&mut db_tx, id, &permission_ids).await?;
        finish_write(&mut db_tx, &ctx, "create", Entity::Policy, id).await?;
        let policy = written(policy_in(&mut db_tx, id).await?)?;
        db_tx.commit().await?;
        Ok(policy)
    }

    pub(crate) async fn get_policy(&self, id: PolicyId) -> Result<Option<Policy>> {
        policy_in(&mut *self.read().await?, id.get()).await
    }

    pub(crate) async fn list_policies(&self) -> Result<Vec<Policy>> {
        policies_in(&mut *self.read().await?, PolicySet::Active).await
    }

    /// The name key and state of a policy, locked for a change.
    async fn policy_for_change(conn: &mut Conn, id: i64) -> Result<Option<(String, bool)>> {
        let row = sqlx::query(concat!("SELECT name_key, is_active FROM policies WHERE id = $1", for_update!()))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        row.map(|row| Ok((row.try_get("name_key")?, row.try_get("is_active")?))).transpose()
    }

    pub(crate) async fn update_policy(&self, id: PolicyId, policy: NewPolicy, ctx: WriteContext) -> Result<Policy> {
        let mut db_tx = self.begin().await?;
        let Some((_, true)) = Self::policy_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Policy));
        };
        let name_key = key(&policy.name);
        let permission_ids = checked_permissions(&mut db_tx, &policy.permission_ids).await?;
        if policy_name_taken(&mut db_tx, &name_key, Some(id.get())).await? {
            return refused(StoreError::Conflict { field: "name" });
        }
        sqlx::query("UPDATE policies SET name = $2, name_key = $3, description = $4 WHERE id = $1")
            .bind(id.get())
            .bind(policy.name)
            .bind(name_key)
            .bind(policy.description)
            .execute(&mut *db_tx)
            .await?;
        sqlx::query("DELETE FROM policy_permissions WHERE policy_id = $1").bind(id.get()).execute(&mut *db_tx).await?;
        insert_policy_permissions(&mut db_tx, id.get(), &permission_ids).await?;
        finish_write(&mut db_tx, &ctx, "update", Entity::Policy, id.get()).await?;
        let policy = written(policy_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(policy)
    }

    pub(crate) async fn delete_policy(&self, id: PolicyId, ctx: WriteContext) -> Result<()> {
        let mut db_tx = self.begin().await?;
        let Some((_, true)) = Self::policy_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Policy));
        };
        sqlx::query("UPDATE policies SET is_active = FALSE WHERE id = $1").bind(id.get()).execute(&mut *db_tx).await?;
        finish_write(&mut db_tx, &ctx, "delete", Entity::Policy, id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn restore_policy(&self, id: PolicyId, ctx: WriteContext) -> Result<Policy> {
        let mut db_tx = self.begin().await?;
        let Some((name_key, false)) = Self::policy_for_change(&mut db_tx, id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Policy));
        };
        if policy_name_taken(&mut db_tx, &name_key, Some(id.get())).await? {
            return refused(StoreError::Conflict { field: "name" });
        }
        sqlx::query("UPDATE policies SET is_active = TRUE WHERE id = $1").bind(id.get()).execute(&mut *db_tx).await?;
        finish_write(&mut db_tx, &ctx, "restore", Entity::Policy, id.get()).await?;
        let policy = written(policy_in(&mut db_tx, id.get()).await?)?;
        db_tx.commit().await?;
        Ok(policy)
    }

    pub(crate) async fn add_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> Result<()> {
        let mut db_tx = self.begin().await?;
        let Some((_, true)) = Self::policy_for_change(&mut db_tx, policy_id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Policy));
        };
        let known = BTreeSet::from([permission_id.get()]);
        if existing_ids(&mut db_tx, "permissions", &known).await?.is_empty() {
            return refused(StoreError::NotFound(Entity::Permission));
        }
        insert_policy_permissions(&mut db_tx, policy_id.get(), &known).await?;
        finish_write(&mut db_tx, &ctx, "add_permission", Entity::Policy, policy_id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn remove_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> Result<()> {
        let mut db_tx = self.begin().await?;
        let Some((_, true)) = Self::policy_for_change(&mut db_tx, policy_id.get()).await? else {
            return refused(StoreError::NotFound(Entity::Policy));
        };
        sqlx::query("DELETE FROM policy_permissions WHERE policy_id = $1 AND permission_id = $2")
            .bind(policy_id.get())
            .bind(permission_id.get())
            .execute(&mut *db_tx)
            .await?;
        finish_write(&mut db_tx, &ctx, "remove_permission", Entity::Policy, policy_id.get()).await?;
        db_tx.commit().await?;
        Ok(())
    }

    // Settings

    pub(crate) async fn list_settings(&self) -> Result<Vec<Setting>> {
        let rows =
            sqlx::query("SELECT key, value, description FROM settings ORDER BY key").fetch_all(&self.reader).await?;
        rows.iter().map(setting_from).collect()
    }

    pub(crate) async fn get_setting(&self, key: &str) -> Result<Option<Setting>> {
        let row = sqlx::query("SELECT key, value, description FROM settings WHERE key = $1")
            .bind(key.to_owned())
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(setting_from).transpose()
    }

    pub(crate) async fn update_setting(&self, key: &str, value: String, ctx: WriteContext) -> Result<Setting> {
        let mut db_tx = self.begin().await?;
        let row = sqlx::query("UPDATE settings SET value = $2 WHERE key = $1 RETURNING key, value, description")
            .bind(key.to_owned())
            .bind(value)
            .fetch_optional(&mut *db_tx)
            .await?;
        let Some(row) = row else { return refused(StoreError::NotFound(Entity::Setting)) };
        let setting = setting_from(&row)?;
        // A setting has no numeric id: its audit entry names the entity alone.
        insert_audit(&mut db_tx, ctx.audit("update", Entity::Setting, None)).await?;
        db_tx.commit().await?;
        Ok(setting)
    }

    // Dashboard (D12)

    pub(crate) async fn dashboard_summary(&self, recent_from: Timestamp) -> Result<Summary> {
        // One row of five one-row aggregates, each over its own (covering) index.
        let row = sqlx::query(concat!(
            "SELECT * FROM (SELECT COUNT(*) AS n_vendors FROM vendors) AS counted_vendors, \
             (SELECT COUNT(*) AS n_invoices FROM invoices) AS counted_invoices, \
             (SELECT ",
            exact_sum!("amount", "invoiced"),
            ", ",
            exact_sum!("paid", "invoice_paid"),
            " FROM invoices WHERE is_active) AS active_invoices, \
             (SELECT ",
            exact_sum!("amount", "payments"),
            " FROM transactions WHERE is_active) AS active_payments, \
             (SELECT COUNT(*) AS n_recent FROM transactions WHERE transaction_date >= $1 AND is_active) AS recent"
        ))
        .bind(micros(recent_from))
        .fetch_one(&self.reader)
        .await?;
        Ok(Summary {
            total_vendors: count(row.try_get("n_vendors")?),
            total_invoices: count(row.try_get("n_invoices")?),
            total_due: wide_decimal(exact_sum(&row, "invoiced")? - exact_sum(&row, "invoice_paid")?),
            total_paid: wide_decimal(exact_sum(&row, "payments")?),
            recent_transactions: count(row.try_get("n_recent")?),
        })
    }

    pub(crate) async fn top_vendors(&self, limit: u32) -> Result<Vec<TopVendor>> {
        let rows = sqlx::query(concat!(
            "SELECT v.id, v.name, COALESCE(b.balance_high, 0) AS balance_high, \
             COALESCE(b.balance_low, 0) AS balance_low, COALESCE(b.n_invoices, 0) AS n_invoices \
             FROM vendors v LEFT JOIN (",
            vendor_balances!(),
            ") b ON b.vendor_id = v.id \
             WHERE v.is_active \
             ORDER BY COALESCE(b.balance_high, 0) DESC, COALESCE(b.balance_low, 0) DESC, v.name_key ASC, v.id ASC \
             LIMIT $1"
        ))
        .bind(i64::from(limit))
        .fetch_all(&self.reader)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(TopVendor {
                    vendor_id: VendorId(row.try_get("id")?),
                    vendor_name: row.try_get("name")?,
                    outstanding_balance: wide_decimal(exact_sum(row, "balance")?),
                    total_invoices: count(row.try_get("n_invoices")?),
                })
            })
            .collect()
    }

    pub(crate) async fn recent_invoices(&self, limit: u32, today_start: Timestamp) -> Result<Vec<Invoice>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            invoice_columns!(),
            " FROM ",
            invoices_with_vendor!(),
            " ORDER BY i.created_at DESC, i.id DESC LIMIT $1"
        ))
        .bind(i64::from(limit))
        .fetch_all(&self.reader)
        .await?;
        rows.iter().map(|row| invoice_from(row, today_start)).collect()
    }

    pub(crate) async fn payment_totals(&self, windows: &[(Timestamp, Timestamp)]) -> Result<Vec<PeriodTotal>> {
        let mut totals = vec![PeriodTotal::default(); windows.len()];
        let mut conn = self.read().await?;
        // One statement per hundred windows: each window is a range scan of the covering index
        // `transactions_by_date`.
        for (chunk_index, chunk) in windows.chunks(100).enumerate() {
            let mut binds = Binds::default();
            let parts: Vec<String> = chunk
                .iter()
                .enumerate()
                .map(|(index, (start, end))| {
                    format!(
                        "SELECT CAST({index} AS BIGINT) AS window_index, {total}, COUNT(*) AS n_payments \
                         FROM transactions WHERE transaction_date >= {} AND transaction_date < {} AND is_active",
                        binds.int(micros(*start)),
                        binds.int(micros(*end)),
                        total = exact_sum!("amount", "total"),
                    )
                })
                .collect();
            for row in binds.query(parts.join(" UNION ALL ")).fetch_all(&mut *conn).await? {
                let index = usize::try_from(row.try_get::<i64, _>("window_index")?).unwrap_or(usize::MAX);
                if let Some(total) = totals.get_mut(chunk_index * 100 + index) {
                    total.total_amount = wide_decimal(exact_sum(&row, "total")?);
                    total.transaction_count = count(row.try_get("n_payments")?);
                }
            }
        }
        Ok(totals)
    }

    // Audit (D22)

    pub(crate) async fn list_audit(&self, query: &AuditQuery) -> Result<Page<AuditEntry>> {
        let build = |binds: &mut Binds| {
            let filter = &query.filter;
            let mut parts = Vec::new();
            if let Some(entity) = &filter.entity {
                // The entity matches ASCII-case-insensitively, like `eq_ignore_ascii_case`.
                parts.push(format!("a.entity_key = {}", binds.text(entity.to_ascii_lowercase())));
            }
            if let Some(entity_id) = filter.entity_id {
                parts.push(format!("a.entity_id = {}", binds.int(entity_id)));
            }
            if let Some(user_id) = filter.user_id {
                parts.push(format!("a.user_id = {}", binds.int(user_id.get())));
            }
            if let Some(from) = filter.from_date {
                parts.push(format!("a.at >= {}", binds.int(micros(from))));
            }
            if let Some(to) = filter.to_date {
                parts.push(format!("a.at <= {}", binds.int(micros(to))));
            }
            conditions(parts)
        };
        let mut binds = Binds::default();
        let filter = build(&mut binds);
        let (limit, offset) = page_binds(&mut binds, query.page);
        let sql = format!(
            "SELECT (SELECT COUNT(*) FROM audit_log a WHERE {filter}) AS total_count, \
             a.id, a.at, a.user_id, a.action, a.entity, a.entity_id, a.reason, a.changes \
             FROM audit_log a WHERE {filter} ORDER BY a.at DESC, a.id DESC LIMIT {limit} OFFSET {offset}"
        );
        let mut conn = self.read().await?;
        let rows = binds.query(sql).fetch_all(&mut *conn).await?;
        let items = rows.iter().map(audit_from).collect::<Result<Vec<_>>>()?;
        let mut binds = Binds::default();
        let filter = build(&mut binds);
        let recount = binds.query(format!("SELECT COUNT(*) FROM audit_log a WHERE {filter}"));
        let total_count = page_total(&mut conn, &rows, query.page, recount).await?;
        Ok(Page { items, total_count, page: query.page.page(), page_size: query.page.page_size() })
    }

    // Exports (D26): keyset pages in id order.

    pub(crate) async fn export_vendors(
        &self,
        filter: &VendorFilter,
        after: Option<VendorId>,
        limit: u32,
    ) -> Result<Vec<Vendor>> {
        let mut binds = Binds::default();
        let conditions = vendor_conditions(&mut binds, filter);
        let after = binds.int(after.map_or(i64::MIN, VendorId::get));
        let limit = binds.int(i64::from(limit));
        let sql = format!(
            "SELECT {columns} FROM vendors v WHERE {conditions} AND v.id > {after} ORDER BY v.id LIMIT {limit}",
            columns = vendor_columns!(),
        );
        let rows = binds.query(sql).fetch_all(&self.reader).await?;
        rows.iter().map(vendor_from).collect()
    }

    pub(crate) async fn export_invoices(
        &self,
        filter: &InvoiceFilter,
        today_start: Timestamp,
        after: Option<InvoiceId>,
        limit: u32,
    ) -> Result<Vec<Invoice>> {
        let mut binds = Binds::default();
        let conditions = invoice_conditions(&mut binds, filter, today_start);
        let after = binds.int(after.map_or(i64::MIN, InvoiceId::get));
        let limit = binds.int(i64::from(limit));
        let sql = format!(
            "SELECT {columns} FROM {from} WHERE {conditions} AND i.id > {after} ORDER BY i.id LIMIT {limit}",
            columns = invoice_columns!(),
            from = invoices_with_vendor!(),
        );
        let rows = binds.query(sql).fetch_all(&self.reader).await?;
        rows.iter().map(|row| invoice_from(row, today_start)).collect()
    }

    pub(crate) async fn export_transactions(
        &self,
        filter: &TransactionFilter,
        after: Option<TransactionId>,
        limit: u32,
    ) -> Result<Vec<Transaction>> {
        let mut binds = Binds::default();
        let conditions = transaction_conditions(&mut binds, filter);
        let after = binds.int(after.map_or(i64::MIN, TransactionId::get));
        let limit = binds.int(i64::from(limit));
        let sql = format!(
            "SELECT {columns} FROM {from} WHERE {conditions} AND t.id > {after} ORDER BY t.id LIMIT {limit}",
            columns = transaction_columns!(),
            from = transactions_with_invoice!(),
        );
        let rows = binds.query(sql).fetch_all(&self.reader).await?;
        rows.iter().map(transaction_from).collect()
    }

    // Imports: one transaction per call, multi-row inserts with ids reserved up front (so the
    // ids returned follow the input order), no audit entries.

    pub(crate) async fn import_vendors(&self, vendors: Vec<ImportedVendor>) -> Result<Vec<VendorId>> {
        if vendors.iter().any(|imported| imported.vendor.vendor_type == VendorType::OwnPharmacy) {
            return refused(StoreError::Rule(RuleBroken::OwnPharmacyType));
        }
        if vendors.is_empty() {
            return Ok(Vec::new());
        }
        let mut db_tx = self.begin().await?;
        let ids = reserve_ids(&mut db_tx, Table::Vendors, vendors.len()).await?;
        for (chunk, chunk_ids) in vendors.chunks(IMPORT_CHUNK).zip(ids.chunks(IMPORT_CHUNK)) {
            let mut binds = Binds::in_order();
            let rows: Vec<String> = chunk
                .iter()
                .zip(chunk_ids)
                .map(|(imported, id)| {
                    let vendor = &imported.vendor;
                    let at = micros(imported.created_at);
                    let values = [
                        binds.int(*id),
                        binds.text(vendor.name.clone()),
                        binds.text(key(&vendor.name)),
                        binds.text(vendor.vendor_type.name()),
                        binds.opt_text(vendor.address.clone()),
                        binds.opt_text(vendor.phone.clone()),
                        binds.opt_text(vendor.email.clone()),
                        binds.opt_text(vendor.drug_license_number1.clone()),
                        binds.opt_text(vendor.drug_license_number2.clone()),
                        binds.text(licences_json(&vendor.additional_drug_license_numbers)),
                        if imported.is_active { "TRUE".to_owned() } else { "FALSE".to_owned() },
                        binds.int(at),
                        binds.int(at),
                    ];
                    format!("({})", values.join(", "))
                })
                .collect();
            let sql = format!(
                "INSERT INTO vendors (id, name, name_key, vendor_type, address, phone, email, drug_license_number1, \
                 drug_license_number2, additional_drug_license_numbers, is_active, created_at, updated_at) VALUES {}",
                rows.join(", ")
            );
            binds.query(sql).execute(&mut *db_tx).await?;
        }
        db_tx.commit().await?;
        Ok(ids.into_iter().map(VendorId).collect())
    }

    pub(crate) async fn import_invoices(&self, invoices: Vec<ImportedInvoice>) -> Result<Vec<InvoiceId>> {
        if invoices.is_empty() {
            return Ok(Vec::new());
        }
        let mut db_tx = self.begin().await?;
        // Check the whole batch before writing any of it, in input order, as the memory store
        // does: the first invoice with a missing vendor or a taken number decides the error.
        let vendor_ids: BTreeSet<i64> = invoices.iter().map(|imported| imported.invoice.vendor_id.get()).collect();
        let vendors = existing_ids(&mut db_tx, "vendors", &vendor_ids).await?;
        let active_keys: BTreeSet<String> = invoices
            .iter()
            .filter(|imported| imported.is_active)
            .map(|imported| key(&imported.invoice.invoice_number))
            .collect();
        let taken = self::taken_numbers(&mut db_tx, &active_keys).await?;
        let mut batch_keys = HashSet::new();
        for imported in &invoices {
            if !vendors.contains(&imported.invoice.vendor_id.get()) {
                return refused(StoreError::ParentInactive(Entity::Vendor));
            }
            if imported.is_active {
                let number_key = key(&imported.invoice.invoice_number);
                if taken.contains(&number_key) || !batch_keys.insert(number_key) {
                    return refused(StoreError::Conflict { field: "invoiceNumber" });
                }
            }
        }
        let ids = reserve_ids(&mut db_tx, Table::Invoices, invoices.len()).await?;
        for (chunk, chunk_ids) in invoices.chunks(IMPORT_CHUNK).zip(ids.chunks(IMPORT_CHUNK)) {
            let mut binds = Binds::in_order();
            let rows: Vec<String> = chunk
                .iter()
                .zip(chunk_ids)
                .map(|(imported, id)| {
                    let invoice = &imported.invoice;
                    let at = micros(imported.created_at);
                    let values = [
                        binds.int(*id),
                        binds.int(invoice.vendor_id.get()),
                        binds.text(invoice.invoice_number.clone()),
                        binds.text(key(&invoice.invoice_number)),
                        binds.int(invoice.amount.to_scaled()),
                        binds.int(micros(invoice.invoice_date)),
                        binds.int(micros(invoice.due_date)),
                        binds.opt_text(invoice.description.clone()),
                        if imported.is_active { "TRUE".to_owned() } else { "FALSE".to_owned() },
                        binds.int(at),
                        binds.int(at),
                    ];
                    format!("({})", values.join(", "))
                })
                .collect();
            let sql = format!(
                "INSERT INTO invoices (id, vendor_id, invoice_number, number_key, amount, invoice_date, due_date, \
                 description, is_active, created_at, updated_at) VALUES {}",
                rows.join(", ")
            );
            binds.query(sql).execute(&mut *db_tx).await?;
        }
        db_tx.commit().await?;
        Ok(ids.into_iter().map(InvoiceId).collect())
    }

    pub(crate) async fn import_transactions(
        &self,
        transactions: Vec<ImportedTransaction>,
    ) -> Result<Vec<TransactionId>> {
        if transactions.is_empty() {
            return Ok(Vec::new());
        }
        let mut db_tx = self.begin().await?;
        let invoice_ids: BTreeSet<i64> =
            transactions.iter().map(|imported| imported.transaction.invoice_id.get()).collect();
        let paid_totals = locked_paid_totals(&mut db_tx, &invoice_ids).await?;
        if paid_totals.len() != invoice_ids.len() {
            return refused(StoreError::ParentInactive(Entity::Invoice));
        }
        // The paid totals grow by the active payments imported (D10), and stay within the
        // largest amount (D1).
        let mut sums: BTreeMap<i64, i128> = BTreeMap::new();
        for imported in transactions.iter().filter(|imported| imported.is_active) {
            *sums.entry(imported.transaction.invoice_id.get()).or_default() +=
                i128::from(imported.transaction.amount.to_scaled());
        }
        for (invoice, sum) in &sums {
            let paid = paid_totals.get(invoice).copied().unwrap_or_default();
            if i128::from(paid) + sum > i128::from(max_scaled()) {
                return refused(StoreError::Rule(RuleBroken::PaidTotalTooLarge));
            }
        }
        let ids = reserve_ids(&mut db_tx, Table::Transactions, transactions.len()).await?;
        for (chunk, chunk_ids) in transactions.chunks(IMPORT_CHUNK).zip(ids.chunks(IMPORT_CHUNK)) {
            let mut binds = Binds::in_order();
            let rows: Vec<String> = chunk
                .iter()
                .zip(chunk_ids)
                .map(|(imported, id)| {
                    let payment = &imported.transaction;
                    let at = micros(imported.created_at);
                    let values = [
                        binds.int(*id),
                        binds.int(payment.invoice_id.get()),
                        binds.int(payment.amount.to_scaled()),
                        binds.int(micros(payment.transaction_date)),
                        binds.text(payment.transaction_type.name()),
                        binds.opt_text(payment.description.clone()),
                        if imported.is_active { "TRUE".to_owned() } else { "FALSE".to_owned() },
                        binds.int(at),
                        binds.int(at),
                    ];
                    format!("({})", values.join(", "))
                })
                .collect();
            let sql = format!(
                "INSERT INTO transactions (id, invoice_id, amount, transaction_date, transaction_type, description, \
                 is_active, created_at, updated_at) VALUES {}",
                rows.join(", ")
            );
            binds.query(sql).execute(&mut *db_tx).await?;
        }
        let added = sums
            .into_iter()
            .map(|(invoice, sum)| {
                Ok((invoice, i64::try_from(sum).map_err(|_| Error::corrupt("a paid total overflows"))?))
            })
            .collect::<Result<Vec<(i64, i64)>>>()?;
        for chunk in added.chunks(IMPORT_CHUNK) {
            let mut binds = Binds::in_order();
            let rows: Vec<String> =
                chunk.iter().map(|(invoice, sum)| format!("({}, {})", binds.int(*invoice), binds.int(*sum))).collect();
            let sql = format!(
                "UPDATE invoices SET paid = paid + added.column2 FROM (VALUES {}) AS added \
                 WHERE invoices.id = added.column1",
                rows.join(", ")
            );
            binds.query(sql).execute(&mut *db_tx).await?;
        }
        db_tx.commit().await?;
        Ok(ids.into_iter().map(TransactionId).collect())
    }
}

/// Which of `keys` are numbers of active invoices (D4).
async fn taken_numbers(conn: &mut Conn, keys: &BTreeSet<String>) -> Result<HashSet<String>> {
    let keys: Vec<&String> = keys.iter().collect();
    let mut taken = HashSet::new();
    for chunk in keys.chunks(LOOKUP_CHUNK) {
        let mut binds = Binds::in_order();
        let list: Vec<String> = chunk.iter().map(|number_key| binds.text((*number_key).clone())).collect();
        let sql = format!("SELECT number_key FROM invoices WHERE is_active AND number_key IN ({})", list.join(", "));
        for row in binds.query(sql).fetch_all(&mut *conn).await? {
            taken.insert(row.try_get::<String, _>(0)?);
        }
    }
    Ok(taken)
}

/// The paid totals of the invoices among `ids` that exist, locked until the transaction ends.
async fn locked_paid_totals(conn: &mut Conn, ids: &BTreeSet<i64>) -> Result<HashMap<i64, i64>> {
    let ids: Vec<i64> = ids.iter().copied().collect();
    let mut totals = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(LOOKUP_CHUNK) {
        let mut binds = Binds::in_order();
        let list: Vec<String> = chunk.iter().map(|id| binds.int(*id)).collect();
        let sql =
            format!("SELECT id, paid FROM invoices WHERE id IN ({}) ORDER BY id{}", list.join(", "), for_update!());
        for row in binds.query(sql).fetch_all(&mut *conn).await? {
            totals.insert(row.try_get::<i64, _>("id")?, row.try_get::<i64, _>("paid")?);
        }
    }
    Ok(totals)
}
