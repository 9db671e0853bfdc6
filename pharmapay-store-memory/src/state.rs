//! The store's state: every record as the store keeps it, the lookups beside them, the kept figures (D41), and the lock that serialises writes.

use pharmapay_core::access::Permission;
use pharmapay_core::auth::Secret;
use pharmapay_core::branches::{HEAD_OFFICE_CODE, HEAD_OFFICE_ID, HEAD_OFFICE_NAME};
use pharmapay_core::figures::KeptFigures;
use pharmapay_core::idempotency::IdempotencyTicket;
use pharmapay_core::ids::AuditId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::reports::audit::{AuditEntry, NewAuditEntry};
use pharmapay_core::reports::setting::Setting;
use pharmapay_core::reports::setting::TIME_ZONE;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::sessions::login::LoginAttempts;
use pharmapay_core::store::WriteContext;
use pharmapay_core::text::key;
use pharmapay_core::{BusinessCalendar, Entity, SortDir, seed};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::rows::*;

/// The in-memory store. Cloning is cheap and the clones share one set of data.
#[derive(Clone, Default)]
pub struct MemoryStore {
    pub(super) state: Arc<RwLock<State>>,
}

impl MemoryStore {
    /// An empty store holding only the seed data (D27).
    pub fn new() -> Self {
        Self::default()
    }

    pub(super) fn read(&self) -> RwLockReadGuard<'_, State> {
        // No code panics while holding the lock (every change is checked before it is applied),
        // so a poisoned lock still guards consistent data.
        self.state.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

pub(super) struct State {
    pub(super) next_id: HashMap<&'static str, i64>,
    pub(super) vendors: BTreeMap<i64, VendorRow>,
    pub(super) invoices: BTreeMap<i64, InvoiceRow>,
    pub(super) invoices_by_vendor: HashMap<i64, BTreeSet<i64>>,
    pub(super) transactions: BTreeMap<i64, TransactionRow>,
    /// Every payment that was ever written with a reference, by the reference's key (D30),
    /// whatever its state since: a lookup re-reads each row, so an entry left behind by an
    /// update costs a skipped row, never a wrong answer.
    pub(super) payments_by_reference: HashMap<String, BTreeSet<i64>>,
    pub(super) vendor_payments: BTreeMap<i64, VendorPaymentRow>,
    /// The payments each vendor payment made (D31), in the order they were written.
    pub(super) vendor_payment_parts: HashMap<i64, Vec<i64>>,
    /// Vendor credits (D44).
    pub(super) credits: BTreeMap<i64, super::CreditRow>,
    /// Their applications to invoices (D44), with lookups by credit and by invoice.
    pub(super) credit_applications: BTreeMap<i64, super::ApplicationRow>,
    pub(super) applications_by_credit: HashMap<i64, Vec<i64>>,
    pub(super) applications_by_invoice: HashMap<i64, Vec<i64>>,
    /// Bank statements (D46), their lines, and the line of an active statement holding each
    /// payment.
    pub(super) bank_statements: BTreeMap<i64, super::StatementRow>,
    pub(super) bank_lines: BTreeMap<i64, super::LineRow>,
    pub(super) bank_holds: HashMap<pharmapay_core::transactions::holders::Holder, i64>,
    pub(super) users: BTreeMap<i64, UserRow>,
    pub(super) roles: BTreeMap<i64, RoleRow>,
    /// The chain's branches (D49); 1 is the head office.
    pub(super) branches: BTreeMap<i64, super::BranchRow>,
    pub(super) permissions: BTreeMap<i64, Permission>,
    pub(super) policies: BTreeMap<i64, PolicyRow>,
    pub(super) role_policies: BTreeSet<(i64, i64)>,
    pub(super) user_policies: BTreeSet<(i64, i64)>,
    pub(super) settings: BTreeMap<String, Setting>,
    pub(super) audit: Vec<AuditEntry>,
    /// The event feed (D47), by id, and the invoices the current write brought to FullyPaid.
    pub(super) events: BTreeMap<i64, pharmapay_core::events::Event>,
    /// The last event id given: ids are never given twice, even once old events are removed.
    pub(super) last_event: i64,
    pub(super) paid_now: BTreeSet<i64>,
    /// Webhooks and their deliveries (D47).
    pub(super) webhooks: BTreeMap<i64, super::WebhookRow>,
    pub(super) deliveries: BTreeMap<i64, super::DeliveryRow>,
    pub(super) idempotency: HashMap<(i64, String), IdempotencyRow>,
    pub(super) login_attempts: HashMap<String, LoginAttempts>,
    pub(super) token_secret: Option<Secret>,
    /// The figures kept beside the rows (D41).
    pub(super) figures: KeptFigures,
    /// The business calendar of the `TimeZone` setting, which files payments under their days.
    pub(super) calendar: BusinessCalendar,
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
            branches: BTreeMap::new(),
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

pub(super) fn cmp_then_id(ordering: Ordering, a: i64, b: i64, dir: SortDir) -> Ordering {
    dir.apply(ordering.then(a.cmp(&b)))
}

impl State {
    pub(super) fn seed(&mut self) {
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
        // D49: the head office is there from the first start.
        self.branches.insert(
            HEAD_OFFICE_ID.get(),
            super::BranchRow {
                code: HEAD_OFFICE_CODE.into(),
                name: HEAD_OFFICE_NAME.into(),
                gstin: None,
                address: None,
                phone: None,
                drug_license_number: None,
                is_active: true,
                created_at: epoch,
                updated_at: epoch,
            },
        );
        self.next_id.insert("branch", HEAD_OFFICE_ID.get() + 1);
        self.next_id.insert("role", self.roles.len() as i64 + 1);
        self.next_id.insert("policy", self.policies.len() as i64 + 1);
    }

    /// The id [`State::next`] would give `table` now.
    pub(super) fn peek_next(&self, table: &'static str) -> i64 {
        self.next_id.get(table).copied().unwrap_or(1)
    }

    pub(super) fn next(&mut self, table: &'static str) -> i64 {
        let next = self.next_id.entry(table).or_insert(1);
        let id = *next;
        *next += 1;
        id
    }

    pub(super) fn audit(&mut self, entry: NewAuditEntry) {
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
    pub(super) fn finish_write(&mut self, ctx: &WriteContext, action: &'static str, entity: Entity, entity_id: i64) {
        self.finish_announcing(ctx, (action, entity, entity_id), &[]);
    }

    /// [`Self::finish_write`] for a write that also announces `also` (D47).
    pub(super) fn finish_announcing(
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

    pub(super) fn complete_claim(&mut self, ticket: &IdempotencyTicket, entity_id: i64) {
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
