//! Stored values and rows as domain values: money as scaled integers (D1), instants as
//! microseconds, and the reads by id that the read methods and the writes (reading back what
//! they wrote, inside their own transaction) share.

use std::collections::BTreeMap;

use pharmapay_core::Amount;
use pharmapay_core::access::Permission;
use pharmapay_core::access::policy::Policy;
use pharmapay_core::access::role::Role;
use pharmapay_core::access::user::User;
use pharmapay_core::branches::Scope;
use pharmapay_core::figures::VendorFigures;
use pharmapay_core::ids::{
    AuditId, BranchId, InvoiceId, PermissionId, PolicyId, RoleId, TransactionId, UserId, VendorId, VendorPaymentId,
};
use pharmapay_core::invoices::{Invoice, InvoiceBrief, InvoiceStatus};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::money::{SCALE_FACTOR, from_scaled, to_scaled};
use pharmapay_core::reports::audit::AuditEntry;
use pharmapay_core::reports::setting::Setting;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::sessions::login::LoginAttempts;
use pharmapay_core::sessions::rules::TokenState;
use pharmapay_core::store::Credentials;
use pharmapay_core::transactions::{Transaction, TransactionType};
use pharmapay_core::vendors::licence::LicenseStatus;
use pharmapay_core::vendors::{Vendor, VendorType};
use sqlx::Row;

use super::binds::Binds;
pub(super) use super::conn::{count, instant, micros};
use super::figures::pair_of;
use super::{Conn, DbRow, Result, row_by_id};
use crate::error::Error;
use crate::statements;

// Conversions between domain values and stored ones.

pub(super) fn amount(scaled: i64) -> Result<Amount> {
    Amount::from_scaled(scaled).map_err(|error| Error::corrupt(format!("amount {scaled}: {error}")))
}

/// `a - b` of two scaled amounts, exactly (wider than `i64`, so it never overflows).
pub(super) fn difference(a: i64, b: i64) -> Decimal {
    Decimal::from_i128_with_scale(i128::from(a) - i128::from(b), pharmapay_core::money::MAX_FRACTION_DIGITS).normalize()
}

/// A scaled value wider than 64 bits, as a normalised decimal.
pub(super) fn wide_decimal(scaled: i128) -> Decimal {
    Decimal::from_i128_with_scale(scaled, pharmapay_core::money::MAX_FRACTION_DIGITS).normalize()
}

/// `bound` in ten-thousandths, rounded by `round` and saturated to the stored range: the
/// smallest scaled amount at or above it with `Decimal::ceil` (for `amount >= bound`), the
/// largest at or below it with `Decimal::floor` (for `amount <= bound`).
pub(super) fn scaled_bound(bound: Decimal, round: fn(&Decimal) -> Decimal) -> i64 {
    let saturated = if bound.is_sign_negative() { i64::MIN } else { i64::MAX };
    match bound.checked_mul(Decimal::from(SCALE_FACTOR)) {
        Some(scaled) => i64::try_from(round(&scaled)).unwrap_or(saturated),
        None => saturated,
    }
}

pub(super) fn vendor_type(name: &str) -> Result<VendorType> {
    VendorType::ALL
        .into_iter()
        .find(|vendor_type| vendor_type.name() == name)
        .ok_or_else(|| Error::corrupt(format!("vendor type {name:?}")))
}

/// A user's branches as stored (D49): NULL for all, else a JSON array of ids.
pub(super) fn scope_from(text: Option<String>) -> Result<Scope> {
    let Some(text) = text else { return Ok(Scope::All) };
    let ids: Vec<i64> = serde_json::from_str(&text).map_err(|_| Error::corrupt("a user's branches"))?;
    Ok(Scope::of(ids.into_iter().map(BranchId)))
}

/// What [`scope_from`] reads back.
pub(super) fn scope_text(scope: &Scope) -> Option<String> {
    scope.ids().map(|ids| serde_json::Value::from(ids.iter().map(|id| id.get()).collect::<Vec<_>>()).to_string())
}

pub(super) fn transaction_type(name: &str) -> Result<TransactionType> {
    TransactionType::ALL
        .into_iter()
        .find(|kind| kind.name() == name)
        .ok_or_else(|| Error::corrupt(format!("transaction type {name:?}")))
}

pub(super) fn licences_json(numbers: &[String]) -> String {
    // A list of strings always serialises.
    serde_json::to_string(numbers).unwrap_or_else(|_| "[]".to_owned())
}

// Decoding rows.

pub(super) fn vendor_from(row: &DbRow) -> Result<Vendor> {
    let licences: &str = row.try_get("additional_drug_license_numbers")?;
    let figures = VendorFigures::of_balance(
        0,
        pair_of(row, pair_columns!("invoiced"))?,
        pair_of(row, pair_columns!("outstanding"))?,
    )
    .with_credits(pair_of(row, pair_columns!("credited"))?, pair_of(row, pair_columns!("available_credit"))?);
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
        drug_license_valid_until: row
            .try_get::<Option<i64>, _>("drug_license_valid_until")?
            .map(instant)
            .transpose()?,
        // Computed for today by the engine (D36).
        license_status: LicenseStatus::Unknown,
        gstin: row.try_get("gstin")?,
        is_active: row.try_get("is_active")?,
        totals: figures.totals(),
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
    })
}

pub(super) fn invoice_from(row: &DbRow, today_start: Timestamp) -> Result<Invoice> {
    let scaled_amount: i64 = row.try_get("amount")?;
    let paid: i64 = row.try_get("paid")?;
    let credited: i64 = row.try_get("credited")?;
    let is_active: bool = row.try_get("is_active")?;
    let due_date = instant(row.try_get("due_date")?)?;
    Ok(Invoice {
        id: InvoiceId(row.try_get("id")?),
        vendor_id: VendorId(row.try_get("vendor_id")?),
        vendor_name: row.try_get("vendor_name")?,
        branch_id: BranchId(row.try_get("branch_id")?),
        branch_code: row.try_get("branch_code")?,
        invoice_number: row.try_get("invoice_number")?,
        amount: amount(scaled_amount)?,
        paid_amount: from_scaled(paid),
        credited_amount: from_scaled(credited),
        invoice_date: instant(row.try_get("invoice_date")?)?,
        due_date,
        description: row.try_get("description")?,
        is_active,
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
        status: InvoiceStatus::compute(is_active, difference(scaled_amount, paid + credited), due_date, today_start),
    })
}

/// The payment's nested invoice from a row with `invoice_number`, `vendor_id`, `vendor_name`,
/// `invoice_amount`, `invoice_paid`, `invoice_credited`, `invoice_branch_id` and
/// `invoice_branch_code`.
pub(super) fn invoice_brief_from(row: &DbRow, invoice_id: InvoiceId) -> Result<InvoiceBrief> {
    let invoice_amount: i64 = row.try_get("invoice_amount")?;
    let invoice_paid: i64 = row.try_get::<i64, _>("invoice_paid")? + row.try_get::<i64, _>("invoice_credited")?;
    Ok(InvoiceBrief {
        id: invoice_id,
        invoice_number: row.try_get("invoice_number")?,
        vendor_id: VendorId(row.try_get("vendor_id")?),
        vendor_name: row.try_get("vendor_name")?,
        branch_id: BranchId(row.try_get("invoice_branch_id")?),
        branch_code: row.try_get("invoice_branch_code")?,
        amount: amount(invoice_amount)?,
        pending_amount: difference(invoice_amount, invoice_paid),
    })
}

pub(super) fn transaction_from(row: &DbRow) -> Result<Transaction> {
    let invoice_id = InvoiceId(row.try_get("invoice_id")?);
    Ok(Transaction {
        id: TransactionId(row.try_get("id")?),
        invoice_id,
        amount: amount(row.try_get("amount")?)?,
        transaction_date: instant(row.try_get("transaction_date")?)?,
        transaction_type: transaction_type(row.try_get("transaction_type")?)?,
        reference: row.try_get("reference")?,
        description: row.try_get("description")?,
        vendor_payment_id: row.try_get::<Option<i64>, _>("vendor_payment_id")?.map(VendorPaymentId),
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
        invoice: invoice_brief_from(row, invoice_id)?,
    })
}

pub(super) fn user_from(row: &DbRow) -> Result<User> {
    Ok(User {
        id: UserId(row.try_get("id")?),
        first_name: row.try_get("first_name")?,
        last_name: row.try_get("last_name")?,
        email: row.try_get("email")?,
        role_id: RoleId(row.try_get("role_id")?),
        branch_ids: scope_from(row.try_get("branch_ids")?)?,
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
    })
}

pub(super) fn credentials_from(row: &DbRow) -> Result<Credentials> {
    Ok(Credentials { user: user_from(row)?, password_hash: row.try_get("password_hash")? })
}

/// Microseconds per second: `tokens_revoked_at` is stored as an instant, read as its second.
pub(super) const MICROS_PER_SECOND: i64 = 1_000_000;

/// A user's token bookkeeping from its `tokens_revoked_at` and `last_token_issued` (D39).
pub(super) fn token_state_from(row: &DbRow) -> Result<TokenState> {
    let revoked_at: i64 = row.try_get("tokens_revoked_at")?;
    Ok(TokenState {
        revoked_through: revoked_at.div_euclid(MICROS_PER_SECOND),
        last_issued: row.try_get("last_token_issued")?,
    })
}

pub(super) fn login_attempts_from(row: &DbRow) -> Result<LoginAttempts> {
    Ok(LoginAttempts {
        window_start: instant(row.try_get("window_start")?)?,
        failures: u32::try_from(row.try_get::<i64, _>("failures")?).unwrap_or(u32::MAX),
        throttle_noted: row.try_get("throttle_noted")?,
    })
}

pub(super) fn role_from(row: &DbRow) -> Result<Role> {
    Ok(Role {
        id: RoleId(row.try_get("id")?),
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        is_system: row.try_get("is_system")?,
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
    })
}

pub(super) fn permission_from(row: &DbRow) -> Result<Permission> {
    Ok(Permission {
        id: PermissionId(row.try_get("id")?),
        collection: row.try_get("collection")?,
        action: row.try_get("action")?,
        description: row.try_get("description")?,
    })
}

pub(super) fn setting_from(row: &DbRow) -> Result<Setting> {
    Ok(Setting { key: row.try_get("key")?, value: row.try_get("value")?, description: row.try_get("description")? })
}

pub(super) fn audit_from(row: &DbRow) -> Result<AuditEntry> {
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

pub(super) async fn vendor_in(conn: &mut Conn, id: i64) -> Result<Option<Vendor>> {
    let row = row_by_id(conn, statements::VENDOR_BY_ID, id).await?;
    row.as_ref().map(vendor_from).transpose()
}

pub(super) async fn invoice_in(conn: &mut Conn, id: i64, today_start: Timestamp) -> Result<Option<Invoice>> {
    let row = row_by_id(
        conn,
        concat!("SELECT ", invoice_columns!(), " FROM ", invoices_with_vendor!(), " WHERE i.id = $1"),
        id,
    )
    .await?;
    row.as_ref().map(|row| invoice_from(row, today_start)).transpose()
}

pub(super) async fn transaction_in(conn: &mut Conn, id: i64) -> Result<Option<Transaction>> {
    let row = row_by_id(
        conn,
        concat!("SELECT ", transaction_columns!(), " FROM ", transactions_with_invoice!(), " WHERE t.id = $1"),
        id,
    )
    .await?;
    row.as_ref().map(transaction_from).transpose()
}

pub(super) async fn user_in(conn: &mut Conn, id: i64) -> Result<Option<User>> {
    let row = row_by_id(conn, concat!("SELECT ", user_columns!(), " FROM users u WHERE u.id = $1"), id).await?;
    row.as_ref().map(user_from).transpose()
}

pub(super) async fn role_in(conn: &mut Conn, id: i64) -> Result<Option<Role>> {
    let row = row_by_id(conn, concat!("SELECT ", role_columns!(), " FROM roles r WHERE r.id = $1"), id).await?;
    row.as_ref().map(role_from).transpose()
}

/// Which policies [`policies_in`] reads.
#[derive(Clone, Copy)]
pub(super) enum PolicySet {
    /// The policy with this id, whatever its state.
    One(i64),
    /// Every active policy.
    Active,
    /// The active policies attached directly to this user (D19).
    OfUser(i64),
}

/// Policies with their permissions, by id.
pub(super) async fn policies_in(conn: &mut Conn, set: PolicySet) -> Result<Vec<Policy>> {
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

pub(super) async fn policy_in(conn: &mut Conn, id: i64) -> Result<Option<Policy>> {
    Ok(policies_in(conn, PolicySet::One(id)).await?.pop())
}

/// A decided amount or an applied total in ten-thousandths; both lie within the amounts' range
/// (D1), as the decoder and the rules keep them.
pub(super) fn scaled(value: Decimal) -> Result<i64> {
    to_scaled(value).ok_or_else(|| Error::corrupt(format!("amount {value} out of the stored range")))
}

pub(super) fn day(text: &str) -> Result<Date> {
    text.parse().map_err(|_| Error::corrupt("a stored day is not YYYY-MM-DD"))
}

pub(super) fn small(value: i64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}
