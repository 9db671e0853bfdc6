//! Conformance cases: onboarding once, even under concurrency (spec, Onboarding), the kept
//! token secret (D28), sign-in with its claims, refusals that look alike and throttling (D21)
//! that costs an attacker, not the pharmacy (D40), and tokens that stop working (D20).

use super::to_new_password;
use super::{decode_claims, field_error, params};
use crate::access::user::{PasswordChange, ProfileUpdate};
use crate::access::{ADMIN_ROLE_ID, PHARMACIST_ROLE_ID};
use crate::conformance::{Fixture, engine, onboarding};
use crate::error::{Error, RuleBroken};
use crate::reports::audit::AuditQuery;
use crate::sessions::login::{INVALID_EMAIL_KEY, LIMIT};
use crate::store::Store;
use crate::text::Password;
use crate::vendors::{NewVendor, VendorQuery, VendorType};
use jiff::SignedDuration;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Onboarding runs once, validates with dotted paths and makes an admin (spec, Onboarding).
pub async fn onboarding_creates_the_pharmacy_and_the_first_admin_once<S: Store>(store: S) {
    let (engine, _clock) = engine(store).await;
    assert!(!engine.onboarding_status().await.unwrap(), "a fresh store is not onboarded");

    let mut bad = onboarding();
    bad.pharmacy.name = "  ".into();
    bad.admin.email = "not-an-email".into();
    match engine.complete_onboarding(bad).await {
        Err(Error::Validation(errors)) => {
            assert!(errors.contains("pharmacy.name"), "{errors}");
            assert!(errors.contains("adminUser.email"), "{errors}");
        }
        other => panic!("expected validation errors, got {other:?}"),
    }
    assert!(!engine.onboarding_status().await.unwrap(), "a refused setup changes nothing");

    let session = engine.complete_onboarding(onboarding()).await.expect("setup succeeds");
    assert_eq!(session.user.role_id, ADMIN_ROLE_ID);
    assert_eq!(session.user.email, "admin@example.com");
    assert!(engine.onboarding_status().await.unwrap());
    assert!(matches!(engine.complete_onboarding(onboarding()).await, Err(Error::Rule(RuleBroken::AlreadyOnboarded))));

    let admin = engine.authenticate(&session.token.token).await.expect("the setup token works at once");
    assert!(admin.is_admin);
    let vendors = engine.list_vendors(&admin, &VendorQuery::default()).await.unwrap();
    assert_eq!(vendors.total_count, 1);
    assert_eq!(vendors.items[0].vendor_type, VendorType::OwnPharmacy);
    assert_eq!(vendors.items[0].name, "Apollo Pharmacy");
    assert_eq!(vendors.items[0].drug_license_number1.as_deref(), Some("DL-001"));
}

/// Twenty setups racing: exactly one admin (issue: onboarding claimed atomically).
pub async fn concurrent_onboarding_makes_exactly_one_admin<S: Store>(store: S) {
    let (engine, _clock) = engine(store).await;
    let engine = Arc::new(engine);
    let mut tasks = Vec::new();
    for n in 0..20 {
        let engine = Arc::clone(&engine);
        tasks.push(tokio::spawn(async move {
            let mut setup = onboarding();
            setup.admin.email = format!("admin{n}@example.com");
            engine.complete_onboarding(setup).await
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.expect("no task panics") {
            Ok(session) => winners.push(session),
            Err(Error::Rule(RuleBroken::AlreadyOnboarded)) => {}
            Err(other) => panic!("a losing setup must answer AlreadyOnboarded, got {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one setup wins");
    let admin = engine.authenticate(&winners[0].token.token).await.unwrap();
    assert_eq!(engine.list_users(&admin).await.unwrap().len(), 1, "exactly one user exists");
    let vendors = engine.list_vendors(&admin, &VendorQuery::default()).await.unwrap();
    assert_eq!(vendors.total_count, 1, "exactly one OwnPharmacy vendor exists");
}

/// The signing secret is generated once and shared by every engine on the store (D28).
pub async fn token_secret_is_kept_in_the_store<S: Store>(store: S) {
    use crate::auth::Secret;
    store.health().await.expect("a fresh store is healthy");
    let first = store.token_secret(Secret::new("a".repeat(40))).await.unwrap();
    let second = store.token_secret(Secret::new("b".repeat(40))).await.unwrap();
    assert_eq!(first.expose(), "a".repeat(40));
    assert_eq!(second.expose(), first.expose(), "the first secret stays");
}

/// Tokens carry exactly the spec's claims, their issue second and the caller's branches (spec,
/// Authentication 5-7; D39, D49).
pub async fn login_issues_a_token_with_the_spec_claims<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let session =
        fx.engine.login("ADMIN@Example.com ", "admin-password").await.expect("emails match case-insensitively");
    let claims = decode_claims(&session.token.token);
    let expected_keys: BTreeSet<&str> = [
        "sub",
        "email",
        "given_name",
        "family_name",
        "role_id",
        "is_admin",
        "perm",
        "branches",
        "exp",
        "iat",
        "iss",
        "aud",
    ]
    .into();
    let keys: BTreeSet<&str> = claims.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, expected_keys, "exactly the spec's claims, iat and branches");
    assert_eq!(claims["branches"], "*", "an admin sees every branch (D49)");
    assert_eq!(claims["sub"], Value::String(session.user.id.to_string()));
    assert_eq!(claims["email"], "admin@example.com");
    assert_eq!(claims["given_name"], "Asha");
    assert_eq!(claims["family_name"], "Rao");
    assert_eq!(claims["role_id"], "1");
    assert_eq!(claims["is_admin"], "true");
    assert_eq!(claims["perm"], serde_json::json!(["*:Create"]));
    assert_eq!(claims["iss"], "pharmapay");
    assert_eq!(claims["aud"], "pharmapay");
    let expected_exp = fx.engine.now().as_second() + 24 * 3600;
    assert_eq!(claims["exp"].as_i64(), Some(expected_exp), "24 hours by default");
    assert_eq!(claims["iat"].as_i64(), Some(fx.engine.now().as_second()), "issued now, in whole seconds");
    assert_eq!(session.token.expires_at.as_second(), expected_exp);

    let (pharmacist, _) = fx.pharmacist("pharma@example.com").await;
    let claims = decode_claims(&pharmacist.token.token);
    assert_eq!(claims["is_admin"], "false");
    assert_eq!(claims["role_id"], "2");
    let perm: Vec<&str> = claims["perm"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert_eq!(
        perm,
        [
            "Vendor:Read",
            "Vendor:Create",
            "Vendor:Update",
            "Invoice:Read",
            "Invoice:Create",
            "Invoice:Update",
            "Transaction:Read",
            "Transaction:Create",
            "Transaction:Update",
            "Dashboard:Read",
            "Setting:Read",
            "VendorCredit:Read",
            "VendorCredit:Create",
            "VendorCredit:Update",
            "Branch:Read"
        ],
        "D19/D27/D44/D49: resolved, deduplicated, in id order"
    );
}

/// Unknown email, inactive user and wrong password all answer the same (D21).
pub async fn login_refuses_wrong_unknown_and_inactive_alike<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (session, _) = fx.pharmacist("gone@example.com").await;
    fx.engine.delete_user(&fx.admin, session.user.id, None).await.unwrap();
    for (email, password, label) in [
        ("admin@example.com", "wrong-password", "wrong password"),
        ("nobody@example.com", "admin-password", "unknown email"),
        ("gone@example.com", "user-password", "inactive user"),
        ("", "", "empty input"),
    ] {
        assert!(matches!(fx.engine.login(email, password).await, Err(Error::InvalidCredentials)), "{label}");
    }
}

/// Control characters in a login email, a setting key or a list filter are answered like any
/// other unknown or invalid input; a NUL byte never reaches the store (PostgreSQL refuses it).
pub async fn control_characters_never_reach_the_store<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    for email in ["admin\0@example.com", "\0", "admin@example.com\u{7}"] {
        assert!(
            matches!(fx.engine.login(email, "admin-password").await, Err(Error::InvalidCredentials)),
            "{email:?} is no user's address"
        );
    }
    assert!(matches!(fx.engine.get_setting(&fx.admin, "Curr\0ency").await, Err(Error::NotFound { .. })));
    assert!(matches!(fx.engine.update_setting(&fx.admin, "\0", "x").await, Err(Error::NotFound { .. })));
    let audit = AuditQuery::from_params(&params(&[("entity", "\u{202e}\0")])).unwrap_err();
    assert!(audit.contains("entity"), "{audit}");
    let vendors = VendorQuery::from_params(&params(&[("search", "a\0")])).unwrap_err();
    assert!(vendors.contains("search"), "{vendors}");
    field_error(
        fx.engine.create_vendor(&fx.admin, NewVendor::new("Nul\0 Traders", VendorType::Dealer), None).await,
        "name",
        "a NUL in a name",
    );
    // The right address still signs in afterwards: the odd attempts were not counted against it.
    fx.engine.login("admin@example.com", "admin-password").await.unwrap();
}

/// Five failures within 15 minutes throttle the email until the window passes (D21).
pub async fn login_is_throttled_after_five_failures_until_the_window_passes<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    for attempt in 1..=5 {
        let result = fx.engine.login("admin@example.com", "wrong").await;
        assert!(matches!(result, Err(Error::InvalidCredentials)), "attempt {attempt} is counted, not throttled");
    }
    match fx.engine.login("admin@example.com", "admin-password").await {
        Err(Error::Throttled { retry_after }) => {
            assert!(retry_after.as_secs() >= 1 && retry_after.as_secs() <= 15 * 60, "retry after {retry_after:?}");
        }
        other => panic!("the sixth attempt is throttled even with the right password, got {other:?}"),
    }
    assert!(
        fx.engine.login("other@example.com", "wrong").await.is_err_and(|e| matches!(e, Error::InvalidCredentials)),
        "throttling is per email"
    );
    fx.advance(SignedDuration::from_mins(15));
    fx.engine.login("admin@example.com", "admin-password").await.expect("the window has passed");
    for _ in 0..4 {
        let _ = fx.engine.login("admin@example.com", "wrong").await;
    }
    fx.engine.login("admin@example.com", "admin-password").await.expect("a success resets the count");
    for attempt in 1..=4 {
        let result = fx.engine.login("admin@example.com", "wrong").await;
        assert!(matches!(result, Err(Error::InvalidCredentials)), "attempt {attempt} after a reset");
    }
}

/// Parallel guesses are counted atomically: exactly five get through (D21).
pub async fn parallel_failed_logins_never_pass_the_limit<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let fx = Arc::clone(&fx);
        tasks.push(tokio::spawn(async move { fx.engine.login("admin@example.com", "wrong").await }));
    }
    let (mut refused, mut throttled) = (0, 0);
    for task in tasks {
        match task.await.expect("no task panics") {
            Err(Error::InvalidCredentials) => refused += 1,
            Err(Error::Throttled { .. }) => throttled += 1,
            other => panic!("unexpected login outcome {other:?}"),
        }
    }
    assert_eq!((refused, throttled), (5, 7), "five attempts are checked, the rest throttled");
}

/// A token stops working when its user is deleted or changes password, or when it expires (D20).
pub async fn tokens_stop_working_after_delete_or_password_change<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (deleted, _) = fx.pharmacist("deleted@example.com").await;
    fx.engine.delete_user(&fx.admin, deleted.user.id, None).await.unwrap();
    assert!(matches!(fx.engine.authenticate(&deleted.token.token).await, Err(Error::Unauthenticated)), "deleted user");
    fx.engine.restore_user(&fx.admin, deleted.user.id).await.unwrap();
    assert!(
        matches!(fx.engine.authenticate(&deleted.token.token).await, Err(Error::Unauthenticated)),
        "a restore does not revive tokens issued before the delete"
    );
    let fresh = fx.engine.login("deleted@example.com", "user-password").await.unwrap();
    fx.engine.authenticate(&fresh.token.token).await.expect("a login after the restore works");

    let (changer, principal) = fx.pharmacist("changer@example.com").await;
    let change = PasswordChange {
        current_password: "user-password".into(),
        new_password: Password::parse("new-password-1").unwrap(),
    };
    let renewed = fx.engine.change_password(&principal, change).await.expect("password changed");
    assert!(matches!(fx.engine.authenticate(&changer.token.token).await, Err(Error::Unauthenticated)), "old token");
    fx.engine.authenticate(&renewed.token.token).await.expect("the token from the change works");
    let relogin = fx.engine.login("changer@example.com", "new-password-1").await.expect("new password works");
    fx.engine.authenticate(&relogin.token.token).await.expect("a login in the same second as the change works");

    fx.advance(SignedDuration::from_hours(25));
    assert!(matches!(fx.engine.authenticate(&relogin.token.token).await, Err(Error::Unauthenticated)), "expired");
    assert!(matches!(fx.engine.authenticate("not.a.token").await, Err(Error::Unauthenticated)), "garbage");
}

/// A throttled email writes nothing but one note per window; failures alone count, so right
/// passwords pass however many run at once; odd emails are audited as `(invalid)` (D40).
pub async fn throttled_sign_ins_write_nothing_and_right_passwords_pass<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    fx.user_with_role("counter@example.com", PHARMACIST_ROLE_ID).await;

    // Four failures, then many right passwords at once: none is refused.
    for _ in 0..LIMIT - 1 {
        assert!(matches!(fx.engine.login("counter@example.com", "wrong").await, Err(Error::InvalidCredentials)));
    }
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let fx = Arc::clone(&fx);
        tasks.push(tokio::spawn(async move { fx.engine.login("counter@example.com", "user-password").await }));
    }
    for task in tasks {
        task.await.expect("no task panics").expect("a right password is never refused below five failures");
    }

    // Five failures throttle; then every further attempt leaves one note and nothing else.
    let entries_before = fx.audit_entries().await.len();
    for _ in 0..LIMIT {
        assert!(matches!(fx.engine.login("counter@example.com", "wrong").await, Err(Error::InvalidCredentials)));
    }
    for attempt in 0..40 {
        let password = if attempt % 2 == 0 { "wrong" } else { "user-password" };
        assert!(matches!(fx.engine.login("counter@example.com", password).await, Err(Error::Throttled { .. })));
    }
    let entries = fx.audit_entries().await;
    let new: Vec<&str> = entries[..entries.len() - entries_before].iter().map(|e| e.action.as_str()).collect();
    assert_eq!(new.iter().filter(|a| **a == "login_failed").count(), LIMIT as usize, "{new:?}");
    assert_eq!(new.iter().filter(|a| **a == "login_throttled").count(), 1, "one note per window: {new:?}");
    assert_eq!(new.len(), LIMIT as usize + 1, "throttled attempts write nothing else: {new:?}");

    // A password typed into the email field is never stored as typed.
    let typed = "hunter2 my secret";
    assert!(matches!(fx.engine.login(typed, "x").await, Err(Error::InvalidCredentials)));
    let latest = &fx.audit_entries().await[0];
    assert_eq!(latest.action, "login_failed");
    let changes = latest.changes.as_deref().unwrap_or_default();
    assert!(changes.contains(INVALID_EMAIL_KEY) && !changes.contains("hunter2"), "{changes}");

    // Closed windows' rows are purged by later failures.
    fx.advance(SignedDuration::from_mins(16));
    assert!(matches!(fx.engine.login("someone@example.com", "wrong").await, Err(Error::InvalidCredentials)));
    assert_eq!(fx.engine.store().login_attempts("counter@example.com").await.unwrap(), None, "purged");
    fx.engine.login("counter@example.com", "user-password").await.expect("the window has closed");
}

/// A wrong current password on a password change counts as a failed sign-in and is audited,
/// so a stolen token cannot guess the password (D40).
pub async fn wrong_current_passwords_count_as_failed_sign_ins<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (_, principal) = fx.user_with_role("owner@example.com", PHARMACIST_ROLE_ID).await;
    for guess in 0..LIMIT {
        let result = fx.engine.change_password(&principal, to_new_password(&format!("guess {guess}"))).await;
        assert!(matches!(result, Err(Error::Rule(RuleBroken::WrongCurrentPassword))), "guess {guess}: {result:?}");
    }
    let sixth = fx.engine.change_password(&principal, to_new_password("user-password")).await;
    assert!(matches!(sixth, Err(Error::Throttled { .. })), "the sixth answers 429 even when right: {sixth:?}");
    assert!(matches!(fx.engine.login("owner@example.com", "user-password").await, Err(Error::Throttled { .. })));
    let audited: BTreeSet<String> = fx
        .audit_entries()
        .await
        .into_iter()
        .filter(|entry| entry.user_id == Some(principal.user_id))
        .map(|entry| entry.action)
        .collect();
    assert!(audited.contains("password_change_failed"), "{audited:?}");
    fx.advance(SignedDuration::from_mins(15));
    fx.engine.change_password(&principal, to_new_password("user-password")).await.expect("the window has closed");
}

/// Wrong current passwords count against the account as well as its email (D48): a caller who
/// changes the email between guesses gets no more than five, and the account then refuses a
/// sign-in under its new email until the window closes.
pub async fn changing_the_email_does_not_start_the_guesses_again<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (_, principal) = fx.user_with_role("first@example.com", PHARMACIST_ROLE_ID).await;
    let mut guesses = 0;
    for (round, email) in ["second@example.com", "third@example.com", "fourth@example.com"].into_iter().enumerate() {
        for _ in 0..2 {
            if guesses == LIMIT {
                break;
            }
            let result = fx.engine.change_password(&principal, to_new_password(&format!("guess {guesses}"))).await;
            assert!(matches!(result, Err(Error::Rule(RuleBroken::WrongCurrentPassword))), "round {round}: {result:?}");
            guesses += 1;
        }
        let update = ProfileUpdate { first_name: "Ravi".into(), last_name: "Kumar".into(), email: email.into() };
        fx.engine.update_profile(&principal, update).await.expect("the email changes");
    }
    assert_eq!(guesses, LIMIT);
    let next = fx.engine.change_password(&principal, to_new_password("user-password")).await;
    assert!(matches!(next, Err(Error::Throttled { .. })), "a new email starts no new count: {next:?}");
    let sign_in = fx.engine.login("fourth@example.com", "user-password").await;
    assert!(
        matches!(sign_in, Err(Error::Throttled { .. })),
        "the account is throttled under its new email: {sign_in:?}"
    );
    fx.advance(SignedDuration::from_mins(15));
    fx.engine.login("fourth@example.com", "user-password").await.expect("the window has closed");
}
