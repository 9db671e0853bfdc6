//! The engine: one documented method per use case of the API.
//!
//! [`PharmaPay`] owns the rules: who may call what, what input is valid, what "today" is, how
//! computed figures are derived. It delegates every read and every atomic write to its
//! [`Store`], and never reads, decides and writes across two store calls where rows could
//! change in between: such invariants are the store's (see [`crate::store`]).
//!
//! Methods that act for a caller take the [`Principal`] that [`PharmaPay::authenticate`]
//! returned for their token. Each method checks the caller's permission first, so an
//! unauthorised caller learns nothing about the records (403 before 404).

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use tracing::{info, instrument, warn};

use crate::access::{ADMIN_ROLE_ID, Access, Action, Collection, Permission, Principal};
use crate::auth::{IssuedToken, PasswordOptions, Passwords, Secret, TokenConfigError, TokenSettings, Tokens};
use crate::clock::{BusinessCalendar, Clock, MonthWindow, to_micros};
use crate::dashboard::{MonthlyTotal, Summary, TopVendor};
use crate::domain::setting::TIME_ZONE;
use crate::domain::{
    AuditEntry, AuditQuery, Invoice, InvoiceDetail, InvoiceFilter, InvoiceQuery, NewAuditEntry, NewInvoice, NewPolicy,
    NewRole, NewTransaction, NewUser, NewVendor, PasswordChange, Policy, Profile, ProfileUpdate, Role, Setting,
    Transaction, TransactionFilter, TransactionQuery, User, UserUpdate, Vendor, VendorFilter, VendorQuery, VendorType,
};
use crate::error::{Entity, Error, FieldErrors, IdempotencyClash, Result, RuleBroken};
use crate::idempotency::{
    ClaimOutcome, Created, IdempotencyClaim, IdempotencyKey, IdempotencyRequest, IdempotencyTicket, Replay,
};
use crate::ids::{InvoiceId, PermissionId, PolicyId, RoleId, TransactionId, UserId, VendorId};
use crate::paging::Page;
use crate::report::{Report, ReportError, ReportKind, SheetWriter};
use crate::store::{LoginGate, NewUserRecord, Store, StoreError, WriteContext};
use crate::text::{self, CODE_MAX, EMAIL_MAX, Email, Lines, NAME_MAX, Password, TEXT_MAX};

/// Failed logins allowed per email within [`LOGIN_WINDOW`] (D21).
pub const LOGIN_ATTEMPT_LIMIT: u32 = 5;
/// The window of the login limit (D21).
pub const LOGIN_WINDOW: SignedDuration = SignedDuration::from_mins(15);
/// How long the business time zone read from the settings is trusted before it is read again.
/// Changes made through this engine apply at once; changes made through another server sharing
/// the database apply within this time.
pub const TIME_ZONE_REFRESH: Duration = Duration::from_secs(5);
/// The dashboard's window for recent payments: today and the 29 days before it (D12).
pub const RECENT_DAYS: i64 = 30;

/// How the engine signs tokens and hashes passwords.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// The signing secret; `None` takes the one kept in the store, generating it on first use
    /// so every server sharing the store agrees (D28).
    pub jwt_secret: Option<Secret>,
    /// The `iss` claim (default `pharmapay`).
    pub jwt_issuer: String,
    /// The `aud` claim (default `pharmapay`).
    pub jwt_audience: String,
    /// Token lifetime (default 24 hours).
    pub token_lifetime: SignedDuration,
    /// Argon2id costs and concurrency.
    pub passwords: PasswordOptions,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            jwt_secret: None,
            jwt_issuer: "pharmapay".into(),
            jwt_audience: "pharmapay".into(),
            token_lifetime: SignedDuration::from_hours(24),
            passwords: PasswordOptions::default(),
        }
    }
}

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The token settings are invalid.
    #[error(transparent)]
    Tokens(#[from] TokenConfigError),
    /// The store failed while reading the kept secret.
    #[error("could not read the token secret from the store")]
    Store(#[from] StoreError),
}

/// A signed-in session: what login, onboarding and a password change return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The signed token and its expiry.
    pub token: IssuedToken,
    /// The signed-in user.
    pub user: User,
}

/// The pharmacy's details at onboarding (spec, Setup body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PharmacyDetails {
    /// Name (required).
    pub name: String,
    /// Address.
    pub address: Option<String>,
    /// Phone.
    pub phone: Option<String>,
    /// Email.
    pub email: Option<String>,
    /// Primary drug licence.
    pub drug_license_number1: Option<String>,
}

/// The first admin's account at onboarding (spec, Setup body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminAccount {
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Email (D29).
    pub email: String,
    /// Password, at least 8 characters (D29).
    pub password: Password,
}

/// The one-time setup: the pharmacy and its first admin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Onboarding {
    /// The pharmacy, which becomes the OwnPharmacy vendor.
    pub pharmacy: PharmacyDetails,
    /// The first admin.
    pub admin: AdminAccount,
}

struct CachedCalendar {
    calendar: BusinessCalendar,
    read_at: Instant,
}

/// The pharmapay engine over a store `S`.
pub struct PharmaPay<S> {
    store: S,
    clock: Box<dyn Clock>,
    tokens: Tokens,
    passwords: Passwords,
    calendar: Mutex<Option<CachedCalendar>>,
}

fn store_error(error: StoreError) -> Error {
    match error {
        StoreError::NotFound(entity) => Error::NotFound { entity },
        StoreError::Conflict { field } => Error::Conflict { entity: conflict_entity(field), field },
        StoreError::ParentInactive(parent) => {
            Error::invalid(parent_field(parent), format!("must reference an active {}", parent.name().to_lowercase()))
        }
        StoreError::Rule(rule) => Error::Rule(rule),
        unavailable @ StoreError::Unavailable(_) => Error::Unavailable(unavailable),
        other => Error::Store(other),
    }
}

/// Maps a payment write's failures: a paid total past the largest amount is the amount's fault.
fn payment_error(error: StoreError) -> Error {
    match error {
        StoreError::Rule(RuleBroken::PaidTotalTooLarge) => {
            Error::invalid("amount", "would bring the invoice's paid total above 999999999999.9999")
        }
        other => store_error(other),
    }
}

/// Setting keys are short names without control characters; anything else cannot name a
/// setting, and is answered "not found" before it reaches the store.
fn plausible_setting_key(key: &str) -> bool {
    key.len() <= NAME_MAX && !key.chars().any(char::is_control)
}

fn conflict_entity(field: &str) -> Entity {
    match field {
        "invoiceNumber" => Entity::Invoice,
        "email" => Entity::User,
        _ => Entity::Role,
    }
}

fn parent_field(parent: Entity) -> &'static str {
    match parent {
        Entity::Vendor => "vendorId",
        Entity::Invoice => "invoiceId",
        Entity::Role => "roleId",
        Entity::Permission => "permissionIds",
        Entity::Policy => "policyId",
        Entity::User => "userId",
        _ => "id",
    }
}

/// Maps a restore's failures: an inactive parent breaks a rule rather than a field (D15).
fn restore_error(error: StoreError) -> Error {
    match error {
        StoreError::ParentInactive(parent) => Error::Rule(RuleBroken::ParentInactive(parent)),
        StoreError::Conflict { field } => Error::Conflict { entity: conflict_entity(field), field },
        other => store_error(other),
    }
}

fn conflict_in(entity: Entity) -> impl Fn(StoreError) -> Error {
    move |error| match error {
        StoreError::Conflict { field } => Error::Conflict { entity, field },
        other => store_error(other),
    }
}

fn check_reason(reason: Option<String>) -> Result<Option<String>> {
    text::optional(reason.as_deref(), TEXT_MAX, Lines::Multi)
        .map_err(|error| Error::invalid("reason", error.to_string()))
}

fn decimal_text(value: rust_decimal::Decimal) -> Value {
    Value::String(value.normalize().to_string())
}

fn vendor_changes(vendor: &NewVendor) -> String {
    json!({
        "name": vendor.name,
        "vendorType": vendor.vendor_type.name(),
        "address": vendor.address,
        "phone": vendor.phone,
        "email": vendor.email,
        "drugLicenseNumber1": vendor.drug_license_number1,
        "drugLicenseNumber2": vendor.drug_license_number2,
        "additionalDrugLicenseNumbers": vendor.additional_drug_license_numbers,
    })
    .to_string()
}

fn invoice_changes(invoice: &NewInvoice) -> String {
    json!({
        "vendorId": invoice.vendor_id.get(),
        "invoiceNumber": invoice.invoice_number,
        "amount": decimal_text(invoice.amount.get()),
        "invoiceDate": invoice.invoice_date.to_string(),
        "dueDate": invoice.due_date.to_string(),
        "description": invoice.description,
    })
    .to_string()
}

fn transaction_changes(transaction: &NewTransaction) -> String {
    json!({
        "invoiceId": transaction.invoice_id.get(),
        "amount": decimal_text(transaction.amount.get()),
        "transactionDate": transaction.transaction_date.to_string(),
        "transactionType": transaction.transaction_type.name(),
        "description": transaction.description,
    })
    .to_string()
}

fn person_changes(first_name: &str, last_name: &str, email: &str, role_id: Option<RoleId>) -> String {
    let mut changes = json!({ "firstName": first_name, "lastName": last_name, "email": email });
    if let Some(role_id) = role_id {
        changes["roleId"] = json!(role_id.get());
    }
    changes.to_string()
}

impl<S: Store> PharmaPay<S> {
    /// Starts an engine over `store`, reading "now" from `clock`.
    ///
    /// When `options.jwt_secret` is `None`, the secret kept in the store is used, and one is
    /// generated and kept on first start (D28).
    ///
    /// # Errors
    /// [`OpenError::Tokens`] for a secret under 32 characters or invalid token settings;
    /// [`OpenError::Store`] when the store cannot be read.
    pub async fn open(store: S, clock: impl Clock, options: EngineOptions) -> Result<Self, OpenError> {
        let secret = match options.jwt_secret {
            Some(secret) => secret,
            None => store.token_secret(Secret::generate()).await?,
        };
        let tokens = Tokens::new(TokenSettings {
            secret,
            issuer: options.jwt_issuer,
            audience: options.jwt_audience,
            lifetime: options.token_lifetime,
        })?;
        Ok(Self {
            store,
            clock: Box::new(clock),
            tokens,
            passwords: Passwords::new(options.passwords),
            calendar: Mutex::new(None),
        })
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The current instant, at the microsecond precision stores keep.
    pub fn now(&self) -> Timestamp {
        to_micros(self.clock.now())
    }

    /// The business calendar (D3), from the `TimeZone` setting.
    ///
    /// # Errors
    /// [`Error::Unavailable`] or [`Error::Store`] when the setting cannot be read.
    pub async fn calendar(&self) -> Result<BusinessCalendar> {
        {
            let cached = self.calendar.lock().expect("calendar cache lock is never poisoned");
            if let Some(cached) = cached.as_ref()
                && cached.read_at.elapsed() < TIME_ZONE_REFRESH
            {
                return Ok(cached.calendar.clone());
            }
        }
        let setting = self.store.get_setting(TIME_ZONE).await.map_err(store_error)?;
        let calendar = match setting {
            Some(setting) => BusinessCalendar::parse(&setting.value).unwrap_or_else(|_| {
                warn!(zone = %setting.value, "the TimeZone setting is not a known zone; using UTC");
                BusinessCalendar::utc()
            }),
            None => BusinessCalendar::utc(),
        };
        self.remember_calendar(calendar.clone());
        Ok(calendar)
    }

    fn remember_calendar(&self, calendar: BusinessCalendar) {
        let mut cached = self.calendar.lock().expect("calendar cache lock is never poisoned");
        *cached = Some(CachedCalendar { calendar, read_at: Instant::now() });
    }

    /// The first instant of today in the business time zone.
    async fn today_start(&self) -> Result<Timestamp> {
        let calendar = self.calendar().await?;
        Ok(calendar.start_of(calendar.date_of(self.now())))
    }

    fn ctx(&self, principal: &Principal) -> WriteContext {
        WriteContext::new(Some(principal.user_id), self.now())
    }

    // Installation

    /// Succeeds when the store answers (D25).
    ///
    /// # Errors
    /// [`Error::Unavailable`] when it does not.
    pub async fn health(&self) -> Result<()> {
        self.store.health().await.map_err(|error| match error {
            unavailable @ StoreError::Unavailable(_) => Error::Unavailable(unavailable),
            other => Error::Unavailable(other),
        })
    }

    /// Whether onboarding is complete: an OwnPharmacy vendor and a user exist.
    ///
    /// # Errors
    /// Store failures.
    pub async fn onboarding_status(&self) -> Result<bool> {
        self.store.is_onboarded().await.map_err(store_error)
    }

    /// Creates the pharmacy's own vendor record and the first admin, and signs the admin in.
    /// Runs once: a second call answers [`RuleBroken::AlreadyOnboarded`].
    ///
    /// # Errors
    /// [`Error::Validation`] with paths under `pharmacy.` and `adminUser.`;
    /// [`Error::Rule`] when already onboarded.
    #[instrument(skip_all)]
    pub async fn complete_onboarding(&self, setup: Onboarding) -> Result<Session> {
        if self.onboarding_status().await? {
            return Err(Error::Rule(RuleBroken::AlreadyOnboarded));
        }
        let mut errors = FieldErrors::new();
        let pharmacy = NewVendor {
            name: setup.pharmacy.name,
            vendor_type: VendorType::OwnPharmacy,
            address: setup.pharmacy.address,
            phone: setup.pharmacy.phone,
            email: setup.pharmacy.email,
            drug_license_number1: setup.pharmacy.drug_license_number1,
            drug_license_number2: None,
            additional_drug_license_numbers: Vec::new(),
        }
        .validate()
        .map_err(|fields| errors.merge_prefixed("pharmacy", fields))
        .ok();
        let mut admin = setup.admin;
        let mut person_errors = FieldErrors::new();
        for (value, field) in [(&mut admin.first_name, "firstName"), (&mut admin.last_name, "lastName")] {
            match text::required(value, NAME_MAX) {
                Ok(clean) => *value = clean,
                Err(error) => person_errors.add(field, error.to_string()),
            }
        }
        match Email::parse(&admin.email) {
            Ok(email) => admin.email = email.as_str().to_owned(),
            Err(error) => person_errors.add("email", error.to_string()),
        }
        errors.merge_prefixed("adminUser", person_errors);
        errors.into_result()?;
        let pharmacy = pharmacy.expect("validated when there are no errors");
        let password_hash = self.passwords.hash(admin.password.expose()).await?;
        let record = NewUserRecord {
            first_name: admin.first_name,
            last_name: admin.last_name,
            email: admin.email,
            role_id: ADMIN_ROLE_ID,
            password_hash,
        };
        let mut ctx = WriteContext::new(None, self.now());
        ctx.changes = Some(json!({ "pharmacy": pharmacy.name, "adminEmail": record.email }).to_string());
        let (vendor, user) =
            self.store.complete_onboarding(pharmacy, record, ctx).await.map_err(|error| match error {
                StoreError::Conflict { field } => Error::Conflict {
                    entity: Entity::User,
                    field: if field == "email" { "adminUser.email" } else { field },
                },
                other => store_error(other),
            })?;
        info!(vendor_id = %vendor.id, user_id = %user.id, "onboarding complete");
        self.issue_session(user, Timestamp::UNIX_EPOCH).await
    }

    async fn issue_session(&self, user: User, tokens_revoked_at: Timestamp) -> Result<Session> {
        let is_admin = user.role_id == ADMIN_ROLE_ID;
        let perm = if is_admin {
            Vec::new()
        } else {
            self.store.resolve_permissions(user.id).await.map_err(store_error)?.iter().map(Permission::code).collect()
        };
        let token = self.tokens.issue(&user, is_admin, perm, self.now(), tokens_revoked_at)?;
        Ok(Session { token, user })
    }

    // Authentication

    /// Checks an email and password and signs the user in (spec, Auth; D21).
    ///
    /// Unknown emails, inactive users and wrong passwords all answer
    /// [`Error::InvalidCredentials`] after the same amount of hashing work. After five failed
    /// attempts for one email within 15 minutes, attempts answer [`Error::Throttled`] until
    /// the window passes; a success resets the count.
    ///
    /// # Errors
    /// [`Error::InvalidCredentials`], [`Error::Throttled`], or store failures.
    #[instrument(skip_all)]
    pub async fn login(&self, email: &str, password: &str) -> Result<Session> {
        let now = self.now();
        // Control characters cannot be part of a stored address (Email::parse refuses them), so
        // such an email is an unknown one. They are replaced before the key reaches the store,
        // whose database may refuse them (PostgreSQL rejects NUL) and so must not see them.
        let email_key: String = text::key(email)
            .chars()
            .take(EMAIL_MAX + 1)
            .map(|c| if c.is_control() { char::REPLACEMENT_CHARACTER } else { c })
            .collect();
        let possible_user = !email.chars().any(char::is_control);
        let gate = self
            .store
            .begin_login_attempt(&email_key, now, LOGIN_ATTEMPT_LIMIT, LOGIN_WINDOW)
            .await
            .map_err(store_error)?;
        if let LoginGate::Throttled { until } = gate {
            let retry_after = until.duration_since(now).unsigned_abs().max(Duration::from_secs(1));
            warn!(retry_after_secs = retry_after.as_secs(), "login throttled");
            self.audit_login("login_throttled", None, &email_key, now).await;
            return Err(Error::Throttled { retry_after: Duration::from_secs(retry_after.as_secs().max(1)) });
        }
        let credentials = if password.len() > text::PASSWORD_MAX_BYTES || !possible_user {
            None
        } else {
            self.store.find_credentials(&email_key).await.map_err(store_error)?
        };
        let verified = match &credentials {
            Some(found) => {
                let matches = self.passwords.verify(password, &found.password_hash).await;
                matches && found.user.is_active
            }
            None => {
                self.passwords.verify_decoy(password).await;
                false
            }
        };
        let Some(credentials) = credentials.filter(|_| verified) else {
            let user_id = None;
            warn!("login failed");
            self.audit_login("login_failed", user_id, &email_key, now).await;
            return Err(Error::InvalidCredentials);
        };
        self.store.clear_login_attempts(&email_key).await.map_err(store_error)?;
        info!(user_id = %credentials.user.id, "login succeeded");
        self.audit_login("login", Some(credentials.user.id), &email_key, now).await;
        self.issue_session(credentials.user, credentials.tokens_revoked_at).await
    }

    async fn audit_login(&self, action: &'static str, user_id: Option<UserId>, email_key: &str, at: Timestamp) {
        let entry = NewAuditEntry {
            at,
            user_id,
            action,
            entity: Entity::User.name(),
            entity_id: user_id.map(UserId::get),
            reason: None,
            changes: Some(json!({ "email": email_key }).to_string()),
        };
        if let Err(error) = self.store.append_audit(entry).await {
            warn!(%error, "could not record a login in the audit log");
        }
    }

    /// Verifies a bearer token and returns the caller it proves (spec, Authentication; D20).
    ///
    /// The token must be HS256-signed with this engine's secret, carry this engine's issuer
    /// and audience and an unexpired `exp`, and its user must still be active with no password
    /// change since the token was issued.
    ///
    /// # Errors
    /// [`Error::Unauthenticated`] for any failure of the above; store failures.
    pub async fn authenticate(&self, token: &str) -> Result<Principal> {
        let verified = self.tokens.verify(token, self.now())?;
        let state = self.store.session_state(verified.principal.user_id).await.map_err(store_error)?;
        match state {
            Some(state) if state.is_active && verified.issued_at_second > state.tokens_revoked_at.as_second() => {
                Ok(verified.principal)
            }
            _ => Err(Error::Unauthenticated),
        }
    }

    // Idempotency (D23)

    async fn create_idempotently<T, W, WF, R, RF>(
        &self,
        principal: &Principal,
        request: Option<&IdempotencyRequest>,
        write: W,
        refetch: R,
    ) -> Result<Created<T>>
    where
        W: FnOnce(Option<IdempotencyTicket>) -> WF,
        WF: Future<Output = Result<T>>,
        R: FnOnce(i64) -> RF,
        RF: Future<Output = Result<Option<T>>>,
    {
        let Some(request) = request else {
            return write(None).await.map(Created::New);
        };
        if request.fingerprint.is_empty() || request.fingerprint.len() > 128 {
            return Err(Error::invalid("Idempotency-Key", "the request fingerprint must be 1 to 128 characters"));
        }
        let claim = IdempotencyClaim {
            user_id: principal.user_id,
            key: request.key.clone(),
            fingerprint: request.fingerprint.clone(),
            now: self.now(),
        };
        match self.store.claim_idempotency_key(claim).await.map_err(store_error)? {
            ClaimOutcome::Claimed => {}
            ClaimOutcome::InProgress => return Err(Error::Idempotency(IdempotencyClash::InProgress)),
            ClaimOutcome::Mismatch => return Err(Error::Idempotency(IdempotencyClash::DifferentRequest)),
            ClaimOutcome::Completed { response: Some(response), .. } => {
                return Ok(Created::Replayed(Replay::Recorded(response)));
            }
            ClaimOutcome::Completed { entity_id, response: None } => {
                let current = refetch(entity_id).await?.ok_or(Error::Idempotency(IdempotencyClash::InProgress))?;
                return Ok(Created::Replayed(Replay::Current(current)));
            }
        }
        let ticket = IdempotencyTicket { user_id: principal.user_id, key: request.key.clone() };
        match write(Some(ticket)).await {
            Ok(created) => Ok(Created::New(created)),
            Err(error) => {
                if let Err(release) = self.store.release_idempotency_key(principal.user_id, &request.key).await {
                    warn!(error = %release, "could not release an idempotency key after a failed create");
                }
                Err(error)
            }
        }
    }

    /// Keeps the response sent for an idempotent create, so a retry gets the same bytes (D23).
    ///
    /// # Errors
    /// Store failures.
    pub async fn record_idempotent_response(
        &self,
        principal: &Principal,
        key: &IdempotencyKey,
        response: Vec<u8>,
    ) -> Result<()> {
        self.store.record_idempotent_response(principal.user_id, key, response).await.map_err(store_error)
    }

    // Vendors

    /// Lists vendors (spec, Vendor list query). Listing soft-deleted vendors
    /// (`is_active = false`) needs an admin token.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_vendors(&self, principal: &Principal, query: &VendorQuery) -> Result<Page<Vendor>> {
        principal.require(Access::new(Collection::Vendor, Action::Read))?;
        if !query.filter.is_active {
            principal.require_admin()?;
        }
        self.store.list_vendors(query).await.map_err(store_error)
    }

    /// One active vendor with its totals (D11).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or soft-deleted.
    pub async fn get_vendor(&self, principal: &Principal, id: VendorId) -> Result<Vendor> {
        principal.require(Access::new(Collection::Vendor, Action::Read))?;
        self.store
            .get_vendor(id)
            .await
            .map_err(store_error)?
            .filter(|vendor| vendor.is_active)
            .ok_or(Error::not_found(Entity::Vendor))
    }

    /// Creates a vendor; the type may not be OwnPharmacy (spec, Vendors).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_vendor(
        &self,
        principal: &Principal,
        vendor: NewVendor,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Vendor>> {
        principal.require(Access::new(Collection::Vendor, Action::Create))?;
        let vendor = self.check_new_vendor(vendor)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(vendor_changes(&vendor));
        self.create_idempotently(
            principal,
            idempotency,
            |ticket| async move {
                ctx.idempotency = ticket;
                self.store.insert_vendor(vendor, ctx).await.map_err(store_error)
            },
            |id| async move { self.store.get_vendor(VendorId(id)).await.map_err(store_error) },
        )
        .await
    }

    fn check_new_vendor(&self, vendor: NewVendor) -> Result<NewVendor> {
        let mut errors = FieldErrors::new();
        if vendor.vendor_type == VendorType::OwnPharmacy {
            errors.add("vendorType", "OwnPharmacy is created at onboarding only");
        }
        match vendor.validate() {
            Ok(vendor) if errors.is_empty() => Ok(vendor),
            Ok(_) => Err(Error::Validation(errors)),
            Err(fields) => {
                for (field, messages) in fields.iter() {
                    for message in messages {
                        errors.add(field, message.clone());
                    }
                }
                Err(Error::Validation(errors))
            }
        }
    }

    /// Replaces a vendor's fields (D14); the type cannot change to or from OwnPharmacy.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Rule`].
    #[instrument(skip_all, fields(vendor_id = %id))]
    pub async fn update_vendor(&self, principal: &Principal, id: VendorId, vendor: NewVendor) -> Result<Vendor> {
        principal.require(Access::new(Collection::Vendor, Action::Update))?;
        let vendor = vendor.validate().map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(vendor_changes(&vendor));
        self.store.update_vendor(id, vendor, ctx).await.map_err(store_error)
    }

    /// Soft-deletes a vendor, keeping `reason` in the audit log (D16). Its invoices and
    /// payments are kept. The OwnPharmacy vendor cannot be deleted (D14).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`].
    #[instrument(skip_all, fields(vendor_id = %id))]
    pub async fn delete_vendor(&self, principal: &Principal, id: VendorId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Vendor, Action::Delete))?;
        let mut ctx = self.ctx(principal);
        ctx.reason = check_reason(reason)?;
        self.store.delete_vendor(id, ctx).await.map_err(store_error)
    }

    /// Makes a soft-deleted vendor active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or already active.
    #[instrument(skip_all, fields(vendor_id = %id))]
    pub async fn restore_vendor(&self, principal: &Principal, id: VendorId) -> Result<Vendor> {
        principal.require(Access::new(Collection::Vendor, Action::Update))?;
        self.store.restore_vendor(id, self.ctx(principal)).await.map_err(restore_error)
    }

    // Invoices

    /// Lists invoices (spec, Invoice list query), with status as of today (D3, D10).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_invoices(&self, principal: &Principal, query: &InvoiceQuery) -> Result<Page<Invoice>> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        let today_start = self.today_start().await?;
        self.store.list_invoices(query, today_start).await.map_err(store_error)
    }

    /// One active invoice with its vendor (D13).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or canceled.
    pub async fn get_invoice(&self, principal: &Principal, id: InvoiceId) -> Result<InvoiceDetail> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        let today_start = self.today_start().await?;
        self.store
            .get_invoice(id, today_start)
            .await
            .map_err(store_error)?
            .filter(|detail| detail.invoice.is_active)
            .ok_or(Error::not_found(Entity::Invoice))
    }

    /// Creates an invoice for an active vendor (spec; D4, D5).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for an inactive vendor);
    /// [`Error::Conflict`] for a taken number; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_invoice(
        &self,
        principal: &Principal,
        invoice: NewInvoice,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Invoice>> {
        principal.require(Access::new(Collection::Invoice, Action::Create))?;
        let invoice = invoice.validate().map_err(Error::Validation)?;
        let today_start = self.today_start().await?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(invoice_changes(&invoice));
        self.create_idempotently(
            principal,
            idempotency,
            |ticket| async move {
                ctx.idempotency = ticket;
                self.store.insert_invoice(invoice, ctx, today_start).await.map_err(conflict_in(Entity::Invoice))
            },
            |id| async move {
                let detail = self.store.get_invoice(InvoiceId(id), today_start).await.map_err(store_error)?;
                Ok(detail.map(|detail| detail.invoice))
            },
        )
        .await
    }

    /// Replaces an invoice's fields (D14); its payments stay.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(invoice_id = %id))]
    pub async fn update_invoice(&self, principal: &Principal, id: InvoiceId, invoice: NewInvoice) -> Result<Invoice> {
        principal.require(Access::new(Collection::Invoice, Action::Update))?;
        let invoice = invoice.validate().map_err(Error::Validation)?;
        let today_start = self.today_start().await?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(invoice_changes(&invoice));
        self.store.update_invoice(id, invoice, ctx, today_start).await.map_err(conflict_in(Entity::Invoice))
    }

    /// Cancels an invoice (status becomes Canceled); its payments are kept (D10, D16).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(invoice_id = %id))]
    pub async fn delete_invoice(&self, principal: &Principal, id: InvoiceId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Invoice, Action::Delete))?;
        let mut ctx = self.ctx(principal);
        ctx.reason = check_reason(reason)?;
        self.store.delete_invoice(id, ctx).await.map_err(store_error)
    }

    /// Makes a canceled invoice active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Conflict`] when its number is taken;
    /// [`Error::Rule`] when its vendor is inactive.
    #[instrument(skip_all, fields(invoice_id = %id))]
    pub async fn restore_invoice(&self, principal: &Principal, id: InvoiceId) -> Result<Invoice> {
        principal.require(Access::new(Collection::Invoice, Action::Update))?;
        let today_start = self.today_start().await?;
        self.store.restore_invoice(id, self.ctx(principal), today_start).await.map_err(restore_error)
    }

    // Transactions

    /// Lists payments (spec, Transaction list query).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_transactions(
        &self,
        principal: &Principal,
        query: &TransactionQuery,
    ) -> Result<Page<Transaction>> {
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        self.store.list_transactions(query).await.map_err(store_error)
    }

    /// One active payment with its invoice.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or deleted.
    pub async fn get_transaction(&self, principal: &Principal, id: TransactionId) -> Result<Transaction> {
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        self.store
            .get_transaction(id)
            .await
            .map_err(store_error)?
            .filter(|transaction| transaction.is_active)
            .ok_or(Error::not_found(Entity::Transaction))
    }

    async fn tomorrow_start(&self) -> Result<Timestamp> {
        Ok(self.calendar().await?.start_of_next_day(self.now()))
    }

    /// Records a payment against an active invoice (spec; D2: not dated after today).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for an inactive invoice); idempotency
    /// clashes.
    #[instrument(skip_all)]
    pub async fn create_transaction(
        &self,
        principal: &Principal,
        transaction: NewTransaction,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Transaction>> {
        principal.require(Access::new(Collection::Transaction, Action::Create))?;
        let transaction = transaction.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(transaction_changes(&transaction));
        self.create_idempotently(
            principal,
            idempotency,
            |ticket| async move {
                ctx.idempotency = ticket;
                self.store.insert_transaction(transaction, ctx).await.map_err(payment_error)
            },
            |id| async move { self.store.get_transaction(TransactionId(id)).await.map_err(store_error) },
        )
        .await
    }

    /// Replaces a payment's fields (D14), moving it between invoices if `invoice_id` changes.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(transaction_id = %id))]
    pub async fn update_transaction(
        &self,
        principal: &Principal,
        id: TransactionId,
        transaction: NewTransaction,
    ) -> Result<Transaction> {
        principal.require(Access::new(Collection::Transaction, Action::Update))?;
        let transaction = transaction.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(transaction_changes(&transaction));
        self.store.update_transaction(id, transaction, ctx).await.map_err(payment_error)
    }

    /// Soft-deletes a payment; its invoice's paid amount drops by it (D10, D16).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(transaction_id = %id))]
    pub async fn delete_transaction(
        &self,
        principal: &Principal,
        id: TransactionId,
        reason: Option<String>,
    ) -> Result<()> {
        principal.require(Access::new(Collection::Transaction, Action::Delete))?;
        let mut ctx = self.ctx(principal);
        ctx.reason = check_reason(reason)?;
        self.store.delete_transaction(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted payment active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`] when its invoice is canceled.
    #[instrument(skip_all, fields(transaction_id = %id))]
    pub async fn restore_transaction(&self, principal: &Principal, id: TransactionId) -> Result<Transaction> {
        principal.require(Access::new(Collection::Transaction, Action::Update))?;
        self.store.restore_transaction(id, self.ctx(principal)).await.map_err(restore_error)
    }

    // Users

    /// Active users (spec: token only).
    ///
    /// # Errors
    /// Store failures.
    pub async fn list_users(&self, _principal: &Principal) -> Result<Vec<User>> {
        self.store.list_users().await.map_err(store_error)
    }

    /// One active user (spec: token only).
    ///
    /// # Errors
    /// [`Error::NotFound`] when missing or deleted.
    pub async fn get_user(&self, _principal: &Principal, id: UserId) -> Result<User> {
        self.active_user(id).await
    }

    async fn active_user(&self, id: UserId) -> Result<User> {
        self.store
            .get_user(id)
            .await
            .map_err(store_error)?
            .filter(|user| user.is_active)
            .ok_or(Error::not_found(Entity::User))
    }

    /// The caller's resolved permissions (D19); an admin gets the single full-access entry.
    ///
    /// # Errors
    /// Store failures.
    pub async fn my_permissions(&self, principal: &Principal) -> Result<Vec<Permission>> {
        if principal.is_admin {
            return Ok(vec![Permission::full_access()]);
        }
        self.store.resolve_permissions(principal.user_id).await.map_err(store_error)
    }

    /// Creates a user with an active role (D4, D29).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for an inactive role);
    /// [`Error::Conflict`] for a taken email; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_user(
        &self,
        principal: &Principal,
        user: NewUser,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<User>> {
        principal.require(Access::new(Collection::User, Action::Create))?;
        let user = user.validate().map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(person_changes(&user.first_name, &user.last_name, &user.email, Some(user.role_id)));
        self.create_idempotently(
            principal,
            idempotency,
            |ticket| async move {
                ctx.idempotency = ticket;
                let password_hash = self.passwords.hash(user.password.expose()).await?;
                let record = NewUserRecord {
                    first_name: user.first_name,
                    last_name: user.last_name,
                    email: user.email,
                    role_id: user.role_id,
                    password_hash,
                };
                self.store.insert_user(record, ctx).await.map_err(conflict_in(Entity::User))
            },
            |id| async move { self.store.get_user(UserId(id)).await.map_err(store_error) },
        )
        .await
    }

    /// Replaces a user's names, email and role; the last active admin keeps the Admin role (D18).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`];
    /// [`Error::Rule`].
    #[instrument(skip_all, fields(user_id = %id))]
    pub async fn update_user(&self, principal: &Principal, id: UserId, user: UserUpdate) -> Result<User> {
        principal.require(Access::new(Collection::User, Action::Update))?;
        let user = user.validate().map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(person_changes(&user.first_name, &user.last_name, &user.email, Some(user.role_id)));
        self.store.update_user(id, user, ctx).await.map_err(conflict_in(Entity::User))
    }

    /// Soft-deletes a user; their tokens stop working (D20). Nobody can delete themself, and
    /// the last active admin cannot be deleted (D18).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`].
    #[instrument(skip_all, fields(user_id = %id))]
    pub async fn delete_user(&self, principal: &Principal, id: UserId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::User, Action::Delete))?;
        if id == principal.user_id {
            return Err(Error::Rule(RuleBroken::DeleteSelf));
        }
        let mut ctx = self.ctx(principal);
        ctx.reason = check_reason(reason)?;
        self.store.delete_user(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted user active again (D15); tokens from before the delete stay invalid.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Conflict`]; [`Error::Rule`].
    #[instrument(skip_all, fields(user_id = %id))]
    pub async fn restore_user(&self, principal: &Principal, id: UserId) -> Result<User> {
        principal.require(Access::new(Collection::User, Action::Update))?;
        self.store.restore_user(id, self.ctx(principal)).await.map_err(restore_error)
    }

    /// The active policies attached directly to an active user (D19; token only).
    ///
    /// # Errors
    /// [`Error::NotFound`] when the user is missing or deleted.
    pub async fn list_user_policies(&self, _principal: &Principal, id: UserId) -> Result<Vec<Policy>> {
        self.active_user(id).await?;
        self.store.list_user_policies(id).await.map_err(store_error)
    }

    /// Attaches a policy directly to a user (D19).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing user or policy.
    #[instrument(skip_all, fields(user_id = %user_id, policy_id = %policy_id))]
    pub async fn attach_user_policy(&self, principal: &Principal, user_id: UserId, policy_id: PolicyId) -> Result<()> {
        principal.require(Access::new(Collection::User, Action::Update))?;
        self.store.attach_user_policy(user_id, policy_id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Detaches a policy from a user (D19).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing user.
    #[instrument(skip_all, fields(user_id = %user_id, policy_id = %policy_id))]
    pub async fn detach_user_policy(&self, principal: &Principal, user_id: UserId, policy_id: PolicyId) -> Result<()> {
        principal.require(Access::new(Collection::User, Action::Update))?;
        self.store.detach_user_policy(user_id, policy_id, self.ctx(principal)).await.map_err(store_error)
    }

    // Profile (D24)

    /// The caller's own profile.
    ///
    /// # Errors
    /// [`Error::Unauthenticated`] when the caller's account is gone; store failures.
    pub async fn profile(&self, principal: &Principal) -> Result<Profile> {
        let user = self.active_user(principal.user_id).await.map_err(|_| Error::Unauthenticated)?;
        let role_name =
            self.store.get_role(user.role_id).await.map_err(store_error)?.map(|role| role.name).unwrap_or_default();
        let is_admin = user.role_id == ADMIN_ROLE_ID;
        let permissions = if is_admin {
            vec!["*:*".to_owned()]
        } else {
            self.store.resolve_permissions(user.id).await.map_err(store_error)?.iter().map(Permission::code).collect()
        };
        Ok(Profile { user, role_name, is_admin, permissions })
    }

    /// Changes the caller's own names and email.
    ///
    /// # Errors
    /// [`Error::Validation`]; [`Error::Conflict`] for a taken email.
    #[instrument(skip_all)]
    pub async fn update_profile(&self, principal: &Principal, update: ProfileUpdate) -> Result<Profile> {
        let update = update.validate().map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(person_changes(&update.first_name, &update.last_name, &update.email, None));
        self.store.update_profile(principal.user_id, update, ctx).await.map_err(|error| match error {
            StoreError::NotFound(_) => Error::Unauthenticated,
            other => conflict_in(Entity::User)(other),
        })?;
        self.profile(principal).await
    }

    /// Changes the caller's password and signs them in afresh; older tokens stop working (D20).
    ///
    /// # Errors
    /// [`Error::Rule`] when the current password is wrong.
    #[instrument(skip_all)]
    pub async fn change_password(&self, principal: &Principal, change: PasswordChange) -> Result<Session> {
        let credentials = self
            .store
            .credentials(principal.user_id)
            .await
            .map_err(store_error)?
            .filter(|credentials| credentials.user.is_active)
            .ok_or(Error::Unauthenticated)?;
        let current_ok = change.current_password.len() <= text::PASSWORD_MAX_BYTES
            && self.passwords.verify(&change.current_password, &credentials.password_hash).await;
        if !current_ok {
            return Err(Error::Rule(RuleBroken::WrongCurrentPassword));
        }
        let password_hash = self.passwords.hash(change.new_password.expose()).await?;
        let ctx = self.ctx(principal);
        let changed_at = ctx.at;
        self.store.set_password(principal.user_id, password_hash, ctx).await.map_err(store_error)?;
        self.issue_session(credentials.user, changed_at).await
    }

    // Roles

    /// Every role, active and inactive (spec: token only).
    ///
    /// # Errors
    /// Store failures.
    pub async fn list_roles(&self, _principal: &Principal) -> Result<Vec<Role>> {
        self.store.list_roles().await.map_err(store_error)
    }

    /// One active role (D17; token only).
    ///
    /// # Errors
    /// [`Error::NotFound`] when missing or deleted.
    pub async fn get_role(&self, _principal: &Principal, id: RoleId) -> Result<Role> {
        self.store
            .get_role(id)
            .await
            .map_err(store_error)?
            .filter(|role| role.is_active)
            .ok_or(Error::not_found(Entity::Role))
    }

    /// Creates a role; it is never a system role.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::Conflict`]; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_role(
        &self,
        principal: &Principal,
        role: NewRole,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Role>> {
        principal.require(Access::new(Collection::Role, Action::Create))?;
        let role = role.validate().map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(json!({ "name": role.name, "description": role.description }).to_string());
        self.create_idempotently(
            principal,
            idempotency,
            |ticket| async move {
                ctx.idempotency = ticket;
                self.store.insert_role(role, ctx).await.map_err(conflict_in(Entity::Role))
            },
            |id| async move { self.store.get_role(RoleId(id)).await.map_err(store_error) },
        )
        .await
    }

    /// Changes a role's name and description; system roles keep their names.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`];
    /// [`Error::Rule`].
    #[instrument(skip_all, fields(role_id = %id))]
    pub async fn update_role(&self, principal: &Principal, id: RoleId, role: NewRole) -> Result<Role> {
        principal.require(Access::new(Collection::Role, Action::Update))?;
        let role = role.validate().map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(json!({ "name": role.name, "description": role.description }).to_string());
        self.store.update_role(id, role, ctx).await.map_err(conflict_in(Entity::Role))
    }

    /// Soft-deletes a role; system roles answer [`RuleBroken::SystemRoleDelete`].
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`].
    #[instrument(skip_all, fields(role_id = %id))]
    pub async fn delete_role(&self, principal: &Principal, id: RoleId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Role, Action::Delete))?;
        let mut ctx = self.ctx(principal);
        ctx.reason = check_reason(reason)?;
        self.store.delete_role(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted role active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(role_id = %id))]
    pub async fn restore_role(&self, principal: &Principal, id: RoleId) -> Result<Role> {
        principal.require(Access::new(Collection::Role, Action::Update))?;
        self.store.restore_role(id, self.ctx(principal)).await.map_err(restore_error)
    }

    /// Attaches a policy to a role.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing role or policy.
    #[instrument(skip_all, fields(role_id = %role_id, policy_id = %policy_id))]
    pub async fn attach_role_policy(&self, principal: &Principal, role_id: RoleId, policy_id: PolicyId) -> Result<()> {
        principal.require(Access::new(Collection::Role, Action::Update))?;
        self.store.attach_role_policy(role_id, policy_id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Detaches a policy from a role.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing role.
    #[instrument(skip_all, fields(role_id = %role_id, policy_id = %policy_id))]
    pub async fn detach_role_policy(&self, principal: &Principal, role_id: RoleId, policy_id: PolicyId) -> Result<()> {
        principal.require(Access::new(Collection::Role, Action::Update))?;
        self.store.detach_role_policy(role_id, policy_id, self.ctx(principal)).await.map_err(store_error)
    }

    // Permissions and policies

    /// Every permission.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_permissions(&self, principal: &Principal) -> Result<Vec<Permission>> {
        principal.require(Access::new(Collection::Permission, Action::Read))?;
        self.store.list_permissions().await.map_err(store_error)
    }

    /// Active policies.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_policies(&self, principal: &Principal) -> Result<Vec<Policy>> {
        principal.require(Access::new(Collection::Policy, Action::Read))?;
        self.store.list_policies().await.map_err(store_error)
    }

    /// One active policy with its permissions.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    pub async fn get_policy(&self, principal: &Principal, id: PolicyId) -> Result<Policy> {
        principal.require(Access::new(Collection::Policy, Action::Read))?;
        self.store
            .get_policy(id)
            .await
            .map_err(store_error)?
            .filter(|policy| policy.is_active)
            .ok_or(Error::not_found(Entity::Policy))
    }

    /// Creates a policy from existing permissions.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for unknown permission ids);
    /// [`Error::Conflict`]; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_policy(
        &self,
        principal: &Principal,
        policy: NewPolicy,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Policy>> {
        principal.require(Access::new(Collection::Policy, Action::Create))?;
        let policy = policy.validate().map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(policy_changes(&policy));
        self.create_idempotently(
            principal,
            idempotency,
            |ticket| async move {
                ctx.idempotency = ticket;
                self.store.insert_policy(policy, ctx).await.map_err(conflict_in(Entity::Policy))
            },
            |id| async move { self.store.get_policy(PolicyId(id)).await.map_err(store_error) },
        )
        .await
    }

    /// Replaces a policy's name, description and permissions.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(policy_id = %id))]
    pub async fn update_policy(&self, principal: &Principal, id: PolicyId, policy: NewPolicy) -> Result<Policy> {
        principal.require(Access::new(Collection::Policy, Action::Update))?;
        let policy = policy.validate().map_err(Error::Validation)?;
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(policy_changes(&policy));
        self.store.update_policy(id, policy, ctx).await.map_err(conflict_in(Entity::Policy))
    }

    /// Soft-deletes a policy; it stops granting permissions to new tokens (D19).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(policy_id = %id))]
    pub async fn delete_policy(&self, principal: &Principal, id: PolicyId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Policy, Action::Delete))?;
        let mut ctx = self.ctx(principal);
        ctx.reason = check_reason(reason)?;
        self.store.delete_policy(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted policy active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(policy_id = %id))]
    pub async fn restore_policy(&self, principal: &Principal, id: PolicyId) -> Result<Policy> {
        principal.require(Access::new(Collection::Policy, Action::Update))?;
        self.store.restore_policy(id, self.ctx(principal)).await.map_err(|error| match error {
            StoreError::Conflict { field } => Error::Conflict { entity: Entity::Policy, field },
            other => restore_error(other),
        })
    }

    /// Adds a permission to a policy.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing policy or permission.
    #[instrument(skip_all, fields(policy_id = %policy_id, permission_id = %permission_id))]
    pub async fn add_policy_permission(
        &self,
        principal: &Principal,
        policy_id: PolicyId,
        permission_id: PermissionId,
    ) -> Result<()> {
        principal.require(Access::new(Collection::Policy, Action::Update))?;
        self.store.add_policy_permission(policy_id, permission_id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Removes a permission from a policy.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing policy.
    #[instrument(skip_all, fields(policy_id = %policy_id, permission_id = %permission_id))]
    pub async fn remove_policy_permission(
        &self,
        principal: &Principal,
        policy_id: PolicyId,
        permission_id: PermissionId,
    ) -> Result<()> {
        principal.require(Access::new(Collection::Policy, Action::Update))?;
        self.store.remove_policy_permission(policy_id, permission_id, self.ctx(principal)).await.map_err(store_error)
    }

    // Settings

    /// Every setting.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_settings(&self, principal: &Principal) -> Result<Vec<Setting>> {
        principal.require(Access::new(Collection::Setting, Action::Read))?;
        self.store.list_settings().await.map_err(store_error)
    }

    /// One setting.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for an unknown key.
    pub async fn get_setting(&self, principal: &Principal, key: &str) -> Result<Setting> {
        principal.require(Access::new(Collection::Setting, Action::Read))?;
        if !plausible_setting_key(key) {
            return Err(Error::not_found(Entity::Setting));
        }
        self.store.get_setting(key).await.map_err(store_error)?.ok_or(Error::not_found(Entity::Setting))
    }

    /// Changes a setting's value; `TimeZone` must name a known IANA zone (D3).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`] for an unknown key.
    #[instrument(skip_all, fields(key = %key))]
    pub async fn update_setting(&self, principal: &Principal, key: &str, value: &str) -> Result<Setting> {
        principal.require(Access::new(Collection::Setting, Action::Update))?;
        if !plausible_setting_key(key) {
            return Err(Error::not_found(Entity::Setting));
        }
        let value = text::required(value, CODE_MAX).map_err(|error| Error::invalid("value", error.to_string()))?;
        let calendar = if key == TIME_ZONE {
            let calendar =
                BusinessCalendar::parse(&value).map_err(|error| Error::invalid("value", error.to_string()))?;
            Some(calendar)
        } else {
            None
        };
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(json!({ "key": key, "value": value }).to_string());
        let setting = self.store.update_setting(key, value, ctx).await.map_err(store_error)?;
        if let Some(calendar) = calendar {
            self.remember_calendar(calendar);
        }
        Ok(setting)
    }

    // Dashboard (D12)

    /// The summary figures.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn dashboard_summary(&self, principal: &Principal) -> Result<Summary> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        let calendar = self.calendar().await?;
        let today = calendar.date_of(self.now());
        let first_recent_day = today.checked_sub(jiff::Span::new().days(RECENT_DAYS - 1)).unwrap_or(today);
        self.store.dashboard_summary(calendar.start_of(first_recent_day)).await.map_err(store_error)
    }

    /// Active vendors with the largest outstanding balances; `limit` is clamped to 1..=100.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn top_vendors(&self, principal: &Principal, limit: u32) -> Result<Vec<TopVendor>> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        self.store.top_vendors(limit.clamp(1, 100)).await.map_err(store_error)
    }

    /// The most recently created invoices, canceled ones included; `limit` is clamped to 1..=100.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn recent_invoices(&self, principal: &Principal, limit: u32) -> Result<Vec<Invoice>> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        let today_start = self.today_start().await?;
        self.store.recent_invoices(limit.clamp(1, 100), today_start).await.map_err(store_error)
    }

    /// Payment totals for the current month and the eleven before it, newest first, months
    /// without payments included as zero rows.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn monthly_transactions(&self, principal: &Principal) -> Result<Vec<MonthlyTotal>> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        let windows: Vec<MonthWindow> = self.calendar().await?.last_twelve_months(self.now());
        let bounds: Vec<(Timestamp, Timestamp)> = windows.iter().map(|window| (window.start, window.end)).collect();
        let totals = self.store.payment_totals(&bounds).await.map_err(store_error)?;
        Ok(windows
            .iter()
            .zip(totals)
            .map(|(window, total)| MonthlyTotal {
                month: window.label(),
                total_amount: total.total_amount.normalize(),
                transaction_count: total.transaction_count,
            })
            .collect())
    }

    // Reports (D26)

    /// The vendors report: active vendors matching `filter` (its `is_active` is ignored).
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Vendor:Read`; store failures.
    #[instrument(skip_all)]
    pub async fn vendors_report(&self, principal: &Principal, filter: VendorFilter) -> Result<Report> {
        principal.require(Access::new(Collection::Vendor, Action::Read))?;
        self.build_report(Export::Vendors(VendorFilter { is_active: true, ..filter })).await
    }

    /// The invoices report: active invoices matching `filter` (its `is_active` is ignored).
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Invoice:Read`; store failures.
    #[instrument(skip_all)]
    pub async fn invoices_report(&self, principal: &Principal, filter: InvoiceFilter) -> Result<Report> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        let today_start = self.today_start().await?;
        self.build_report(Export::Invoices(InvoiceFilter { is_active: Some(true), ..filter }, today_start)).await
    }

    /// The transactions report: active payments matching `filter` (its `is_active` is ignored).
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Transaction:Read`; store failures.
    #[instrument(skip_all)]
    pub async fn transactions_report(&self, principal: &Principal, filter: TransactionFilter) -> Result<Report> {
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        self.build_report(Export::Transactions(TransactionFilter { is_active: true, ..filter })).await
    }

    async fn export_batch(&self, export: &Export, after: Option<i64>) -> Result<Vec<ExportRow>> {
        let rows = match export {
            Export::Vendors(filter) => {
                let batch = self.store.export_vendors(filter, after.map(VendorId), REPORT_BATCH).await;
                batch.map_err(store_error)?.into_iter().map(ExportRow::Vendor).collect()
            }
            Export::Invoices(filter, today_start) => {
                let batch = self.store.export_invoices(filter, *today_start, after.map(InvoiceId), REPORT_BATCH).await;
                batch.map_err(store_error)?.into_iter().map(ExportRow::Invoice).collect()
            }
            Export::Transactions(filter) => {
                let batch = self.store.export_transactions(filter, after.map(TransactionId), REPORT_BATCH).await;
                batch.map_err(store_error)?.into_iter().map(ExportRow::Transaction).collect()
            }
        };
        Ok(rows)
    }

    /// Reads the records in batches and writes them, on the blocking pool when a Tokio runtime
    /// is present, so the async workers stay free while the sheet is written.
    async fn build_report(&self, export: Export) -> Result<Report> {
        let kind = export.kind();
        let calendar = self.calendar().await?;
        let currency = self
            .store
            .get_setting(crate::domain::setting::CURRENCY)
            .await
            .map_err(store_error)?
            .map(|setting| setting.value)
            .unwrap_or_default();
        let now = self.now();
        let report_error = |error: ReportError| Error::Store(StoreError::backend(error));
        let started = Instant::now();
        let mut rows_read = 0usize;
        let mut next_progress = REPORT_PROGRESS_EVERY;
        let mut after = None;
        let report = match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let (sender, mut receiver) = tokio::sync::mpsc::channel::<Vec<ExportRow>>(2);
                let writer = handle.spawn_blocking(move || -> std::result::Result<Report, ReportError> {
                    let mut sheet = SheetWriter::new(kind, &currency, calendar, now)?;
                    while let Some(batch) = receiver.blocking_recv() {
                        for row in &batch {
                            row.write(&mut sheet)?;
                        }
                    }
                    sheet.finish()
                });
                loop {
                    let batch = self.export_batch(&export, after).await?;
                    let Some(last) = batch.last() else { break };
                    after = Some(last.id());
                    let last_batch = batch.len() < REPORT_BATCH as usize;
                    rows_read += batch.len();
                    if sender.send(batch).await.is_err() {
                        // The writer stopped on an error, which joining it reports.
                        break;
                    }
                    if rows_read >= next_progress {
                        info!(report = kind.name(), rows = rows_read, "writing report");
                        next_progress += REPORT_PROGRESS_EVERY;
                    }
                    if last_batch {
                        break;
                    }
                }
                drop(sender);
                writer.await.map_err(|join| Error::Store(StoreError::backend(join)))?.map_err(report_error)?
            }
            Err(_) => {
                let mut sheet = SheetWriter::new(kind, &currency, calendar, now).map_err(report_error)?;
                loop {
                    let batch = self.export_batch(&export, after).await?;
                    let Some(last) = batch.last() else { break };
                    after = Some(last.id());
                    for row in &batch {
                        row.write(&mut sheet).map_err(report_error)?;
                    }
                    if batch.len() < REPORT_BATCH as usize {
                        break;
                    }
                }
                sheet.finish().map_err(report_error)?
            }
        };
        info!(
            report = kind.name(),
            rows = report.rows(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "report ready"
        );
        Ok(report)
    }

    // Audit (D22)

    /// A page of the audit log, newest first.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_audit(&self, principal: &Principal, query: &AuditQuery) -> Result<Page<AuditEntry>> {
        principal.require(Access::new(Collection::AuditLog, Action::Read))?;
        self.store.list_audit(query).await.map_err(store_error)
    }
}

/// Records read from the store per batch while building a report.
pub const REPORT_BATCH: u32 = 1_000;
/// How often a long report logs its progress, in rows.
const REPORT_PROGRESS_EVERY: usize = 50_000;

/// What a report reads.
enum Export {
    Vendors(VendorFilter),
    Invoices(InvoiceFilter, Timestamp),
    Transactions(TransactionFilter),
}

impl Export {
    fn kind(&self) -> ReportKind {
        match self {
            Export::Vendors(_) => ReportKind::Vendors,
            Export::Invoices(..) => ReportKind::Invoices,
            Export::Transactions(_) => ReportKind::Transactions,
        }
    }
}

/// One record on its way into a report.
enum ExportRow {
    Vendor(Vendor),
    Invoice(Invoice),
    Transaction(Transaction),
}

impl ExportRow {
    fn id(&self) -> i64 {
        match self {
            ExportRow::Vendor(vendor) => vendor.id.get(),
            ExportRow::Invoice(invoice) => invoice.id.get(),
            ExportRow::Transaction(transaction) => transaction.id.get(),
        }
    }

    fn write(&self, sheet: &mut SheetWriter) -> std::result::Result<(), ReportError> {
        match self {
            ExportRow::Vendor(vendor) => sheet.vendor(vendor),
            ExportRow::Invoice(invoice) => sheet.invoice(invoice),
            ExportRow::Transaction(transaction) => sheet.transaction(transaction),
        }
    }
}

fn policy_changes(policy: &NewPolicy) -> String {
    let ids: Vec<i64> = policy.permission_ids.iter().map(|id| id.get()).collect();
    json!({ "name": policy.name, "description": policy.description, "permissionIds": ids }).to_string()
}
