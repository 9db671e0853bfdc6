//! The installation, sign-ins and idempotency claims in memory: [`SessionStore`] for
//! [`MemoryStore`].
//!
//! Onboarding, the failed-login window, token issues and idempotency claims are decided by
//! [`installation`], [`login_rules`], [`sessions`] and [`claims`]; this file keeps their facts.

use pharmapay_core::access::user::User;
use pharmapay_core::auth::Secret;
use pharmapay_core::idempotency::rules as claims;
use pharmapay_core::idempotency::rules::{ClaimDecision, StoredClaim};
use pharmapay_core::idempotency::{ClaimOutcome, IdempotencyClaim, IdempotencyKey};
use pharmapay_core::ids::{UserId, VendorId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::reports::audit::NewAuditEntry;
use pharmapay_core::sessions::installation::{self, Installation, PharmacyRow};
use pharmapay_core::sessions::login as login_rules;
use pharmapay_core::sessions::login::{Failure, LoginAttempts, LoginGate};
use pharmapay_core::sessions::rules as session_rules;
use pharmapay_core::store::{Credentials, LoginOutcome, NewUserRecord, SessionState, SessionStore, SignIn, UniqueKey};
use pharmapay_core::store::{StoreResult, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::vendors::{NewVendor, Vendor, VendorType};
use pharmapay_core::{Entity, StoreError};

use crate::{IdempotencyRow, MemoryStore, State, UserRow};

impl State {
    /// What the onboarding rule needs to know.
    pub(crate) fn installation(&self) -> Installation {
        Installation {
            own_pharmacy: self
                .vendors
                .iter()
                .find(|(_, vendor)| vendor.vendor_type == VendorType::OwnPharmacy)
                .map(|(id, _)| VendorId(*id)),
            has_users: !self.users.is_empty(),
        }
    }
}

impl SessionStore for MemoryStore {
    async fn health(&self) -> StoreResult<()> {
        Ok(())
    }

    async fn is_onboarded(&self) -> StoreResult<bool> {
        Ok(installation::is_onboarded(self.read().installation()))
    }

    async fn complete_onboarding(
        &self,
        pharmacy: NewVendor,
        admin: NewUserRecord,
        ctx: WriteContext,
    ) -> StoreResult<(Vendor, User)> {
        let mut state = self.write();
        let pharmacy_row = installation::onboard(state.installation())?;
        // Check the admin first so that nothing changes when it is refused.
        if state.email_taken(&key(&admin.email), None) {
            return Err(StoreError::Conflict(UniqueKey::UserEmail));
        }
        // D49: the head office is named after the pharmacy.
        let head_office = pharmacy.name.clone();
        let vendor_id = match pharmacy_row {
            PharmacyRow::Reuse(id) => {
                let id = id.get();
                let row = state.vendors.get_mut(&id).expect("the id was just found");
                // The pharmacy's other licences stay as they were; the setup does not carry them.
                let kept = NewVendor {
                    drug_license_number2: row.drug_license_number2.take(),
                    additional_drug_license_numbers: std::mem::take(&mut row.additional_drug_license_numbers),
                    ..pharmacy
                };
                row.replace(kept, ctx.at);
                row.is_active = true;
                id
            }
            PharmacyRow::Insert => state.add_vendor(pharmacy, true, ctx.at),
        };
        let user_id = state.insert_user_row(admin, (ctx.authority, &ctx.scope), ctx.at)?;
        state.name_head_office(head_office, ctx.at);
        // The engine signs the first admin in at once, with a token issued now.
        let user = state.users.get_mut(&user_id).expect("just written");
        user.tokens = session_rules::issue(user.tokens, ctx.at).1;
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
        }))
    }

    async fn credentials(&self, user_id: UserId) -> StoreResult<Option<Credentials>> {
        let state = self.read();
        Ok(state.users.get(&user_id.get()).map(|row| Credentials {
            user: state.user(user_id.get()).expect("present"),
            password_hash: row.password_hash.clone(),
        }))
    }

    async fn session_state(&self, user_id: UserId) -> StoreResult<Option<SessionState>> {
        let state = self.read();
        Ok(state
            .users
            .get(&user_id.get())
            .map(|user| SessionState { is_active: user.is_active, revoked_through: user.tokens.revoked_through }))
    }

    async fn login_attempts(&self, email_key: &str) -> StoreResult<Option<LoginAttempts>> {
        Ok(self.read().login_attempts.get(email_key).copied())
    }

    async fn record_login_failure(
        &self,
        email_key: &str,
        now: Timestamp,
        audit: Option<NewAuditEntry>,
    ) -> StoreResult<Failure> {
        let mut state = self.write();
        let failure = login_rules::fail(state.login_attempts.get(email_key).copied(), now);
        if let Failure::Counted(attempts) = failure {
            let purge_before = login_rules::purge_before(now);
            state.login_attempts.retain(|_, attempts| attempts.window_start >= purge_before);
            state.login_attempts.insert(email_key.to_owned(), attempts);
            if let Some(audit) = audit {
                state.audit(audit);
            }
        }
        Ok(failure)
    }

    async fn note_login_throttled(&self, email_key: &str, now: Timestamp, audit: NewAuditEntry) -> StoreResult<()> {
        let mut state = self.write();
        if let Some(noted) = login_rules::note_throttling(state.login_attempts.get(email_key).copied(), now) {
            state.login_attempts.insert(email_key.to_owned(), noted);
            state.audit(audit);
        }
        Ok(())
    }

    async fn complete_login(
        &self,
        user_id: UserId,
        email_key: &str,
        now: Timestamp,
        audit: NewAuditEntry,
    ) -> StoreResult<LoginOutcome> {
        let mut state = self.write();
        let account_key = login_rules::account_key(user_id);
        let (email, account) =
            (state.login_attempts.get(email_key).copied(), state.login_attempts.get(&account_key).copied());
        if let LoginGate::Throttled { until } = login_rules::gate_both(email, account, now) {
            return Ok(LoginOutcome::Throttled { until });
        }
        let row = state
            .users
            .get_mut(&user_id.get())
            .filter(|row| row.is_active)
            .ok_or(StoreError::NotFound(Entity::User))?;
        let (issued_at, tokens) = session_rules::issue(row.tokens, now);
        row.tokens = tokens;
        state.login_attempts.remove(email_key);
        state.login_attempts.remove(&account_key);
        state.audit(audit);
        let user = state.user(user_id.get()).expect("checked above");
        Ok(LoginOutcome::SignedIn(SignIn { permissions: state.resolve(user_id.get()), user, issued_at }))
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
        let stored = state.idempotency.get(&map_key).map(|row| StoredClaim {
            fingerprint: &row.fingerprint,
            created_at: row.created_at,
            entity_id: row.entity_id,
            response: row.response.as_deref(),
        });
        match claims::decide(stored, &claim) {
            ClaimDecision::Answer(outcome) => Ok(outcome),
            ClaimDecision::Take => {
                state.idempotency.insert(map_key, fresh);
                Ok(ClaimOutcome::Claimed)
            }
        }
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
}
