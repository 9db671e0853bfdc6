//! Installation and sign-in use cases: health (D25), the one-time onboarding (spec,
//! Onboarding), login with its throttling (D21, D40) and the authentication of every request
//! (D20, D39).
//!
//! Whether onboarding may run is [`crate::sessions::installation`]'s to decide inside the store's
//! transaction; the failed-login window is [`crate::sessions::login`]'s and token times are
//! [`crate::sessions::rules`]'. The store records all of them under its locks.

use std::time::Duration;

use jiff::Timestamp;
use serde_json::json;
use tracing::{debug, info, instrument, warn};

use crate::access::{ADMIN_ROLE_ID, Authority, Principal};
use crate::engine::{PharmaPay, Session, store_error};
use crate::error::{Error, FieldErrors, Result, RuleBroken};
use crate::ids::UserId;
use crate::reports::audit::NewAuditEntry;
use crate::sessions::Onboarding;
use crate::sessions::login as login_rules;
use crate::sessions::login::{Failure, LoginGate};
use crate::sessions::rules::{self, TokenState};
use crate::store::{LoginOutcome, NewUserRecord, SignIn, Store, StoreError, WriteContext};
use crate::text::{self, Email, NAME_MAX};
use crate::vendors::{NewVendor, VendorType};

/// How a failed password check was answered.
pub(crate) enum FailureAnswer {
    /// Counted: the caller's own refusal applies.
    Counted,
    /// Refused with this error instead (throttled meanwhile, or a store failure).
    Refused(Error),
}

impl FailureAnswer {
    pub(crate) fn into_error(self, counted: Error) -> Error {
        match self {
            FailureAnswer::Counted => counted,
            FailureAnswer::Refused(error) => error,
        }
    }
}

/// The 429 for a window that closes at `until` (at least one second, D21).
pub(crate) fn throttled(until: Timestamp, now: Timestamp) -> Error {
    let retry_after = until.duration_since(now).unsigned_abs().as_secs().max(1);
    Error::Throttled { retry_after: Duration::from_secs(retry_after) }
}

impl<S: Store> PharmaPay<S> {
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
            drug_license_valid_until: None,
            gstin: None,
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
            branch_ids: crate::branches::Scope::All,
            password_hash,
        };
        let mut ctx = WriteContext::new(None, Authority::Full, self.now());
        ctx.changes = Some(json!({ "pharmacy": pharmacy.name, "adminEmail": record.email }).to_string());
        let onboarded_at = ctx.at;
        let (vendor, user) = self.store.complete_onboarding(pharmacy, record, ctx).await.map_err(store_error)?;
        info!(vendor_id = %vendor.id, user_id = %user.id, "onboarding complete");
        // The store recorded this issue for the new admin (see `Store::complete_onboarding`).
        let (issued_at, _) = rules::issue(TokenState::default(), onboarded_at);
        self.sign(SignIn { user, permissions: Vec::new(), issued_at })
    }

    /// Checks an email and password and signs the user in (spec, Auth; D21, D40).
    ///
    /// Unknown emails, inactive users and wrong passwords all answer
    /// [`Error::InvalidCredentials`] after the same amount of hashing work. After five failed
    /// attempts for one email within 15 minutes, attempts answer [`Error::Throttled`] until
    /// the window passes and write nothing (the first refusal of a window is noted once in the
    /// audit log); a success resets the count. Only failures count, so a right password is
    /// never refused while fewer than five failures are recorded, however many sign-ins run at
    /// once. An email that cannot be an address is counted and audited as `(invalid)`.
    ///
    /// # Errors
    /// [`Error::InvalidCredentials`], [`Error::Throttled`], or store failures.
    #[instrument(skip_all)]
    pub async fn login(&self, email: &str, password: &str) -> Result<Session> {
        let now = self.now();
        // D40: text that cannot be an address is never a user's, and is neither stored nor
        // audited as typed (it may be a password typed into the wrong field). Control
        // characters make an address unparseable, so they never reach the store either.
        let email_key = match Email::parse(email) {
            Ok(email) => email.key(),
            Err(_) => login_rules::INVALID_EMAIL_KEY.to_owned(),
        };
        let possible_user = email_key != login_rules::INVALID_EMAIL_KEY;
        self.pass_login_gate(&email_key, &email_key, None, now).await?;
        let credentials = if password.len() > text::PASSWORD_MAX_BYTES || !possible_user {
            None
        } else {
            self.store.find_credentials(&email_key).await.map_err(store_error)?
        };
        // D48: the account this email names is throttled as well, whatever email it had when
        // its failures were counted.
        let account = credentials.as_ref().map(|found| found.user.id);
        if let Some(user_id) = account {
            self.pass_login_gate(&login_rules::account_key(user_id), &email_key, None, now).await?;
        }
        let hash = credentials.as_ref().map(|found| found.password_hash.as_str());
        let still_allowed = || async {
            // Checked again when the password had to wait for a hashing thread: a flood of
            // guesses stops costing hashing work once five of them have failed.
            let attempts = self.store.login_attempts(&email_key).await.ok().flatten();
            login_rules::gate(attempts, self.now()) == LoginGate::Allowed
        };
        let Some(matches) = self.passwords.verify_unless_throttled(password, hash, still_allowed).await else {
            return Err(self.refuse_throttled(&email_key, &email_key, None, now).await);
        };
        let credentials = credentials.filter(|found| matches && found.user.is_active);
        let Some(credentials) = credentials else {
            warn!("login failed");
            return Err(self
                .count_failure(&email_key, account, None, "login_failed", now)
                .await
                .into_error(Error::InvalidCredentials));
        };
        let user_id = credentials.user.id;
        let audit = NewAuditEntry::sign_in("login", Some(user_id), &email_key, now);
        match self.store.complete_login(user_id, &email_key, now, audit).await {
            Ok(LoginOutcome::SignedIn(sign_in)) => {
                info!(user_id = %user_id, "login succeeded");
                self.sign(sign_in)
            }
            Ok(LoginOutcome::Throttled { until }) => {
                let attempts = self.store.login_attempts(&email_key).await.ok().flatten();
                self.note_if_due(&email_key, &email_key, None, attempts, now).await;
                Err(throttled(until, now))
            }
            // Deleted while its password was being checked.
            Err(StoreError::NotFound(_)) => Err(Error::InvalidCredentials),
            Err(other) => Err(store_error(other)),
        }
    }

    /// Refuses an attempt while five failures are recorded in the window of `key` (an email key,
    /// or an account's, D48) (D21); the first refusal of a window is noted in the audit log
    /// under `email_key`, later ones write nothing (D40).
    pub(crate) async fn pass_login_gate(
        &self,
        key: &str,
        email_key: &str,
        user_id: Option<UserId>,
        now: Timestamp,
    ) -> Result<()> {
        let attempts = self.store.login_attempts(key).await.map_err(store_error)?;
        match login_rules::gate(attempts, now) {
            LoginGate::Allowed => Ok(()),
            LoginGate::Throttled { until } => {
                self.note_if_due(key, email_key, user_id, attempts, now).await;
                Err(throttled(until, now))
            }
        }
    }

    /// The refusal of an attempt found throttled on `key` after it started.
    async fn refuse_throttled(&self, key: &str, email_key: &str, user_id: Option<UserId>, now: Timestamp) -> Error {
        let attempts = self.store.login_attempts(key).await.ok().flatten();
        self.note_if_due(key, email_key, user_id, attempts, now).await;
        match login_rules::gate(attempts, now) {
            LoginGate::Throttled { until } => throttled(until, now),
            LoginGate::Allowed => throttled(login_rules::window_end(now), now),
        }
    }

    /// Notes a window's throttling in the audit log and the server log when `attempts` say the
    /// note is due, which is once per window: a flood of refusals then costs no write and no
    /// log line each (D40). The store decides again under its lock, so racing refusals still
    /// leave one note.
    async fn note_if_due(
        &self,
        key: &str,
        email_key: &str,
        user_id: Option<UserId>,
        attempts: Option<login_rules::LoginAttempts>,
        now: Timestamp,
    ) {
        if login_rules::note_throttling(attempts, now).is_none() {
            debug!("login throttled");
            return;
        }
        warn!("login throttled: five failures in the window");
        let audit = NewAuditEntry::sign_in("login_throttled", user_id, email_key, now);
        if let Err(error) = self.store.note_login_throttled(key, now, audit).await {
            warn!(%error, "could not note a throttled login in the audit log");
        }
    }

    /// Records a failed password check for `email_key` (D21, D40), and for the account of
    /// `account` when the email names one (D48): counted and audited once as `action` (by
    /// `user_id`, the caller when known), or refused as throttled when five failures were
    /// recorded meanwhile under either key.
    pub(crate) async fn count_failure(
        &self,
        email_key: &str,
        account: Option<UserId>,
        user_id: Option<UserId>,
        action: &'static str,
        now: Timestamp,
    ) -> FailureAnswer {
        let audit = NewAuditEntry::sign_in(action, user_id, email_key, now);
        match self.store.record_login_failure(email_key, now, Some(audit)).await {
            Ok(Failure::Counted(_)) => {}
            Ok(Failure::Throttled { .. }) => {
                return FailureAnswer::Refused(self.refuse_throttled(email_key, email_key, user_id, now).await);
            }
            Err(error) => return FailureAnswer::Refused(store_error(error)),
        }
        let Some(account) = account else { return FailureAnswer::Counted };
        // The account's count is the email's twin: the failure was audited already.
        let account_key = login_rules::account_key(account);
        match self.store.record_login_failure(&account_key, now, None).await {
            Ok(Failure::Counted(_)) => FailureAnswer::Counted,
            Ok(Failure::Throttled { .. }) => {
                FailureAnswer::Refused(self.refuse_throttled(&account_key, email_key, user_id, now).await)
            }
            Err(error) => FailureAnswer::Refused(store_error(error)),
        }
    }

    /// Verifies a bearer token and returns the caller it proves (spec, Authentication; D20).
    ///
    /// The token must be HS256-signed with this engine's secret, carry this engine's issuer
    /// and audience, an unexpired `exp` and a plausible `iat`, and its user must still be
    /// active with nothing taken away from them since the token was issued (D20, D39).
    ///
    /// # Errors
    /// [`Error::Unauthenticated`] for any failure of the above; store failures.
    pub async fn authenticate(&self, token: &str) -> Result<Principal> {
        let verified = self.tokens.verify(token, self.now())?;
        let state = self.store.session_state(verified.principal.user_id).await.map_err(store_error)?;
        match state {
            Some(state) if state.is_active && rules::is_current(verified.issued_at_second, state.revoked_through) => {
                Ok(verified.principal)
            }
            _ => Err(Error::Unauthenticated),
        }
    }
}
