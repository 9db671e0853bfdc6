//! Conformance cases: access that cannot be widened from inside (D38), reductions that take
//! effect at once (D39) and sign-in throttling that costs an attacker, not the pharmacy (D40).

use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::SignedDuration;

use crate::access::policy::NewPolicy;
use crate::access::role::NewRole;
use crate::access::user::{NewUser, PasswordChange, ProfileUpdate, UserUpdate};
use crate::access::{ADMIN_ROLE_ID, Access, PHARMACIST_ROLE_ID, Principal, Requirement};
use crate::conformance::{Fixture, created};
use crate::engine::Session;
use crate::error::{Error, RuleBroken};
use crate::ids::{PolicyId, RoleId, UserId};
use crate::reports::audit::{AuditEntry, AuditQuery};
use crate::seed::permission_id;
use crate::sessions::login::{INVALID_EMAIL_KEY, LIMIT};
use crate::store::Store;
use crate::text::Password;

fn access(code: &str) -> Access {
    Access::parse(code).unwrap_or_else(|| panic!("{code} is a permission"))
}

/// What a refusal said was missing, as `Admin` and `Collection:Action` names.
fn missing<T: std::fmt::Debug>(result: Result<T, Error>, label: &str) -> String {
    match result {
        Err(Error::Forbidden { required: Requirement::Grant(missing) }) => missing.to_string(),
        other => panic!("{label}: expected a 403 naming what is missing, got {other:?}"),
    }
}

impl<S: Store> Fixture<S> {
    /// A role holding exactly `codes`, through one policy of its own.
    async fn role_of(&self, name: &str, codes: &[&str]) -> RoleId {
        let role = NewRole { name: name.into(), description: String::new() };
        let role = created(self.engine.create_role(&self.admin, role, None).await.expect("role created")).id;
        let policy = self.policy_of(&format!("{name} policy"), codes).await;
        self.engine.attach_role_policy(&self.admin, role, policy).await.expect("policy attached");
        role
    }

    async fn audit_entries(&self) -> Vec<AuditEntry> {
        let params = vec![("pageSize".to_owned(), "100".to_owned())];
        self.engine.list_audit(&self.admin, &AuditQuery::from_params(&params).unwrap()).await.unwrap().items
    }

    async fn sign_in(&self, email: &str, password: &str) -> (Session, Principal) {
        let session = self.engine.login(email, password).await.unwrap_or_else(|e| panic!("{email} signs in: {e:?}"));
        let principal = self.engine.authenticate(&session.token.token).await.expect("a fresh token works");
        (session, principal)
    }

    async fn token_works(&self, session: &Session) -> bool {
        self.engine.authenticate(&session.token.token).await.is_ok()
    }
}

fn new_user(email: &str, role_id: RoleId) -> NewUser {
    NewUser {
        first_name: "Nila".into(),
        last_name: "Das".into(),
        email: email.into(),
        password: Password::parse("user-password").expect("a valid password"),
        role_id,
    }
}

fn update(email: &str, role_id: RoleId) -> UserUpdate {
    UserUpdate { first_name: "Nila".into(), last_name: "Das".into(), email: email.into(), role_id }
}

/// Someone who may manage users gives no one the Admin role, nor a role holding what they lack
/// (D38); refusals write nothing and come after the usual 400 and 404.
pub async fn users_are_given_no_role_beyond_their_creator<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let hiring = fx.role_of("Hiring", &["User:Create", "User:Update", "Vendor:Read"]).await;
    let (_, hr) = fx.user_with_role("hr@example.com", hiring).await;
    let users_before = fx.engine.list_users(&fx.admin).await.unwrap().len();

    let to_admin = fx.engine.create_user(&hr, new_user("new-admin@example.com", ADMIN_ROLE_ID), None).await;
    assert_eq!(missing(to_admin, "a user created as admin"), "Admin");
    let to_pharmacist = fx.engine.create_user(&hr, new_user("p@example.com", PHARMACIST_ROLE_ID), None).await;
    let named = missing(to_pharmacist, "a user created with a role holding more");
    assert!(named.contains("Invoice:Read") && named.contains("Dashboard:Read"), "{named}");
    assert!(!named.contains("Vendor:Read"), "held permissions are not named: {named}");
    assert_eq!(fx.engine.list_users(&fx.admin).await.unwrap().len(), users_before, "a refusal writes nothing");

    assert!(
        matches!(
            fx.engine.create_user(&hr, new_user("x@example.com", RoleId(999)), None).await,
            Err(Error::Validation(_))
        ),
        "a missing role stays the usual 400"
    );
    let peer = created(fx.engine.create_user(&hr, new_user("peer@example.com", hiring), None).await.unwrap());

    let me = hr.user_id;
    assert_eq!(missing(fx.engine.update_user(&hr, me, update("hr@example.com", ADMIN_ROLE_ID)).await, "self"), "Admin");
    let renamed = fx.engine.update_user(&hr, peer.id, update("peer-renamed@example.com", hiring)).await;
    assert!(renamed.is_ok(), "an update that keeps the role is not judged: {renamed:?}");
    assert!(
        matches!(
            fx.engine.update_user(&hr, UserId(999), update("a@example.com", ADMIN_ROLE_ID)).await,
            Err(Error::NotFound { .. })
        ),
        "a missing user stays the usual 404"
    );

    // D38 comes before D18: moving the last admin to a role the caller lacks is a 403.
    let last_admin =
        fx.engine.update_user(&hr, fx.admin.user_id, update("admin@example.com", PHARMACIST_ROLE_ID)).await;
    assert!(!missing(last_admin, "the last admin moved").is_empty());

    // A restore gives the user's role back, so it is judged the same way.
    let pharmacist = created(
        fx.engine.create_user(&fx.admin, new_user("gone@example.com", PHARMACIST_ROLE_ID), None).await.unwrap(),
    );
    fx.engine.delete_user(&fx.admin, pharmacist.id, None).await.unwrap();
    assert!(!missing(fx.engine.restore_user(&hr, pharmacist.id).await, "a restore").is_empty());
    assert!(fx.engine.get_user(&fx.admin, pharmacist.id).await.is_err(), "still deleted");

    // D48: a restore also gives back the policies attached to the user directly. A user of the
    // caller's own role is refused when those hold what the caller lacks.
    let audited =
        created(fx.engine.create_user(&fx.admin, new_user("audited@example.com", hiring), None).await.unwrap());
    let auditing = fx.policy_of("Auditing", &["AuditLog:Read", "User:Delete"]).await;
    fx.engine.attach_user_policy(&fx.admin, audited.id, auditing).await.unwrap();
    fx.engine.delete_user(&fx.admin, audited.id, None).await.unwrap();
    let named = missing(fx.engine.restore_user(&hr, audited.id).await, "a restore with policies of the user's own");
    assert!(named.contains("AuditLog:Read") && named.contains("User:Delete"), "{named}");
    assert!(fx.engine.get_user(&fx.admin, audited.id).await.is_err(), "still deleted");
    fx.engine.delete_policy(&fx.admin, auditing, None).await.unwrap();
    fx.engine.restore_user(&hr, audited.id).await.expect("a deleted policy gives nothing: only the role is given back");

    // Admins are not limited.
    created(fx.engine.create_user(&fx.admin, new_user("second-admin@example.com", ADMIN_ROLE_ID), None).await.unwrap());
    fx.engine.restore_user(&fx.admin, pharmacist.id).await.expect("an admin restores anyone");
}

/// Policies are judged as they stand after the write, and attaching one gives what it holds
/// (D38).
pub async fn policies_give_no_permission_beyond_their_author<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let managers = fx
        .role_of("Access managers", &["Policy:Create", "Policy:Update", "Role:Update", "User:Update", "Vendor:Read"])
        .await;
    let (_, manager) = fx.user_with_role("pm@example.com", managers).await;
    let with = |codes: &[&str]| NewPolicy {
        name: "Buyers".into(),
        description: String::new(),
        permission_ids: codes.iter().map(|code| permission_id(access(code))).collect(),
    };

    let refused = fx.engine.create_policy(&manager, with(&["Vendor:Read", "Vendor:Delete"]), None).await;
    assert_eq!(missing(refused, "create"), "Vendor:Delete");
    let buyers = created(fx.engine.create_policy(&manager, with(&["Vendor:Read"]), None).await.unwrap()).id;
    let delete = permission_id(access("Vendor:Delete"));
    assert_eq!(missing(fx.engine.add_policy_permission(&manager, buyers, delete).await, "add"), "Vendor:Delete");
    assert_eq!(
        missing(fx.engine.update_policy(&manager, buyers, with(&["Vendor:Delete"])).await, "update"),
        "Vendor:Delete"
    );
    let kept = fx.engine.get_policy(&fx.admin, buyers).await.unwrap();
    assert_eq!(kept.permissions.iter().map(|p| p.code()).collect::<Vec<_>>(), ["Vendor:Read"], "nothing was written");

    // An admin widens the policy; from then on the manager may not touch it in any way that
    // leaves it holding what they lack, even by adding what they hold.
    fx.engine.add_policy_permission(&fx.admin, buyers, delete).await.unwrap();
    let read = permission_id(access("Vendor:Read"));
    assert_eq!(missing(fx.engine.add_policy_permission(&manager, buyers, read).await, "add after"), "Vendor:Delete");
    fx.engine.remove_policy_permission(&manager, buyers, delete).await.expect("removing takes nothing from the author");

    // Attaching gives what the policy holds.
    let wide = fx.policy_of("Wide", &["Vendor:Read", "User:Delete"]).await;
    assert_eq!(missing(fx.engine.attach_role_policy(&manager, managers, wide).await, "to a role"), "User:Delete");
    assert_eq!(
        missing(fx.engine.attach_user_policy(&manager, manager.user_id, wide).await, "to a user"),
        "User:Delete"
    );
    fx.engine.attach_user_policy(&manager, manager.user_id, buyers).await.expect("a policy within the author's own");
    assert!(
        matches!(
            fx.engine.attach_user_policy(&manager, manager.user_id, PolicyId(999)).await,
            Err(Error::NotFound { .. })
        ),
        "a missing policy stays the usual 404"
    );

    // Restoring a policy gives its permissions back to whoever holds it.
    fx.engine.delete_policy(&fx.admin, wide, None).await.unwrap();
    let restore_refused = fx.engine.restore_policy(&manager, wide).await;
    assert_eq!(missing(restore_refused, "restore"), "User:Delete");
    fx.engine.restore_policy(&fx.admin, wide).await.expect("admins are not limited");
}

/// Anything that may take access away revokes the affected users' older tokens at once, even
/// within the same second; grants wait for the next sign-in (D39).
pub async fn reductions_revoke_older_tokens_at_once<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let clerks = fx.role_of("Clerks", &["Vendor:Read", "Invoice:Read"]).await;
    let (_, _) = fx.user_with_role("clerk@example.com", clerks).await;
    let (bystander, _) = fx.user_with_role("bystander@example.com", PHARMACIST_ROLE_ID).await;
    let clerk = || fx.sign_in("clerk@example.com", "user-password");
    let role_policy =
        fx.engine.list_policies(&fx.admin).await.unwrap().into_iter().find(|p| p.name == "Clerks policy").unwrap();

    // The clock never moves in this case: every step happens in the same second.
    let (before, principal) = clerk().await;
    let clerk_id = principal.user_id;
    let extra = fx.policy_of("Extra", &["Dashboard:Read"]).await;
    fx.engine.attach_user_policy(&fx.admin, clerk_id, extra).await.unwrap();
    assert!(fx.token_works(&before).await, "a grant revokes nothing");
    assert!(!principal.permissions.contains(access("Dashboard:Read")), "grants show at the next sign-in");
    let (with_extra, principal) = clerk().await;
    assert!(principal.permissions.contains(access("Dashboard:Read")));
    assert!(fx.token_works(&before).await, "signing in again keeps older tokens");

    fx.engine.detach_user_policy(&fx.admin, clerk_id, extra).await.unwrap();
    assert!(!fx.token_works(&before).await && !fx.token_works(&with_extra).await, "a policy detached from the user");

    let (token, _) = clerk().await;
    fx.engine.detach_user_policy(&fx.admin, clerk_id, extra).await.unwrap();
    assert!(fx.token_works(&token).await, "detaching what is not attached takes nothing away");
    let invoice_read = permission_id(access("Invoice:Read"));
    fx.engine.remove_policy_permission(&fx.admin, role_policy.id, invoice_read).await.unwrap();
    assert!(!fx.token_works(&token).await, "a permission removed from their role's policy");

    let (token, _) = clerk().await;
    let keep_read = NewPolicy {
        name: "Clerks policy".into(),
        description: "more".into(),
        permission_ids: vec![permission_id(access("Vendor:Read")), invoice_read],
    };
    fx.engine.update_policy(&fx.admin, role_policy.id, keep_read).await.unwrap();
    assert!(fx.token_works(&token).await, "an update that only adds revokes nothing");
    let drop_invoice = NewPolicy {
        name: "Clerks policy".into(),
        description: String::new(),
        permission_ids: vec![permission_id(access("Vendor:Read"))],
    };
    fx.engine.update_policy(&fx.admin, role_policy.id, drop_invoice).await.unwrap();
    assert!(!fx.token_works(&token).await, "an update that removes a permission");

    let (token, _) = clerk().await;
    fx.engine.detach_role_policy(&fx.admin, clerks, role_policy.id).await.unwrap();
    assert!(!fx.token_works(&token).await, "a policy detached from their role");
    fx.engine.attach_role_policy(&fx.admin, clerks, role_policy.id).await.unwrap();

    let (token, _) = clerk().await;
    fx.engine.delete_policy(&fx.admin, role_policy.id, None).await.unwrap();
    assert!(!fx.token_works(&token).await, "a policy of theirs deleted");

    let (token, _) = clerk().await;
    fx.engine.update_user(&fx.admin, clerk_id, update("clerk@example.com", PHARMACIST_ROLE_ID)).await.unwrap();
    assert!(!fx.token_works(&token).await, "a change of their role");
    let (token, _) = clerk().await;
    fx.engine.update_user(&fx.admin, clerk_id, update("clerk@example.com", clerks)).await.unwrap();
    assert!(!fx.token_works(&token).await, "a second revocation in the same second still revokes");

    let (token, _) = clerk().await;
    fx.engine.delete_role(&fx.admin, clerks, None).await.unwrap();
    assert!(!fx.token_works(&token).await, "their role deleted");
    let (after, _) = clerk().await;
    assert!(fx.token_works(&after).await, "a token issued after every revocation works");

    assert!(fx.token_works(&bystander).await, "users who lost nothing keep their tokens");
    assert!(fx.token_works(&fx.admin_session).await);
}

/// Demotions racing sign-ins never leave a token valid that claims more than the user holds
/// (D39): whatever the order, a token issued before a demotion is revoked by it.
pub async fn demotions_racing_sign_ins_leave_no_stale_admin_token<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let (_, _) = fx.user_with_role("deputy@example.com", ADMIN_ROLE_ID).await;
    let (_, deputy) = fx.sign_in("deputy@example.com", "user-password").await;
    let extra = fx.policy_of("Deputy extras", &["AuditLog:Read"]).await;
    fx.engine.attach_user_policy(&fx.admin, deputy.user_id, extra).await.unwrap();

    let mut sign_ins = Vec::new();
    for _ in 0..8 {
        let fx = Arc::clone(&fx);
        sign_ins.push(tokio::spawn(async move { fx.engine.login("deputy@example.com", "user-password").await }));
    }
    let demote = {
        let fx = Arc::clone(&fx);
        let id = deputy.user_id;
        tokio::spawn(async move {
            fx.engine.update_user(&fx.admin, id, update("deputy@example.com", PHARMACIST_ROLE_ID)).await
        })
    };
    let detach = {
        let fx = Arc::clone(&fx);
        let id = deputy.user_id;
        tokio::spawn(async move { fx.engine.detach_user_policy(&fx.admin, id, extra).await })
    };
    demote.await.expect("no task panics").expect("the demotion succeeds");
    detach.await.expect("no task panics").expect("the detach succeeds");
    for task in sign_ins {
        let session = task.await.expect("no task panics").expect("every sign-in succeeds");
        if let Ok(principal) = fx.engine.authenticate(&session.token.token).await {
            assert!(!principal.is_admin, "a valid token must not claim the Admin role after the demotion");
            assert!(!principal.permissions.contains(access("AuditLog:Read")), "nor the detached policy");
        }
    }
    let (_, now) = fx.sign_in("deputy@example.com", "user-password").await;
    assert!(!now.is_admin && now.role_id == PHARMACIST_ROLE_ID);
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

/// A password change from `current` to "a new password".
fn to_new_password(current: &str) -> PasswordChange {
    PasswordChange { current_password: current.into(), new_password: Password::parse("a new password").unwrap() }
}
