//! The facts writes load under their locks: whether a parent is active, whether a unique value
//! is taken, who holds a payment reference (D30), how many admins there are, what a role or a
//! policy gives (D38), and the token bookkeeping a change of access updates (D39).
//!
//! Each runs inside the caller's transaction; the row-lock clauses keep what was read from
//! changing before the transaction ends (PostgreSQL). None of them decides anything: the
//! caller hands the facts to a rule of `pharmapay_core::rules`.

use super::rows::scope_text;
use pharmapay_core::branches::Scope;
use pharmapay_core::branches::scope as branch_scope;
use pharmapay_core::branches::scope::BranchFacts;
use pharmapay_core::ids::BranchId;
use std::collections::{BTreeSet, HashMap, HashSet};

use pharmapay_core::access::grants::{self, Grant};
use pharmapay_core::access::{ADMIN_ROLE_ID, Authority, Permission, PermissionSet};
use pharmapay_core::ids::{PermissionId, RoleId, TransactionId, VendorId, VendorPaymentId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::sessions::rules as session_rules;
use pharmapay_core::sessions::rules::TokenState;
use pharmapay_core::store::{NewUserRecord, UniqueKey};
use pharmapay_core::text::key;
use pharmapay_core::transactions::TransactionType;
use pharmapay_core::transactions::holders::{self, Holder, KeyHolder};
use pharmapay_core::{Entity, StoreError};
use sqlx::{AssertSqlSafe, Row};

use super::binds::{Binds, rows_in};
use super::rows::{MICROS_PER_SECOND, count, instant, micros, permission_from, token_state_from};
use super::{Conn, DbRow, Query, Result, refused, row_by_id};
use crate::error::Error;

// Checks shared by writes. Each runs inside the caller's transaction; the row-lock clauses keep
// what was checked from changing before the transaction ends (PostgreSQL).

/// Whether the row `sql` reads for `id` (its `is_active`, under a share lock) is active; a
/// missing row is not.
async fn active(conn: &mut Conn, sql: &'static str, id: i64) -> Result<bool> {
    let row = row_by_id(conn, sql, id).await?;
    Ok(row.map(|row| row.try_get::<bool, _>("is_active")).transpose()? == Some(true))
}

/// Whether the role is active, locked against concurrent deletes.
pub(super) async fn active_role(conn: &mut Conn, id: i64) -> Result<bool> {
    active(conn, concat!("SELECT is_active FROM roles WHERE id = $1", for_share!()), id).await
}

/// Whether the policy is active, locked against concurrent deletes.
pub(super) async fn active_policy(conn: &mut Conn, id: i64) -> Result<bool> {
    active(conn, concat!("SELECT is_active FROM policies WHERE id = $1", for_share!()), id).await
}

/// Whether the user is active, locked against concurrent deletes.
pub(super) async fn active_user(conn: &mut Conn, id: i64) -> Result<bool> {
    active(conn, concat!("SELECT is_active FROM users WHERE id = $1", for_share!()), id).await
}

pub(super) async fn exists(conn: &mut Conn, query: Query) -> Result<bool> {
    let row = query.fetch_one(&mut *conn).await?;
    Ok(row.try_get(0)?)
}

/// D4: refuses with `Conflict(key)` when `value` (a text key) is taken by a row other than
/// `except`: among active invoices, active users and active policies, and among all roles.
pub(super) async fn check_free(conn: &mut Conn, key: UniqueKey, value: &str, except: Option<i64>) -> Result<()> {
    let sql = match key {
        UniqueKey::InvoiceNumber => {
            "SELECT EXISTS (SELECT 1 FROM invoices WHERE number_key = $1 AND is_active AND id <> $2)"
        }
        UniqueKey::UserEmail => "SELECT EXISTS (SELECT 1 FROM users WHERE email_key = $1 AND is_active AND id <> $2)",
        UniqueKey::RoleName => "SELECT EXISTS (SELECT 1 FROM roles WHERE name_key = $1 AND id <> $2)",
        UniqueKey::PolicyName => {
            "SELECT EXISTS (SELECT 1 FROM policies WHERE name_key = $1 AND is_active AND id <> $2)"
        }
        UniqueKey::OwnPharmacy => "SELECT EXISTS (SELECT 1 FROM vendors WHERE vendor_type = $1 AND id <> $2)",
        UniqueKey::Gstin => "SELECT EXISTS (SELECT 1 FROM vendors WHERE gstin = $1 AND is_active AND id <> $2)",
        UniqueKey::BranchCode => "SELECT EXISTS (SELECT 1 FROM branches WHERE code = $1 AND is_active AND id <> $2)",
        UniqueKey::PaymentReference { .. } => {
            return Err(crate::error::Error::corrupt("payment references are checked by check_reference"));
        }
        UniqueKey::CreditNumber => {
            return Err(crate::error::Error::corrupt("credit numbers are checked per vendor, in credits.rs"));
        }
        UniqueKey::BankMatch { .. } => {
            return Err(crate::error::Error::corrupt("matched payments are judged by rules::bank, in bank.rs"));
        }
    };
    let query = sqlx::query(sql).bind(value.to_owned()).bind(except.unwrap_or(0));
    if exists(conn, query).await? { refused(StoreError::Conflict(key)) } else { Ok(()) }
}

pub(super) async fn active_admins(conn: &mut Conn) -> Result<u64> {
    let row = sqlx::query("SELECT COUNT(*) FROM users WHERE role_id = $1 AND is_active")
        .bind(ADMIN_ROLE_ID.get())
        .fetch_one(&mut *conn)
        .await?;
    Ok(count(row.try_get(0)?))
}

/// Which of `ids` exist in `table` (one of this file's table names).
pub(super) async fn existing_ids(conn: &mut Conn, table: &'static str, ids: &BTreeSet<i64>) -> Result<HashSet<i64>> {
    let ids: Vec<i64> = ids.iter().copied().collect();
    let rows = rows_in(conn, &ids, |list| format!("SELECT id FROM {table} WHERE id IN ({list})")).await?;
    rows.iter().map(|row| Ok(row.try_get::<i64, _>(0)?)).collect()
}

/// The permission ids, deduplicated, when every one exists (`ParentInactive(Permission)`
/// otherwise).
pub(super) async fn checked_permissions(conn: &mut Conn, ids: &[PermissionId]) -> Result<BTreeSet<i64>> {
    let wanted: BTreeSet<i64> = ids.iter().map(|id| id.get()).collect();
    let found = existing_ids(conn, "permissions", &wanted).await?;
    if found.len() == wanted.len() { Ok(wanted) } else { refused(StoreError::ParentInactive(Entity::Permission)) }
}

pub(super) async fn insert_policy_permissions(
    conn: &mut Conn,
    policy_id: i64,
    permission_ids: &BTreeSet<i64>,
) -> Result<()> {
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

/// The branches the scopes name, locked so that none changes until the write ends: a write of
/// a user's branches checks them (D49).
pub(super) async fn branch_facts(conn: &mut Conn, scopes: &[&Scope]) -> Result<Vec<BranchFacts>> {
    let ids: Vec<i64> = scopes
        .iter()
        .filter_map(|scope| scope.ids())
        .flatten()
        .map(|id| id.get())
        .collect::<std::collections::BTreeSet<i64>>()
        .into_iter()
        .collect();
    let mut facts = Vec::with_capacity(ids.len());
    for id in ids {
        let sql = concat!("SELECT code, is_active FROM branches WHERE id = $1", for_share!());
        if let Some(row) = row_by_id(conn, sql, id).await? {
            facts.push(BranchFacts {
                id: BranchId(id),
                code: row.try_get("code")?,
                is_active: row.try_get("is_active")?,
            });
        }
    }
    Ok(facts)
}

/// Inserts a user after the checks of the contract: an active role (`ParentInactive(Role)`),
/// a role `authority` may give (D38), then a free email (`Conflict`).
pub(super) async fn insert_user_row(
    conn: &mut Conn,
    user: &NewUserRecord,
    (authority, scope): (Authority, &Scope),
    at: Timestamp,
) -> Result<i64> {
    let email_key = key(&user.email);
    if !active_role(conn, user.role_id.get()).await? {
        return refused(StoreError::ParentInactive(Entity::Role));
    }
    grants::check(authority, role_grant(conn, user.role_id.get()).await?)?;
    // D49: the branches asked for, active and within the writer's.
    let facts = branch_facts(conn, &[&user.branch_ids]).await?;
    let admin = user.role_id == ADMIN_ROLE_ID;
    let branch_ids = branch_scope::plan_scope(Some(&user.branch_ids), None, admin, scope, &facts)?;
    check_free(conn, UniqueKey::UserEmail, &email_key, None).await?;
    let row = sqlx::query(
        "INSERT INTO users (first_name, last_name, email, email_key, role_id, password_hash, tokens_revoked_at, \
         is_active, created_at, branch_ids) VALUES ($1, $2, $3, $4, $5, $6, 0, TRUE, $7, $8) RETURNING id",
    )
    .bind(user.first_name.clone())
    .bind(user.last_name.clone())
    .bind(user.email.clone())
    .bind(email_key)
    .bind(user.role_id.get())
    .bind(user.password_hash.clone())
    .bind(micros(at))
    .bind(scope_text(&branch_ids))
    .fetch_one(&mut *conn)
    .await?;
    Ok(row.try_get(0)?)
}

// Access: what a role or a policy gives (D38), and whose tokens a change revokes (D39).

/// The permissions with these ids, as a set.
pub(super) async fn permission_set(conn: &mut Conn, ids: &BTreeSet<i64>) -> Result<PermissionSet> {
    let ids: Vec<i64> = ids.iter().copied().collect();
    let sql = |list: &str| format!("SELECT id, collection, action, description FROM permissions WHERE id IN ({list})");
    let permissions = rows_in(conn, &ids, sql).await?.iter().map(permission_from).collect::<Result<Vec<_>>>()?;
    Ok(PermissionSet::from_permissions(&permissions))
}

/// The ids of a policy's permissions.
pub(super) async fn policy_permission_ids(conn: &mut Conn, policy_id: i64) -> Result<BTreeSet<i64>> {
    let rows = sqlx::query("SELECT permission_id FROM policy_permissions WHERE policy_id = $1")
        .bind(policy_id)
        .fetch_all(&mut *conn)
        .await?;
    rows.iter().map(|row| Ok(row.try_get::<i64, _>(0)?)).collect()
}

/// What a policy gives: its permissions (D38).
pub(super) async fn policy_grant(conn: &mut Conn, policy_id: i64) -> Result<Grant> {
    let ids = policy_permission_ids(conn, policy_id).await?;
    Ok(Grant::permissions(permission_set(conn, &ids).await?))
}

/// What holding `role_id` gives once it is active: the Admin role, or the permissions of its
/// active policies (D38).
pub(super) async fn role_grant(conn: &mut Conn, role_id: i64) -> Result<Grant> {
    let permissions = active_policy_permissions(conn, ("role_policies", "rp", "role_id"), role_id).await?;
    Ok(Grant::role(RoleId(role_id), permissions))
}

/// What the policies attached directly to `user_id` give while they are active (D19, D38).
pub(super) async fn own_policies_grant(conn: &mut Conn, user_id: i64) -> Result<Grant> {
    let permissions = active_policy_permissions(conn, ("user_policies", "up", "user_id"), user_id).await?;
    Ok(Grant::permissions(permissions))
}

/// The permissions of the active policies attached to `holder` through the link `table`
/// (written `alias` in the query), whose `column` names the holder.
async fn active_policy_permissions(
    conn: &mut Conn,
    (table, alias, column): (&str, &str, &str),
    holder: i64,
) -> Result<PermissionSet> {
    let sql = format!(
        "SELECT p.id, p.collection, p.action, p.description FROM permissions p WHERE p.id IN ( \
            SELECT pp.permission_id FROM policy_permissions pp \
            JOIN policies po ON po.id = pp.policy_id \
            JOIN {table} {alias} ON {alias}.policy_id = po.id \
            WHERE {alias}.{column} = $1 AND po.is_active)"
    );
    // The names written into the query are this file's constants; the holder is bound.
    let rows = sqlx::query(AssertSqlSafe(sql)).bind(holder).fetch_all(&mut *conn).await?;
    let permissions = rows.iter().map(permission_from).collect::<Result<Vec<_>>>()?;
    Ok(PermissionSet::from_permissions(&permissions))
}

/// The users a change to access may take something from.
#[derive(Clone, Copy)]
pub(super) enum Holders {
    /// One user.
    User(i64),
    /// The users of a role.
    OfRole(i64),
    /// The users of a policy, directly or through their role.
    OfPolicy(i64),
}

/// Revokes, at `at`, every token issued so far to the `holders` (D39): each user row is locked
/// and its new state is the one [`session_rules::revoke`] gives.
pub(super) async fn revoke_tokens(conn: &mut Conn, holders: Holders, at: Timestamp) -> Result<()> {
    let (condition, id) = match holders {
        Holders::User(id) => ("id = $1", id),
        Holders::OfRole(id) => ("role_id = $1", id),
        Holders::OfPolicy(id) => (
            "id IN (SELECT user_id FROM user_policies WHERE policy_id = $1) \
             OR role_id IN (SELECT role_id FROM role_policies WHERE policy_id = $1)",
            id,
        ),
    };
    let sql = format!(
        "SELECT id, tokens_revoked_at, last_token_issued FROM users WHERE {condition} ORDER BY id{}",
        for_update!()
    );
    let rows = sqlx::query(AssertSqlSafe(sql)).bind(id).fetch_all(&mut *conn).await?;
    for row in &rows {
        let state = token_state_from(row)?;
        let revoked = session_rules::revoke(state, at);
        if revoked != state {
            write_token_state(conn, row.try_get("id")?, revoked).await?;
        }
    }
    Ok(())
}

/// Stores a user's token bookkeeping; the revoked second is kept as that second's first instant.
pub(super) async fn write_token_state(conn: &mut Conn, user_id: i64, state: TokenState) -> Result<()> {
    sqlx::query("UPDATE users SET tokens_revoked_at = $2, last_token_issued = $3 WHERE id = $1")
        .bind(user_id)
        .bind(state.revoked_through.saturating_mul(MICROS_PER_SECOND))
        .bind(state.last_issued)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The state and token bookkeeping of a user, locked for a change.
pub(super) async fn user_tokens_for_change(conn: &mut Conn, id: i64) -> Result<Option<(bool, TokenState)>> {
    let row = row_by_id(
        conn,
        concat!("SELECT is_active, tokens_revoked_at, last_token_issued FROM users WHERE id = $1", for_update!()),
        id,
    )
    .await?;
    row.map(|row| Ok((row.try_get("is_active")?, token_state_from(&row)?))).transpose()
}

/// The user's permissions (D19): the active policies of their role (when the role is active)
/// and the active policies attached to them, deduplicated and ordered by id.
pub(super) async fn permissions_of(conn: &mut Conn, user_id: i64) -> Result<Vec<Permission>> {
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
    .bind(user_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(permission_from).collect()
}

/// D30: takes the lock of the reference key `key` among payments of type `kind` (PostgreSQL; a
/// SQLite write holds the database already), so no other writer of it can record it before this
/// transaction ends. Every write that may make a reference active takes it first, before any
/// row lock, so writers of one reference never wait on each other's rows in a cycle.
pub(super) async fn lock_reference(conn: &mut Conn, kind: TransactionType, key: Option<&str>) -> Result<()> {
    if let Some(key) = key {
        super::lock(conn, crate::Lock::reference(kind.name(), key)).await?;
    }
    Ok(())
}

/// D30 for many references at once, as an import writes them: takes the lock of every
/// reference at once, then refuses the first of `keys`, in their order, that an active payment
/// of its type holds.
pub(super) async fn check_new_references(conn: &mut Conn, keys: &[(TransactionType, String)]) -> Result<()> {
    if keys.is_empty() {
        return Ok(());
    }
    super::lock(conn, crate::Lock::AllReferences).await?;
    let names: Vec<String> = keys.iter().map(|(_, key)| key.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let sql = |list: &str| {
        format!(
            "SELECT reference_key, transaction_type, id, vendor_payment_id FROM transactions \
             WHERE is_active AND reference_key IN ({list})"
        )
    };
    let mut holders: HashMap<(String, String), Vec<KeyHolder>> = HashMap::new();
    for row in rows_in(conn, &names, sql).await? {
        let holder = KeyHolder {
            transaction_id: TransactionId(row.try_get("id")?),
            vendor_payment_id: row.try_get::<Option<i64>, _>("vendor_payment_id")?.map(VendorPaymentId),
        };
        holders.entry((row.try_get("transaction_type")?, row.try_get("reference_key")?)).or_default().push(holder);
    }
    for (kind, key) in keys {
        if let Some(held) = holders.get(&(kind.name().to_owned(), key.clone())) {
            holders::check(held, None)?;
        }
    }
    Ok(())
}

/// D30: refuses `key` among active payments of type `kind` when a payment of another holder than
/// `writer` holds it, as [`holders::check`] decides; the caller took [`lock_reference`].
pub(super) async fn check_reference(
    conn: &mut Conn,
    kind: TransactionType,
    key: Option<&str>,
    writer: Option<Holder>,
) -> Result<()> {
    let Some(key) = key else { return Ok(()) };
    let rows = sqlx::query(
        "SELECT id, vendor_payment_id FROM transactions \
         WHERE reference_key = $1 AND transaction_type = $2 AND is_active",
    )
    .bind(key.to_owned())
    .bind(kind.name())
    .fetch_all(&mut *conn)
    .await?;
    let holders = rows
        .iter()
        .map(|row| {
            Ok(KeyHolder {
                transaction_id: TransactionId(row.try_get("id")?),
                vendor_payment_id: row.try_get::<Option<i64>, _>("vendor_payment_id")?.map(VendorPaymentId),
            })
        })
        .collect::<Result<Vec<KeyHolder>>>()?;
    Ok(holders::check(&holders, writer)?)
}

/// The vendors a write locked before the invoices it changes (D48's lock order: a vendor first,
/// then its invoices in id order, then the kept figures), to be confirmed once the invoices
/// are locked: an invoice moved to another vendor between the two locks makes the write run
/// again ([`Error::Moved`]). On SQLite, whose write holds the whole database, nothing is locked
/// and everything is confirmed.
pub(super) struct VendorLocks(Option<BTreeSet<i64>>);

impl VendorLocks {
    /// Confirms that `vendor`, the vendor of an invoice the write has now locked, was locked
    /// before it.
    pub(super) fn hold(&self, vendor: VendorId) -> Result<()> {
        match &self.0 {
            Some(locked) if !locked.contains(&vendor.get()) => Err(Error::Moved("an invoice")),
            _ => Ok(()),
        }
    }
}

/// Locks, in id order, the vendors of the invoices `invoice_ids` as they stand now, before the
/// caller locks any of the invoices (D48). A vendor payment locks its vendor first, then its
/// invoices; a single payment, a payment's move or delete, an invoice edit and an import lock
/// the vendors of their invoices the same way, so no two of them ever wait on each other in a
/// cycle. An id of no invoice locks nothing.
pub(super) async fn lock_vendors_of(conn: &mut Conn, invoice_ids: &[i64]) -> Result<VendorLocks> {
    if !super::ROW_LOCKS || invoice_ids.is_empty() {
        return Ok(VendorLocks(None));
    }
    let locked: Vec<DbRow> = if let [first, rest @ ..] = invoice_ids
        && rest.len() <= 1
    {
        // One or two invoices (every write but an import): one statement reads their vendors
        // and locks them.
        let second = rest.first().unwrap_or(first);
        sqlx::query(concat!(
            "SELECT id FROM vendors WHERE id IN (SELECT vendor_id FROM invoices WHERE id = $1 OR id = $2) ORDER BY id",
            for_update!()
        ))
        .bind(*first)
        .bind(*second)
        .fetch_all(&mut *conn)
        .await?
    } else {
        let sql = |list: &str| format!("SELECT DISTINCT vendor_id FROM invoices WHERE id IN ({list})");
        let mut vendors = rows_in(conn, invoice_ids, sql)
            .await?
            .iter()
            .map(|row| row.try_get::<i64, _>(0))
            .collect::<Result<Vec<i64>, _>>()?;
        vendors.sort_unstable();
        vendors.dedup();
        // Sorted, so the chunks lock in id order one after the other.
        let lock = |list: &str| format!("SELECT id FROM vendors WHERE id IN ({list}) ORDER BY id{}", for_update!());
        rows_in(conn, &vendors, lock).await?
    };
    let locked = locked.iter().map(|row| row.try_get::<i64, _>(0)).collect::<Result<BTreeSet<i64>, _>>()?;
    Ok(VendorLocks(Some(locked)))
}

/// Locks the vendors `ids` (the invoice's old and new vendor, or one twice) in id order and
/// answers whether `wanted` is active, with its licence's end (D36).
pub(super) async fn lock_vendors(conn: &mut Conn, ids: [i64; 2], wanted: i64) -> Result<(bool, Option<Timestamp>)> {
    let rows = sqlx::query(concat!(
        "SELECT id, is_active, drug_license_valid_until FROM vendors WHERE id = $1 OR id = $2 ORDER BY id",
        for_update!()
    ))
    .bind(ids[0])
    .bind(ids[1])
    .fetch_all(&mut *conn)
    .await?;
    for row in &rows {
        if row.try_get::<i64, _>("id")? == wanted {
            let valid_until = row.try_get::<Option<i64>, _>("drug_license_valid_until")?.map(instant).transpose()?;
            return Ok((row.try_get("is_active")?, valid_until));
        }
    }
    Ok((false, None))
}
