//! An in-memory [`Store`] for pharmapay: for embedding, tests and benchmarks.
//!
//! All data sits in ordered maps behind one [`RwLock`]. Every store method takes the lock once,
//! checks what it must and applies its change before letting go, so each method is atomic and
//! the cross-row invariants of the [`Store`] contract hold under any concurrency. The lock is a
//! plain `std` lock held only for in-memory work, never across an `.await`, so it cannot stall
//! the async runtime; reads share it.
//!
//! Each invoice keeps the running sum of its active payments (`paid`), updated under the same
//! lock as every payment change, so reading an invoice never sums its payments. Lists scan and
//! sort in memory; they cost time in proportion to the table, which is fine for the sizes an
//! embedded store holds.
//!
//! Nothing is persisted: the data lives as long as the [`MemoryStore`] (clones share it).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use pharmapay_core::access::{ADMIN_ROLE_ID, Permission};
use pharmapay_core::auth::Secret;
use pharmapay_core::dashboard::{PeriodTotal, Summary, TopVendor};
use pharmapay_core::domain::{
    AuditEntry, AuditQuery, Invoice, InvoiceBrief, InvoiceDetail, InvoiceFilter, InvoiceQuery, InvoiceSortKey,
    InvoiceStatus, NewAuditEntry, NewInvoice, NewPolicy, NewRole, NewTransaction, NewVendor, Policy, ProfileUpdate,
    Role, Setting, Transaction, TransactionFilter, TransactionQuery, TransactionSortKey, User, UserUpdate, Vendor,
    VendorBrief, VendorFilter, VendorQuery, VendorSortKey, VendorTotals, VendorType,
};
use pharmapay_core::idempotency::{ClaimOutcome, IdempotencyClaim, IdempotencyKey, IdempotencyTicket};
use pharmapay_core::ids::{AuditId, InvoiceId, PermissionId, PolicyId, RoleId, TransactionId, UserId, VendorId};
use pharmapay_core::jiff::{SignedDuration, Timestamp};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{
    Credentials, ImportedInvoice, ImportedTransaction, ImportedVendor, LoginGate, NewUserRecord, SessionState,
    StoreResult, WriteContext,
};
use pharmapay_core::text::key;
use pharmapay_core::{Amount, Entity, Page, RuleBroken, SortDir, Store, StoreError, seed};

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
    invoice_date: Timestamp,
    due_date: Timestamp,
    description: Option<String>,
    is_active: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

#[derive(Clone)]
struct TransactionRow {
    invoice_id: i64,
    amount: Amount,
    transaction_date: Timestamp,
    transaction_type: pharmapay_core::domain::TransactionType,
    description: Option<String>,
    is_active: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

#[derive(Clone)]
struct UserRow {
    first_name: String,
    last_name: String,
    email: String,
    email_key: String,
    role_id: i64,
    password_hash: String,
    tokens_revoked_at: Timestamp,
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

struct LoginAttempts {
    window_start: Timestamp,
    count: u32,
}

struct State {
    next_id: HashMap<&'static str, i64>,
    vendors: BTreeMap<i64, VendorRow>,
    invoices: BTreeMap<i64, InvoiceRow>,
    invoices_by_vendor: HashMap<i64, BTreeSet<i64>>,
    transactions: BTreeMap<i64, TransactionRow>,
    users: BTreeMap<i64, UserRow>,
    roles: BTreeMap<i64, RoleRow>,
    permissions: BTreeMap<i64, Permission>,
    policies: BTreeMap<i64, PolicyRow>,
    role_policies: BTreeSet<(i64, i64)>,
    user_policies: BTreeSet<(i64, i64)>,
    settings: BTreeMap<String, Setting>,
    audit: Vec<AuditEntry>,
    idempotency: HashMap<(i64, String), IdempotencyRow>,
    login_attempts: HashMap<String, LoginAttempts>,
    token_secret: Option<Secret>,
}

impl Default for State {
    fn default() -> Self {
        let mut state = State {
            next_id: HashMap::new(),
            vendors: BTreeMap::new(),
            invoices: BTreeMap::new(),
            invoices_by_vendor: HashMap::new(),
            transactions: BTreeMap::new(),
            users: BTreeMap::new(),
            roles: BTreeMap::new(),
            permissions: BTreeMap::new(),
            policies: BTreeMap::new(),
            role_policies: BTreeSet::new(),
            user_policies: BTreeSet::new(),
            settings: BTreeMap::new(),
            audit: Vec::new(),
            idempotency: HashMap::new(),
            login_attempts: HashMap::new(),
            token_secret: None,
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
        self.next_id.insert("role", self.roles.len() as i64 + 1);
        self.next_id.insert("policy", self.policies.len() as i64 + 1);
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

    /// Records the write's audit entry and completes its idempotency claim, as the last step
    /// of a write (D22, D23).
    fn finish_write(&mut self, ctx: &WriteContext, action: &'static str, entity: Entity, entity_id: i64) {
        self.audit(ctx.audit(action, entity, Some(entity_id)));
        if let Some(ticket) = &ctx.idempotency {
            self.complete_claim(ticket, entity_id);
        }
    }

    fn complete_claim(&mut self, ticket: &IdempotencyTicket, entity_id: i64) {
        if let Some(row) = self.idempotency.get_mut(&(ticket.user_id.get(), ticket.key.as_str().to_owned())) {
            row.entity_id = Some(entity_id);
        }
    }

    // Vendors

    fn vendor_totals(&self, vendor_id: i64) -> (VendorTotals, u64) {
        let mut value = Decimal::ZERO;
        let mut paid = Decimal::ZERO;
        let mut count = 0;
        for invoice_id in self.invoices_by_vendor.get(&vendor_id).into_iter().flatten() {
            let invoice = &self.invoices[invoice_id];
            if invoice.is_active {
                value += invoice.amount.get();
                paid += invoice.paid;
                count += 1;
            }
        }
        (VendorTotals::new(value, paid), count)
    }

    fn vendor(&self, id: i64) -> Option<Vendor> {
        let row = self.vendors.get(&id)?;
        Some(Vendor {
            id: VendorId(id),
            name: row.name.clone(),
            vendor_type: row.vendor_type,
            address: row.address.clone(),
            phone: row.phone.clone(),
            email: row.email.clone(),
            drug_license_number1: row.drug_license_number1.clone(),
            drug_license_number2: row.drug_license_number2.clone(),
            additional_drug_license_numbers: row.additional_drug_license_numbers.clone(),
            is_active: row.is_active,
            totals: self.vendor_totals(id).0,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }

    fn vendor_brief(&self, id: i64) -> Option<VendorBrief> {
        let row = self.vendors.get(&id)?;
        Some(VendorBrief {
            id: VendorId(id),
            name: row.name.clone(),
            vendor_type: row.vendor_type,
            address: row.address.clone(),
            phone: row.phone.clone(),
            email: row.email.clone(),
            drug_license_number1: row.drug_license_number1.clone(),
            drug_license_number2: row.drug_license_number2.clone(),
            is_active: row.is_active,
        })
    }

    fn insert_vendor_row(&mut self, vendor: NewVendor, at: Timestamp) -> i64 {
        let id = self.next("vendor");
        self.vendors.insert(
            id,
            VendorRow {
                name_key: key(&vendor.name),
                name: vendor.name,
                vendor_type: vendor.vendor_type,
                address: vendor.address,
                phone: vendor.phone,
                email: vendor.email,
                drug_license_number1: vendor.drug_license_number1,
                drug_license_number2: vendor.drug_license_number2,
                additional_drug_license_numbers: vendor.additional_drug_license_numbers,
                is_active: true,
                created_at: at,
                updated_at: at,
            },
        );
        id
    }

    fn active_vendor(&self, id: i64) -> bool {
        self.vendors.get(&id).is_some_and(|vendor| vendor.is_active)
    }

    // Invoices

    fn invoice(&self, id: i64, today_start: Timestamp) -> Option<Invoice> {
        let row = self.invoices.get(&id)?;
        let vendor_name = self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default();
        let pending = row.amount.get() - row.paid;
        Some(Invoice {
            id: InvoiceId(id),
            vendor_id: VendorId(row.vendor_id),
            vendor_name,
            invoice_number: row.invoice_number.clone(),
            amount: row.amount,
            paid_amount: row.paid.normalize(),
            invoice_date: row.invoice_date,
            due_date: row.due_date,
            description: row.description.clone(),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
            status: InvoiceStatus::compute(row.is_active, pending, row.due_date, today_start),
        })
    }

    fn invoice_brief(&self, id: i64) -> InvoiceBrief {
        let row = &self.invoices[&id];
        InvoiceBrief {
            id: InvoiceId(id),
            invoice_number: row.invoice_number.clone(),
            vendor_id: VendorId(row.vendor_id),
            vendor_name: self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default(),
            amount: row.amount,
            pending_amount: (row.amount.get() - row.paid).normalize(),
        }
    }

    fn number_taken(&self, number_key: &str, except: Option<i64>) -> bool {
        self.invoices
            .iter()
            .any(|(id, invoice)| invoice.is_active && invoice.number_key == number_key && Some(*id) != except)
    }

    fn active_invoice(&self, id: i64) -> bool {
        self.invoices.get(&id).is_some_and(|invoice| invoice.is_active)
    }

    fn invoice_status(&self, id: i64, today_start: Timestamp) -> InvoiceStatus {
        let row = &self.invoices[&id];
        InvoiceStatus::compute(row.is_active, row.amount.get() - row.paid, row.due_date, today_start)
    }

    // Transactions

    fn transaction(&self, id: i64) -> Option<Transaction> {
        let row = self.transactions.get(&id)?;
        Some(Transaction {
            id: TransactionId(id),
            invoice_id: InvoiceId(row.invoice_id),
            amount: row.amount,
            transaction_date: row.transaction_date,
            transaction_type: row.transaction_type,
            description: row.description.clone(),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
            invoice: self.invoice_brief(row.invoice_id),
        })
    }

    /// Refuses a payment that would bring the invoice's paid total above the largest amount.
    fn check_paid_room(&self, invoice_id: i64, amount: Decimal) -> StoreResult<()> {
        let paid = self.invoices.get(&invoice_id).map(|invoice| invoice.paid).unwrap_or_default();
        if paid + amount > pharmapay_core::money::MAX_AMOUNT {
            return Err(StoreError::Rule(RuleBroken::PaidTotalTooLarge));
        }
        Ok(())
    }

    fn add_paid(&mut self, invoice_id: i64, amount: Decimal) {
        if let Some(invoice) = self.invoices.get_mut(&invoice_id) {
            invoice.paid += amount;
        }
    }

    // Users, roles and policies

    fn user(&self, id: i64) -> Option<User> {
        let row = self.users.get(&id)?;
        Some(User {
            id: UserId(id),
            first_name: row.first_name.clone(),
            last_name: row.last_name.clone(),
            email: row.email.clone(),
            role_id: RoleId(row.role_id),
            is_active: row.is_active,
            created_at: row.created_at,
        })
    }

    fn email_taken(&self, email_key: &str, except: Option<i64>) -> bool {
        self.users.iter().any(|(id, user)| user.is_active && user.email_key == email_key && Some(*id) != except)
    }

    fn active_role(&self, id: i64) -> bool {
        self.roles.get(&id).is_some_and(|role| role.is_active)
    }

    fn active_admins(&self) -> usize {
        self.users.values().filter(|user| user.is_active && user.role_id == ADMIN_ROLE_ID.get()).count()
    }

    fn insert_user_row(&mut self, user: NewUserRecord, at: Timestamp) -> StoreResult<i64> {
        let email_key = key(&user.email);
        if !self.active_role(user.role_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Role));
        }
        if self.email_taken(&email_key, None) {
            return Err(StoreError::Conflict { field: "email" });
        }
        let id = self.next("user");
        self.users.insert(
            id,
            UserRow {
                first_name: user.first_name,
                last_name: user.last_name,
                email: user.email,
                email_key,
                role_id: user.role_id.get(),
                password_hash: user.password_hash,
                tokens_revoked_at: Timestamp::UNIX_EPOCH,
                is_active: true,
                created_at: at,
            },
        );
        Ok(id)
    }

    fn role(&self, id: i64) -> Option<Role> {
        let row = self.roles.get(&id)?;
        Some(Role {
            id: RoleId(id),
            name: row.name.clone(),
            description: row.description.clone(),
            is_system: row.is_system,
            is_active: row.is_active,
            created_at: row.created_at,
        })
    }

    fn role_name_taken(&self, name_key: &str, except: Option<i64>) -> bool {
        self.roles.iter().any(|(id, role)| role.name_key == name_key && Some(*id) != except)
    }

    fn policy(&self, id: i64) -> Option<Policy> {
        let row = self.policies.get(&id)?;
        Some(Policy {
            id: PolicyId(id),
            name: row.name.clone(),
            description: row.description.clone(),
            is_active: row.is_active,
            permissions: row.permission_ids.iter().filter_map(|id| self.permissions.get(id).cloned()).collect(),
            created_at: row.created_at,
        })
    }

    fn policy_name_taken(&self, name_key: &str, except: Option<i64>) -> bool {
        self.policies.iter().any(|(id, policy)| policy.is_active && policy.name_key == name_key && Some(*id) != except)
    }

    fn active_policy(&self, id: i64) -> bool {
        self.policies.get(&id).is_some_and(|policy| policy.is_active)
    }

    fn check_permissions(&self, ids: &[PermissionId]) -> StoreResult<BTreeSet<i64>> {
        if ids.iter().all(|id| self.permissions.contains_key(&id.get())) {
            Ok(ids.iter().map(|id| id.get()).collect())
        } else {
            Err(StoreError::ParentInactive(Entity::Permission))
        }
    }
}

fn vendor_matches(vendor: &VendorRow, filter: &VendorFilter) -> bool {
    vendor.is_active == filter.is_active
        && filter.vendor_type.is_none_or(|vendor_type| vendor.vendor_type == vendor_type)
        && filter.search.as_deref().is_none_or(|search| vendor.name_key.contains(search))
}

fn transaction_matches(row: &TransactionRow, filter: &TransactionFilter) -> bool {
    row.is_active == filter.is_active
        && filter.invoice_id.is_none_or(|invoice| row.invoice_id == invoice.get())
        && filter.transaction_type.is_none_or(|kind| row.transaction_type == kind)
        && filter.from_date.is_none_or(|from| row.transaction_date >= from)
        && filter.to_date.is_none_or(|to| row.transaction_date <= to)
}

impl State {
    fn vendor_name_key(&self, vendor_id: i64) -> &str {
        self.vendors.get(&vendor_id).map(|vendor| vendor.name_key.as_str()).unwrap_or("")
    }

    fn invoice_matches(&self, id: i64, row: &InvoiceRow, filter: &InvoiceFilter, today_start: Timestamp) -> bool {
        filter.is_active.is_none_or(|active| row.is_active == active)
            && filter.vendor_id.is_none_or(|vendor| row.vendor_id == vendor.get())
            && filter.invoice_number.as_deref().is_none_or(|number| row.number_key.contains(number))
            && filter.search.as_deref().is_none_or(|search| {
                row.number_key.contains(search) || self.vendor_name_key(row.vendor_id).contains(search)
            })
            && filter.from_date.is_none_or(|from| row.invoice_date >= from)
            && filter.to_date.is_none_or(|to| row.invoice_date <= to)
            && filter.min_amount.is_none_or(|min| row.amount.get() >= min)
            && filter.max_amount.is_none_or(|max| row.amount.get() <= max)
            && filter.status.is_none_or(|status| self.invoice_status(id, today_start) == status)
    }
}

fn after_id(after: Option<i64>) -> std::ops::RangeFrom<i64> {
    after.map_or(i64::MIN, |id| id.saturating_add(1))..
}

impl Store for MemoryStore {
    async fn health(&self) -> StoreResult<()> {
        Ok(())
    }

    async fn is_onboarded(&self) -> StoreResult<bool> {
        let state = self.read();
        let has_pharmacy = state.vendors.values().any(|vendor| vendor.vendor_type == VendorType::OwnPharmacy);
        Ok(has_pharmacy && !state.users.is_empty())
    }

    async fn complete_onboarding(
        &self,
        pharmacy: NewVendor,
        admin: NewUserRecord,
        ctx: WriteContext,
    ) -> StoreResult<(Vendor, User)> {
        let mut state = self.write();
        let existing_pharmacy =
            state.vendors.iter().find(|(_, vendor)| vendor.vendor_type == VendorType::OwnPharmacy).map(|(id, _)| *id);
        if existing_pharmacy.is_some() && !state.users.is_empty() {
            return Err(StoreError::Rule(RuleBroken::AlreadyOnboarded));
        }
        // Check the admin first so that nothing changes when it is refused.
        if state.email_taken(&key(&admin.email), None) {
            return Err(StoreError::Conflict { field: "email" });
        }
        let vendor_id = match existing_pharmacy {
            Some(id) => {
                let row = state.vendors.get_mut(&id).expect("the id was just found");
                row.name_key = key(&pharmacy.name);
                row.name = pharmacy.name;
                row.address = pharmacy.address;
                row.phone = pharmacy.phone;
                row.email = pharmacy.email;
                row.drug_license_number1 = pharmacy.drug_license_number1;
                row.is_active = true;
                row.updated_at = ctx.at;
                id
            }
            None => state.insert_vendor_row(pharmacy, ctx.at),
        };
        let user_id = state.insert_user_row(admin, ctx.at)?;
        state.audit(ctx.audit("create", Entity::Vendor, Some(vendor_id)));
        state.audit(ctx.audit("create", Entity::User, Some(user_id)));
        let vendor = state.vendor(vendor_id).expect("just written");
        let user = state.user(user_id).expect("just written");
        Ok((vendor, user))
    }

    async fn token_secret(&self, candidate: Secret) -> StoreResult<Secret> {
        let mut state = self.write();
        Ok(state.token_secret.get_or_insert(candidate).clone())
    }

    async fn find_credentials(&self, email_key: &str) -> StoreResult<Option<Credentials>> {
        let state = self.read();
        let mut matches: Vec<(&i64, &UserRow)> =
            state.users.iter().filter(|(_, user)| user.email_key == email_key).collect();
        // The active account wins; among inactive ones, the newest.
        matches.sort_by_key(|(id, user)| (!user.is_active, std::cmp::Reverse(**id)));
        Ok(matches.first().map(|(id, row)| Credentials {
            user: state.user(**id).expect("listed above"),
            password_hash: row.password_hash.clone(),
            tokens_revoked_at: row.tokens_revoked_at,
        }))
    }

    async fn credentials(&self, user_id: UserId) -> StoreResult<Option<Credentials>> {
        let state = self.read();
        Ok(state.users.get(&user_id.get()).map(|row| Credentials {
            user: state.user(user_id.get()).expect("present"),
            password_hash: row.password_hash.clone(),
            tokens_revoked_at: row.tokens_revoked_at,
        }))
    }

    async fn session_state(&self, user_id: UserId) -> StoreResult<Option<SessionState>> {
        let state = self.read();
        Ok(state
            .users
            .get(&user_id.get())
            .map(|user| SessionState { is_active: user.is_active, tokens_revoked_at: user.tokens_revoked_at }))
    }

    async fn resolve_permissions(&self, user_id: UserId) -> StoreResult<Vec<Permission>> {
        let state = self.read();
        let Some(user) = state.users.get(&user_id.get()) else { return Ok(Vec::new()) };
        let mut policy_ids: BTreeSet<i64> = BTreeSet::new();
        if state.active_role(user.role_id) {
            policy_ids.extend(state.role_policies.iter().filter(|(role, _)| *role == user.role_id).map(|(_, p)| *p));
        }
        policy_ids.extend(state.user_policies.iter().filter(|(user, _)| *user == user_id.get()).map(|(_, p)| *p));
        let permission_ids: BTreeSet<i64> = policy_ids
            .iter()
            .filter_map(|id| state.policies.get(id))
            .filter(|policy| policy.is_active)
            .flat_map(|policy| policy.permission_ids.iter().copied())
            .collect();
        Ok(permission_ids.iter().filter_map(|id| state.permissions.get(id).cloned()).collect())
    }

    async fn begin_login_attempt(
        &self,
        email_key: &str,
        now: Timestamp,
        limit: u32,
        window: SignedDuration,
    ) -> StoreResult<LoginGate> {
        let mut state = self.write();
        let attempts =
            state.login_attempts.entry(email_key.to_owned()).or_insert(LoginAttempts { window_start: now, count: 0 });
        let window_end = attempts.window_start.saturating_add(window).unwrap_or(Timestamp::MAX);
        if now >= window_end {
            *attempts = LoginAttempts { window_start: now, count: 0 };
        }
        if attempts.count >= limit {
            let until = attempts.window_start.saturating_add(window).unwrap_or(Timestamp::MAX);
            return Ok(LoginGate::Throttled { until });
        }
        attempts.count += 1;
        Ok(LoginGate::Allowed)
    }

    async fn clear_login_attempts(&self, email_key: &str) -> StoreResult<()> {
        self.write().login_attempts.remove(email_key);
        Ok(())
    }

    async fn append_audit(&self, entry: NewAuditEntry) -> StoreResult<()> {
        self.write().audit(entry);
        Ok(())
    }

    async fn claim_idempotency_key(&self, claim: IdempotencyClaim) -> StoreResult<ClaimOutcome> {
        let mut state = self.write();
        let map_key = (claim.user_id.get(), claim.key.as_str().to_owned());
        let fresh = IdempotencyRow {
            fingerprint: claim.fingerprint.clone(),
            created_at: claim.now,
            entity_id: None,
            response: None,
        };
        let Some(row) = state.idempotency.get_mut(&map_key) else {
            state.idempotency.insert(map_key, fresh);
            return Ok(ClaimOutcome::Claimed);
        };
        if row.created_at < claim.expired_before() {
            *row = fresh;
            return Ok(ClaimOutcome::Claimed);
        }
        if row.fingerprint != claim.fingerprint {
            return Ok(ClaimOutcome::Mismatch);
        }
        if let Some(entity_id) = row.entity_id {
            return Ok(ClaimOutcome::Completed { entity_id, response: row.response.clone() });
        }
        if row.created_at < claim.abandoned_before() {
            *row = fresh;
            return Ok(ClaimOutcome::Claimed);
        }
        Ok(ClaimOutcome::InProgress)
    }

    async fn record_idempotent_response(
        &self,
        user_id: UserId,
        key: &IdempotencyKey,
        response: Vec<u8>,
    ) -> StoreResult<()> {
        let mut state = self.write();
        if let Some(row) = state.idempotency.get_mut(&(user_id.get(), key.as_str().to_owned()))
            && row.entity_id.is_some()
        {
            row.response = Some(response);
        }
        Ok(())
    }

    async fn release_idempotency_key(&self, user_id: UserId, key: &IdempotencyKey) -> StoreResult<()> {
        let mut state = self.write();
        let map_key = (user_id.get(), key.as_str().to_owned());
        if state.idempotency.get(&map_key).is_some_and(|row| row.entity_id.is_none()) {
            state.idempotency.remove(&map_key);
        }
        Ok(())
    }

    // Vendors

    async fn insert_vendor(&self, vendor: NewVendor, ctx: WriteContext) -> StoreResult<Vendor> {
        if vendor.vendor_type == VendorType::OwnPharmacy {
            return Err(StoreError::Rule(RuleBroken::OwnPharmacyType));
        }
        let mut state = self.write();
        let id = state.insert_vendor_row(vendor, ctx.at);
        state.finish_write(&ctx, "create", Entity::Vendor, id);
        Ok(state.vendor(id).expect("just written"))
    }

    async fn get_vendor(&self, id: VendorId) -> StoreResult<Option<Vendor>> {
        Ok(self.read().vendor(id.get()))
    }

    async fn update_vendor(&self, id: VendorId, vendor: NewVendor, ctx: WriteContext) -> StoreResult<Vendor> {
        let mut state = self.write();
        let row =
            state.vendors.get_mut(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::Vendor))?;
        let own_before = row.vendor_type == VendorType::OwnPharmacy;
        let own_after = vendor.vendor_type == VendorType::OwnPharmacy;
        if own_before != own_after {
            return Err(StoreError::Rule(RuleBroken::OwnPharmacyType));
        }
        row.name_key = key(&vendor.name);
        row.name = vendor.name;
        row.vendor_type = vendor.vendor_type;
        row.address = vendor.address;
        row.phone = vendor.phone;
        row.email = vendor.email;
        row.drug_license_number1 = vendor.drug_license_number1;
        row.drug_license_number2 = vendor.drug_license_number2;
        row.additional_drug_license_numbers = vendor.additional_drug_license_numbers;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "update", Entity::Vendor, id.get());
        Ok(state.vendor(id.get()).expect("just written"))
    }

    async fn delete_vendor(&self, id: VendorId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row =
            state.vendors.get_mut(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::Vendor))?;
        if row.vendor_type == VendorType::OwnPharmacy {
            return Err(StoreError::Rule(RuleBroken::OwnPharmacyDelete));
        }
        row.is_active = false;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "delete", Entity::Vendor, id.get());
        Ok(())
    }

    async fn restore_vendor(&self, id: VendorId, ctx: WriteContext) -> StoreResult<Vendor> {
        let mut state = self.write();
        let row = state
            .vendors
            .get_mut(&id.get())
            .filter(|row| !row.is_active)
            .ok_or(StoreError::NotFound(Entity::Vendor))?;
        row.is_active = true;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "restore", Entity::Vendor, id.get());
        Ok(state.vendor(id.get()).expect("just written"))
    }

    async fn list_vendors(&self, query: &VendorQuery) -> StoreResult<Page<Vendor>> {
        let state = self.read();
        let mut rows: Vec<(i64, &VendorRow, Decimal)> = state
            .vendors
            .iter()
            .filter(|(_, vendor)| vendor_matches(vendor, &query.filter))
            .map(|(id, vendor)| {
                let balance = if query.sort.key == VendorSortKey::OutstandingBalance {
                    state.vendor_totals(*id).0.outstanding_balance
                } else {
                    Decimal::ZERO
                };
                (*id, vendor, balance)
            })
            .collect();
        let dir = query.sort.dir;
        rows.sort_by(|(a_id, a, a_balance), (b_id, b, b_balance)| {
            let ordering = match query.sort.key {
                VendorSortKey::Name => a.name_key.cmp(&b.name_key),
                VendorSortKey::VendorType => a.vendor_type.name().cmp(b.vendor_type.name()),
                VendorSortKey::OutstandingBalance => a_balance.cmp(b_balance),
            };
            cmp_then_id(ordering, *a_id, *b_id, dir)
        });
        let ids: Vec<i64> = rows.into_iter().map(|(id, _, _)| id).collect();
        Ok(query.page.slice(ids).map(|id| state.vendor(id).expect("listed above")))
    }

    // Invoices

    async fn insert_invoice(
        &self,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> StoreResult<Invoice> {
        let mut state = self.write();
        let number_key = key(&invoice.invoice_number);
        if !state.active_vendor(invoice.vendor_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        if state.number_taken(&number_key, None) {
            return Err(StoreError::Conflict { field: "invoiceNumber" });
        }
        let id = state.next("invoice");
        state.invoices.insert(
            id,
            InvoiceRow {
                vendor_id: invoice.vendor_id.get(),
                invoice_number: invoice.invoice_number,
                number_key,
                amount: invoice.amount,
                paid: Decimal::ZERO,
                invoice_date: invoice.invoice_date,
                due_date: invoice.due_date,
                description: invoice.description,
                is_active: true,
                created_at: ctx.at,
                updated_at: ctx.at,
            },
        );
        state.invoices_by_vendor.entry(invoice.vendor_id.get()).or_default().insert(id);
        state.finish_write(&ctx, "create", Entity::Invoice, id);
        Ok(state.invoice(id, today_start).expect("just written"))
    }

    async fn get_invoice(&self, id: InvoiceId, today_start: Timestamp) -> StoreResult<Option<InvoiceDetail>> {
        let state = self.read();
        let Some(invoice) = state.invoice(id.get(), today_start) else { return Ok(None) };
        let vendor = state.vendor_brief(invoice.vendor_id.get()).expect("an invoice's vendor exists");
        Ok(Some(InvoiceDetail { invoice, vendor }))
    }

    async fn update_invoice(
        &self,
        id: InvoiceId,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> StoreResult<Invoice> {
        let mut state = self.write();
        if !state.active_invoice(id.get()) {
            return Err(StoreError::NotFound(Entity::Invoice));
        }
        let number_key = key(&invoice.invoice_number);
        if !state.active_vendor(invoice.vendor_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        if state.number_taken(&number_key, Some(id.get())) {
            return Err(StoreError::Conflict { field: "invoiceNumber" });
        }
        let row = state.invoices.get_mut(&id.get()).expect("checked above");
        let old_vendor = row.vendor_id;
        row.vendor_id = invoice.vendor_id.get();
        row.invoice_number = invoice.invoice_number;
        row.number_key = number_key;
        row.amount = invoice.amount;
        row.invoice_date = invoice.invoice_date;
        row.due_date = invoice.due_date;
        row.description = invoice.description;
        row.updated_at = ctx.at;
        if old_vendor != invoice.vendor_id.get() {
            if let Some(set) = state.invoices_by_vendor.get_mut(&old_vendor) {
                set.remove(&id.get());
            }
            state.invoices_by_vendor.entry(invoice.vendor_id.get()).or_default().insert(id.get());
        }
        state.finish_write(&ctx, "update", Entity::Invoice, id.get());
        Ok(state.invoice(id.get(), today_start).expect("just written"))
    }

    async fn delete_invoice(&self, id: InvoiceId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = state
            .invoices
            .get_mut(&id.get())
            .filter(|row| row.is_active)
            .ok_or(StoreError::NotFound(Entity::Invoice))?;
        row.is_active = false;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "delete", Entity::Invoice, id.get());
        Ok(())
    }

    async fn restore_invoice(&self, id: InvoiceId, ctx: WriteContext, today_start: Timestamp) -> StoreResult<Invoice> {
        let mut state = self.write();
        let row =
            state.invoices.get(&id.get()).filter(|row| !row.is_active).ok_or(StoreError::NotFound(Entity::Invoice))?;
        if !state.active_vendor(row.vendor_id) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        if state.number_taken(&row.number_key.clone(), Some(id.get())) {
            return Err(StoreError::Conflict { field: "invoiceNumber" });
        }
        let row = state.invoices.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "restore", Entity::Invoice, id.get());
        Ok(state.invoice(id.get(), today_start).expect("just written"))
    }

    async fn list_invoices(&self, query: &InvoiceQuery, today_start: Timestamp) -> StoreResult<Page<Invoice>> {
        let state = self.read();
        let vendor_key =
            |vendor_id: i64| state.vendors.get(&vendor_id).map(|vendor| vendor.name_key.as_str()).unwrap_or("");
        let mut rows: Vec<(i64, &InvoiceRow)> = state
            .invoices
            .iter()
            .map(|(id, row)| (*id, row))
            .filter(|(id, row)| state.invoice_matches(*id, row, &query.filter, today_start))
            .collect();
        let dir = query.sort.dir;
        rows.sort_by(|(a_id, a), (b_id, b)| {
            let ordering = match query.sort.key {
                InvoiceSortKey::InvoiceDate => a.invoice_date.cmp(&b.invoice_date),
                InvoiceSortKey::DueDate => a.due_date.cmp(&b.due_date),
                InvoiceSortKey::Amount => a.amount.cmp(&b.amount),
                InvoiceSortKey::PendingAmount => (a.amount.get() - a.paid).cmp(&(b.amount.get() - b.paid)),
                InvoiceSortKey::PaidAmount => a.paid.cmp(&b.paid),
                InvoiceSortKey::InvoiceNumber => a.number_key.cmp(&b.number_key),
                InvoiceSortKey::VendorName => vendor_key(a.vendor_id).cmp(vendor_key(b.vendor_id)),
            };
            cmp_then_id(ordering, *a_id, *b_id, dir)
        });
        let ids: Vec<i64> = rows.into_iter().map(|(id, _)| id).collect();
        Ok(query.page.slice(ids).map(|id| state.invoice(id, today_start).expect("listed above")))
    }

    // Transactions

    async fn insert_transaction(&self, transaction: NewTransaction, ctx: WriteContext) -> StoreResult<Transaction> {
        let mut state = self.write();
        let invoice_id = transaction.invoice_id.get();
        if !state.active_invoice(invoice_id) {
            return Err(StoreError::ParentInactive(Entity::Invoice));
        }
        state.check_paid_room(invoice_id, transaction.amount.get())?;
        let id = state.next("transaction");
        state.transactions.insert(
            id,
            TransactionRow {
                invoice_id,
                amount: transaction.amount,
                transaction_date: transaction.transaction_date,
                transaction_type: transaction.transaction_type,
                description: transaction.description,
                is_active: true,
                created_at: ctx.at,
                updated_at: ctx.at,
            },
        );
        state.add_paid(invoice_id, transaction.amount.get());
        state.finish_write(&ctx, "create", Entity::Transaction, id);
        Ok(state.transaction(id).expect("just written"))
    }

    async fn get_transaction(&self, id: TransactionId) -> StoreResult<Option<Transaction>> {
        Ok(self.read().transaction(id.get()))
    }

    async fn update_transaction(
        &self,
        id: TransactionId,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> StoreResult<Transaction> {
        let mut state = self.write();
        let old = state
            .transactions
            .get(&id.get())
            .filter(|row| row.is_active)
            .cloned()
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        let new_invoice = transaction.invoice_id.get();
        if !state.active_invoice(new_invoice) {
            return Err(StoreError::ParentInactive(Entity::Invoice));
        }
        let freed = if old.invoice_id == new_invoice { old.amount.get() } else { Decimal::ZERO };
        state.check_paid_room(new_invoice, transaction.amount.get() - freed)?;
        state.add_paid(old.invoice_id, -old.amount.get());
        state.add_paid(new_invoice, transaction.amount.get());
        let row = state.transactions.get_mut(&id.get()).expect("checked above");
        row.invoice_id = new_invoice;
        row.amount = transaction.amount;
        row.transaction_date = transaction.transaction_date;
        row.transaction_type = transaction.transaction_type;
        row.description = transaction.description;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "update", Entity::Transaction, id.get());
        Ok(state.transaction(id.get()).expect("just written"))
    }

    async fn delete_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = state
            .transactions
            .get_mut(&id.get())
            .filter(|row| row.is_active)
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        row.is_active = false;
        row.updated_at = ctx.at;
        let (invoice_id, amount) = (row.invoice_id, row.amount.get());
        state.add_paid(invoice_id, -amount);
        state.finish_write(&ctx, "delete", Entity::Transaction, id.get());
        Ok(())
    }

    async fn restore_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<Transaction> {
        let mut state = self.write();
        let row = state
            .transactions
            .get(&id.get())
            .filter(|row| !row.is_active)
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        let (invoice_id, amount) = (row.invoice_id, row.amount.get());
        if !state.active_invoice(invoice_id) {
            return Err(StoreError::ParentInactive(Entity::Invoice));
        }
        state.check_paid_room(invoice_id, amount)?;
        let row = state.transactions.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.add_paid(invoice_id, amount);
        state.finish_write(&ctx, "restore", Entity::Transaction, id.get());
        Ok(state.transaction(id.get()).expect("just written"))
    }

    async fn list_transactions(&self, query: &TransactionQuery) -> StoreResult<Page<Transaction>> {
        let state = self.read();
        let mut rows: Vec<(i64, &TransactionRow)> = state
            .transactions
            .iter()
            .map(|(id, row)| (*id, row))
            .filter(|(_, row)| transaction_matches(row, &query.filter))
            .collect();
        let dir = query.sort.dir;
        rows.sort_by(|(a_id, a), (b_id, b)| {
            let ordering = match query.sort.key {
                TransactionSortKey::TransactionDate => a.transaction_date.cmp(&b.transaction_date),
                TransactionSortKey::Amount => a.amount.cmp(&b.amount),
                TransactionSortKey::TransactionType => a.transaction_type.name().cmp(b.transaction_type.name()),
                TransactionSortKey::CreatedAt => a.created_at.cmp(&b.created_at),
            };
            cmp_then_id(ordering, *a_id, *b_id, dir)
        });
        let ids: Vec<i64> = rows.into_iter().map(|(id, _)| id).collect();
        Ok(query.page.slice(ids).map(|id| state.transaction(id).expect("listed above")))
    }

    // Users

    async fn insert_user(&self, user: NewUserRecord, ctx: WriteContext) -> StoreResult<User> {
        let mut state = self.write();
        let id = state.insert_user_row(user, ctx.at)?;
        state.finish_write(&ctx, "create", Entity::User, id);
        Ok(state.user(id).expect("just written"))
    }

    async fn get_user(&self, id: UserId) -> StoreResult<Option<User>> {
        Ok(self.read().user(id.get()))
    }

    async fn list_users(&self) -> StoreResult<Vec<User>> {
        let state = self.read();
        Ok(state.users.iter().filter(|(_, user)| user.is_active).filter_map(|(id, _)| state.user(*id)).collect())
    }

    async fn update_user(&self, id: UserId, user: UserUpdate, ctx: WriteContext) -> StoreResult<User> {
        let mut state = self.write();
        let current =
            state.users.get(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::User))?;
        let email_key = key(&user.email);
        let leaves_admin = current.role_id == ADMIN_ROLE_ID.get() && user.role_id != ADMIN_ROLE_ID;
        if user.role_id.get() != current.role_id && !state.active_role(user.role_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Role));
        }
        if state.email_taken(&email_key, Some(id.get())) {
            return Err(StoreError::Conflict { field: "email" });
        }
        if leaves_admin && state.active_admins() <= 1 {
            return Err(StoreError::Rule(RuleBroken::LastAdmin));
        }
        let row = state.users.get_mut(&id.get()).expect("checked above");
        row.first_name = user.first_name;
        row.last_name = user.last_name;
        row.email = user.email;
        row.email_key = email_key;
        row.role_id = user.role_id.get();
        state.finish_write(&ctx, "update", Entity::User, id.get());
        Ok(state.user(id.get()).expect("just written"))
    }

    async fn delete_user(&self, id: UserId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = state.users.get(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::User))?;
        if row.role_id == ADMIN_ROLE_ID.get() && state.active_admins() <= 1 {
            return Err(StoreError::Rule(RuleBroken::LastAdmin));
        }
        let row = state.users.get_mut(&id.get()).expect("checked above");
        row.is_active = false;
        row.tokens_revoked_at = ctx.at;
        state.finish_write(&ctx, "delete", Entity::User, id.get());
        Ok(())
    }

    async fn restore_user(&self, id: UserId, ctx: WriteContext) -> StoreResult<User> {
        let mut state = self.write();
        let row = state.users.get(&id.get()).filter(|row| !row.is_active).ok_or(StoreError::NotFound(Entity::User))?;
        if !state.active_role(row.role_id) {
            return Err(StoreError::ParentInactive(Entity::Role));
        }
        if state.email_taken(&row.email_key.clone(), Some(id.get())) {
            return Err(StoreError::Conflict { field: "email" });
        }
        state.users.get_mut(&id.get()).expect("checked above").is_active = true;
        state.finish_write(&ctx, "restore", Entity::User, id.get());
        Ok(state.user(id.get()).expect("just written"))
    }

    async fn update_profile(&self, id: UserId, profile: ProfileUpdate, ctx: WriteContext) -> StoreResult<User> {
        let mut state = self.write();
        if !state.users.get(&id.get()).is_some_and(|row| row.is_active) {
            return Err(StoreError::NotFound(Entity::User));
        }
        let email_key = key(&profile.email);
        if state.email_taken(&email_key, Some(id.get())) {
            return Err(StoreError::Conflict { field: "email" });
        }
        let row = state.users.get_mut(&id.get()).expect("checked above");
        row.first_name = profile.first_name;
        row.last_name = profile.last_name;
        row.email = profile.email;
        row.email_key = email_key;
        state.finish_write(&ctx, "update", Entity::User, id.get());
        Ok(state.user(id.get()).expect("just written"))
    }

    async fn set_password(&self, id: UserId, password_hash: String, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row =
            state.users.get_mut(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::User))?;
        row.password_hash = password_hash;
        row.tokens_revoked_at = ctx.at;
        state.finish_write(&ctx, "password_change", Entity::User, id.get());
        Ok(())
    }

    async fn list_user_policies(&self, user_id: UserId) -> StoreResult<Vec<Policy>> {
        let state = self.read();
        Ok(state
            .user_policies
            .iter()
            .filter(|(user, policy)| *user == user_id.get() && state.active_policy(*policy))
            .filter_map(|(_, policy)| state.policy(*policy))
            .collect())
    }

    async fn attach_user_policy(&self, user_id: UserId, policy_id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        if !state.users.get(&user_id.get()).is_some_and(|user| user.is_active) {
            return Err(StoreError::NotFound(Entity::User));
        }
        if !state.active_policy(policy_id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        state.user_policies.insert((user_id.get(), policy_id.get()));
        state.finish_write(&ctx, "attach_policy", Entity::User, user_id.get());
        Ok(())
    }

    async fn detach_user_policy(&self, user_id: UserId, policy_id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        if !state.users.get(&user_id.get()).is_some_and(|user| user.is_active) {
            return Err(StoreError::NotFound(Entity::User));
        }
        state.user_policies.remove(&(user_id.get(), policy_id.get()));
        state.finish_write(&ctx, "detach_policy", Entity::User, user_id.get());
        Ok(())
    }

    // Roles

    async fn insert_role(&self, role: NewRole, ctx: WriteContext) -> StoreResult<Role> {
        let mut state = self.write();
        let name_key = key(&role.name);
        if state.role_name_taken(&name_key, None) {
            return Err(StoreError::Conflict { field: "name" });
        }
        let id = state.next("role");
        state.roles.insert(
            id,
            RoleRow {
                name: role.name,
                name_key,
                description: role.description,
                is_system: false,
                is_active: true,
                created_at: ctx.at,
            },
        );
        state.finish_write(&ctx, "create", Entity::Role, id);
        Ok(state.role(id).expect("just written"))
    }

    async fn get_role(&self, id: RoleId) -> StoreResult<Option<Role>> {
        Ok(self.read().role(id.get()))
    }

    async fn list_roles(&self) -> StoreResult<Vec<Role>> {
        let state = self.read();
        Ok(state.roles.keys().filter_map(|id| state.role(*id)).collect())
    }

    async fn update_role(&self, id: RoleId, role: NewRole, ctx: WriteContext) -> StoreResult<Role> {
        let mut state = self.write();
        let current =
            state.roles.get(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::Role))?;
        let name_key = key(&role.name);
        if current.is_system && current.name != role.name {
            return Err(StoreError::Rule(RuleBroken::SystemRoleRename));
        }
        if state.role_name_taken(&name_key, Some(id.get())) {
            return Err(StoreError::Conflict { field: "name" });
        }
        let row = state.roles.get_mut(&id.get()).expect("checked above");
        row.name = role.name;
        row.name_key = name_key;
        row.description = role.description;
        state.finish_write(&ctx, "update", Entity::Role, id.get());
        Ok(state.role(id.get()).expect("just written"))
    }

    async fn delete_role(&self, id: RoleId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row =
            state.roles.get_mut(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::Role))?;
        if row.is_system {
            return Err(StoreError::Rule(RuleBroken::SystemRoleDelete));
        }
        row.is_active = false;
        state.finish_write(&ctx, "delete", Entity::Role, id.get());
        Ok(())
    }

    async fn restore_role(&self, id: RoleId, ctx: WriteContext) -> StoreResult<Role> {
        let mut state = self.write();
        let row =
            state.roles.get_mut(&id.get()).filter(|row| !row.is_active).ok_or(StoreError::NotFound(Entity::Role))?;
        row.is_active = true;
        state.finish_write(&ctx, "restore", Entity::Role, id.get());
        Ok(state.role(id.get()).expect("just written"))
    }

    async fn attach_role_policy(&self, role_id: RoleId, policy_id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        if !state.active_role(role_id.get()) {
            return Err(StoreError::NotFound(Entity::Role));
        }
        if !state.active_policy(policy_id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        state.role_policies.insert((role_id.get(), policy_id.get()));
        state.finish_write(&ctx, "attach_policy", Entity::Role, role_id.get());
        Ok(())
    }

    async fn detach_role_policy(&self, role_id: RoleId, policy_id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        if !state.active_role(role_id.get()) {
            return Err(StoreError::NotFound(Entity::Role));
        }
        state.role_policies.remove(&(role_id.get(), policy_id.get()));
        state.finish_write(&ctx, "detach_policy", Entity::Role, role_id.get());
        Ok(())
    }

    // Permissions and policies

    async fn list_permissions(&self) -> StoreResult<Vec<Permission>> {
        Ok(self.read().permissions.values().cloned().collect())
    }

    async fn insert_policy(&self, policy: NewPolicy, ctx: WriteContext) -> StoreResult<Policy> {
        let mut state = self.write();
        let name_key = key(&policy.name);
        let permission_ids = state.check_permissions(&policy.permission_ids)?;
        if state.policy_name_taken(&name_key, None) {
            return Err(StoreError::Conflict { field: "name" });
        }
        let id = state.next("policy");
        state.policies.insert(
            id,
            PolicyRow {
                name: policy.name,
                name_key,
                description: policy.description,
                is_active: true,
                permission_ids,
                created_at: ctx.at,
            },
        );
        state.finish_write(&ctx, "create", Entity::Policy, id);
        Ok(state.policy(id).expect("just written"))
    }

    async fn get_policy(&self, id: PolicyId) -> StoreResult<Option<Policy>> {
        Ok(self.read().policy(id.get()))
    }

    async fn list_policies(&self) -> StoreResult<Vec<Policy>> {
        let state = self.read();
        Ok(state.policies.iter().filter(|(_, row)| row.is_active).filter_map(|(id, _)| state.policy(*id)).collect())
    }

    async fn update_policy(&self, id: PolicyId, policy: NewPolicy, ctx: WriteContext) -> StoreResult<Policy> {
        let mut state = self.write();
        if !state.active_policy(id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        let name_key = key(&policy.name);
        let permission_ids = state.check_permissions(&policy.permission_ids)?;
        if state.policy_name_taken(&name_key, Some(id.get())) {
            return Err(StoreError::Conflict { field: "name" });
        }
        let row = state.policies.get_mut(&id.get()).expect("checked above");
        row.name = policy.name;
        row.name_key = name_key;
        row.description = policy.description;
        row.permission_ids = permission_ids;
        state.finish_write(&ctx, "update", Entity::Policy, id.get());
        Ok(state.policy(id.get()).expect("just written"))
    }

    async fn delete_policy(&self, id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = state
            .policies
            .get_mut(&id.get())
            .filter(|row| row.is_active)
            .ok_or(StoreError::NotFound(Entity::Policy))?;
        row.is_active = false;
        state.finish_write(&ctx, "delete", Entity::Policy, id.get());
        Ok(())
    }

    async fn restore_policy(&self, id: PolicyId, ctx: WriteContext) -> StoreResult<Policy> {
        let mut state = self.write();
        let row =
            state.policies.get(&id.get()).filter(|row| !row.is_active).ok_or(StoreError::NotFound(Entity::Policy))?;
        if state.policy_name_taken(&row.name_key.clone(), Some(id.get())) {
            return Err(StoreError::Conflict { field: "name" });
        }
        state.policies.get_mut(&id.get()).expect("checked above").is_active = true;
        state.finish_write(&ctx, "restore", Entity::Policy, id.get());
        Ok(state.policy(id.get()).expect("just written"))
    }

    async fn add_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> StoreResult<()> {
        let mut state = self.write();
        if !state.active_policy(policy_id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        if !state.permissions.contains_key(&permission_id.get()) {
            return Err(StoreError::NotFound(Entity::Permission));
        }
        state.policies.get_mut(&policy_id.get()).expect("checked above").permission_ids.insert(permission_id.get());
        state.finish_write(&ctx, "add_permission", Entity::Policy, policy_id.get());
        Ok(())
    }

    async fn remove_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> StoreResult<()> {
        let mut state = self.write();
        if !state.active_policy(policy_id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        state.policies.get_mut(&policy_id.get()).expect("checked above").permission_ids.remove(&permission_id.get());
        state.finish_write(&ctx, "remove_permission", Entity::Policy, policy_id.get());
        Ok(())
    }

    // Settings

    async fn list_settings(&self) -> StoreResult<Vec<Setting>> {
        Ok(self.read().settings.values().cloned().collect())
    }

    async fn get_setting(&self, key: &str) -> StoreResult<Option<Setting>> {
        Ok(self.read().settings.get(key).cloned())
    }

    async fn update_setting(&self, key: &str, value: String, ctx: WriteContext) -> StoreResult<Setting> {
        let mut state = self.write();
        let setting = state.settings.get_mut(key).ok_or(StoreError::NotFound(Entity::Setting))?;
        setting.value = value;
        let setting = setting.clone();
        state.audit(ctx.audit("update", Entity::Setting, None));
        Ok(setting)
    }

    // Dashboard

    async fn dashboard_summary(&self, recent_from: Timestamp) -> StoreResult<Summary> {
        let state = self.read();
        let active_invoices = state.invoices.values().filter(|invoice| invoice.is_active);
        let total_due: Decimal = active_invoices.map(|invoice| invoice.amount.get() - invoice.paid).sum();
        let active_payments = state.transactions.values().filter(|payment| payment.is_active);
        let total_paid: Decimal = active_payments.clone().map(|payment| payment.amount.get()).sum();
        let recent = active_payments.filter(|payment| payment.transaction_date >= recent_from).count();
        Ok(Summary {
            total_vendors: state.vendors.len() as u64,
            total_invoices: state.invoices.len() as u64,
            total_due: total_due.normalize(),
            total_paid: total_paid.normalize(),
            recent_transactions: recent as u64,
        })
    }

    async fn top_vendors(&self, limit: u32) -> StoreResult<Vec<TopVendor>> {
        let state = self.read();
        let mut ranked: Vec<(i64, &VendorRow, VendorTotals, u64)> = state
            .vendors
            .iter()
            .filter(|(_, vendor)| vendor.is_active)
            .map(|(id, vendor)| {
                let (totals, count) = state.vendor_totals(*id);
                (*id, vendor, totals, count)
            })
            .collect();
        ranked.sort_by(|(a_id, a, a_totals, _), (b_id, b, b_totals, _)| {
            b_totals
                .outstanding_balance
                .cmp(&a_totals.outstanding_balance)
                .then_with(|| a.name_key.cmp(&b.name_key))
                .then(a_id.cmp(b_id))
        });
        Ok(ranked
            .into_iter()
            .take(limit as usize)
            .map(|(id, vendor, totals, count)| TopVendor {
                vendor_id: VendorId(id),
                vendor_name: vendor.name.clone(),
                outstanding_balance: totals.outstanding_balance,
                total_invoices: count,
            })
            .collect())
    }

    async fn recent_invoices(&self, limit: u32, today_start: Timestamp) -> StoreResult<Vec<Invoice>> {
        let state = self.read();
        let mut ids: Vec<(Timestamp, i64)> = state.invoices.iter().map(|(id, row)| (row.created_at, *id)).collect();
        ids.sort_by(|a, b| b.cmp(a));
        Ok(ids
            .into_iter()
            .take(limit as usize)
            .map(|(_, id)| state.invoice(id, today_start).expect("listed above"))
            .collect())
    }

    async fn payment_totals(&self, windows: &[(Timestamp, Timestamp)]) -> StoreResult<Vec<PeriodTotal>> {
        let state = self.read();
        let mut totals = vec![PeriodTotal::default(); windows.len()];
        for payment in state.transactions.values().filter(|payment| payment.is_active) {
            for (total, (start, end)) in totals.iter_mut().zip(windows) {
                if payment.transaction_date >= *start && payment.transaction_date < *end {
                    total.total_amount += payment.amount.get();
                    total.transaction_count += 1;
                }
            }
        }
        for total in &mut totals {
            total.total_amount = total.total_amount.normalize();
        }
        Ok(totals)
    }

    // Audit

    async fn list_audit(&self, query: &AuditQuery) -> StoreResult<Page<AuditEntry>> {
        let state = self.read();
        let filter = &query.filter;
        let entries: Vec<AuditEntry> = state
            .audit
            .iter()
            .rev()
            .filter(|entry| {
                filter.entity.as_deref().is_none_or(|entity| entry.entity.eq_ignore_ascii_case(entity))
                    && filter.entity_id.is_none_or(|id| entry.entity_id == Some(id))
                    && filter.user_id.is_none_or(|user| entry.user_id == Some(user))
                    && filter.from_date.is_none_or(|from| entry.at >= from)
                    && filter.to_date.is_none_or(|to| entry.at <= to)
            })
            .cloned()
            .collect();
        let mut entries = entries;
        entries.sort_by(|a, b| b.at.cmp(&a.at).then(b.id.cmp(&a.id)));
        Ok(query.page.slice(entries))
    }

    // Exports

    async fn export_vendors(
        &self,
        filter: &VendorFilter,
        after: Option<VendorId>,
        limit: u32,
    ) -> StoreResult<Vec<Vendor>> {
        let state = self.read();
        Ok(state
            .vendors
            .range(after_id(after.map(VendorId::get)))
            .filter(|(_, row)| vendor_matches(row, filter))
            .take(limit as usize)
            .map(|(id, _)| state.vendor(*id).expect("listed above"))
            .collect())
    }

    async fn export_invoices(
        &self,
        filter: &InvoiceFilter,
        today_start: Timestamp,
        after: Option<InvoiceId>,
        limit: u32,
    ) -> StoreResult<Vec<Invoice>> {
        let state = self.read();
        Ok(state
            .invoices
            .range(after_id(after.map(InvoiceId::get)))
            .filter(|(id, row)| state.invoice_matches(**id, row, filter, today_start))
            .take(limit as usize)
            .map(|(id, _)| state.invoice(*id, today_start).expect("listed above"))
            .collect())
    }

    async fn export_transactions(
        &self,
        filter: &TransactionFilter,
        after: Option<TransactionId>,
        limit: u32,
    ) -> StoreResult<Vec<Transaction>> {
        let state = self.read();
        Ok(state
            .transactions
            .range(after_id(after.map(TransactionId::get)))
            .filter(|(_, row)| transaction_matches(row, filter))
            .take(limit as usize)
            .map(|(id, _)| state.transaction(*id).expect("listed above"))
            .collect())
    }

    // Imports

    async fn import_vendors(&self, vendors: Vec<ImportedVendor>) -> StoreResult<Vec<VendorId>> {
        let mut state = self.write();
        if vendors.iter().any(|imported| imported.vendor.vendor_type == VendorType::OwnPharmacy) {
            return Err(StoreError::Rule(RuleBroken::OwnPharmacyType));
        }
        let mut ids = Vec::with_capacity(vendors.len());
        for imported in vendors {
            let id = state.insert_vendor_row(imported.vendor, imported.created_at);
            state.vendors.get_mut(&id).expect("just inserted").is_active = imported.is_active;
            ids.push(VendorId(id));
        }
        Ok(ids)
    }

    async fn import_invoices(&self, invoices: Vec<ImportedInvoice>) -> StoreResult<Vec<InvoiceId>> {
        let mut state = self.write();
        // Check the whole batch before writing any of it, so a refused batch changes nothing.
        let mut numbers: std::collections::HashSet<String> = std::collections::HashSet::new();
        for imported in &invoices {
            if !state.vendors.contains_key(&imported.invoice.vendor_id.get()) {
                return Err(StoreError::ParentInactive(Entity::Vendor));
            }
            if imported.is_active {
                let number_key = key(&imported.invoice.invoice_number);
                if state.number_taken(&number_key, None) || !numbers.insert(number_key) {
                    return Err(StoreError::Conflict { field: "invoiceNumber" });
                }
            }
        }
        let mut ids = Vec::with_capacity(invoices.len());
        for imported in invoices {
            let invoice = imported.invoice;
            let id = state.next("invoice");
            state.invoices.insert(
                id,
                InvoiceRow {
                    vendor_id: invoice.vendor_id.get(),
                    number_key: key(&invoice.invoice_number),
                    invoice_number: invoice.invoice_number,
                    amount: invoice.amount,
                    paid: Decimal::ZERO,
                    invoice_date: invoice.invoice_date,
                    due_date: invoice.due_date,
                    description: invoice.description,
                    is_active: imported.is_active,
                    created_at: imported.created_at,
                    updated_at: imported.created_at,
                },
            );
            state.invoices_by_vendor.entry(invoice.vendor_id.get()).or_default().insert(id);
            ids.push(InvoiceId(id));
        }
        Ok(ids)
    }

    async fn import_transactions(&self, transactions: Vec<ImportedTransaction>) -> StoreResult<Vec<TransactionId>> {
        let mut state = self.write();
        if transactions.iter().any(|imported| !state.invoices.contains_key(&imported.transaction.invoice_id.get())) {
            return Err(StoreError::ParentInactive(Entity::Invoice));
        }
        let mut added: HashMap<i64, Decimal> = HashMap::new();
        for imported in transactions.iter().filter(|imported| imported.is_active) {
            *added.entry(imported.transaction.invoice_id.get()).or_default() += imported.transaction.amount.get();
        }
        for (invoice_id, amount) in &added {
            state.check_paid_room(*invoice_id, *amount)?;
        }
        let mut ids = Vec::with_capacity(transactions.len());
        for imported in transactions {
            let payment = imported.transaction;
            let id = state.next("transaction");
            state.transactions.insert(
                id,
                TransactionRow {
                    invoice_id: payment.invoice_id.get(),
                    amount: payment.amount,
                    transaction_date: payment.transaction_date,
                    transaction_type: payment.transaction_type,
                    description: payment.description,
                    is_active: imported.is_active,
                    created_at: imported.created_at,
                    updated_at: imported.created_at,
                },
            );
            if imported.is_active {
                state.add_paid(payment.invoice_id.get(), payment.amount.get());
            }
            ids.push(TransactionId(id));
        }
        Ok(ids)
    }
}
