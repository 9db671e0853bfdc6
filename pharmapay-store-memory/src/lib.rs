//! An in-memory store for pharmapay: for embedding, tests and benchmarks.
//!
//! All data sits in ordered maps behind one [`RwLock`]. Every store method takes the lock once,
//! loads what a rule of [`pharmapay_core::rules`] needs, asks it and applies the change before
//! letting go, so each method is atomic and the cross-row invariants of the
//! [`Store`](pharmapay_core::Store) contract hold under any concurrency. The lock is a plain
//! `std` lock held only for in-memory work, never across an `.await`, so it cannot stall the
//! async runtime; reads share it.
//!
//! Each invoice keeps the running sum of its active payments (`paid`), and the store keeps the
//! figures of D41 per vendor, due date, business day and installation (`figures.rs`), all
//! updated under the same lock as every write that changes them, so reading a vendor or the
//! dashboard never sums rows. Lists scan and sort in memory; they cost time in proportion to
//! the table, which is fine for the sizes an embedded store holds.
//!
//! Nothing is persisted: the data lives as long as the [`MemoryStore`] (clones share it).
//!
//! # Layout
//! This file holds [`MemoryStore`], its rows, the seed data (D27) and the audit and idempotency
//! bookkeeping every write ends with; `figures.rs` keeps the figures. Each purpose of the
//! contract has its own file:
//! `sessions.rs` ([`SessionStore`](pharmapay_core::store::SessionStore)), `vendors.rs`,
//! `invoices.rs` and `payments.rs` (the ledger, a resource each, as in the SQL store),
//! `access.rs`
//! ([`AccessStore`](pharmapay_core::store::AccessStore)), `reports.rs`
//! ([`ReportStore`](pharmapay_core::store::ReportStore)), `vendor_payments.rs`
//! ([`VendorPaymentStore`](pharmapay_core::store::VendorPaymentStore)), `credits.rs`
//! ([`CreditStore`](pharmapay_core::store::CreditStore)), `bank.rs`
//! ([`BankStatementStore`](pharmapay_core::store::BankStatementStore)), `events.rs` (the feed,
//! D47), `webhooks.rs` (webhooks and their deliveries, D47) and `imports.rs`
//! ([`ImportStore`](pharmapay_core::ImportStore)).

mod access;
mod bank;
mod credits;
mod events;
mod figures;
mod imports;
mod invoices;
mod payments;
mod reports;
mod sessions;
mod vendor_payments;
mod vendors;
mod webhooks;

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use pharmapay_core::access::Permission;
use pharmapay_core::auth::Secret;
use pharmapay_core::domain::setting::TIME_ZONE;
use pharmapay_core::domain::{AuditEntry, NewAuditEntry, PaymentReference, Setting, TransactionType, VendorType};
use pharmapay_core::idempotency::IdempotencyTicket;
use pharmapay_core::ids::AuditId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rules::login::LoginAttempts;
use pharmapay_core::rules::sessions::TokenState;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::WriteContext;
use pharmapay_core::text::key;
use pharmapay_core::{Amount, BusinessCalendar, Entity, SortDir, seed};

use pharmapay_core::figures::KeptFigures;

/// The in-memory store. Cloning is cheap and the clones share one set of data.
#[derive(Clone, Default)]
pub struct MemoryStore {
    state: Arc<RwLock<State>>,
}

impl MemoryStore {
    /// An empty store holding only the seed data (D27).
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        // No code panics while holding the lock (every change is checked before it is applied),
        // so a poisoned lock still guards consistent data.
        self.state.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[derive(Clone)]
struct VendorRow {
    name: String,
    name_key: String,
    vendor_type: VendorType,
    address: Option<String>,
    phone: Option<String>,
    email: Option<String>,
    drug_license_number1: Option<String>,
    drug_license_number2: Option<String>,
    additional_drug_license_numbers: Vec<String>,
    drug_license_valid_until: Option<Timestamp>,
    gstin: Option<String>,
    is_active: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

#[derive(Clone)]
struct InvoiceRow {
    vendor_id: i64,
    invoice_number: String,
    number_key: String,
    amount: Amount,
    /// The exact sum of this invoice's active payments, kept with every payment change.
    paid: Decimal,
    /// The exact sum of the active credit applications to it (D44), kept with every change of
    /// them.
    credited: Decimal,
    invoice_date: Timestamp,
    due_date: Timestamp,
    description: Option<String>,
    is_active: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl InvoiceRow {
    /// What it still owes: `amount - paid - credited` (D10, D44).
    fn pending(&self) -> Decimal {
        self.amount.get() - self.paid - self.credited
    }
}

#[derive(Clone)]
struct TransactionRow {
    invoice_id: i64,
    amount: Amount,
    transaction_date: Timestamp,
    transaction_type: TransactionType,
    reference: Option<PaymentReference>,
    description: Option<String>,
    vendor_payment_id: Option<i64>,
    is_active: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

/// A vendor payment as recorded (D31); its parts are the payments naming it.
#[derive(Clone)]
struct VendorPaymentRow {
    vendor_id: i64,
    amount: Amount,
    transaction_date: Timestamp,
    transaction_type: TransactionType,
    reference: Option<PaymentReference>,
    description: Option<String>,
    created_at: Timestamp,
}

#[derive(Clone)]
struct UserRow {
    first_name: String,
    last_name: String,
    email: String,
    email_key: String,
    role_id: i64,
    password_hash: String,
    tokens: TokenState,
    is_active: bool,
    created_at: Timestamp,
}

#[derive(Clone)]
struct RoleRow {
    name: String,
    name_key: String,
    description: String,
    is_system: bool,
    is_active: bool,
    created_at: Timestamp,
}

#[derive(Clone)]
struct PolicyRow {
    name: String,
    name_key: String,
    description: String,
    is_active: bool,
    permission_ids: BTreeSet<i64>,
    created_at: Timestamp,
}

struct IdempotencyRow {
    fingerprint: String,
    created_at: Timestamp,
    entity_id: Option<i64>,
    response: Option<Vec<u8>>,
}

struct State {
    next_id: HashMap<&'static str, i64>,
    vendors: BTreeMap<i64, VendorRow>,
    invoices: BTreeMap<i64, InvoiceRow>,
    invoices_by_vendor: HashMap<i64, BTreeSet<i64>>,
    transactions: BTreeMap<i64, TransactionRow>,
    /// Every payment that was ever written with a reference, by the reference's key (D30),
    /// whatever its state since: a lookup re-reads each row, so an entry left behind by an
    /// update costs a skipped row, never a wrong answer.
    payments_by_reference: HashMap<String, BTreeSet<i64>>,
    vendor_payments: BTreeMap<i64, VendorPaymentRow>,
    /// The payments each vendor payment made (D31), in the order they were written.
    vendor_payment_parts: HashMap<i64, Vec<i64>>,
    /// Vendor credits (D44).
    credits: BTreeMap<i64, credits::CreditRow>,
    /// Their applications to invoices (D44), with lookups by credit and by invoice.
    credit_applications: BTreeMap<i64, credits::ApplicationRow>,
    applications_by_credit: HashMap<i64, Vec<i64>>,
    applications_by_invoice: HashMap<i64, Vec<i64>>,
    /// Bank statements (D46), their lines, and the line of an active statement holding each
    /// payment.
    bank_statements: BTreeMap<i64, bank::StatementRow>,
    bank_lines: BTreeMap<i64, bank::LineRow>,
    bank_holds: HashMap<pharmapay_core::rules::references::Holder, i64>,
    users: BTreeMap<i64, UserRow>,
    roles: BTreeMap<i64, RoleRow>,
    permissions: BTreeMap<i64, Permission>,
    policies: BTreeMap<i64, PolicyRow>,
    role_policies: BTreeSet<(i64, i64)>,
    user_policies: BTreeSet<(i64, i64)>,
    settings: BTreeMap<String, Setting>,
    audit: Vec<AuditEntry>,
    /// The event feed (D47), by id, and the invoices the current write brought to FullyPaid.
    events: BTreeMap<i64, pharmapay_core::events::Event>,
    /// The last event id given: ids are never given twice, even once old events are removed.
    last_event: i64,
    paid_now: BTreeSet<i64>,
    /// Webhooks and their deliveries (D47).
    webhooks: BTreeMap<i64, webhooks::WebhookRow>,
    deliveries: BTreeMap<i64, webhooks::DeliveryRow>,
    idempotency: HashMap<(i64, String), IdempotencyRow>,
    login_attempts: HashMap<String, LoginAttempts>,
    token_secret: Option<Secret>,
    /// The figures kept beside the rows (D41).
    figures: KeptFigures,
    /// The business calendar of the `TimeZone` setting, which files payments under their days.
    calendar: BusinessCalendar,
}

impl Default for State {
    fn default() -> Self {
        let mut state = State {
            next_id: HashMap::new(),
            vendors: BTreeMap::new(),
            invoices: BTreeMap::new(),
            invoices_by_vendor: HashMap::new(),
            transactions: BTreeMap::new(),
            payments_by_reference: HashMap::new(),
            vendor_payments: BTreeMap::new(),
            vendor_payment_parts: HashMap::new(),
            credits: BTreeMap::new(),
            credit_applications: BTreeMap::new(),
            applications_by_credit: HashMap::new(),
            applications_by_invoice: HashMap::new(),
            bank_statements: BTreeMap::new(),
            bank_lines: BTreeMap::new(),
            bank_holds: HashMap::new(),
            users: BTreeMap::new(),
            roles: BTreeMap::new(),
            permissions: BTreeMap::new(),
            policies: BTreeMap::new(),
            role_policies: BTreeSet::new(),
            user_policies: BTreeSet::new(),
            settings: BTreeMap::new(),
            events: BTreeMap::new(),
            last_event: 0,
            paid_now: BTreeSet::new(),
            webhooks: BTreeMap::new(),
            deliveries: BTreeMap::new(),
            audit: Vec::new(),
            idempotency: HashMap::new(),
            login_attempts: HashMap::new(),
            token_secret: None,
            figures: KeptFigures::default(),
            calendar: BusinessCalendar::utc(),
        };
        state.seed();
        state
    }
}

fn cmp_then_id(ordering: Ordering, a: i64, b: i64, dir: SortDir) -> Ordering {
    dir.apply(ordering.then(a.cmp(&b)))
}

impl State {
    fn seed(&mut self) {
        let epoch = Timestamp::UNIX_EPOCH;
        for role in seed::roles() {
            self.roles.insert(
                role.id.get(),
                RoleRow {
                    name: role.name.into(),
                    name_key: key(role.name),
                    description: role.description.into(),
                    is_system: true,
                    is_active: true,
                    created_at: epoch,
                },
            );
        }
        for permission in seed::permissions() {
            self.permissions.insert(
                permission.id.get(),
                Permission {
                    id: permission.id,
                    collection: permission.access.collection.name().into(),
                    action: permission.access.action.name().into(),
                    description: permission.description,
                },
            );
        }
        let policy = seed::pharmacist_policy();
        self.policies.insert(
            policy.id.get(),
            PolicyRow {
                name: policy.name.into(),
                name_key: key(policy.name),
                description: policy.description.into(),
                is_active: true,
                permission_ids: policy.permission_ids.iter().map(|id| id.get()).collect(),
                created_at: epoch,
            },
        );
        self.role_policies.insert((policy.role_id.get(), policy.id.get()));
        for setting in seed::settings() {
            self.settings.insert(
                setting.key.into(),
                Setting {
                    key: setting.key.into(),
                    value: setting.value.into(),
                    description: setting.description.into(),
                },
            );
        }
        let zone = self.settings.get(TIME_ZONE).map(|setting| setting.value.as_str());
        self.calendar = BusinessCalendar::from_setting(zone);
        self.next_id.insert("role", self.roles.len() as i64 + 1);
        self.next_id.insert("policy", self.policies.len() as i64 + 1);
    }

    /// The id [`State::next`] would give `table` now.
    fn peek_next(&self, table: &'static str) -> i64 {
        self.next_id.get(table).copied().unwrap_or(1)
    }

    fn next(&mut self, table: &'static str) -> i64 {
        let next = self.next_id.entry(table).or_insert(1);
        let id = *next;
        *next += 1;
        id
    }

    fn audit(&mut self, entry: NewAuditEntry) {
        let id = self.audit.len() as i64 + 1;
        self.audit.push(AuditEntry {
            id: AuditId(id),
            at: entry.at,
            user_id: entry.user_id,
            action: entry.action.into(),
            entity: entry.entity.into(),
            entity_id: entry.entity_id,
            reason: entry.reason,
            changes: entry.changes,
        });
    }

    /// Records the write's audit entry and events and completes its idempotency claim, as the
    /// last step of a write (D22, D23, D47).
    fn finish_write(&mut self, ctx: &WriteContext, action: &'static str, entity: Entity, entity_id: i64) {
        self.finish_announcing(ctx, (action, entity, entity_id), &[]);
    }

    /// [`Self::finish_write`] for a write that also announces `also` (D47).
    fn finish_announcing(
        &mut self,
        ctx: &WriteContext,
        (action, entity, entity_id): (&'static str, Entity, i64),
        also: &[pharmapay_core::events::Announcement],
    ) {
        self.audit(ctx.audit(action, entity, Some(entity_id)));
        let paid = std::mem::take(&mut self.paid_now);
        self.announce(ctx, ctx.announcements((action, entity, entity_id), also, paid));
        if let Some(ticket) = &ctx.idempotency {
            self.complete_claim(ticket, entity_id);
        }
    }

    fn complete_claim(&mut self, ticket: &IdempotencyTicket, entity_id: i64) {
        if let Some(row) = self.idempotency.get_mut(&(ticket.user_id.get(), ticket.key.as_str().to_owned())) {
            row.entity_id = Some(entity_id);
        }
    }
}

/// A listed row's value in its list's order, taken out of the row once: the rows of a long
/// list are compared many times while its page is cut, and reading each value through its row
/// cost a visit to memory far from the list (the first page of 90,000 payments spent half its
/// time in those comparisons). All the rows of one list hold the same variant.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SortKey<'a> {
    Instant(Timestamp),
    Money(Decimal),
    Text(&'a str),
}

/// The order of a list's `(key, id)` rows in direction `dir`, ties broken by id.
pub(crate) fn by_key_then_id(dir: SortDir) -> impl Fn(&(SortKey<'_>, i64), &(SortKey<'_>, i64)) -> Ordering {
    move |(a_key, a_id), (b_key, b_id)| cmp_then_id(a_key.cmp(b_key), *a_id, *b_id, dir)
}
