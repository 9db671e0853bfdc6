//! The conformance cases. Each takes a fresh store and panics, with a message naming the rule,
//! when the store or the engine over it breaks a promise of the spec or the decisions.

use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::SignedDuration;
use serde_json::Value;

use super::{Fixture, amount, created, dec, engine, onboarding, ts};
use crate::access::{ADMIN_ROLE_ID, Access, Action, Collection, PHARMACIST_ROLE_ID, Requirement};
use crate::domain::{
    AuditQuery, InvoiceQuery, InvoiceSortKey, InvoiceStatus, NewPolicy, NewRole, NewTransaction, NewUser, NewVendor,
    PasswordChange, ProfileUpdate, TransactionQuery, TransactionSortKey, TransactionType, UserUpdate, VendorQuery,
    VendorType,
};
use crate::error::{Entity, Error, IdempotencyClash, RuleBroken};
use crate::idempotency::{ClaimOutcome, Created, IdempotencyClaim, IdempotencyKey, IdempotencyRequest, Replay};
use crate::ids::{InvoiceId, PermissionId, PolicyId, RoleId, TransactionId, UserId, VendorId};
use crate::paging::{PageRequest, Sort, SortDir};
use crate::store::Store;
use crate::text::Password;

fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn invoice_query(pairs: &[(&str, &str)]) -> InvoiceQuery {
    InvoiceQuery::from_params(&params(pairs)).unwrap_or_else(|errors| panic!("query {pairs:?}: {errors}"))
}

fn vendor_query(pairs: &[(&str, &str)]) -> VendorQuery {
    VendorQuery::from_params(&params(pairs)).unwrap_or_else(|errors| panic!("query {pairs:?}: {errors}"))
}

fn transaction_query(pairs: &[(&str, &str)]) -> TransactionQuery {
    TransactionQuery::from_params(&params(pairs)).unwrap_or_else(|errors| panic!("query {pairs:?}: {errors}"))
}

fn field_error<T: std::fmt::Debug>(result: Result<T, Error>, field: &str, label: &str) {
    match result {
        Err(Error::Validation(errors)) => {
            assert!(errors.contains(field), "{label}: expected an error on {field}, got {errors}")
        }
        other => panic!("{label}: expected a validation error on {field}, got {other:?}"),
    }
}

fn decode_claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWT has three parts");
    let bytes = base64url_decode(payload);
    serde_json::from_slice(&bytes).expect("the payload is JSON")
}

fn base64url_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut n_bits = 0;
    let mut out = Vec::new();
    for byte in text.bytes().filter(|b| *b != b'=') {
        let value = ALPHABET.iter().position(|c| *c == byte).expect("base64url alphabet") as u32;
        bits = (bits << 6) | value;
        n_bits += 6;
        if n_bits >= 8 {
            n_bits -= 8;
            out.push((bits >> n_bits) as u8);
            bits &= (1 << n_bits) - 1;
        }
    }
    out
}

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

/// Tokens carry exactly the spec's claims (spec, Authentication 5-7).
pub async fn login_issues_a_token_with_the_spec_claims<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let session =
        fx.engine.login("ADMIN@Example.com ", "admin-password").await.expect("emails match case-insensitively");
    let claims = decode_claims(&session.token.token);
    let expected_keys: BTreeSet<&str> =
        ["sub", "email", "given_name", "family_name", "role_id", "is_admin", "perm", "exp", "iss", "aud"].into();
    let keys: BTreeSet<&str> = claims.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, expected_keys, "exactly the spec's claims");
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
            "Setting:Read"
        ],
        "D19/D27: resolved, deduplicated, in id order"
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

/// Permissions are the union of active role and user policies, deduplicated, by id (D19).
pub async fn permissions_resolve_from_role_and_user_policies<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (session, principal) = fx.pharmacist("p@example.com").await;
    let codes = |permissions: Vec<crate::access::Permission>| permissions.iter().map(|p| p.code()).collect::<Vec<_>>();
    assert_eq!(fx.engine.my_permissions(&principal).await.unwrap().len(), 11);

    let audit_policy = created(
        fx.engine
            .create_policy(
                &fx.admin,
                NewPolicy {
                    name: "Auditors".into(),
                    description: String::new(),
                    permission_ids: vec![
                        crate::seed::permission_id(Access::new(Collection::AuditLog, Action::Read)),
                        crate::seed::permission_id(Access::new(Collection::Vendor, Action::Read)),
                    ],
                },
                None,
            )
            .await
            .unwrap(),
    );
    fx.engine.attach_user_policy(&fx.admin, session.user.id, audit_policy.id).await.unwrap();
    fx.engine
        .attach_user_policy(&fx.admin, session.user.id, audit_policy.id)
        .await
        .expect("attaching twice is harmless");
    let with_audit = codes(fx.engine.my_permissions(&principal).await.unwrap());
    assert_eq!(with_audit.len(), 12, "Vendor:Read is not repeated: {with_audit:?}");
    assert_eq!(with_audit.last().map(String::as_str), Some("AuditLog:Read"), "ordered by id");
    let policies = fx.engine.list_user_policies(&principal, session.user.id).await.unwrap();
    assert_eq!(policies.iter().map(|p| p.id).collect::<Vec<_>>(), [audit_policy.id]);

    fx.engine.delete_policy(&fx.admin, audit_policy.id, None).await.unwrap();
    assert_eq!(fx.engine.my_permissions(&principal).await.unwrap().len(), 11, "inactive policies grant nothing");
    assert!(fx.engine.list_user_policies(&principal, session.user.id).await.unwrap().is_empty());

    let role = created(
        fx.engine
            .create_role(&fx.admin, NewRole { name: "Clerk".into(), description: "x".into() }, None)
            .await
            .unwrap(),
    );
    let clerk_policy = created(
        fx.engine
            .create_policy(
                &fx.admin,
                NewPolicy {
                    name: "Clerk work".into(),
                    description: String::new(),
                    permission_ids: vec![PermissionId(5)],
                },
                None,
            )
            .await
            .unwrap(),
    );
    fx.engine.attach_role_policy(&fx.admin, role.id, clerk_policy.id).await.unwrap();
    let (_, clerk) = fx.user_with_role("clerk@example.com", role.id).await;
    assert_eq!(codes(fx.engine.my_permissions(&clerk).await.unwrap()), ["Invoice:Read"]);
    fx.engine.detach_role_policy(&fx.admin, role.id, clerk_policy.id).await.unwrap();
    assert!(fx.engine.my_permissions(&clerk).await.unwrap().is_empty(), "detached");
    fx.engine.attach_role_policy(&fx.admin, role.id, clerk_policy.id).await.unwrap();
    fx.engine.delete_role(&fx.admin, role.id, None).await.unwrap();
    assert!(fx.engine.my_permissions(&clerk).await.unwrap().is_empty(), "an inactive role grants nothing");
    assert_eq!(fx.engine.my_permissions(&fx.admin).await.unwrap()[0].collection, "*", "admins get the wildcard");
}

/// 403 names the missing permission; admins pass everything (spec, Authentication 6-9).
pub async fn permission_checks_answer_forbidden<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (_, pharmacist) = fx.pharmacist("p@example.com").await;
    let vendor = created(
        fx.engine.create_vendor(&pharmacist, NewVendor::new("Cipla", VendorType::Manufacturer), None).await.unwrap(),
    );
    let forbidden = |result: Result<(), Error>, needed: &str, label: &str| match result {
        Err(Error::Forbidden { required }) => assert_eq!(required.to_string(), needed, "{label}"),
        other => panic!("{label}: expected 403, got {other:?}"),
    };
    forbidden(fx.engine.delete_vendor(&pharmacist, vendor.id, None).await, "Vendor:Delete", "delete vendor");
    forbidden(fx.engine.list_permissions(&pharmacist).await.map(drop), "Permission:Read", "permissions");
    forbidden(fx.engine.update_setting(&pharmacist, "Currency", "$").await.map(drop), "Setting:Update", "settings");
    forbidden(
        fx.engine.list_audit(&pharmacist, &AuditQuery::from_params(&params(&[])).unwrap()).await.map(drop),
        "AuditLog:Read",
        "audit",
    );
    forbidden(fx.engine.delete_vendor(&pharmacist, VendorId(999), None).await, "Vendor:Delete", "403 comes before 404");
    match fx.engine.list_vendors(&pharmacist, &vendor_query(&[("isActive", "false")])).await {
        Err(Error::Forbidden { required: Requirement::Admin }) => {}
        other => panic!("listing deleted vendors needs an admin, got {other:?}"),
    }
    fx.engine.list_settings(&pharmacist).await.expect("pharmacists read settings");
    fx.engine.dashboard_summary(&pharmacist).await.expect("pharmacists read the dashboard");
    fx.engine.delete_vendor(&fx.admin, vendor.id, None).await.expect("admins bypass checks");
    fx.engine
        .list_vendors(&fx.admin, &vendor_query(&[("isActive", "false")]))
        .await
        .expect("admins list deleted vendors");
}

/// Vendor create, read, update, soft delete with reason, restore (spec; D14, D15, D17).
pub async fn vendors_are_created_read_updated_deleted_and_restored<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let mut input = NewVendor::new(" Sun Pharma ", VendorType::Manufacturer);
    input.address = Some("Plot 4\nAndheri".into());
    input.phone = Some("+91 22 1234".into());
    input.email = Some("orders@sun.example".into());
    input.drug_license_number1 = Some("DL-1".into());
    input.drug_license_number2 = Some("DL-2".into());
    input.additional_drug_license_numbers = vec!["DL-3".into(), "DL-4".into()];
    let vendor = created(fx.engine.create_vendor(&fx.admin, input.clone(), None).await.unwrap());
    assert_eq!(vendor.name, "Sun Pharma", "names are trimmed");
    assert_eq!(vendor.additional_drug_license_numbers, ["DL-3", "DL-4"]);
    assert_eq!(vendor.totals.outstanding_balance, dec("0"));
    assert!(vendor.is_active);
    assert_eq!(fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap(), vendor, "read returns what create returned");

    fx.advance(SignedDuration::from_mins(5));
    let mut update = NewVendor::new("Sun Pharmaceuticals", VendorType::Wholesaler);
    update.phone = Some("999".into());
    let updated = fx.engine.update_vendor(&fx.admin, vendor.id, update).await.unwrap();
    assert_eq!(updated.name, "Sun Pharmaceuticals");
    assert_eq!(updated.vendor_type, VendorType::Wholesaler);
    assert_eq!(updated.address, None, "D14: a PUT replaces every field");
    assert!(updated.additional_drug_license_numbers.is_empty());
    assert_eq!(updated.created_at, vendor.created_at);
    assert!(updated.updated_at > vendor.updated_at);

    fx.engine.delete_vendor(&fx.admin, vendor.id, Some("duplicate entry".into())).await.unwrap();
    assert!(matches!(
        fx.engine.get_vendor(&fx.admin, vendor.id).await,
        Err(Error::NotFound { entity: Entity::Vendor })
    ));
    assert!(
        matches!(fx.engine.delete_vendor(&fx.admin, vendor.id, None).await, Err(Error::NotFound { .. })),
        "delete twice"
    );
    assert!(matches!(
        fx.engine.update_vendor(&fx.admin, vendor.id, NewVendor::new("x", VendorType::Dealer)).await,
        Err(Error::NotFound { .. })
    ));
    let deleted = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("isActive", "false")])).await.unwrap();
    assert_eq!(deleted.items.iter().map(|v| v.id).collect::<Vec<_>>(), [vendor.id]);
    assert!(!deleted.items[0].is_active);

    let restored = fx.engine.restore_vendor(&fx.admin, vendor.id).await.unwrap();
    assert!(restored.is_active);
    assert!(
        matches!(fx.engine.restore_vendor(&fx.admin, vendor.id).await, Err(Error::NotFound { .. })),
        "D15: already active"
    );
    assert!(matches!(fx.engine.restore_vendor(&fx.admin, VendorId(424242)).await, Err(Error::NotFound { .. })));
    assert!(matches!(fx.engine.get_vendor(&fx.admin, VendorId(424242)).await, Err(Error::NotFound { .. })));

    field_error(
        fx.engine.create_vendor(&fx.admin, NewVendor::new("Mine", VendorType::OwnPharmacy), None).await,
        "vendorType",
        "OwnPharmacy via create",
    );
    field_error(
        fx.engine.create_vendor(&fx.admin, NewVendor::new("   ", VendorType::Dealer), None).await,
        "name",
        "blank name",
    );
    let mut long = NewVendor::new("x".repeat(201), VendorType::Dealer);
    long.email = Some("bad".into());
    field_error(fx.engine.create_vendor(&fx.admin, long.clone(), None).await, "name", "long name");
    field_error(fx.engine.create_vendor(&fx.admin, long, None).await, "email", "bad email");
}

/// The OwnPharmacy vendor can be edited but not deleted or retyped (D14).
pub async fn own_pharmacy_vendor_is_protected<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let own = fx.engine.list_vendors(&fx.admin, &VendorQuery::default()).await.unwrap().items[0].clone();
    assert_eq!(own.vendor_type, VendorType::OwnPharmacy);
    assert!(matches!(
        fx.engine.delete_vendor(&fx.admin, own.id, None).await,
        Err(Error::Rule(RuleBroken::OwnPharmacyDelete))
    ));
    let to_dealer = NewVendor::new("Apollo", VendorType::Dealer);
    assert!(matches!(
        fx.engine.update_vendor(&fx.admin, own.id, to_dealer).await,
        Err(Error::Rule(RuleBroken::OwnPharmacyType))
    ));
    let renamed = fx
        .engine
        .update_vendor(&fx.admin, own.id, NewVendor::new("Apollo Care", VendorType::OwnPharmacy))
        .await
        .unwrap();
    assert_eq!(renamed.name, "Apollo Care");
    let dealer = fx.vendor("Dealer One").await;
    let to_own = NewVendor::new("Dealer One", VendorType::OwnPharmacy);
    assert!(matches!(
        fx.engine.update_vendor(&fx.admin, dealer.id, to_own).await,
        Err(Error::Rule(RuleBroken::OwnPharmacyType))
    ));
}

/// Vendor totals sum active invoices and their active payments; deleted vendors keep them (D11).
pub async fn vendor_totals_follow_active_invoices_and_payments<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Totals").await;
    let first = fx.invoice(vendor.id, "T-1", "100.25", "2024-06-01T00:00:00Z").await;
    let second = fx.invoice(vendor.id, "T-2", "50", "2024-06-01T00:00:00Z").await;
    fx.pay(first.id, "30.05").await;
    let payment = fx.pay(second.id, "10").await;
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(
        (totals.total_invoice_value, totals.total_paid_amount, totals.outstanding_balance),
        (dec("150.25"), dec("40.05"), dec("110.2"))
    );
    fx.engine.delete_transaction(&fx.admin, payment.id, None).await.unwrap();
    fx.engine.delete_invoice(&fx.admin, second.id, None).await.unwrap();
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(
        (totals.total_invoice_value, totals.total_paid_amount, totals.outstanding_balance),
        (dec("100.25"), dec("30.05"), dec("70.2")),
        "canceled invoices do not count"
    );
    fx.pay(first.id, "80").await;
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(totals.outstanding_balance, dec("-9.8"), "overpayment makes the balance negative");
    fx.engine.delete_vendor(&fx.admin, vendor.id, None).await.unwrap();
    let deleted = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("isActive", "false")])).await.unwrap();
    assert_eq!(deleted.items[0].totals, totals, "a soft-deleted vendor keeps its totals");
}

/// Vendor list: search, type filter, every sort with id tie-breaks, paging (spec; D8).
pub async fn vendor_list_filters_sorts_and_pages<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let names = [
        ("beta", VendorType::Dealer),
        ("Alpha", VendorType::Agency),
        ("gamma", VendorType::Dealer),
        ("alpha", VendorType::Wholesaler),
    ];
    let mut ids = Vec::new();
    for (name, vendor_type) in names {
        ids.push(
            created(fx.engine.create_vendor(&fx.admin, NewVendor::new(name, vendor_type), None).await.unwrap()).id,
        );
    }
    let big = fx.invoice(ids[2], "G-1", "500", "2024-06-01T00:00:00Z").await;
    fx.invoice(ids[0], "B-1", "70", "2024-06-01T00:00:00Z").await;
    fx.pay(big.id, "100").await;
    let names_of = |page: &crate::paging::Page<crate::domain::Vendor>| {
        page.items.iter().map(|v| v.name.clone()).collect::<Vec<_>>()
    };

    let all = fx.engine.list_vendors(&fx.admin, &VendorQuery::default()).await.unwrap();
    assert_eq!(
        names_of(&all),
        ["Alpha", "alpha", "Apollo Pharmacy", "beta", "gamma"],
        "name, case-insensitive, then id"
    );
    let desc = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("sortDir", "desc")])).await.unwrap();
    assert_eq!(
        names_of(&desc),
        ["gamma", "beta", "Apollo Pharmacy", "alpha", "Alpha"],
        "ties reverse with the direction"
    );
    let search = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("search", "ALP")])).await.unwrap();
    assert_eq!(names_of(&search), ["Alpha", "alpha"]);
    let dealers = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("vendorType", "dealer")])).await.unwrap();
    assert_eq!(names_of(&dealers), ["beta", "gamma"]);
    let by_type = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("sortBy", "vendorType")])).await.unwrap();
    let types: Vec<&str> = by_type.items.iter().map(|v| v.vendor_type.name()).collect();
    assert_eq!(types, ["Agency", "Dealer", "Dealer", "OwnPharmacy", "Wholesaler"]);
    let by_balance = fx
        .engine
        .list_vendors(&fx.admin, &vendor_query(&[("sortBy", "outstandingBalance"), ("sortDir", "desc")]))
        .await
        .unwrap();
    assert_eq!(names_of(&by_balance)[..2], ["gamma", "beta"]);
    assert_eq!(by_balance.items[0].totals.outstanding_balance, dec("400"));

    let mut seen = Vec::new();
    for page in 1..=3 {
        let query = VendorQuery { page: PageRequest::new(page, 2), ..VendorQuery::default() };
        let result = fx.engine.list_vendors(&fx.admin, &query).await.unwrap();
        assert_eq!(result.total_count, 5);
        assert_eq!((result.page, result.page_size), (page, 2));
        seen.extend(result.items.iter().map(|v| v.id));
    }
    assert_eq!(seen, all.items.iter().map(|v| v.id).collect::<Vec<_>>(), "pages are disjoint and cover the list");
    let beyond = fx
        .engine
        .list_vendors(&fx.admin, &VendorQuery { page: PageRequest::new(9, 2), ..VendorQuery::default() })
        .await
        .unwrap();
    assert!(beyond.items.is_empty());
    assert_eq!(beyond.total_count, 5);
}

/// Invoices need an active vendor and a number free among active invoices (D4, D5, D15).
pub async fn invoices_enforce_active_vendors_and_unique_numbers<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Numbers").await;
    let gone = fx.vendor("Gone").await;
    fx.engine.delete_vendor(&fx.admin, gone.id, None).await.unwrap();
    let due = "2024-06-01T00:00:00Z";
    field_error(
        fx.engine.create_invoice(&fx.admin, fx.new_invoice(gone.id, "N-1", "10", due), None).await,
        "vendorId",
        "inactive vendor",
    );
    field_error(
        fx.engine.create_invoice(&fx.admin, fx.new_invoice(VendorId(9999), "N-1", "10", due), None).await,
        "vendorId",
        "missing vendor",
    );
    let mut backwards = fx.new_invoice(vendor.id, "N-1", "10", due);
    backwards.invoice_date = ts("2024-06-02T00:00:00Z");
    field_error(fx.engine.create_invoice(&fx.admin, backwards, None).await, "dueDate", "D2: due before invoice date");

    let first = fx.invoice(vendor.id, "INV-001", "10", due).await;
    for taken in ["INV-001", " inv-001 "] {
        match fx.engine.create_invoice(&fx.admin, fx.new_invoice(vendor.id, taken, "10", due), None).await {
            Err(Error::Conflict { field: "invoiceNumber", .. }) => {}
            other => panic!("D4/D5: {taken:?} clashes case-insensitively, got {other:?}"),
        }
    }
    let second = fx.invoice(vendor.id, "INV-002", "20", due).await;
    match fx.engine.update_invoice(&fx.admin, second.id, fx.new_invoice(vendor.id, "inv-001", "20", due)).await {
        Err(Error::Conflict { field: "invoiceNumber", .. }) => {}
        other => panic!("an update to a taken number clashes, got {other:?}"),
    }
    let same =
        fx.engine.update_invoice(&fx.admin, first.id, fx.new_invoice(vendor.id, "INV-001", "12.5", due)).await.unwrap();
    assert_eq!(same.amount, amount("12.5"), "keeping one's own number is fine");

    fx.engine.delete_invoice(&fx.admin, first.id, Some("entered twice".into())).await.unwrap();
    assert!(matches!(
        fx.engine.get_invoice(&fx.admin, first.id).await,
        Err(Error::NotFound { entity: Entity::Invoice })
    ));
    let reuse = fx.invoice(vendor.id, "INV-001", "30", due).await;
    assert_ne!(reuse.id, first.id, "a canceled invoice frees its number");
    match fx.engine.restore_invoice(&fx.admin, first.id).await {
        Err(Error::Conflict { field: "invoiceNumber", .. }) => {}
        other => panic!("D15: restoring onto a taken number clashes, got {other:?}"),
    }
    fx.engine.delete_invoice(&fx.admin, second.id, None).await.unwrap();
    fx.engine.delete_vendor(&fx.admin, vendor.id, None).await.unwrap();
    assert!(
        matches!(
            fx.engine.restore_invoice(&fx.admin, second.id).await,
            Err(Error::Rule(RuleBroken::ParentInactive(Entity::Vendor)))
        ),
        "D15: an inactive parent blocks a restore"
    );
    fx.engine.restore_vendor(&fx.admin, vendor.id).await.unwrap();
    let restored = fx.engine.restore_invoice(&fx.admin, second.id).await.unwrap();
    assert_eq!(restored.status, InvoiceStatus::PartiallyPaid);
    assert!(
        matches!(fx.engine.restore_invoice(&fx.admin, second.id).await, Err(Error::NotFound { .. })),
        "already active"
    );
    let detail = fx.engine.get_invoice(&fx.admin, second.id).await.unwrap();
    assert_eq!(detail.vendor.id, vendor.id);
    assert_eq!(detail.vendor.name, "Numbers");
    assert_eq!(detail.invoice.vendor_name, "Numbers");
}

/// Status follows the spec's table in priority order, with today from the clock (D10).
pub async fn invoice_status_follows_the_table_and_the_clock<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Status").await;
    let invoice = fx.invoice(vendor.id, "S-1", "100", "2024-05-11T00:00:00Z").await;
    assert_eq!(invoice.status, InvoiceStatus::PartiallyPaid, "nothing paid, not due");
    assert_eq!(invoice.paid_amount, dec("0"));
    assert_eq!(invoice.pending_amount(), dec("100"));
    let due_today = fx.invoice(vendor.id, "S-2", "5", "2024-05-10T00:00:00Z").await;
    assert_eq!(due_today.status, InvoiceStatus::PartiallyPaid, "due today is not overdue");

    fx.advance(SignedDuration::from_hours(20));
    let fx = &fx;
    let read = |id| async move { fx.engine.get_invoice(&fx.admin, id).await.unwrap().invoice };
    assert_eq!(read(invoice.id).await.status, InvoiceStatus::PartiallyPaid, "due day itself (2024-05-11)");
    fx.advance(SignedDuration::from_hours(20));
    assert_eq!(read(invoice.id).await.status, InvoiceStatus::Overdue, "the day after the due day");
    fx.pay(invoice.id, "40").await;
    let partly = read(invoice.id).await;
    assert_eq!(
        (partly.status, partly.paid_amount, partly.pending_amount()),
        (InvoiceStatus::Overdue, dec("40"), dec("60"))
    );
    fx.pay(invoice.id, "60").await;
    let paid = read(invoice.id).await;
    assert_eq!((paid.status, paid.pending_amount()), (InvoiceStatus::FullyPaid, dec("0")), "fully paid beats overdue");
    fx.pay(invoice.id, "0.0001").await;
    let over = read(invoice.id).await;
    assert_eq!((over.status, over.pending_amount()), (InvoiceStatus::FullyPaid, dec("-0.0001")), "D10: overpayment");
    fx.engine.delete_invoice(&fx.admin, invoice.id, None).await.unwrap();
    let canceled = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("isActive", "false")])).await.unwrap().items;
    assert_eq!(canceled.len(), 1);
    assert_eq!(canceled[0].status, InvoiceStatus::Canceled);
    assert_eq!(canceled[0].paid_amount, dec("100.0001"), "D10: a canceled invoice keeps its figures");
}

/// Every filter of the invoice list, alone and combined (spec, Invoice list query).
pub async fn invoice_list_filters_by_every_parameter<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let acme = fx.vendor("Acme Distributors").await;
    let zenith = fx.vendor("Zenith").await;
    let overdue = fx.invoice(acme.id, "AC-100", "100", "2024-05-01T00:00:00Z").await;
    let paid = fx.invoice(acme.id, "AC-200", "200", "2024-06-01T00:00:00Z").await;
    let open = fx.invoice(zenith.id, "ZN-300", "300.5", "2024-06-01T00:00:00Z").await;
    let canceled = fx.invoice(zenith.id, "ZN-400", "400", "2024-06-01T00:00:00Z").await;
    fx.pay(paid.id, "200").await;
    fx.engine.delete_invoice(&fx.admin, canceled.id, None).await.unwrap();
    let fx = &fx;
    let ids = |pairs: &[(&str, &str)]| {
        let query = invoice_query(pairs);
        async move {
            let mut ids: Vec<InvoiceId> =
                fx.engine.list_invoices(&fx.admin, &query).await.unwrap().items.iter().map(|i| i.id).collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(ids(&[]).await, [overdue.id, paid.id, open.id, canceled.id], "isActive omitted lists all");
    assert_eq!(ids(&[("isActive", "true")]).await, [overdue.id, paid.id, open.id]);
    assert_eq!(ids(&[("isActive", "false")]).await, [canceled.id]);
    assert_eq!(ids(&[("status", "Overdue")]).await, [overdue.id]);
    assert_eq!(ids(&[("status", "fullypaid")]).await, [paid.id]);
    assert_eq!(ids(&[("status", "PartiallyPaid")]).await, [open.id]);
    assert_eq!(ids(&[("status", "Canceled")]).await, [canceled.id]);
    assert_eq!(ids(&[("search", "acme")]).await, [overdue.id, paid.id], "search matches the vendor name");
    assert_eq!(ids(&[("search", "zn-3")]).await, [open.id], "search matches the number");
    assert_eq!(ids(&[("invoiceNumber", "AC")]).await, [overdue.id, paid.id]);
    assert_eq!(
        ids(&[("invoiceNumber", "zenith")]).await,
        Vec::<InvoiceId>::new(),
        "invoiceNumber ignores vendor names"
    );
    assert_eq!(ids(&[("vendorId", &zenith.id.to_string())]).await, [open.id, canceled.id]);
    assert_eq!(ids(&[("minAmount", "200"), ("maxAmount", "300.5")]).await, [paid.id, open.id], "bounds are inclusive");
    assert_eq!(
        ids(&[("fromDate", "2024-05-01"), ("toDate", "2024-05-01T00:00:00Z")]).await,
        [overdue.id],
        "date bounds are inclusive"
    );
    assert_eq!(ids(&[("search", "%")]).await, Vec::<InvoiceId>::new(), "LIKE wildcards are matched literally");
    assert_eq!(ids(&[("search", "_")]).await, Vec::<InvoiceId>::new(), "LIKE wildcards are matched literally");
    assert_eq!(ids(&[("status", "Overdue"), ("vendorId", &zenith.id.to_string())]).await, Vec::<InvoiceId>::new());
}

/// Every invoice sort key, both directions, ties broken by id (D8).
pub async fn invoice_list_sorts_by_every_key_with_id_tie_breaks<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let b = fx.vendor("Bravo").await;
    let a = fx.vendor("alpha").await;
    let mut made = Vec::new();
    for (vendor, number, total, due, pay) in [
        (b.id, "X-3", "50", "2024-06-03T00:00:00Z", Some("10")),
        (a.id, "x-1", "50", "2024-06-01T00:00:00Z", None),
        (b.id, "X-2", "75", "2024-06-01T00:00:00Z", Some("75")),
        (a.id, "X-4", "20", "2024-06-02T00:00:00Z", Some("10")),
    ] {
        let invoice = fx.invoice(vendor, number, total, due).await;
        if let Some(paid) = pay {
            fx.pay(invoice.id, paid).await;
        }
        made.push(invoice.id);
        fx.advance(SignedDuration::from_secs(1));
    }
    for key in [
        InvoiceSortKey::InvoiceDate,
        InvoiceSortKey::DueDate,
        InvoiceSortKey::Amount,
        InvoiceSortKey::PendingAmount,
        InvoiceSortKey::PaidAmount,
        InvoiceSortKey::InvoiceNumber,
        InvoiceSortKey::VendorName,
    ] {
        for dir in [SortDir::Asc, SortDir::Desc] {
            let query = InvoiceQuery { sort: Sort { key, dir }, ..InvoiceQuery::default() };
            let items = fx.engine.list_invoices(&fx.admin, &query).await.unwrap().items;
            let mut expected = items.clone();
            expected.sort_by(|x, y| {
                let ordering = match key {
                    InvoiceSortKey::InvoiceDate => x.invoice_date.cmp(&y.invoice_date),
                    InvoiceSortKey::DueDate => x.due_date.cmp(&y.due_date),
                    InvoiceSortKey::Amount => x.amount.cmp(&y.amount),
                    InvoiceSortKey::PendingAmount => x.pending_amount().cmp(&y.pending_amount()),
                    InvoiceSortKey::PaidAmount => x.paid_amount.cmp(&y.paid_amount),
                    InvoiceSortKey::InvoiceNumber => {
                        x.invoice_number.to_lowercase().cmp(&y.invoice_number.to_lowercase())
                    }
                    InvoiceSortKey::VendorName => x.vendor_name.to_lowercase().cmp(&y.vendor_name.to_lowercase()),
                };
                dir.apply(ordering.then(x.id.cmp(&y.id)))
            });
            let got: Vec<InvoiceId> = items.iter().map(|i| i.id).collect();
            let want: Vec<InvoiceId> = expected.iter().map(|i| i.id).collect();
            assert_eq!(got, want, "sort {key:?} {dir:?}");
            assert_eq!(got.len(), 4);
        }
    }
    let default = fx.engine.list_invoices(&fx.admin, &InvoiceQuery::default()).await.unwrap().items;
    assert_eq!(default.first().map(|i| i.id), Some(made[3]), "default: newest invoice date first (ties by id desc)");
}

/// Paid is the exact sum of active payments, pending the exact rest (D1, D10).
pub async fn payments_keep_paid_and_pending_exact<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Exact").await;
    let invoice = fx.invoice(vendor.id, "E-1", "1", "2024-06-01T00:00:00Z").await;
    let first = fx.pay(invoice.id, "0.1").await;
    fx.pay(invoice.id, "0.2").await;
    let third = fx.pay(invoice.id, "0.3").await;
    assert_eq!(third.invoice.pending_amount, dec("0.4"), "the nested invoice shows pending after this payment");
    assert_eq!(third.invoice.invoice_number, "E-1");
    assert_eq!(third.invoice.vendor_id, vendor.id);
    // What a create answers is what a read gives afterwards, even from a clock finer than the
    // stores keep (microseconds).
    fx.advance(SignedDuration::from_nanos(1_234_567));
    let fourth = fx.pay(invoice.id, "0.0001").await;
    assert_eq!(fx.engine.get_transaction(&fx.admin, fourth.id).await.unwrap(), fourth);
    fx.engine.delete_transaction(&fx.admin, fourth.id, None).await.unwrap();
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (dec("0.6"), dec("0.4")), "0.1 + 0.2 + 0.3 is exactly 0.6");
    fx.engine.delete_transaction(&fx.admin, first.id, Some("bounced".into())).await.unwrap();
    assert!(matches!(
        fx.engine.get_transaction(&fx.admin, first.id).await,
        Err(Error::NotFound { entity: Entity::Transaction })
    ));
    assert_eq!(fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice.paid_amount, dec("0.5"));
    assert!(matches!(fx.engine.delete_transaction(&fx.admin, first.id, None).await, Err(Error::NotFound { .. })));
    let restored = fx.engine.restore_transaction(&fx.admin, first.id).await.unwrap();
    assert!(restored.is_active);
    assert_eq!(restored.invoice.pending_amount, dec("0.4"));
    assert_eq!(
        fx.engine.get_transaction(&fx.admin, third.id).await.unwrap().invoice.pending_amount,
        dec("0.4"),
        "read shows pending now"
    );
}

/// A payment update moves its amount between invoices' paid totals (D14).
pub async fn payment_updates_move_amounts_between_invoices<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Mover").await;
    let a = fx.invoice(vendor.id, "M-A", "100", "2024-06-01T00:00:00Z").await;
    let b = fx.invoice(vendor.id, "M-B", "100", "2024-06-01T00:00:00Z").await;
    let payment = fx.pay(a.id, "10").await;
    let mut change = fx.new_payment(b.id, "15.5");
    change.transaction_type = TransactionType::Cash;
    change.description = Some("moved".into());
    let moved = fx.engine.update_transaction(&fx.admin, payment.id, change).await.unwrap();
    assert_eq!((moved.invoice_id, moved.amount, moved.transaction_type), (b.id, amount("15.5"), TransactionType::Cash));
    let fx = &fx;
    let paid = |id| async move { fx.engine.get_invoice(&fx.admin, id).await.unwrap().invoice.paid_amount };
    assert_eq!((paid(a.id).await, paid(b.id).await), (dec("0"), dec("15.5")));
    let same_invoice = fx.engine.update_transaction(&fx.admin, payment.id, fx.new_payment(b.id, "20")).await.unwrap();
    assert_eq!(same_invoice.invoice.pending_amount, dec("80"));
    assert_eq!(paid(b.id).await, dec("20"));
    fx.engine.delete_invoice(&fx.admin, a.id, None).await.unwrap();
    field_error(
        fx.engine.update_transaction(&fx.admin, payment.id, fx.new_payment(a.id, "1")).await,
        "invoiceId",
        "canceled target invoice",
    );
    assert_eq!(paid(b.id).await, dec("20"), "a refused update changes nothing");
    fx.engine.delete_transaction(&fx.admin, payment.id, None).await.unwrap();
    assert!(matches!(
        fx.engine.update_transaction(&fx.admin, payment.id, fx.new_payment(b.id, "1")).await,
        Err(Error::NotFound { .. })
    ));
    assert_eq!(paid(b.id).await, dec("0"));
}

/// Payments cannot be dated after today or target canceled invoices (D2, spec).
pub async fn payment_rules_refuse_future_dates_and_inactive_invoices<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Rules").await;
    let invoice = fx.invoice(vendor.id, "R-1", "100", "2024-06-01T00:00:00Z").await;
    let mut tomorrow = fx.new_payment(invoice.id, "1");
    tomorrow.transaction_date = ts("2024-05-11T00:00:00Z");
    field_error(fx.engine.create_transaction(&fx.admin, tomorrow, None).await, "transactionDate", "D2: tomorrow");
    let mut tonight = fx.new_payment(invoice.id, "1");
    tonight.transaction_date = ts("2024-05-10T23:59:59Z");
    fx.engine.create_transaction(&fx.admin, tonight, None).await.expect("later today is fine");
    let payment = fx.pay(invoice.id, "2").await;
    field_error(
        fx.engine.create_transaction(&fx.admin, fx.new_payment(InvoiceId(4040), "1"), None).await,
        "invoiceId",
        "missing invoice",
    );
    fx.engine.delete_transaction(&fx.admin, payment.id, None).await.unwrap();
    fx.engine.delete_invoice(&fx.admin, invoice.id, None).await.unwrap();
    field_error(
        fx.engine.create_transaction(&fx.admin, fx.new_payment(invoice.id, "1"), None).await,
        "invoiceId",
        "canceled invoice",
    );
    assert!(matches!(
        fx.engine.restore_transaction(&fx.admin, payment.id).await,
        Err(Error::Rule(RuleBroken::ParentInactive(Entity::Invoice)))
    ));
}

/// Transaction list filters and sorts (spec, Transaction list query).
pub async fn transaction_list_filters_and_sorts<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Lister").await;
    let a = fx.invoice(vendor.id, "L-1", "1000", "2024-06-01T00:00:00Z").await;
    let b = fx.invoice(vendor.id, "L-2", "1000", "2024-06-01T00:00:00Z").await;
    let mut ids = Vec::new();
    for (invoice, paid, kind, date) in [
        (a.id, "10", TransactionType::Cash, "2024-05-01T00:00:00Z"),
        (a.id, "30", TransactionType::NetBanking, "2024-05-03T00:00:00Z"),
        (b.id, "20", TransactionType::Upi, "2024-05-02T00:00:00Z"),
        (b.id, "20", TransactionType::Cash, "2024-05-04T00:00:00Z"),
    ] {
        let input = NewTransaction {
            invoice_id: invoice,
            amount: amount(paid),
            transaction_date: ts(date),
            transaction_type: kind,
            description: None,
        };
        ids.push(created(fx.engine.create_transaction(&fx.admin, input, None).await.unwrap()).id);
        fx.advance(SignedDuration::from_secs(1));
    }
    let deleted = fx.pay(b.id, "5").await;
    fx.engine.delete_transaction(&fx.admin, deleted.id, None).await.unwrap();
    let fx = &fx;
    let list = |pairs: &[(&str, &str)]| {
        let query = transaction_query(pairs);
        async move {
            fx.engine
                .list_transactions(&fx.admin, &query)
                .await
                .unwrap()
                .items
                .iter()
                .map(|t| t.id)
                .collect::<Vec<TransactionId>>()
        }
    };
    assert_eq!(list(&[]).await, [ids[3], ids[1], ids[2], ids[0]], "default: newest payment date first");
    assert_eq!(list(&[("isActive", "false")]).await, [deleted.id]);
    assert_eq!(list(&[("invoiceId", &a.id.to_string()), ("sortDir", "asc")]).await, [ids[0], ids[1]]);
    assert_eq!(list(&[("transactionType", "cash"), ("sortDir", "asc")]).await, [ids[0], ids[3]]);
    assert_eq!(
        list(&[("fromDate", "2024-05-02"), ("toDate", "2024-05-03"), ("sortDir", "asc")]).await,
        [ids[2], ids[1]]
    );
    assert_eq!(
        list(&[("sortBy", "amount")]).await,
        [ids[1], ids[3], ids[2], ids[0]],
        "ties by id in the same direction"
    );
    assert_eq!(
        list(&[("sortBy", "transactionType"), ("sortDir", "asc")]).await,
        [ids[0], ids[3], ids[1], ids[2]],
        "Cash, NetBanking, UPI"
    );
    assert_eq!(list(&[("sortBy", "createdAt"), ("sortDir", "asc")]).await, ids);
    let sorted_keys = [
        TransactionSortKey::TransactionDate,
        TransactionSortKey::Amount,
        TransactionSortKey::TransactionType,
        TransactionSortKey::CreatedAt,
    ];
    for key in sorted_keys {
        let query = TransactionQuery {
            sort: Sort { key, dir: SortDir::Asc },
            page: PageRequest::new(2, 3),
            ..TransactionQuery::default()
        };
        let page = fx.engine.list_transactions(&fx.admin, &query).await.unwrap();
        assert_eq!((page.total_count, page.items.len()), (4, 1), "second page of {key:?}");
    }
}

/// Users: unique active emails, active roles, soft delete and restore (D4, D15, D17).
pub async fn users_are_managed_with_unique_emails<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let new_user = |email: &str, role: RoleId| NewUser {
        first_name: "Meera".into(),
        last_name: "Iyer".into(),
        email: email.into(),
        password: Password::parse("password-1").unwrap(),
        role_id: role,
    };
    let user = created(
        fx.engine.create_user(&fx.admin, new_user("meera@example.com", PHARMACIST_ROLE_ID), None).await.unwrap(),
    );
    assert_eq!(fx.engine.get_user(&fx.admin, user.id).await.unwrap(), user);
    assert_eq!(fx.engine.list_users(&fx.admin).await.unwrap().len(), 2);
    match fx.engine.create_user(&fx.admin, new_user(" MEERA@example.com", PHARMACIST_ROLE_ID), None).await {
        Err(Error::Conflict { field: "email", .. }) => {}
        other => panic!("D5: duplicate email, got {other:?}"),
    }
    field_error(
        fx.engine.create_user(&fx.admin, new_user("x@example.com", RoleId(77)), None).await,
        "roleId",
        "missing role",
    );
    field_error(
        fx.engine.create_user(&fx.admin, new_user("not-email", PHARMACIST_ROLE_ID), None).await,
        "email",
        "D29 email shape",
    );
    let update = UserUpdate {
        first_name: "M".into(),
        last_name: "I".into(),
        email: "admin@example.com".into(),
        role_id: PHARMACIST_ROLE_ID,
    };
    assert!(matches!(
        fx.engine.update_user(&fx.admin, user.id, update).await,
        Err(Error::Conflict { field: "email", .. })
    ));
    let update = UserUpdate {
        first_name: "Meera".into(),
        last_name: "Nair".into(),
        email: "meera.n@example.com".into(),
        role_id: PHARMACIST_ROLE_ID,
    };
    assert_eq!(fx.engine.update_user(&fx.admin, user.id, update).await.unwrap().last_name, "Nair");
    fx.engine.delete_user(&fx.admin, user.id, None).await.unwrap();
    assert!(matches!(fx.engine.get_user(&fx.admin, user.id).await, Err(Error::NotFound { entity: Entity::User })));
    assert_eq!(fx.engine.list_users(&fx.admin).await.unwrap().len(), 1, "lists show active users only");
    let again = created(
        fx.engine.create_user(&fx.admin, new_user("meera.n@example.com", PHARMACIST_ROLE_ID), None).await.unwrap(),
    );
    assert!(
        matches!(fx.engine.restore_user(&fx.admin, user.id).await, Err(Error::Conflict { field: "email", .. })),
        "D15"
    );
    fx.engine.delete_user(&fx.admin, again.id, None).await.unwrap();
    assert!(fx.engine.restore_user(&fx.admin, user.id).await.unwrap().is_active);
    assert!(matches!(fx.engine.get_user(&fx.admin, UserId(999)).await, Err(Error::NotFound { .. })));
}

/// Nobody deletes themself; the last active admin stays (D18).
pub async fn the_last_admin_and_oneself_cannot_be_removed<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let me = fx.admin.user_id;
    assert!(matches!(fx.engine.delete_user(&fx.admin, me, None).await, Err(Error::Rule(RuleBroken::DeleteSelf))));
    let demote = UserUpdate {
        first_name: "Asha".into(),
        last_name: "Rao".into(),
        email: "admin@example.com".into(),
        role_id: PHARMACIST_ROLE_ID,
    };
    assert!(matches!(
        fx.engine.update_user(&fx.admin, me, demote.clone()).await,
        Err(Error::Rule(RuleBroken::LastAdmin))
    ));

    let managers = created(
        fx.engine
            .create_role(&fx.admin, NewRole { name: "User managers".into(), description: String::new() }, None)
            .await
            .unwrap(),
    );
    let manage = created(
        fx.engine
            .create_policy(
                &fx.admin,
                NewPolicy {
                    name: "Manage users".into(),
                    description: String::new(),
                    permission_ids: vec![
                        crate::seed::permission_id(Access::new(Collection::User, Action::Delete)),
                        crate::seed::permission_id(Access::new(Collection::User, Action::Update)),
                    ],
                },
                None,
            )
            .await
            .unwrap(),
    );
    fx.engine.attach_role_policy(&fx.admin, managers.id, manage.id).await.unwrap();
    let (_, manager) = fx.user_with_role("manager@example.com", managers.id).await;
    assert!(matches!(fx.engine.delete_user(&manager, me, None).await, Err(Error::Rule(RuleBroken::LastAdmin))));
    assert!(matches!(
        fx.engine.update_user(&manager, me, demote.clone()).await,
        Err(Error::Rule(RuleBroken::LastAdmin))
    ));

    let (second, _) = fx.user_with_role("second-admin@example.com", ADMIN_ROLE_ID).await;
    fx.engine.update_user(&fx.admin, me, demote).await.expect("another admin remains");
    let demote_second = UserUpdate {
        first_name: "B".into(),
        last_name: "C".into(),
        email: "second-admin@example.com".into(),
        role_id: PHARMACIST_ROLE_ID,
    };
    assert!(matches!(
        fx.engine.update_user(&manager, second.user.id, demote_second).await,
        Err(Error::Rule(RuleBroken::LastAdmin))
    ));
    assert!(matches!(
        fx.engine.delete_user(&manager, second.user.id, None).await,
        Err(Error::Rule(RuleBroken::LastAdmin))
    ));
}

/// Roles: unique names, system roles protected, soft delete listed (spec; D4, D17).
pub async fn roles_are_managed_and_system_roles_protected<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let roles = fx.engine.list_roles(&fx.admin).await.unwrap();
    assert_eq!(
        roles.iter().map(|r| (r.name.as_str(), r.is_system)).collect::<Vec<_>>(),
        [("Admin", true), ("Pharmacist", true)]
    );
    let role = created(
        fx.engine
            .create_role(&fx.admin, NewRole { name: "Cashier".into(), description: "Takes payments".into() }, None)
            .await
            .unwrap(),
    );
    assert!(!role.is_system && role.is_active);
    match fx.engine.create_role(&fx.admin, NewRole { name: " cashier ".into(), description: String::new() }, None).await
    {
        Err(Error::Conflict { field: "name", .. }) => {}
        other => panic!("D4: role names are unique, got {other:?}"),
    }
    field_error(
        fx.engine.create_role(&fx.admin, NewRole { name: "".into(), description: String::new() }, None).await,
        "name",
        "blank role name",
    );
    let renamed = NewRole { name: "Owner".into(), description: "x".into() };
    assert!(matches!(
        fx.engine.update_role(&fx.admin, ADMIN_ROLE_ID, renamed).await,
        Err(Error::Rule(RuleBroken::SystemRoleRename))
    ));
    let described = fx
        .engine
        .update_role(&fx.admin, ADMIN_ROLE_ID, NewRole { name: "Admin".into(), description: "Everything".into() })
        .await
        .unwrap();
    assert_eq!(described.description, "Everything");
    assert!(matches!(
        fx.engine.delete_role(&fx.admin, PHARMACIST_ROLE_ID, None).await,
        Err(Error::Rule(RuleBroken::SystemRoleDelete))
    ));
    let updated = fx
        .engine
        .update_role(&fx.admin, role.id, NewRole { name: "Cashiers".into(), description: String::new() })
        .await
        .unwrap();
    assert_eq!(updated.name, "Cashiers");
    fx.engine.delete_role(&fx.admin, role.id, None).await.unwrap();
    assert!(
        matches!(fx.engine.get_role(&fx.admin, role.id).await, Err(Error::NotFound { entity: Entity::Role })),
        "D17"
    );
    let listed = fx.engine.list_roles(&fx.admin).await.unwrap();
    assert!(listed.iter().any(|r| r.id == role.id && !r.is_active), "roles list shows inactive ones");
    match fx.engine.create_role(&fx.admin, NewRole { name: "Cashiers".into(), description: String::new() }, None).await
    {
        Err(Error::Conflict { field: "name", .. }) => {}
        other => panic!("D4: names are unique among all roles, deleted too, got {other:?}"),
    }
    assert!(fx.engine.restore_role(&fx.admin, role.id).await.unwrap().is_active);
    assert!(matches!(
        fx.engine.attach_role_policy(&fx.admin, RoleId(99), PolicyId(1)).await,
        Err(Error::NotFound { entity: Entity::Role })
    ));
    assert!(matches!(
        fx.engine.attach_role_policy(&fx.admin, role.id, PolicyId(99)).await,
        Err(Error::NotFound { entity: Entity::Policy })
    ));
}

/// Policies: names unique among active ones, permissions managed (spec; D4, D15).
pub async fn policies_are_managed_with_unique_active_names<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let new_policy = |name: &str, ids: &[i64]| NewPolicy {
        name: name.into(),
        description: "d".into(),
        permission_ids: ids.iter().map(|id| PermissionId(*id)).collect(),
    };
    let policy = created(fx.engine.create_policy(&fx.admin, new_policy("Readers", &[5, 1, 1]), None).await.unwrap());
    assert_eq!(policy.permissions.iter().map(|p| p.code()).collect::<Vec<_>>(), ["Vendor:Read", "Invoice:Read"]);
    assert!(matches!(
        fx.engine.create_policy(&fx.admin, new_policy("READERS", &[]), None).await,
        Err(Error::Conflict { field: "name", .. })
    ));
    field_error(
        fx.engine.create_policy(&fx.admin, new_policy("Bad", &[1, 999]), None).await,
        "permissionIds",
        "unknown permission",
    );
    fx.engine.add_policy_permission(&fx.admin, policy.id, PermissionId(9)).await.unwrap();
    fx.engine.add_policy_permission(&fx.admin, policy.id, PermissionId(9)).await.expect("adding twice is harmless");
    fx.engine.remove_policy_permission(&fx.admin, policy.id, PermissionId(1)).await.unwrap();
    let read = fx.engine.get_policy(&fx.admin, policy.id).await.unwrap();
    assert_eq!(read.permissions.iter().map(|p| p.id.get()).collect::<Vec<_>>(), [5, 9]);
    assert!(matches!(
        fx.engine.add_policy_permission(&fx.admin, policy.id, PermissionId(999)).await,
        Err(Error::NotFound { entity: Entity::Permission })
    ));
    let replaced = fx.engine.update_policy(&fx.admin, policy.id, new_policy("Readers 2", &[13])).await.unwrap();
    assert_eq!((replaced.name.as_str(), replaced.permissions.len()), ("Readers 2", 1));
    fx.engine.delete_policy(&fx.admin, policy.id, None).await.unwrap();
    assert!(matches!(
        fx.engine.get_policy(&fx.admin, policy.id).await,
        Err(Error::NotFound { entity: Entity::Policy })
    ));
    assert!(fx.engine.list_policies(&fx.admin).await.unwrap().iter().all(|p| p.id != policy.id), "D17: active only");
    created(
        fx.engine
            .create_policy(&fx.admin, new_policy("readers 2", &[]), None)
            .await
            .expect("a deleted policy frees its name"),
    );
    assert!(matches!(fx.engine.restore_policy(&fx.admin, policy.id).await, Err(Error::Conflict { field: "name", .. })));
    assert!(matches!(
        fx.engine.update_policy(&fx.admin, PolicyId(999), new_policy("x", &[])).await,
        Err(Error::NotFound { .. })
    ));
    let permissions = fx.engine.list_permissions(&fx.admin).await.unwrap();
    assert_eq!(permissions.len(), 29, "D27 seeds 29 permissions");
}

/// Settings: only values change; TimeZone must be a known zone (spec; D3).
pub async fn settings_update_only_values_and_time_zones_must_exist<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let settings = fx.engine.list_settings(&fx.admin).await.unwrap();
    let pairs: Vec<(&str, &str)> = settings.iter().map(|s| (s.key.as_str(), s.value.as_str())).collect();
    assert_eq!(pairs, [("Currency", "₹"), ("TimeZone", "UTC")], "D27");
    assert_eq!(
        fx.engine.get_setting(&fx.admin, "Currency").await.unwrap().description,
        "Currency symbol shown in amounts"
    );
    assert!(matches!(
        fx.engine.get_setting(&fx.admin, "Colour").await,
        Err(Error::NotFound { entity: Entity::Setting })
    ));
    let updated = fx.engine.update_setting(&fx.admin, "Currency", "$").await.unwrap();
    assert_eq!((updated.key.as_str(), updated.value.as_str()), ("Currency", "$"));
    assert_eq!(fx.engine.get_setting(&fx.admin, "Currency").await.unwrap().value, "$");
    field_error(fx.engine.update_setting(&fx.admin, "TimeZone", "Mars/Olympus").await, "value", "D3: unknown zone");
    field_error(fx.engine.update_setting(&fx.admin, "Currency", "  ").await, "value", "blank value");
    assert!(matches!(fx.engine.update_setting(&fx.admin, "Colour", "red").await, Err(Error::NotFound { .. })));
    assert_eq!(
        fx.engine.get_setting(&fx.admin, "TimeZone").await.unwrap().value,
        "UTC",
        "a refused update changes nothing"
    );
}

/// "Today" follows the TimeZone setting, for Overdue and for payment dates (D2, D3).
pub async fn business_time_zone_moves_today<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    fx.advance(SignedDuration::from_hours(10));
    let vendor = fx.vendor("Zones").await;
    let invoice = fx.invoice(vendor.id, "Z-1", "10", "2024-05-10T00:00:00Z").await;
    assert_eq!(invoice.status, InvoiceStatus::PartiallyPaid, "UTC: still 10 May");
    let mut bare_tomorrow = fx.new_payment(invoice.id, "1");
    bare_tomorrow.transaction_date = ts("2024-05-11T00:00:00Z");
    field_error(
        fx.engine.create_transaction(&fx.admin, bare_tomorrow.clone(), None).await,
        "transactionDate",
        "UTC: 11 May is tomorrow",
    );

    fx.engine.update_setting(&fx.admin, "TimeZone", "Asia/Kolkata").await.unwrap();
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!(read.status, InvoiceStatus::Overdue, "Kolkata: it is already 11 May");
    fx.engine.create_transaction(&fx.admin, bare_tomorrow, None).await.expect("Kolkata: 11 May is today");
    let overdue = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("status", "Overdue")])).await.unwrap();
    assert_eq!(overdue.items.iter().map(|i| i.id).collect::<Vec<_>>(), [invoice.id], "list filters use the same today");
}

/// Dashboard figures as D12 defines them.
pub async fn dashboard_figures_follow_d12<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let big = fx.vendor("Big Supplier").await;
    let small = fx.vendor("Small Supplier").await;
    let gone = fx.vendor("Gone Supplier").await;
    let i1 = fx.invoice(big.id, "D-1", "1000", "2024-06-01T00:00:00Z").await;
    fx.advance(SignedDuration::from_secs(1));
    let i2 = fx.invoice(small.id, "D-2", "300", "2024-06-01T00:00:00Z").await;
    fx.advance(SignedDuration::from_secs(1));
    let i3 = fx.invoice(small.id, "D-3", "200", "2024-06-01T00:00:00Z").await;
    fx.advance(SignedDuration::from_secs(1));
    let i4 = fx.invoice(gone.id, "D-4", "5000", "2024-06-01T00:00:00Z").await;
    fx.engine.delete_vendor(&fx.admin, gone.id, None).await.unwrap();
    let pay_on = |invoice: InvoiceId, paid: &str, date: &str| {
        let input = NewTransaction {
            invoice_id: invoice,
            amount: amount(paid),
            transaction_date: ts(date),
            transaction_type: TransactionType::Cash,
            description: None,
        };
        let engine = &fx.engine;
        let admin = &fx.admin;
        async move { created(engine.create_transaction(admin, input, None).await.unwrap()) }
    };
    pay_on(i1.id, "100", "2024-05-10T00:00:00Z").await;
    pay_on(i1.id, "50", "2024-04-11T00:00:00Z").await; // 29 days before today: recent.
    pay_on(i2.id, "25", "2024-04-10T23:59:59Z").await; // 30 days before today: not recent.
    pay_on(i2.id, "75", "2023-06-15T00:00:00Z").await; // May 2023: outside the 12 months.
    let deleted = pay_on(i3.id, "10", "2024-05-09T00:00:00Z").await;
    fx.engine.delete_transaction(&fx.admin, deleted.id, None).await.unwrap();
    fx.engine.delete_invoice(&fx.admin, i3.id, None).await.unwrap();

    let summary = fx.engine.dashboard_summary(&fx.admin).await.unwrap();
    assert_eq!(summary.total_vendors, 4, "all vendor records, the pharmacy and the deleted one included");
    assert_eq!(summary.total_invoices, 4, "canceled invoices count");
    assert_eq!(summary.total_due, dec("6050"), "pending of active invoices: 850 + 200 + 5000");
    assert_eq!(summary.total_paid, dec("250"), "active payments whatever their invoice");
    assert_eq!(summary.recent_transactions, 2, "payments dated in the last 30 days");

    let top = fx.engine.top_vendors(&fx.admin, 5).await.unwrap();
    let ranked: Vec<(&str, String, u64)> =
        top.iter().map(|t| (t.vendor_name.as_str(), t.outstanding_balance.to_string(), t.total_invoices)).collect();
    assert_eq!(
        ranked,
        [
            ("Big Supplier", "850".to_string(), 1),
            ("Small Supplier", "200".to_string(), 1),
            ("Apollo Pharmacy", "0".to_string(), 0)
        ],
        "active vendors only"
    );
    assert_eq!(fx.engine.top_vendors(&fx.admin, 1).await.unwrap().len(), 1);

    let recent = fx.engine.recent_invoices(&fx.admin, 3).await.unwrap();
    assert_eq!(
        recent.iter().map(|i| i.id).collect::<Vec<_>>(),
        [i4.id, i3.id, i2.id],
        "newest created first, canceled included"
    );
    assert_eq!(recent[1].status, InvoiceStatus::Canceled);

    let months = fx.engine.monthly_transactions(&fx.admin).await.unwrap();
    assert_eq!(months.len(), 12, "D12: exactly twelve rows");
    assert_eq!(months[0].month, "2024-05");
    assert_eq!(months[11].month, "2023-06");
    assert_eq!((months[0].total_amount, months[0].transaction_count), (dec("100"), 1));
    assert_eq!((months[1].total_amount, months[1].transaction_count), (dec("75"), 2));
    assert_eq!((months[11].total_amount, months[11].transaction_count), (dec("75"), 1));
    assert_eq!((months[5].total_amount, months[5].transaction_count), (dec("0"), 0), "empty months are zero rows");
}

/// Every write is audited with who, what and why (D16, D22).
pub async fn audit_log_records_writes_with_reasons<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Audited").await;
    fx.advance(SignedDuration::from_secs(1));
    fx.engine.update_vendor(&fx.admin, vendor.id, NewVendor::new("Audited 2", VendorType::Agency)).await.unwrap();
    fx.advance(SignedDuration::from_secs(1));
    fx.engine.delete_vendor(&fx.admin, vendor.id, Some("closed down".into())).await.unwrap();
    fx.advance(SignedDuration::from_secs(1));
    fx.engine.restore_vendor(&fx.admin, vendor.id).await.unwrap();
    let id = vendor.id.to_string();
    let query = AuditQuery::from_params(&params(&[("entity", "vendor"), ("entityId", &id)])).unwrap();
    let entries = fx.engine.list_audit(&fx.admin, &query).await.unwrap();
    let actions: Vec<&str> = entries.items.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["restore", "delete", "update", "create"], "newest first");
    assert!(entries.items.iter().all(|e| e.user_id == Some(fx.admin.user_id) && e.entity == "Vendor"));
    assert_eq!(entries.items[1].reason.as_deref(), Some("closed down"), "D16");
    let changes: Value = serde_json::from_str(entries.items[2].changes.as_deref().unwrap()).unwrap();
    assert_eq!(changes["name"], "Audited 2");

    let _ = fx.engine.login("admin@example.com", "wrong").await;
    fx.engine.login("admin@example.com", "admin-password").await.unwrap();
    fx.engine.update_setting(&fx.admin, "Currency", "€").await.unwrap();
    let all = fx
        .engine
        .list_audit(&fx.admin, &AuditQuery::from_params(&params(&[("pageSize", "100")])).unwrap())
        .await
        .unwrap();
    let actions: Vec<(&str, &str)> = all.items.iter().take(3).map(|e| (e.action.as_str(), e.entity.as_str())).collect();
    assert_eq!(actions, [("update", "Setting"), ("login", "User"), ("login_failed", "User")]);
    assert!(
        all.items.iter().all(|e| !e.changes.as_deref().unwrap_or("").contains("password")),
        "no secrets in the log"
    );
    let by_user = fx
        .engine
        .list_audit(&fx.admin, &AuditQuery::from_params(&params(&[("userId", &fx.admin.user_id.to_string())])).unwrap())
        .await
        .unwrap();
    assert!(by_user.total_count >= 5);
    let later = AuditQuery::from_params(&params(&[("fromDate", "2030-01-01")])).unwrap();
    assert_eq!(fx.engine.list_audit(&fx.admin, &later).await.unwrap().total_count, 0);
}

fn idem(key: &str, fingerprint: &str) -> IdempotencyRequest {
    IdempotencyRequest { key: IdempotencyKey::parse(key).unwrap(), fingerprint: fingerprint.into() }
}

/// Idempotent creates replay, refuse different bodies and running duplicates (D23).
pub async fn idempotent_creates_replay_and_refuse_clashes<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let request = idem("key-1", "fingerprint-a");
    let first =
        fx.engine.create_vendor(&fx.admin, NewVendor::new("Once", VendorType::Dealer), Some(&request)).await.unwrap();
    let Created::New(vendor) = first else { panic!("the first request creates") };
    match fx.engine.create_vendor(&fx.admin, NewVendor::new("Once", VendorType::Dealer), Some(&request)).await.unwrap()
    {
        Created::Replayed(Replay::Current(current)) => assert_eq!(current.id, vendor.id),
        other => panic!("without a recorded response the record itself is replayed, got {other:?}"),
    }
    let key = IdempotencyKey::parse("key-1").unwrap();
    fx.engine.record_idempotent_response(&fx.admin, &key, b"{\"id\":1}".to_vec()).await.unwrap();
    match fx.engine.create_vendor(&fx.admin, NewVendor::new("Once", VendorType::Dealer), Some(&request)).await.unwrap()
    {
        Created::Replayed(Replay::Recorded(bytes)) => assert_eq!(bytes, b"{\"id\":1}"),
        other => panic!("the recorded response is replayed byte for byte, got {other:?}"),
    }
    assert!(matches!(
        fx.engine
            .create_vendor(
                &fx.admin,
                NewVendor::new("Other", VendorType::Dealer),
                Some(&idem("key-1", "fingerprint-b"))
            )
            .await,
        Err(Error::Idempotency(IdempotencyClash::DifferentRequest))
    ));
    let once = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("search", "once")])).await.unwrap();
    assert_eq!(once.total_count, 1, "replays create nothing");

    let (_, pharmacist) = fx.pharmacist("p@example.com").await;
    let theirs =
        fx.engine.create_vendor(&pharmacist, NewVendor::new("Once", VendorType::Dealer), Some(&request)).await.unwrap();
    assert!(matches!(theirs, Created::New(_)), "keys are per user");

    let conflicting = idem("key-2", "fingerprint-c");
    let taken = fx.new_invoice(vendor.id, "DUP", "1", "2024-06-01T00:00:00Z");
    fx.invoice(vendor.id, "DUP", "1", "2024-06-01T00:00:00Z").await;
    for attempt in 1..=2 {
        let result = fx.engine.create_invoice(&fx.admin, taken.clone(), Some(&conflicting)).await;
        assert!(matches!(result, Err(Error::Conflict { .. })), "attempt {attempt}: a failed create releases its key");
    }

    let claim = IdempotencyClaim {
        user_id: fx.admin.user_id,
        key: IdempotencyKey::parse("key-3").unwrap(),
        fingerprint: "fp".into(),
        now: fx.engine.now(),
    };
    assert_eq!(fx.engine.store().claim_idempotency_key(claim).await.unwrap(), ClaimOutcome::Claimed);
    assert!(
        matches!(
            fx.engine
                .create_vendor(&fx.admin, NewVendor::new("Running", VendorType::Dealer), Some(&idem("key-3", "fp")))
                .await,
            Err(Error::Idempotency(IdempotencyClash::InProgress))
        ),
        "a running first request answers 409"
    );
    fx.advance(SignedDuration::from_secs(61));
    let taken_over = fx
        .engine
        .create_vendor(&fx.admin, NewVendor::new("Running", VendorType::Dealer), Some(&idem("key-3", "fp")))
        .await
        .unwrap();
    assert!(matches!(taken_over, Created::New(_)), "an abandoned claim is taken over");
    fx.advance(SignedDuration::from_hours(25));
    let reused = fx
        .engine
        .create_vendor(&fx.admin, NewVendor::new("New body", VendorType::Dealer), Some(&idem("key-1", "fingerprint-z")))
        .await
        .unwrap();
    assert!(matches!(reused, Created::New(_)), "keys expire after 24 hours");
}

/// Parallel retries with one key make one record (D23).
pub async fn parallel_idempotent_retries_create_one_record<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Retry").await;
    let input = fx.new_invoice(vendor.id, "RETRY-1", "10", "2024-06-01T00:00:00Z");
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let fx = Arc::clone(&fx);
        let input = input.clone();
        tasks.push(tokio::spawn(async move {
            fx.engine.create_invoice(&fx.admin, input, Some(&idem("retry", "same"))).await
        }));
    }
    let mut new = 0;
    for task in tasks {
        match task.await.expect("no task panics") {
            Ok(Created::New(_)) => new += 1,
            Ok(Created::Replayed(_)) | Err(Error::Idempotency(IdempotencyClash::InProgress)) => {}
            other => panic!("a retry is replayed or told to wait, got {other:?}"),
        }
    }
    assert_eq!(new, 1, "exactly one request creates");
    let listed = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("invoiceNumber", "retry-1")])).await.unwrap();
    assert_eq!(listed.total_count, 1);
}

/// Fifty concurrent payments of 1.00 sum to exactly 50.00.
pub async fn concurrent_payments_sum_exactly<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Busy").await;
    let invoice = fx.invoice(vendor.id, "BUSY-1", "100", "2024-06-01T00:00:00Z").await;
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let fx = Arc::clone(&fx);
        tasks.push(tokio::spawn(async move {
            fx.engine.create_transaction(&fx.admin, fx.new_payment(invoice.id, "1.00"), None).await
        }));
    }
    for task in tasks {
        task.await.expect("no task panics").expect("every payment is recorded");
    }
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (dec("50"), dec("50")));
    let listed = fx
        .engine
        .list_transactions(
            &fx.admin,
            &transaction_query(&[("invoiceId", &invoice.id.to_string()), ("pageSize", "100")]),
        )
        .await
        .unwrap();
    assert_eq!(listed.total_count, 50);
}

/// Twenty creates of one invoice number: one success, nineteen conflicts (D5).
pub async fn concurrent_invoice_numbers_have_one_winner<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Racer").await;
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let fx = Arc::clone(&fx);
        let input = fx.new_invoice(vendor.id, "RACE-1", "10", "2024-06-01T00:00:00Z");
        tasks.push(tokio::spawn(async move { fx.engine.create_invoice(&fx.admin, input, None).await }));
    }
    let (mut won, mut lost) = (0, 0);
    for task in tasks {
        match task.await.expect("no task panics") {
            Ok(_) => won += 1,
            Err(Error::Conflict { field: "invoiceNumber", .. }) => lost += 1,
            Err(other) => panic!("a losing create answers Conflict, got {other:?}"),
        }
    }
    assert_eq!((won, lost), (1, 19));
}

/// Profile read and update, password change (D24).
pub async fn profile_and_password_change_follow_d24<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let profile = fx.engine.profile(&fx.admin).await.unwrap();
    assert_eq!((profile.role_name.as_str(), profile.is_admin), ("Admin", true));
    assert_eq!(profile.permissions, ["*:*"]);
    let (session, pharmacist) = fx.pharmacist("p@example.com").await;
    let theirs = fx.engine.profile(&pharmacist).await.unwrap();
    assert_eq!((theirs.user.id, theirs.role_name.as_str(), theirs.is_admin), (session.user.id, "Pharmacist", false));
    assert_eq!(theirs.permissions.len(), 11);
    assert_eq!(theirs.permissions[0], "Vendor:Read");

    let taken = ProfileUpdate { first_name: "P".into(), last_name: "Q".into(), email: "ADMIN@example.com".into() };
    assert!(matches!(fx.engine.update_profile(&pharmacist, taken).await, Err(Error::Conflict { field: "email", .. })));
    let update =
        ProfileUpdate { first_name: "Priya".into(), last_name: "Shah".into(), email: "priya@example.com".into() };
    let updated = fx.engine.update_profile(&pharmacist, update).await.unwrap();
    assert_eq!((updated.user.first_name.as_str(), updated.user.email.as_str()), ("Priya", "priya@example.com"));
    assert_eq!(updated.user.role_id, PHARMACIST_ROLE_ID, "the role is not the user's to change");

    let wrong = PasswordChange {
        current_password: "nope-nope".into(),
        new_password: Password::parse("brand-new-pass").unwrap(),
    };
    assert!(matches!(
        fx.engine.change_password(&pharmacist, wrong).await,
        Err(Error::Rule(RuleBroken::WrongCurrentPassword))
    ));
    let right = PasswordChange {
        current_password: "user-password".into(),
        new_password: Password::parse("brand-new-pass").unwrap(),
    };
    let renewed = fx.engine.change_password(&pharmacist, right).await.unwrap();
    assert_eq!(renewed.user.email, "priya@example.com");
    assert!(matches!(fx.engine.login("priya@example.com", "user-password").await, Err(Error::InvalidCredentials)));
    fx.engine.login("priya@example.com", "brand-new-pass").await.expect("the new password works");
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

/// Exports read the list filters in id order, in batches after a cursor (D26).
pub async fn exports_read_in_id_batches_with_the_list_filters<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let store = fx.engine.store();
    let today_start = ts("2024-05-10T00:00:00Z");
    let vendor = fx.vendor("Exporter").await;
    let other = fx.vendor("Other").await;
    let mut invoices = Vec::new();
    for n in 0..7 {
        let owner = if n % 2 == 0 { vendor.id } else { other.id };
        invoices.push(fx.invoice(owner, &format!("EX-{n}"), "10", "2024-06-01T00:00:00Z").await.id);
    }
    fx.engine.delete_invoice(&fx.admin, invoices[2], None).await.unwrap();
    let filter =
        crate::domain::InvoiceFilter { is_active: Some(true), vendor_id: Some(vendor.id), ..Default::default() };
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let batch = store.export_invoices(&filter, today_start, after, 2).await.unwrap();
        assert!(batch.len() <= 2, "a batch holds at most the limit");
        let Some(last) = batch.last() else { break };
        after = Some(last.id);
        seen.extend(batch.iter().map(|invoice| invoice.id));
    }
    assert_eq!(seen, [invoices[0], invoices[4], invoices[6]], "active invoices of the vendor, in id order");

    let payment = fx.pay(invoices[0], "4").await;
    let deleted = fx.pay(invoices[1], "5").await;
    fx.engine.delete_transaction(&fx.admin, deleted.id, None).await.unwrap();
    let active = crate::domain::TransactionFilter::default();
    let exported = store.export_transactions(&active, None, 100).await.unwrap();
    assert_eq!(exported.iter().map(|t| t.id).collect::<Vec<_>>(), [payment.id]);
    assert_eq!(exported[0].invoice.pending_amount, dec("6"));
    assert!(store.export_transactions(&active, Some(payment.id), 100).await.unwrap().is_empty());

    let vendors = store.export_vendors(&crate::domain::VendorFilter::default(), None, 100).await.unwrap();
    assert_eq!(vendors.len(), 3, "the pharmacy and the two vendors");
    assert!(vendors.windows(2).all(|pair| pair[0].id < pair[1].id));
    assert_eq!(vendors[1].totals.total_invoice_value, dec("30"), "totals as the list shows them");
}

/// Imports write many records at once and keep every invariant.
pub async fn imports_keep_paid_totals_and_unique_numbers<S: Store>(store: S) {
    use crate::store::{ImportedInvoice, ImportedTransaction, ImportedVendor};
    let fx = Fixture::new(store).await;
    let store = fx.engine.store();
    let at = ts("2023-01-01T00:00:00Z");
    let vendor_ids = store
        .import_vendors(vec![
            ImportedVendor {
                vendor: NewVendor::new("Imported A", VendorType::Dealer),
                is_active: true,
                created_at: at,
            },
            ImportedVendor {
                vendor: NewVendor::new("Imported B", VendorType::Agency),
                is_active: false,
                created_at: at,
            },
        ])
        .await
        .unwrap();
    assert_eq!(vendor_ids.len(), 2);
    let own =
        ImportedVendor { vendor: NewVendor::new("Mine", VendorType::OwnPharmacy), is_active: true, created_at: at };
    assert!(matches!(
        store.import_vendors(vec![own]).await,
        Err(crate::store::StoreError::Rule(RuleBroken::OwnPharmacyType))
    ));

    let invoice = |vendor: VendorId, number: &str, active: bool| ImportedInvoice {
        invoice: fx.new_invoice(vendor, number, "100", "2023-02-01T00:00:00Z"),
        is_active: active,
        created_at: at,
    };
    let invoice_ids = store
        .import_invoices(vec![
            invoice(vendor_ids[0], "IMP-1", true),
            invoice(vendor_ids[1], "IMP-2", true),
            invoice(vendor_ids[0], "IMP-1", false),
        ])
        .await
        .unwrap();
    assert_eq!(invoice_ids.len(), 3, "a canceled duplicate number is allowed");
    let clash =
        store.import_invoices(vec![invoice(vendor_ids[0], "imp-3", true), invoice(vendor_ids[0], "IMP-3", true)]).await;
    assert!(
        matches!(clash, Err(crate::store::StoreError::Conflict { field: "invoiceNumber" })),
        "numbers clash within a batch"
    );
    let taken = store.import_invoices(vec![invoice(vendor_ids[0], "imp-1", true)]).await;
    assert!(matches!(taken, Err(crate::store::StoreError::Conflict { .. })), "and against stored invoices");
    let missing = store.import_invoices(vec![invoice(VendorId(9999), "IMP-9", true)]).await;
    assert!(matches!(missing, Err(crate::store::StoreError::ParentInactive(Entity::Vendor))));
    let listed = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("search", "imp-3")])).await.unwrap();
    assert_eq!(listed.total_count, 0, "a refused batch writes nothing");

    let payment = |invoice: InvoiceId, paid: &str, active: bool| ImportedTransaction {
        transaction: NewTransaction {
            invoice_id: invoice,
            amount: amount(paid),
            transaction_date: ts("2023-01-15T00:00:00Z"),
            transaction_type: TransactionType::Cash,
            description: None,
        },
        is_active: active,
        created_at: at,
    };
    let payment_ids = store
        .import_transactions(vec![
            payment(invoice_ids[0], "30", true),
            payment(invoice_ids[0], "0.5", true),
            payment(invoice_ids[0], "99", false),
        ])
        .await
        .unwrap();
    assert_eq!(payment_ids.len(), 3);
    let read = fx.engine.get_invoice(&fx.admin, invoice_ids[0]).await.unwrap().invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (dec("30.5"), dec("69.5")), "active imported payments count");
    assert_eq!(read.created_at, at);
    store.import_transactions(vec![payment(invoice_ids[1], "100", true)]).await.unwrap();
    // Imports keep the status counts too: IMP-1 is overdue, IMP-2 fully paid, the duplicate
    // canceled. A second, redundant filter makes the store count rows instead of reading any
    // kept count, and both must agree.
    for (status, expected) in [("Overdue", vec![invoice_ids[0]]), ("FullyPaid", vec![invoice_ids[1]])] {
        let alone = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("status", status)])).await.unwrap();
        let counted = fx
            .engine
            .list_invoices(&fx.admin, &invoice_query(&[("status", status), ("minAmount", "0.0001")]))
            .await
            .unwrap();
        assert_eq!(alone.items.iter().map(|i| i.id).collect::<Vec<_>>(), expected, "{status}");
        assert_eq!((alone.total_count, counted.total_count), (1, 1), "{status}");
    }
    let missing = store.import_transactions(vec![payment(InvoiceId(9999), "1", true)]).await;
    assert!(matches!(missing, Err(crate::store::StoreError::ParentInactive(Entity::Invoice))));
    let inactive_vendor = store
        .export_vendors(&crate::domain::VendorFilter { is_active: false, ..Default::default() }, None, 10)
        .await
        .unwrap();
    assert_eq!(inactive_vendor.iter().map(|v| v.id).collect::<Vec<_>>(), [vendor_ids[1]]);
}

/// An invoice's paid total never passes the largest amount, so sums stay exact (D1).
pub async fn paid_totals_stay_within_the_largest_amount<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Huge").await;
    let invoice = fx.invoice(vendor.id, "H-1", "999999999999.9999", "2024-06-01T00:00:00Z").await;
    let other = fx.invoice(vendor.id, "H-2", "1", "2024-06-01T00:00:00Z").await;
    let first = fx.pay(invoice.id, "999999999999").await;
    field_error(
        fx.engine.create_transaction(&fx.admin, fx.new_payment(invoice.id, "1"), None).await,
        "amount",
        "past the largest amount",
    );
    fx.pay(invoice.id, "0.9999").await;
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (dec("999999999999.9999"), dec("0")));
    let moved = fx.pay(other.id, "5").await;
    field_error(
        fx.engine.update_transaction(&fx.admin, moved.id, fx.new_payment(invoice.id, "5")).await,
        "amount",
        "moving onto a full invoice",
    );
    fx.engine
        .update_transaction(&fx.admin, first.id, fx.new_payment(invoice.id, "999999999998"))
        .await
        .expect("an update may shrink a payment");
    fx.engine.delete_transaction(&fx.admin, moved.id, None).await.unwrap();
    fx.engine
        .update_transaction(&fx.admin, first.id, fx.new_payment(invoice.id, "999999999999"))
        .await
        .expect("and grow it back to the limit");
    let summary = fx.engine.dashboard_summary(&fx.admin).await.unwrap();
    assert_eq!(summary.total_paid, dec("999999999999.9999"));
}

/// Aggregates stay exact far beyond what one 64-bit sum of scaled amounts can hold.
pub async fn aggregates_stay_exact_beyond_sixty_four_bits<S: Store>(store: S) {
    use crate::store::ImportedInvoice;
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Giant").await;
    let at = ts("2024-01-01T00:00:00Z");
    // 1,000 invoices of the largest amount: about 1e19 ten-thousandths, past i64::MAX.
    let invoices: Vec<ImportedInvoice> = (0..1000)
        .map(|n| ImportedInvoice {
            invoice: fx.new_invoice(vendor.id, &format!("G-{n}"), "999999999999.9999", "2024-06-01T00:00:00Z"),
            is_active: true,
            created_at: at,
        })
        .collect();
    fx.engine.store().import_invoices(invoices).await.expect("imported");
    let summary = fx.engine.dashboard_summary(&fx.admin).await.expect("the summary does not overflow");
    assert_eq!(summary.total_due, dec("999999999999999.9"));
    let read = fx.engine.get_vendor(&fx.admin, vendor.id).await.expect("vendor totals do not overflow");
    assert_eq!(read.totals.total_invoice_value, dec("999999999999999.9"));
    let top = fx.engine.top_vendors(&fx.admin, 1).await.unwrap();
    assert_eq!(top[0].outstanding_balance, dec("999999999999999.9"));
    let sorted = fx
        .engine
        .list_vendors(&fx.admin, &vendor_query(&[("sortBy", "outstandingBalance"), ("sortDir", "desc")]))
        .await
        .unwrap();
    assert_eq!(sorted.items[0].id, vendor.id);
}
