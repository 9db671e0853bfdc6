//! Access that cannot be widened from inside (D38), reductions that take effect at once (D39)
//! and sign-in throttling that costs an attacker, not the pharmacy (D40), over HTTP.

use std::sync::Arc;

use hyper::Method;
use serde_json::{Value, json};

use crate::helpers::{
    ADMIN_EMAIL, ADMIN_PASSWORD, Backend, TestApp, default_backend, setup_body, spawn_app, spawn_with,
    statuses_at_once, test_config,
};

// Seeded permission ids (D27).
const VENDOR_READ: i64 = 1;
const VENDOR_DELETE: i64 = 4;
const POLICY_CREATE: i64 = 17;
const POLICY_UPDATE: i64 = 18;
const ROLE_UPDATE: i64 = 22;
const USER_CREATE: i64 = 25;
const USER_UPDATE: i64 = 26;
const ADMIN_ROLE: i64 = 1;
const PHARMACIST_ROLE: i64 = 2;
const PHARMACIST_POLICY: i64 = 1;

impl TestApp {
    /// A role holding exactly `permission_ids` through one policy; returns (role, policy).
    async fn role_holding(&self, name: &str, permission_ids: &[i64]) -> (i64, i64) {
        let role = self.post("/api/roles", &json!({ "name": name, "description": "" })).await;
        let role = role.expect(201).json()["id"].as_i64().unwrap();
        let policy = self
            .post("/api/policies", &json!({ "name": name, "description": "", "permissionIds": permission_ids }))
            .await;
        let policy = policy.expect(201).json()["id"].as_i64().unwrap();
        self.post_empty(&format!("/api/roles/{role}/policies/{policy}")).await.expect(204);
        (role, policy)
    }

    async fn as_user(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> crate::helpers::TestResponse {
        self.call(method, path, Some(token), body).await
    }

    async fn audit_actions(&self) -> Vec<(String, String)> {
        let page = self.get("/api/audit-log?entity=User&pageSize=100").await.json();
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| (entry["action"].as_str().unwrap().to_owned(), entry["changes"].to_string()))
            .collect()
    }
}

fn new_user(email: &str, role_id: i64) -> Value {
    json!({ "firstName": "Nila", "lastName": "Das", "email": email, "password": "chosen-password", "roleId": role_id })
}

/// A 403 whose detail names what is missing.
#[track_caller]
fn refused(response: &crate::helpers::TestResponse, named: &str) {
    let body = response.problem(403);
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(named), "the detail names {named}: {body}");
}

#[tokio::test]
async fn a_user_manager_cannot_make_an_admin_or_give_a_role_holding_more() {
    // Arrange: someone who may only create and update users.
    let app = spawn_app().await;
    let (hiring, _) = app.role_holding("Hiring", &[USER_CREATE, USER_UPDATE]).await;
    let (hr_id, hr) = app.user("hr@example.com", hiring).await;

    // Act and assert: no new admin, no role holding more, no self-promotion.
    let to_admin = app.as_user(&hr, Method::POST, "/api/users", Some(&new_user("mole@example.com", ADMIN_ROLE))).await;
    refused(&to_admin, "Admin");
    let denied = app
        .post_public("/api/auth/login", &json!({ "email": "mole@example.com", "password": "chosen-password" }))
        .await;
    assert_eq!(denied.status, 401, "the refused user was never created");
    let to_pharmacist =
        app.as_user(&hr, Method::POST, "/api/users", Some(&new_user("p@example.com", PHARMACIST_ROLE))).await;
    refused(&to_pharmacist, "Invoice:Read");
    let promote = json!({ "firstName": "Ravi", "lastName": "Kumar", "email": "hr@example.com", "roleId": ADMIN_ROLE });
    refused(&app.as_user(&hr, Method::PUT, &format!("/api/users/{hr_id}"), Some(&promote)).await, "Admin");
    let missing_role = app.as_user(&hr, Method::POST, "/api/users", Some(&new_user("q@example.com", 999))).await;
    missing_role.invalid("roleId");
    app.as_user(&hr, Method::POST, "/api/users", Some(&new_user("peer@example.com", hiring))).await.expect(201);
    app.get(&format!("/api/users/{hr_id}")).await.expect(200);
    assert_eq!(app.get(&format!("/api/users/{hr_id}")).await.json()["roleId"], json!(hiring), "still in Hiring");
}

#[tokio::test]
async fn a_policy_manager_cannot_grant_a_permission_they_lack() {
    let app = spawn_app().await;
    let (managers, _) = app
        .role_holding("Access managers", &[POLICY_CREATE, POLICY_UPDATE, ROLE_UPDATE, USER_UPDATE, VENDOR_READ])
        .await;
    let (me, token) = app.user("pm@example.com", managers).await;

    let wide = json!({ "name": "Wide", "description": "", "permissionIds": [VENDOR_READ, VENDOR_DELETE] });
    refused(&app.as_user(&token, Method::POST, "/api/policies", Some(&wide)).await, "Vendor:Delete");
    let narrow = json!({ "name": "Narrow", "description": "", "permissionIds": [VENDOR_READ] });
    let narrow = app.as_user(&token, Method::POST, "/api/policies", Some(&narrow)).await;
    let narrow = narrow.expect(201).json()["id"].as_i64().unwrap();
    let add = format!("/api/policies/{narrow}/permissions/{VENDOR_DELETE}");
    refused(&app.as_user(&token, Method::POST, &add, None).await, "Vendor:Delete");
    let widened = json!({ "name": "Narrow", "description": "", "permissionIds": [VENDOR_DELETE] });
    refused(
        &app.as_user(&token, Method::PUT, &format!("/api/policies/{narrow}"), Some(&widened)).await,
        "Vendor:Delete",
    );

    let admin_made = app.post("/api/policies", &wide).await.expect(201).json()["id"].as_i64().unwrap();
    let to_role = format!("/api/roles/{managers}/policies/{admin_made}");
    refused(&app.as_user(&token, Method::POST, &to_role, None).await, "Vendor:Delete");
    let to_self = format!("/api/users/{me}/policies/{admin_made}");
    refused(&app.as_user(&token, Method::POST, &to_self, None).await, "Vendor:Delete");
    let policies = app.get(&format!("/api/users/{me}/policies")).await.json();
    assert_eq!(policies, json!([]), "nothing was attached");
    app.as_user(&token, Method::POST, &format!("/api/users/{me}/policies/{narrow}"), None).await.expect(204);
}

#[tokio::test]
async fn a_demotion_or_a_removed_permission_ends_older_tokens_at_once() {
    let app = spawn_app().await;
    let (deputy_id, deputy) = app.user("deputy@example.com", ADMIN_ROLE).await;
    app.as_user(&deputy, Method::GET, "/api/users", None).await.expect(200);

    // The clock stands still: the demotion happens in the same second as the sign-in.
    let demote =
        json!({ "firstName": "Ravi", "lastName": "Kumar", "email": "deputy@example.com", "roleId": PHARMACIST_ROLE });
    app.put(&format!("/api/users/{deputy_id}"), &demote).await.expect(200);
    let stale = app.as_user(&deputy, Method::GET, "/api/users", None).await;
    stale.problem(401);
    assert_eq!(stale.header("www-authenticate"), Some("Bearer"));
    let fresh = app.login("deputy@example.com", "user-password").await;
    app.as_user(&fresh, Method::GET, "/api/vendors", None).await.expect(200);
    assert_eq!(crate::helpers::claims(&fresh)["is_admin"], "false");

    app.delete(&format!("/api/policies/{PHARMACIST_POLICY}/permissions/{VENDOR_READ}")).await.expect(204);
    app.as_user(&fresh, Method::GET, "/api/vendors", None).await.problem(401);
    let after = app.login("deputy@example.com", "user-password").await;
    app.as_user(&after, Method::GET, "/api/vendors", None).await.problem(403);

    // Grants wait for the next sign-in and revoke nothing.
    app.post_empty(&format!("/api/policies/{PHARMACIST_POLICY}/permissions/{VENDOR_READ}")).await.expect(204);
    app.as_user(&after, Method::GET, "/api/vendors", None).await.problem(403);
    let granted = app.login("deputy@example.com", "user-password").await;
    app.as_user(&granted, Method::GET, "/api/vendors", None).await.expect(200);
    app.get("/api/users").await.expect(200);
}

#[tokio::test]
async fn concurrent_demotions_and_sign_ins_leave_no_stale_admin_token() {
    let app = Arc::new(spawn_app().await);
    let (deputy_id, _) = app.user("deputy@example.com", ADMIN_ROLE).await;
    let (_, extra) = app.role_holding("Extras", &[VENDOR_READ]).await;
    app.post_empty(&format!("/api/users/{deputy_id}/policies/{extra}")).await.expect(204);

    let mut sign_ins = Vec::new();
    for _ in 0..12 {
        let app = Arc::clone(&app);
        sign_ins.push(tokio::spawn(async move { app.login("deputy@example.com", "user-password").await }));
    }
    let demotion = {
        let app = Arc::clone(&app);
        tokio::spawn(async move {
            let body =
                json!({ "firstName": "R", "lastName": "K", "email": "deputy@example.com", "roleId": PHARMACIST_ROLE });
            app.put(&format!("/api/users/{deputy_id}"), &body).await.status.as_u16()
        })
    };
    let detach = {
        let app = Arc::clone(&app);
        tokio::spawn(
            async move { app.delete(&format!("/api/users/{deputy_id}/policies/{extra}")).await.status.as_u16() },
        )
    };
    assert_eq!(demotion.await.unwrap(), 200);
    assert_eq!(detach.await.unwrap(), 204);
    for task in sign_ins {
        let token = task.await.expect("no sign-in panics");
        let answer = app.as_user(&token, Method::GET, "/api/users", None).await;
        if answer.status == 200 {
            assert_eq!(crate::helpers::claims(&token)["is_admin"], "false", "a valid token claims no Admin role");
        } else {
            answer.problem(401);
        }
    }
}

#[tokio::test]
async fn lowering_the_token_lifetime_never_revives_or_extends_a_token() {
    // Two servers on one database: memory cannot be shared, so that suite uses a SQLite file.
    let directory = tempfile::tempdir().unwrap();
    let mut _postgres = None;
    let database_url = match default_backend() {
        Backend::Memory | Backend::Sqlite => format!("sqlite:{}", directory.path().join("pharmapay.db").display()),
        Backend::Postgres => {
            let Some(admin_url) = pharmapay_store_sqlx::testing::postgres_admin_url() else { return };
            let database = pharmapay_store_sqlx::testing::PgDatabase::create(&admin_url).await;
            let url = database.url().to_owned();
            _postgres = Some(database);
            url
        }
    };
    let mut config = test_config();
    config.database_url = database_url.clone();
    let first = spawn_with(config).await;
    let token = first.post_public("/api/onboarding/setup", &setup_body()).await.expect(200).json()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut config = test_config();
    config.database_url = database_url;
    config.token_hours = 1;
    let second = spawn_with(config).await;

    first.call(Method::GET, "/api/users", Some(&token), None).await.expect(200);
    second.call(Method::GET, "/api/users", Some(&token), None).await.problem(401);
    let short = second.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    second.call(Method::GET, "/api/users", Some(&short), None).await.expect(200);
    first.stop().await;
    second.stop().await;
}

#[tokio::test]
async fn many_right_password_sign_ins_at_once_are_never_throttled() {
    let app = Arc::new(spawn_app().await);
    app.user("counter@example.com", PHARMACIST_ROLE).await;
    for _ in 0..4 {
        let wrong =
            app.post_public("/api/auth/login", &json!({ "email": "counter@example.com", "password": "nope" })).await;
        assert_eq!(wrong.status, 401);
    }
    let statuses = statuses_at_once(&app, 32, |app, _| async move {
        let body = json!({ "email": "counter@example.com", "password": "user-password" });
        app.post_public("/api/auth/login", &body).await.status.as_u16()
    })
    .await;
    assert_eq!(statuses, vec![200; 32], "no right password is refused below five failures");
}

#[tokio::test]
async fn throttled_sign_ins_write_nothing_and_typed_passwords_never_reach_the_log() {
    let app = spawn_app().await;
    app.user("target@example.com", PHARMACIST_ROLE).await;
    let attempt = |password: &'static str| {
        let app = &app;
        async move {
            app.post_public("/api/auth/login", &json!({ "email": "target@example.com", "password": password })).await
        }
    };
    for _ in 0..5 {
        assert_eq!(attempt("guess").await.status, 401);
    }
    for _ in 0..30 {
        let throttled = attempt("user-password").await;
        throttled.problem(429);
        assert!(throttled.header("retry-after").is_some());
    }
    let actions = app.audit_actions().await;
    let failed = actions.iter().filter(|(action, _)| action == "login_failed").count();
    let noted = actions.iter().filter(|(action, _)| action == "login_throttled").count();
    assert_eq!((failed, noted), (5, 1), "five failures and one note, whatever follows: {actions:?}");

    let typed = app.post_public("/api/auth/login", &json!({ "email": "correct horse battery", "password": "x" })).await;
    assert_eq!(typed.status, 401);
    let actions = app.audit_actions().await;
    assert!(actions[0].1.contains("(invalid)"), "{:?}", actions[0]);
    assert!(actions.iter().all(|(_, changes)| !changes.contains("horse")), "{actions:?}");
}

#[tokio::test]
async fn a_stolen_token_cannot_guess_the_password_through_the_profile() {
    let app = spawn_app().await;
    let (_, token) = app.user("owner@example.com", PHARMACIST_ROLE).await;
    let change = |current: &str| json!({ "currentPassword": current, "newPassword": "brand-new-password" });
    for guess in 0..5 {
        let wrong =
            app.as_user(&token, Method::PUT, "/api/profile/password", Some(&change(&format!("guess {guess}")))).await;
        wrong.problem(400);
    }
    let sixth = app.as_user(&token, Method::PUT, "/api/profile/password", Some(&change("user-password"))).await;
    sixth.problem(429);
    assert!(sixth.header("retry-after").is_some());
    let actions = app.audit_actions().await;
    let failed = actions.iter().filter(|(action, _)| action == "password_change_failed").count();
    assert_eq!(failed, 5, "{actions:?}");
}
