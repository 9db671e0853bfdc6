//! Users, profile and audit log over HTTP (spec, Users; D15, D17, D18, D19, D22, D24).

use hyper::Method;
use serde_json::{Value, json};

use crate::helpers::{ADMIN_EMAIL, spawn_app};

#[tokio::test]
async fn users_are_listed_created_updated_deleted_and_restored() {
    let app = spawn_app().await;
    let users = app.get("/api/users").await.expect(200).json();
    assert_eq!(users.as_array().unwrap().len(), 1);
    let body = json!({ "firstName": "Meera", "lastName": "Iyer", "email": "meera@example.com", "password": "password-1", "roleId": 2 });
    let created = app.post("/api/users", &body).await;
    let user = created.expect(201).json();
    let id = user["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/users/{id}").as_str()));
    assert!(user.get("password").is_none() && user.get("passwordHash").is_none(), "no password in any answer");
    assert_eq!(user["createdAt"], "2024-05-10T10:00:00Z");
    assert_eq!(
        app.get(&format!("/api/users/{id}")).await.expect(200).json(),
        user,
        "read returns what create returned"
    );
    let duplicate = app.post("/api/users", &json!({ "firstName": "M", "lastName": "I", "email": "MEERA@example.com", "password": "password-1", "roleId": 2 })).await;
    assert!(duplicate.problem(409)["errors"]["email"].is_array(), "D5");
    app.post(
        "/api/users",
        &json!({ "firstName": "M", "lastName": "I", "email": "x@example.com", "password": "short", "roleId": 2 }),
    )
    .await
    .invalid("password");
    app.post(
        "/api/users",
        &json!({ "firstName": "M", "lastName": "I", "email": "x@example.com", "password": "password-1", "roleId": 99 }),
    )
    .await
    .invalid("roleId");
    let updated = app
        .put(
            &format!("/api/users/{id}"),
            &json!({ "firstName": "Meera", "lastName": "Nair", "email": "meera@example.com", "roleId": 2 }),
        )
        .await;
    assert_eq!(updated.expect(200).json()["lastName"], "Nair");
    app.delete(&format!("/api/users/{id}")).await.expect(204);
    app.get(&format!("/api/users/{id}")).await.problem(404);
    assert_eq!(app.get("/api/users").await.json().as_array().unwrap().len(), 1, "D17: active users only");
    assert_eq!(app.post_empty(&format!("/api/users/{id}/restore")).await.expect(200).json()["isActive"], true);
    let me = app.get("/api/users/me/permissions").await.expect(200).json();
    assert_eq!(me, json!([{ "id": 0, "collection": "*", "action": "*", "description": "Full access" }]), "D19");
    let own_id = app.get("/api/profile").await.json()["id"].as_i64().unwrap();
    app.delete(&format!("/api/users/{own_id}")).await.problem(400);
}

#[tokio::test]
async fn policies_attached_to_users_change_their_permissions() {
    let app = spawn_app().await;
    let (id, token) = app.user("p@example.com", 2).await;
    let before = app.call(Method::GET, "/api/users/me/permissions", Some(&token), None).await.expect(200).json();
    assert_eq!(before.as_array().unwrap().len(), 15);
    let policy = app
        .post("/api/policies", &json!({ "name": "Auditors", "description": "read the log", "permissionIds": [29] }))
        .await;
    let policy_id = policy.expect(201).json()["id"].as_i64().unwrap();
    app.post_empty(&format!("/api/users/{id}/policies/{policy_id}")).await.expect(204);
    let attached = app.get(&format!("/api/users/{id}/policies")).await.expect(200).json();
    assert_eq!(attached[0]["id"], policy_id);
    let after = app.call(Method::GET, "/api/users/me/permissions", Some(&token), None).await.json();
    let collections: Vec<&str> = after.as_array().unwrap().iter().map(|p| p["collection"].as_str().unwrap()).collect();
    assert_eq!(collections.len(), 16);
    assert_eq!(
        collections[11..],
        ["AuditLog", "VendorCredit", "VendorCredit", "VendorCredit", "Branch"],
        "in id order (D19)"
    );
    app.call(Method::GET, "/api/audit-log", Some(&token), None).await.problem(403);
    let fresh = app.login("p@example.com", "user-password").await;
    app.call(Method::GET, "/api/audit-log", Some(&fresh), None).await.expect(200);
    app.call(Method::DELETE, &format!("/api/users/{id}/policies/{policy_id}"), Some(&app.admin_token), None)
        .await
        .expect(204);
    assert!(app.get(&format!("/api/users/{id}/policies")).await.json().as_array().unwrap().is_empty());
}

#[tokio::test]
async fn profile_reads_updates_and_changes_password() {
    let app = spawn_app().await;
    let profile = app.get("/api/profile").await.expect(200).json();
    let mut keys: Vec<&str> = profile.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "branchIds",
            "createdAt",
            "email",
            "firstName",
            "id",
            "isActive",
            "isAdmin",
            "lastName",
            "permissions",
            "roleId",
            "roleName"
        ]
    );
    assert_eq!((profile["roleName"].clone(), profile["isAdmin"].clone()), (json!("Admin"), json!(true)));
    let (_, token) = app.user("p@example.com", 2).await;
    let taken =
        app.put_as(&token, "/api/profile", &json!({ "firstName": "P", "lastName": "Q", "email": ADMIN_EMAIL })).await;
    taken.problem(409);
    let updated = app
        .put_as(
            &token,
            "/api/profile",
            &json!({ "firstName": "Priya", "lastName": "Shah", "email": "priya@example.com" }),
        )
        .await;
    let updated = updated.expect(200).json();
    assert_eq!(
        (updated["email"].clone(), updated["roleName"].clone(), updated["isAdmin"].clone()),
        (json!("priya@example.com"), json!("Pharmacist"), json!(false))
    );
    assert_eq!(updated["permissions"][0], "Vendor:Read");
    let change_password = async |current: &str, new: &str| {
        let body = json!({ "currentPassword": current, "newPassword": new });
        app.put_as(&token, "/api/profile/password", &body).await
    };
    change_password("nope", "another-password").await.problem(400);
    change_password("user-password", "short").await.invalid("newPassword");
    let changed = change_password("user-password", "another-password").await;
    let session = changed.expect(200).json();
    assert_eq!(session["user"]["email"], "priya@example.com");
    assert_eq!(changed.header("cache-control"), Some("no-store"));
    app.login("priya@example.com", "another-password").await;
}

#[tokio::test]
async fn the_audit_log_lists_writes_newest_first() {
    let app = spawn_app().await;
    let vendor = app.vendor("Audited").await;
    app.delete_with(&format!("/api/vendors/{vendor}"), &json!({ "reason": "closed" })).await.expect(204);
    let page = app.get(&format!("/api/audit-log?entity=Vendor&entityId={vendor}")).await.expect(200).json();
    let entries = page["items"].as_array().unwrap();
    let actions: Vec<&str> = entries.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["delete", "create"]);
    assert_eq!(entries[0]["reason"], "closed", "D16");
    assert_eq!(entries[1]["changes"]["name"], "Audited", "changes are a JSON object");
    let mut keys: Vec<&str> = entries[0].as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["action", "at", "changes", "entity", "entityId", "id", "reason", "userId"]);
    let logins = app.get("/api/audit-log?entity=User&pageSize=5").await.json();
    assert!(logins["items"].as_array().unwrap().iter().all(|e| e["entity"] == "User"));
    app.get("/api/audit-log?fromDate=nope").await.invalid("fromDate");
    let everything: Value = app.get("/api/audit-log?pageSize=100").await.json();
    assert!(!everything.to_string().contains("admin-password"), "no secret in the log");
}
