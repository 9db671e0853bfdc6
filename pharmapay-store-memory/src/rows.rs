//! Every record as the memory store keeps it: one row type per table of the SQL store, the
//! figures an invoice and a credit carry beside their own fields (D41, D44).

use std::collections::BTreeSet;

use pharmapay_core::Amount;
use pharmapay_core::bank::read::StatementLine;
use pharmapay_core::bank::{LineCounts, LineStatus, MatchedBy};
use pharmapay_core::credits::CreditKind;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::sessions::rules::TokenState;
use pharmapay_core::transactions::TransactionType;
use pharmapay_core::transactions::holders::Holder;
use pharmapay_core::transactions::reference::PaymentReference;
use pharmapay_core::vendors::VendorType;
use pharmapay_core::webhooks::{Delivery, NewWebhook, WebhookSecret};

#[derive(Clone)]
pub(crate) struct VendorRow {
    pub(crate) name: String,
    pub(crate) name_key: String,
    pub(crate) vendor_type: VendorType,
    pub(crate) address: Option<String>,
    pub(crate) phone: Option<String>,
    pub(crate) email: Option<String>,
    pub(crate) drug_license_number1: Option<String>,
    pub(crate) drug_license_number2: Option<String>,
    pub(crate) additional_drug_license_numbers: Vec<String>,
    pub(crate) drug_license_valid_until: Option<Timestamp>,
    pub(crate) gstin: Option<String>,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[derive(Clone)]
pub(crate) struct InvoiceRow {
    pub(crate) vendor_id: i64,
    /// Its branch (D49), which is its payments' too.
    pub(crate) branch_id: i64,
    pub(crate) invoice_number: String,
    pub(crate) number_key: String,
    pub(crate) amount: Amount,
    /// The exact sum of this invoice's active payments, kept with every payment change.
    pub(crate) paid: Decimal,
    /// The exact sum of the active credit applications to it (D44), kept with every change of
    /// them.
    pub(crate) credited: Decimal,
    pub(crate) invoice_date: Timestamp,
    pub(crate) due_date: Timestamp,
    pub(crate) description: Option<String>,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

impl InvoiceRow {
    /// What it still owes: `amount - paid - credited` (D10, D44).
    pub(crate) fn pending(&self) -> Decimal {
        self.amount.get() - self.paid - self.credited
    }
}

#[derive(Clone)]
pub(crate) struct TransactionRow {
    pub(crate) invoice_id: i64,
    pub(crate) amount: Amount,
    pub(crate) transaction_date: Timestamp,
    pub(crate) transaction_type: TransactionType,
    pub(crate) reference: Option<PaymentReference>,
    pub(crate) description: Option<String>,
    pub(crate) vendor_payment_id: Option<i64>,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

/// A vendor payment as recorded (D31); its parts are the payments naming it.
#[derive(Clone)]
pub(crate) struct VendorPaymentRow {
    pub(crate) vendor_id: i64,
    pub(crate) amount: Amount,
    pub(crate) transaction_date: Timestamp,
    pub(crate) transaction_type: TransactionType,
    pub(crate) reference: Option<PaymentReference>,
    pub(crate) description: Option<String>,
    pub(crate) created_at: Timestamp,
}

#[derive(Clone)]
pub(crate) struct UserRow {
    pub(crate) first_name: String,
    pub(crate) last_name: String,
    pub(crate) email: String,
    pub(crate) email_key: String,
    pub(crate) role_id: i64,
    pub(crate) branch_ids: pharmapay_core::branches::Scope,
    pub(crate) password_hash: String,
    pub(crate) tokens: TokenState,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
}

#[derive(Clone)]
pub(crate) struct RoleRow {
    pub(crate) name: String,
    pub(crate) name_key: String,
    pub(crate) description: String,
    pub(crate) is_system: bool,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
}

/// A branch (D49).
#[derive(Clone)]
pub(crate) struct BranchRow {
    pub(crate) code: String,
    pub(crate) name: String,
    pub(crate) gstin: Option<String>,
    pub(crate) address: Option<String>,
    pub(crate) phone: Option<String>,
    pub(crate) drug_license_number: Option<String>,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[derive(Clone)]
pub(crate) struct PolicyRow {
    pub(crate) name: String,
    pub(crate) name_key: String,
    pub(crate) description: String,
    pub(crate) is_active: bool,
    pub(crate) permission_ids: BTreeSet<i64>,
    pub(crate) created_at: Timestamp,
}

pub(crate) struct IdempotencyRow {
    pub(crate) fingerprint: String,
    pub(crate) created_at: Timestamp,
    pub(crate) entity_id: Option<i64>,
    pub(crate) response: Option<Vec<u8>>,
}

/// One application of a credit to an invoice (D44).
pub(crate) struct ApplicationRow {
    pub(crate) credit_id: i64,
    pub(crate) invoice_id: i64,
    pub(crate) amount: Amount,
    pub(crate) date: Timestamp,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
}

/// A vendor credit as recorded (D44).
#[derive(Clone)]
pub(crate) struct CreditRow {
    pub(crate) vendor_id: i64,
    pub(crate) branch_id: i64,
    pub(crate) credit_number: String,
    pub(crate) number_key: String,
    pub(crate) kind: CreditKind,
    pub(crate) claimed: Amount,
    pub(crate) claim_date: Timestamp,
    pub(crate) against_invoice_id: Option<i64>,
    pub(crate) accepted: Option<Decimal>,
    pub(crate) decision_date: Option<Timestamp>,
    pub(crate) distributor_reference: Option<String>,
    /// The exact sum of its active applications.
    pub(crate) applied: Decimal,
    pub(crate) description: Option<String>,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

/// A kept statement.
#[derive(Clone)]
pub(crate) struct StatementRow {
    pub(crate) account: String,
    pub(crate) branch_id: i64,
    pub(crate) from_date: Option<Date>,
    pub(crate) to_date: Option<Date>,
    pub(crate) counts: LineCounts,
    pub(crate) duplicate_lines: u32,
    pub(crate) deposit_lines: u32,
    pub(crate) skipped_rows: u32,
    pub(crate) is_active: bool,
    pub(crate) created_at: Timestamp,
    pub(crate) lines: Vec<i64>,
}

/// A kept line.
#[derive(Clone)]
pub(crate) struct LineRow {
    pub(crate) statement_id: i64,
    pub(crate) line_number: u32,
    pub(crate) line: StatementLine,
    pub(crate) status: LineStatus,
    pub(crate) matched_by: Option<MatchedBy>,
    pub(crate) payment: Option<Holder>,
}

/// A kept webhook: its fields, its secret and its cursor in the feed.
#[derive(Clone)]
pub(crate) struct WebhookRow {
    pub(crate) fields: NewWebhook,
    pub(crate) secret: WebhookSecret,
    pub(crate) cursor: i64,
    pub(crate) created_at: Timestamp,
}

/// A kept delivery, with the claim a server holds on it.
#[derive(Clone)]
pub(crate) struct DeliveryRow {
    pub(crate) delivery: Delivery,
    pub(crate) claimed_until: Option<Timestamp>,
}
