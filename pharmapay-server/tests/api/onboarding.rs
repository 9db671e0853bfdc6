//! Onboarding (spec, Onboarding).

use serde_json::json;

use crate::helpers::{ADMIN_EMAIL, setup_body, spawn_fresh, statuses_at_once};

#[tokio::test]
async fn setup_runs_once_and_signs_the_admin_in() {
    let app = spawn_fresh().await;
    let status = app.call(hyper::Method::GET, "/api/onboarding/status", None, None).await;
    assert_eq!(status.expect(200).json(), json!({ "isOnboarded": false }));

    let setup = app.post_public("/api/onboarding/setup", &setup_body()).await;
    let body = setup.expect(200).json();
    assert_eq!(setup.header("cache-control"), Some("no-store"), "token responses are not cached");
    assert!(body["token"].as_str().is_some_and(|t| t.split('.').count() == 3));
    assert_eq!(body["expiresAt"], "2024-05-11T10:00:00Z");
    let user = body["user"].as_object().unwrap();
    assert_eq!(user["branchIds"], serde_json::Value::Null, "the first admin sees every branch (D49)");
    let mut keys: Vec<&str> = user.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["branchIds", "email", "firstName", "id", "lastName", "roleId"],
        "the onboarding user has no isActive or createdAt; its branches are every branch's (D49)"
    );
    assert_eq!(body["user"]["roleId"], 1);
    assert_eq!(body["user"]["email"], ADMIN_EMAIL);

    let token = body["token"].as_str().unwrap();
    app.call(hyper::Method::GET, "/api/vendors", Some(token), None).await.expect(200);
    let status = app.call(hyper::Method::GET, "/api/onboarding/status", None, None).await;
    assert_eq!(status.json(), json!({ "isOnboarded": true }));
    let again = app.post_public("/api/onboarding/setup", &setup_body()).await;
    assert!(again.problem(400)["detail"].as_str().unwrap().contains("already"));
}

#[tokio::test]
async fn setup_reports_every_invalid_field_with_dotted_paths() {
    let app = spawn_fresh().await;
    let body = json!({
        "pharmacy": { "address": "x" },
        "adminUser": { "firstName": "A", "lastName": "B", "email": "not-an-email", "password": "short" }
    });
    let response = app.post_public("/api/onboarding/setup", &body).await;
    let problem = response.invalid("pharmacy.name");
    assert!(problem["errors"]["adminUser.password"].is_array(), "{problem}");
    let response = app.post_public("/api/onboarding/setup", &json!({ "pharmacy": { "name": "P" }, "adminUser": { "firstName": "A", "lastName": "B", "email": "bad", "password": "long enough" } })).await;
    response.invalid("adminUser.email");
    let status = app.call(hyper::Method::GET, "/api/onboarding/status", None, None).await;
    assert_eq!(status.json()["isOnboarded"], false, "refused setups change nothing");
}

#[tokio::test]
async fn concurrent_setups_make_one_admin() {
    let app = std::sync::Arc::new(spawn_fresh().await);
    let statuses = statuses_at_once(&app, 8, |app, n| async move {
        let mut body = setup_body();
        body["adminUser"]["email"] = json!(format!("admin{n}@example.com"));
        app.post_public("/api/onboarding/setup", &body).await.status.as_u16()
    })
    .await;
    assert_eq!(statuses, [200, 400, 400, 400, 400, 400, 400, 400]);
}
