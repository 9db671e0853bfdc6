//! The wire format: core records as the spec's JSON objects (`VendorDto`, `InvoiceDto` ...).
//!
//! Only this module knows field names and JSON shapes. Amounts are written as exact JSON
//! numbers from their decimal text, never through a float (D1); instants as RFC 3339 UTC
//! strings ending in `Z` (D2); enums in their canonical case (D7).

use pharmapay_core::access::Permission;
use pharmapay_core::dashboard::{DueFigures, MonthlyTotal, Payables, Summary, TopVendor};
use pharmapay_core::domain::{
    AuditEntry, Invoice, InvoiceBrief, InvoiceDetail, Policy, Profile, Role, Setting, Transaction, User, Vendor,
    VendorBrief, VendorPayment,
};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::{Page, Session};
use serde::Serialize;
use serde::ser::{Error as _, Serializer};
use serde_json::value::RawValue;

mod reconciliation;

pub use reconciliation::{AgingDto, LicenceAlertDto, StatementDto};

/// Writes a decimal as an exact JSON number, without trailing fractional zeros.
fn money<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
    let number: serde_json::Number = value.normalize().to_string().parse().map_err(S::Error::custom)?;
    number.serialize(serializer)
}

fn amount<S: Serializer>(value: &pharmapay_core::Amount, serializer: S) -> Result<S::Ok, S::Error> {
    money(&value.get(), serializer)
}

fn instant<S: Serializer>(value: &Timestamp, serializer: S) -> Result<S::Ok, S::Error> {
    short_text(value, serializer)
}

fn optional_instant<S: Serializer>(value: &Option<Timestamp>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => short_text(value, serializer),
        None => serializer.serialize_none(),
    }
}

/// A calendar day, written `YYYY-MM-DD` (D34).
fn day<S: Serializer>(value: &Date, serializer: S) -> Result<S::Ok, S::Error> {
    short_text(value, serializer)
}

/// Writes `value`'s text as one JSON string, formatted on the stack first. `collect_str` hands
/// each piece a formatter writes (a timestamp is a dozen of them) to the JSON escaper on its
/// own, which cost a thousand-row answer (the licence alerts) a tenth of its serialising.
fn short_text<S: Serializer>(value: &impl std::fmt::Display, serializer: S) -> Result<S::Ok, S::Error> {
    use std::fmt::Write as _;
    let mut text = ShortText::default();
    match write!(text, "{value}") {
        Ok(()) => serializer.serialize_str(text.as_str()),
        // Longer than an instant or a day ever is: written piece by piece after all.
        Err(_) => serializer.collect_str(value),
    }
}

/// Text of at most [`ShortText::CAPACITY`] bytes, kept on the stack.
struct ShortText {
    bytes: [u8; Self::CAPACITY],
    len: usize,
}

impl ShortText {
    /// Room for the longest instant jiff writes (`-009999-01-02T01:59:59.999999999Z`, 33 bytes).
    const CAPACITY: usize = 48;

    fn as_str(&self) -> &str {
        // Only whole `&str`s are ever appended, so the bytes are UTF-8.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl Default for ShortText {
    fn default() -> Self {
        Self { bytes: [0; Self::CAPACITY], len: 0 }
    }
}

impl std::fmt::Write for ShortText {
    fn write_str(&mut self, piece: &str) -> std::fmt::Result {
        let end = self.len + piece.len();
        let into = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        into.copy_from_slice(piece.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The paginated list envelope.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageDto<T> {
    items: Vec<T>,
    total_count: u64,
    page: u32,
    page_size: u32,
}

impl<T> PageDto<T> {
    /// Converts a core page.
    pub fn from_page<U>(page: Page<U>, convert: impl FnMut(U) -> T) -> Self {
        Self {
            total_count: page.total_count,
            page: page.page,
            page_size: page.page_size,
            items: page.items.into_iter().map(convert).collect(),
        }
    }
}

/// `VendorDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VendorDto {
    id: i64,
    name: String,
    address: Option<String>,
    phone: Option<String>,
    email: Option<String>,
    vendor_type: &'static str,
    drug_license_number1: Option<String>,
    drug_license_number2: Option<String>,
    additional_drug_license_numbers: Vec<String>,
    /// D36.
    #[serde(serialize_with = "optional_instant")]
    drug_license_valid_until: Option<Timestamp>,
    license_status: &'static str,
    /// D37.
    gstin: Option<String>,
    is_active: bool,
    #[serde(serialize_with = "money")]
    outstanding_balance: Decimal,
    #[serde(serialize_with = "money")]
    total_invoice_value: Decimal,
    #[serde(serialize_with = "money")]
    total_paid_amount: Decimal,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    #[serde(serialize_with = "instant")]
    updated_at: Timestamp,
}

impl From<Vendor> for VendorDto {
    fn from(vendor: Vendor) -> Self {
        Self {
            id: vendor.id.get(),
            name: vendor.name,
            address: vendor.address,
            phone: vendor.phone,
            email: vendor.email,
            vendor_type: vendor.vendor_type.name(),
            drug_license_number1: vendor.drug_license_number1,
            drug_license_number2: vendor.drug_license_number2,
            additional_drug_license_numbers: vendor.additional_drug_license_numbers,
            drug_license_valid_until: vendor.drug_license_valid_until,
            license_status: vendor.license_status.name(),
            gstin: vendor.gstin,
            is_active: vendor.is_active,
            outstanding_balance: vendor.totals.outstanding_balance,
            total_invoice_value: vendor.totals.total_invoice_value,
            total_paid_amount: vendor.totals.total_paid_amount,
            created_at: vendor.created_at,
            updated_at: vendor.updated_at,
        }
    }
}

/// The vendor nested in a single invoice (D13).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VendorBriefDto {
    id: i64,
    name: String,
    vendor_type: &'static str,
    address: Option<String>,
    phone: Option<String>,
    email: Option<String>,
    drug_license_number1: Option<String>,
    drug_license_number2: Option<String>,
    is_active: bool,
}

impl From<VendorBrief> for VendorBriefDto {
    fn from(vendor: VendorBrief) -> Self {
        Self {
            id: vendor.id.get(),
            name: vendor.name,
            vendor_type: vendor.vendor_type.name(),
            address: vendor.address,
            phone: vendor.phone,
            email: vendor.email,
            drug_license_number1: vendor.drug_license_number1,
            drug_license_number2: vendor.drug_license_number2,
            is_active: vendor.is_active,
        }
    }
}

/// `InvoiceDto`; the single-invoice read adds `vendor`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceDto {
    id: i64,
    vendor_id: i64,
    vendor_name: String,
    invoice_number: String,
    #[serde(serialize_with = "money")]
    amount: Decimal,
    #[serde(serialize_with = "money")]
    paid_amount: Decimal,
    #[serde(serialize_with = "money")]
    pending_amount: Decimal,
    status: &'static str,
    #[serde(serialize_with = "instant")]
    invoice_date: Timestamp,
    #[serde(serialize_with = "instant")]
    due_date: Timestamp,
    description: Option<String>,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    vendor: Option<VendorBriefDto>,
}

impl From<Invoice> for InvoiceDto {
    fn from(invoice: Invoice) -> Self {
        Self {
            id: invoice.id.get(),
            vendor_id: invoice.vendor_id.get(),
            pending_amount: invoice.pending_amount(),
            vendor_name: invoice.vendor_name,
            invoice_number: invoice.invoice_number,
            amount: invoice.amount.get(),
            paid_amount: invoice.paid_amount,
            status: invoice.status.name(),
            invoice_date: invoice.invoice_date,
            due_date: invoice.due_date,
            description: invoice.description,
            is_active: invoice.is_active,
            created_at: invoice.created_at,
            vendor: None,
        }
    }
}

impl From<InvoiceDetail> for InvoiceDto {
    fn from(detail: InvoiceDetail) -> Self {
        let mut dto = InvoiceDto::from(detail.invoice);
        dto.vendor = Some(detail.vendor.into());
        dto
    }
}

/// The invoice nested in a transaction (spec; D13).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceBriefDto {
    id: i64,
    invoice_number: String,
    vendor_id: i64,
    vendor_name: String,
    #[serde(serialize_with = "amount")]
    amount: pharmapay_core::Amount,
    #[serde(serialize_with = "money")]
    pending_amount: Decimal,
}

impl From<InvoiceBrief> for InvoiceBriefDto {
    fn from(invoice: InvoiceBrief) -> Self {
        Self {
            id: invoice.id.get(),
            invoice_number: invoice.invoice_number,
            vendor_id: invoice.vendor_id.get(),
            vendor_name: invoice.vendor_name,
            amount: invoice.amount,
            pending_amount: invoice.pending_amount,
        }
    }
}

/// `TransactionDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionDto {
    id: i64,
    invoice_id: i64,
    #[serde(serialize_with = "amount")]
    amount: pharmapay_core::Amount,
    #[serde(serialize_with = "instant")]
    transaction_date: Timestamp,
    transaction_type: &'static str,
    /// D30: null when absent.
    reference: Option<String>,
    description: Option<String>,
    /// D31: null for a payment recorded on its own.
    vendor_payment_id: Option<i64>,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    invoice: InvoiceBriefDto,
}

impl From<Transaction> for TransactionDto {
    fn from(transaction: Transaction) -> Self {
        Self {
            id: transaction.id.get(),
            invoice_id: transaction.invoice_id.get(),
            amount: transaction.amount,
            transaction_date: transaction.transaction_date,
            transaction_type: transaction.transaction_type.name(),
            reference: transaction.reference,
            description: transaction.description,
            vendor_payment_id: transaction.vendor_payment_id.map(|id| id.get()),
            is_active: transaction.is_active,
            created_at: transaction.created_at,
            invoice: transaction.invoice.into(),
        }
    }
}

/// A vendor payment with its active payments (D31).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VendorPaymentDto {
    id: i64,
    vendor_id: i64,
    vendor_name: String,
    #[serde(serialize_with = "amount")]
    amount: pharmapay_core::Amount,
    #[serde(serialize_with = "instant")]
    transaction_date: Timestamp,
    transaction_type: &'static str,
    reference: Option<String>,
    description: Option<String>,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    transactions: Vec<TransactionDto>,
}

impl From<VendorPayment> for VendorPaymentDto {
    fn from(payment: VendorPayment) -> Self {
        Self {
            id: payment.id.get(),
            vendor_id: payment.vendor_id.get(),
            vendor_name: payment.vendor_name,
            amount: payment.amount,
            transaction_date: payment.transaction_date,
            transaction_type: payment.transaction_type.name(),
            reference: payment.reference,
            description: payment.description,
            created_at: payment.created_at,
            transactions: payment.transactions.into_iter().map(TransactionDto::from).collect(),
        }
    }
}

/// `UserDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserDto {
    id: i64,
    first_name: String,
    last_name: String,
    email: String,
    role_id: i64,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<User> for UserDto {
    fn from(user: User) -> Self {
        Self {
            id: user.id.get(),
            first_name: user.first_name,
            last_name: user.last_name,
            email: user.email,
            role_id: user.role_id.get(),
            is_active: user.is_active,
            created_at: user.created_at,
        }
    }
}

/// The user inside a login result: also `isActive` (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoginUserDto {
    id: i64,
    first_name: String,
    last_name: String,
    email: String,
    role_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_active: Option<bool>,
}

/// The login and onboarding result: token, expiry and user (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDto {
    token: String,
    #[serde(serialize_with = "instant")]
    expires_at: Timestamp,
    user: LoginUserDto,
}

impl SessionDto {
    /// The login result; its user carries `isActive`.
    pub fn login(session: Session) -> Self {
        Self::new(session, true)
    }

    /// The onboarding result; its user has no `isActive` (spec).
    pub fn onboarding(session: Session) -> Self {
        Self::new(session, false)
    }

    fn new(session: Session, with_active: bool) -> Self {
        let user = session.user;
        Self {
            token: session.token.token,
            expires_at: session.token.expires_at,
            user: LoginUserDto {
                id: user.id.get(),
                first_name: user.first_name,
                last_name: user.last_name,
                email: user.email,
                role_id: user.role_id.get(),
                is_active: with_active.then_some(user.is_active),
            },
        }
    }
}

/// `RoleDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleDto {
    id: i64,
    name: String,
    description: String,
    is_system: bool,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<Role> for RoleDto {
    fn from(role: Role) -> Self {
        Self {
            id: role.id.get(),
            name: role.name,
            description: role.description,
            is_system: role.is_system,
            is_active: role.is_active,
            created_at: role.created_at,
        }
    }
}

/// A permission.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionDto {
    id: i64,
    collection: String,
    action: String,
    description: String,
}

impl From<Permission> for PermissionDto {
    fn from(permission: Permission) -> Self {
        Self {
            id: permission.id.get(),
            collection: permission.collection,
            action: permission.action,
            description: permission.description,
        }
    }
}

/// A permission inside a policy: id, collection, action (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyPermissionDto {
    id: i64,
    collection: String,
    action: String,
}

/// `PolicyDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyDto {
    id: i64,
    name: String,
    description: String,
    is_active: bool,
    permissions: Vec<PolicyPermissionDto>,
}

impl From<Policy> for PolicyDto {
    fn from(policy: Policy) -> Self {
        Self {
            id: policy.id.get(),
            name: policy.name,
            description: policy.description,
            is_active: policy.is_active,
            permissions: policy
                .permissions
                .into_iter()
                .map(|p| PolicyPermissionDto { id: p.id.get(), collection: p.collection, action: p.action })
                .collect(),
        }
    }
}

/// `AppSettingDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingDto {
    key: String,
    value: String,
    description: String,
}

impl From<Setting> for SettingDto {
    fn from(setting: Setting) -> Self {
        Self { key: setting.key, value: setting.value, description: setting.description }
    }
}

/// The dashboard summary (spec; D12).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDto {
    total_vendors: u64,
    total_invoices: u64,
    #[serde(serialize_with = "money")]
    total_due: Decimal,
    #[serde(serialize_with = "money")]
    total_paid: Decimal,
    recent_transactions: u64,
}

impl From<Summary> for SummaryDto {
    fn from(summary: Summary) -> Self {
        Self {
            total_vendors: summary.total_vendors,
            total_invoices: summary.total_invoices,
            total_due: summary.total_due,
            total_paid: summary.total_paid,
            recent_transactions: summary.recent_transactions,
        }
    }
}

/// What falls due in one window (D32).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DueDto {
    #[serde(serialize_with = "money")]
    amount: Decimal,
    invoice_count: u64,
}

impl From<DueFigures> for DueDto {
    fn from(due: DueFigures) -> Self {
        Self { amount: due.amount, invoice_count: due.invoice_count }
    }
}

/// The dashboard's payables (D32).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PayablesDto {
    overdue: DueDto,
    due_today: DueDto,
    due_in7_days: DueDto,
    due_in30_days: DueDto,
}

impl From<Payables> for PayablesDto {
    fn from(payables: Payables) -> Self {
        Self {
            overdue: payables.overdue.into(),
            due_today: payables.due_today.into(),
            due_in7_days: payables.due_in_7_days.into(),
            due_in30_days: payables.due_in_30_days.into(),
        }
    }
}

/// One top vendor.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopVendorDto {
    vendor_id: i64,
    vendor_name: String,
    #[serde(serialize_with = "money")]
    outstanding_balance: Decimal,
    total_invoices: u64,
}

impl From<TopVendor> for TopVendorDto {
    fn from(top: TopVendor) -> Self {
        Self {
            vendor_id: top.vendor_id.get(),
            vendor_name: top.vendor_name,
            outstanding_balance: top.outstanding_balance,
            total_invoices: top.total_invoices,
        }
    }
}

/// One recent invoice (spec, Dashboard).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentInvoiceDto {
    id: i64,
    invoice_number: String,
    vendor_name: String,
    #[serde(serialize_with = "amount")]
    amount: pharmapay_core::Amount,
    #[serde(serialize_with = "money")]
    pending_amount: Decimal,
    status: &'static str,
    #[serde(serialize_with = "instant")]
    invoice_date: Timestamp,
    #[serde(serialize_with = "instant")]
    due_date: Timestamp,
}

impl From<Invoice> for RecentInvoiceDto {
    fn from(invoice: Invoice) -> Self {
        Self {
            id: invoice.id.get(),
            pending_amount: invoice.pending_amount(),
            invoice_number: invoice.invoice_number,
            vendor_name: invoice.vendor_name,
            amount: invoice.amount,
            status: invoice.status.name(),
            invoice_date: invoice.invoice_date,
            due_date: invoice.due_date,
        }
    }
}

/// One month of payments.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MonthlyDto {
    month: String,
    #[serde(serialize_with = "money")]
    total_amount: Decimal,
    transaction_count: u64,
}

impl From<MonthlyTotal> for MonthlyDto {
    fn from(month: MonthlyTotal) -> Self {
        Self { month: month.month, total_amount: month.total_amount, transaction_count: month.transaction_count }
    }
}

/// The caller's profile (D24).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileDto {
    id: i64,
    first_name: String,
    last_name: String,
    email: String,
    role_id: i64,
    role_name: String,
    is_admin: bool,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    permissions: Vec<String>,
}

impl From<Profile> for ProfileDto {
    fn from(profile: Profile) -> Self {
        let user = profile.user;
        Self {
            id: user.id.get(),
            first_name: user.first_name,
            last_name: user.last_name,
            email: user.email,
            role_id: user.role_id.get(),
            role_name: profile.role_name,
            is_admin: profile.is_admin,
            is_active: user.is_active,
            created_at: user.created_at,
            permissions: profile.permissions,
        }
    }
}

/// One audit-log entry (D22); `changes` is the JSON object that was recorded.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryDto {
    id: i64,
    #[serde(serialize_with = "instant")]
    at: Timestamp,
    user_id: Option<i64>,
    action: String,
    entity: String,
    entity_id: Option<i64>,
    reason: Option<String>,
    changes: Option<Box<RawValue>>,
}

impl From<AuditEntry> for AuditEntryDto {
    fn from(entry: AuditEntry) -> Self {
        Self {
            id: entry.id.get(),
            at: entry.at,
            user_id: entry.user_id.map(|id| id.get()),
            action: entry.action,
            entity: entry.entity,
            entity_id: entry.entity_id,
            reason: entry.reason,
            changes: entry.changes.and_then(|changes| RawValue::from_string(changes).ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(write: impl FnOnce(&mut serde_json::Serializer<&mut Vec<u8>>)) -> String {
        let mut out = Vec::new();
        write(&mut serde_json::Serializer::new(&mut out));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn instants_and_days_are_written_as_their_text() {
        let instants = [Timestamp::MIN, Timestamp::MAX, "2026-09-27T18:22:41.484272Z".parse().unwrap()];
        for value in instants {
            let json = written(|out| instant(&value, out).unwrap());
            assert_eq!(json, serde_json::to_string(&value.to_string()).unwrap());
        }
        let json = written(|out| day(&Date::constant(2024, 2, 29), out).unwrap());
        assert_eq!(json, r#""2024-02-29""#);
    }

    #[test]
    fn text_longer_than_the_stack_buffer_is_written_whole_and_escaped() {
        let long = format!("{}\"{}", "a".repeat(ShortText::CAPACITY), "ü".repeat(10));
        let json = written(|out| short_text(&long, out).unwrap());
        assert_eq!(json, serde_json::to_string(&long).unwrap());
    }
}
