//! The installation, sign-ins and idempotency claims: [`SessionStore`] over SQL. Onboarding
//! runs under `Lock::Onboarding`; the failed-login window (D21, D40), token issues (D39) and
//! idempotency claims (D23) are decided by their rules, on rows locked for the change.

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
use pharmapay_core::sessions::rules::TokenState;
use pharmapay_core::store::{
    Credentials, LoginOutcome, NewUserRecord, SessionState, SessionStore, SignIn, StoreResult, UniqueKey, WriteContext,
};
use pharmapay_core::text::key;
use pharmapay_core::vendors::{NewVendor, Vendor};
use pharmapay_core::{Entity, StoreError};
use sqlx::Row;

use super::guards::{check_free, exists, insert_user_row, permissions_of, user_tokens_for_change, write_token_state};
use super::rows::{MICROS_PER_SECOND, credentials_from, instant, login_attempts_from, micros, user_in, vendor_in};
use super::vendors::{change_vendor_state, insert_vendor_row};
use super::{Conn, Result, SqlStore, answer, insert_audit, refused, written};
use crate::Lock;
use crate::error::Error;
use crate::statements;

/// The failures recorded for an email key, locked for a change (none when no row exists).
pub(super) async fn login_attempts_for_change(conn: &mut Conn, email_key: &str) -> Result<Option<LoginAttempts>> {
    let row = sqlx::query(concat!(
        "SELECT window_start, failures, throttle_noted FROM login_attempts WHERE email_key = $1",
        for_update!()
    ))
    .bind(email_key.to_owned())
    .fetch_optional(&mut *conn)
    .await?;
    row.as_ref().map(login_attempts_from).transpose()
}

pub(super) async fn write_login_attempts(conn: &mut Conn, email_key: &str, attempts: LoginAttempts) -> Result<()> {
    sqlx::query("UPDATE login_attempts SET window_start = $2, failures = $3, throttle_noted = $4 WHERE email_key = $1")
        .bind(email_key.to_owned())
        .bind(micros(attempts.window_start))
        .bind(i64::from(attempts.failures))
        .bind(attempts.throttle_noted)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

impl SessionStore for SqlStore {
    async fn health(&self) -> StoreResult<()> {
        self.answer_read(|| async move {
            sqlx::query("SELECT 1").execute(&mut *self.read().await?).await?;
            Ok(())
        })
        .await
    }

    async fn is_onboarded(&self) -> StoreResult<bool> {
        self.answer_read(|| async move {
            let row = sqlx::query(
                "SELECT (SELECT id FROM vendors WHERE vendor_type = 'OwnPharmacy') AS own_pharmacy, \
                 EXISTS (SELECT 1 FROM users) AS has_users",
            )
            .fetch_one(&mut *self.read().await?)
            .await?;
            let own_pharmacy: Option<i64> = row.try_get("own_pharmacy")?;
            let has_users: bool = row.try_get("has_users")?;
            Ok(installation::is_onboarded(Installation { own_pharmacy: own_pharmacy.map(VendorId), has_users }))
        })
        .await
    }

    async fn complete_onboarding(
        &self,
        pharmacy: NewVendor,
        admin: NewUserRecord,
        ctx: WriteContext,
    ) -> StoreResult<(Vendor, User)> {
        answer(|| async {
            // One onboarding at a time: the checks below see the winner's commit.
            let mut db_tx = self.begin_locked(Lock::Onboarding).await?;
            let existing = sqlx::query(concat!(
                "SELECT id, is_active FROM vendors WHERE vendor_type = 'OwnPharmacy'",
                for_update!()
            ))
            .fetch_optional(&mut *db_tx)
            .await?
            .map(|row| Ok::<_, Error>((row.try_get::<i64, _>("id")?, row.try_get::<bool, _>("is_active")?)))
            .transpose()?;
            let was_active = existing.map(|(_, is_active)| is_active);
            let existing = existing.map(|(id, _)| id);
            let has_users = exists(&mut db_tx, sqlx::query("SELECT EXISTS (SELECT 1 FROM users)")).await?;
            let pharmacy_row = installation::onboard(Installation { own_pharmacy: existing.map(VendorId), has_users })?;
            // Check the admin first so that nothing changes when it is refused.
            check_free(&mut db_tx, UniqueKey::UserEmail, &key(&admin.email), None).await?;
            let vendor_id = match pharmacy_row {
                PharmacyRow::Reuse(id) => {
                    let id = id.get();
                    sqlx::query(
                        "UPDATE vendors SET name = $2, name_key = $3, address = $4, phone = $5, email = $6, \
                         drug_license_number1 = $7, is_active = TRUE, updated_at = $8 WHERE id = $1",
                    )
                    .bind(id)
                    .bind(pharmacy.name.clone())
                    .bind(key(&pharmacy.name))
                    .bind(pharmacy.address.clone())
                    .bind(pharmacy.phone.clone())
                    .bind(pharmacy.email.clone())
                    .bind(pharmacy.drug_license_number1.clone())
                    .bind(micros(ctx.at))
                    .execute(&mut *db_tx)
                    .await?;
                    change_vendor_state(&mut db_tx, was_active, Some(true)).await?;
                    id
                }
                PharmacyRow::Insert => insert_vendor_row(&mut db_tx, &pharmacy, ctx.at).await?,
            };
            let user_id = insert_user_row(&mut db_tx, &admin, (ctx.authority, &ctx.scope), ctx.at).await?;
            super::branches::name_head_office(&mut db_tx, &pharmacy.name, ctx.at).await?;
            // The engine signs the first admin in at once, with a token issued now.
            write_token_state(&mut db_tx, user_id, session_rules::issue(TokenState::default(), ctx.at).1).await?;
            insert_audit(&mut db_tx, ctx.audit("create", Entity::Vendor, Some(vendor_id))).await?;
            insert_audit(&mut db_tx, ctx.audit("create", Entity::User, Some(user_id))).await?;
            let vendor = written(vendor_in(&mut db_tx, vendor_id).await?)?;
            let user = written(user_in(&mut db_tx, user_id).await?)?;
            db_tx.commit().await?;
            Ok((vendor, user))
        })
        .await
    }

    async fn token_secret(&self, candidate: Secret) -> StoreResult<Secret> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            sqlx::query("INSERT INTO store_meta (name, value) VALUES ('token_secret', $1) ON CONFLICT DO NOTHING")
                .bind(candidate.expose().to_owned())
                .execute(&mut *db_tx)
                .await?;
            let row =
                sqlx::query("SELECT value FROM store_meta WHERE name = 'token_secret'").fetch_one(&mut *db_tx).await?;
            let kept: String = row.try_get(0)?;
            db_tx.commit().await?;
            Ok(Secret::new(kept))
        })
        .await
    }

    async fn find_credentials(&self, email_key: &str) -> StoreResult<Option<Credentials>> {
        self.answer_read(|| async move {
            // The active account wins; among inactive ones, the newest.
            let query = sqlx::query(concat!(
                "SELECT ",
                user_columns!(),
                ", u.password_hash FROM users u WHERE u.email_key = $1 \
                 ORDER BY u.is_active DESC, u.id DESC LIMIT 1"
            ));
            self.optional(query.bind(email_key.to_owned()), credentials_from).await
        })
        .await
    }

    async fn credentials(&self, user_id: UserId) -> StoreResult<Option<Credentials>> {
        self.answer_read(|| async move {
            let query =
                sqlx::query(concat!("SELECT ", user_columns!(), ", u.password_hash FROM users u WHERE u.id = $1"));
            self.optional(query.bind(user_id.get()), credentials_from).await
        })
        .await
    }

    async fn session_state(&self, user_id: UserId) -> StoreResult<Option<SessionState>> {
        self.answer_read(|| async move {
            let query = sqlx::query(statements::SESSION_STATE).bind(user_id.get());
            self.optional(query, |row| {
                let revoked_at: i64 = row.try_get("tokens_revoked_at")?;
                Ok(SessionState {
                    is_active: row.try_get("is_active")?,
                    revoked_through: revoked_at.div_euclid(MICROS_PER_SECOND),
                })
            })
            .await
        })
        .await
    }

    async fn login_attempts(&self, email_key: &str) -> StoreResult<Option<LoginAttempts>> {
        self.answer_read(|| async move {
            let query =
                sqlx::query("SELECT window_start, failures, throttle_noted FROM login_attempts WHERE email_key = $1");
            self.optional(query.bind(email_key.to_owned()), login_attempts_from).await
        })
        .await
    }

    async fn record_login_failure(
        &self,
        email_key: &str,
        now: Timestamp,
        audit: Option<NewAuditEntry>,
    ) -> StoreResult<Failure> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            // One statement makes sure the row exists and locks it, so parallel failures for one
            // email queue here and are counted one by one (D21). A new row stands for no failure.
            let row = sqlx::query(
                "INSERT INTO login_attempts (email_key, window_start, failures, throttle_noted) \
                 VALUES ($1, $2, 0, FALSE) ON CONFLICT (email_key) DO UPDATE SET email_key = EXCLUDED.email_key \
                 RETURNING window_start, failures, throttle_noted",
            )
            .bind(email_key.to_owned())
            .bind(micros(now))
            .fetch_one(&mut *db_tx)
            .await?;
            let attempts = login_attempts_from(&row)?;
            let failure = login_rules::fail(Some(attempts).filter(|attempts| attempts.failures > 0), now);
            let Failure::Counted(counted) = failure else {
                // D40: a refused attempt writes nothing; dropping the transaction rolls it back.
                return Ok(failure);
            };
            write_login_attempts(&mut db_tx, email_key, counted).await?;
            sqlx::query("DELETE FROM login_attempts WHERE window_start < $1 AND email_key <> $2")
                .bind(micros(login_rules::purge_before(now)))
                .bind(email_key.to_owned())
                .execute(&mut *db_tx)
                .await?;
            if let Some(audit) = &audit {
                insert_audit(&mut db_tx, audit.clone()).await?;
            }
            db_tx.commit().await?;
            Ok(failure)
        })
        .await
    }

    async fn note_login_throttled(&self, email_key: &str, now: Timestamp, audit: NewAuditEntry) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let attempts = login_attempts_for_change(&mut db_tx, email_key).await?;
            if let Some(noted) = login_rules::note_throttling(attempts, now) {
                write_login_attempts(&mut db_tx, email_key, noted).await?;
                insert_audit(&mut db_tx, audit.clone()).await?;
                db_tx.commit().await?;
            }
            Ok(())
        })
        .await
    }

    async fn complete_login(
        &self,
        user_id: UserId,
        email_key: &str,
        now: Timestamp,
        audit: NewAuditEntry,
    ) -> StoreResult<LoginOutcome> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            // D48: the account's failures as well as the email's, their rows locked in key order.
            let account_key = login_rules::account_key(user_id);
            let mut keys = [email_key, account_key.as_str()];
            keys.sort_unstable();
            let mut locked = Vec::with_capacity(2);
            for key in keys {
                locked.push(login_attempts_for_change(&mut db_tx, key).await?);
            }
            let (email, account) = if keys[0] == email_key { (locked[0], locked[1]) } else { (locked[1], locked[0]) };
            if let LoginGate::Throttled { until } = login_rules::gate_both(email, account, now) {
                return Ok(LoginOutcome::Throttled { until });
            }
            // D39: the issue is recorded under the user's row lock, which every revocation takes too.
            let Some((true, tokens)) = user_tokens_for_change(&mut db_tx, user_id.get()).await? else {
                return refused(StoreError::NotFound(Entity::User));
            };
            let (issued_at, tokens) = session_rules::issue(tokens, now);
            write_token_state(&mut db_tx, user_id.get(), tokens).await?;
            if email.is_some() || account.is_some() {
                sqlx::query("DELETE FROM login_attempts WHERE email_key = $1 OR email_key = $2")
                    .bind(email_key.to_owned())
                    .bind(account_key.clone())
                    .execute(&mut *db_tx)
                    .await?;
            }
            insert_audit(&mut db_tx, audit.clone()).await?;
            let user = written(user_in(&mut db_tx, user_id.get()).await?)?;
            let permissions = permissions_of(&mut db_tx, user_id.get()).await?;
            db_tx.commit().await?;
            Ok(LoginOutcome::SignedIn(SignIn { user, permissions, issued_at }))
        })
        .await
    }

    async fn claim_idempotency_key(&self, claim: IdempotencyClaim) -> StoreResult<ClaimOutcome> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let user_id = claim.user_id.get();
            let claim_key = claim.key.as_str().to_owned();
            let inserted = sqlx::query(
                "INSERT INTO idempotency_keys (user_id, key, fingerprint, created_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(user_id)
            .bind(claim_key.clone())
            .bind(claim.fingerprint.clone())
            .bind(micros(claim.now))
            .execute(&mut *db_tx)
            .await?
            .rows_affected();
            if inserted == 1 {
                db_tx.commit().await?;
                return Ok(ClaimOutcome::Claimed);
            }
            let row = sqlx::query(concat!(
                "SELECT fingerprint, created_at, entity_id, response FROM idempotency_keys \
                 WHERE user_id = $1 AND key = $2",
                for_update!()
            ))
            .bind(user_id)
            .bind(claim_key.clone())
            .fetch_one(&mut *db_tx)
            .await?;
            let fingerprint: String = row.try_get("fingerprint")?;
            let response: Option<Vec<u8>> = row.try_get("response")?;
            let stored = StoredClaim {
                fingerprint: &fingerprint,
                created_at: instant(row.try_get("created_at")?)?,
                entity_id: row.try_get("entity_id")?,
                response: response.as_deref(),
            };
            if let ClaimDecision::Answer(answer) = claims::decide(Some(stored), &claim) {
                // Nothing was written: dropping the transaction ends it.
                return Ok(answer);
            }
            // An expired or abandoned claim is taken over by this request.
            sqlx::query(
                "UPDATE idempotency_keys SET fingerprint = $3, created_at = $4, entity_id = NULL, response = NULL \
                 WHERE user_id = $1 AND key = $2",
            )
            .bind(user_id)
            .bind(claim_key)
            .bind(claim.fingerprint.clone())
            .bind(micros(claim.now))
            .execute(&mut *db_tx)
            .await?;
            db_tx.commit().await?;
            Ok(ClaimOutcome::Claimed)
        })
        .await
    }

    async fn record_idempotent_response(
        &self,
        user_id: UserId,
        key: &IdempotencyKey,
        response: Vec<u8>,
    ) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            sqlx::query(
                "UPDATE idempotency_keys SET response = $3 WHERE user_id = $1 AND key = $2 AND entity_id IS NOT NULL",
            )
            .bind(user_id.get())
            .bind(key.as_str().to_owned())
            .bind(response.clone())
            .execute(&mut *db_tx)
            .await?;
            db_tx.commit().await?;
            Ok(())
        })
        .await
    }

    async fn release_idempotency_key(&self, user_id: UserId, key: &IdempotencyKey) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            sqlx::query("DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND entity_id IS NULL")
                .bind(user_id.get())
                .bind(key.as_str().to_owned())
                .execute(&mut *db_tx)
                .await?;
            db_tx.commit().await?;
            Ok(())
        })
        .await
    }
}
