//! Roles, permissions, policies and settings over HTTP (spec; D3, D4, D17, D27).

use hyper::Method;
use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test]
async fn roles_are_managed_and_system_roles_protected() {
    let app = spawn_app().await;
    let roles = app.get("/api/roles").await.expect(200).json();
    assert_eq!(roles[0]["name"], "Admin");
    assert_eq!(roles[1]["isSystem"], true);
    let created =
        app.post("/api/roles", &json!({ "name": "Cashier", "description": "Takes payments", "isSystem": true })).await;
    let role = created.expect(201).json();
    let id = role["id"].as_i64().unwrap();
    assert_eq!(role["isSystem"], false, "mass assignment of isSystem has no effect");
    assert_eq!(created.header("location"), Some(format!("/api/roles/{id}").as_str()));
    assert_eq!(app.get(&format!("/api/roles/{id}")).await.expect(200).json(), role);
    app.post("/api/roles", &json!({ "name": "cashier" })).await.problem(409);
    app.post("/api/roles", &json!({ "description": "no name" })).await.invalid("name");
    app.put(&format!("/api/roles/{id}"), &json!({ "name": "Cashiers", "description": "" })).await.expect(200);
    app.delete("/api/roles/1").await.problem(400);
    app.delete(&format!("/api/roles/{id}")).await.expect(204);
    app.get(&format!("/api/roles/{id}")).await.problem(404);
    let listed = app.get("/api/roles").await.json();
    assert!(
        listed.as_array().unwrap().iter().any(|r| r["id"] == id && r["isActive"] == false),
        "roles list both states"
    );
    app.post_empty(&format!("/api/roles/{id}/restore")).await.expect(200);
    app.post_empty(&format!("/api/roles/{id}/policies/1")).await.expect(204);
    app.call(Method::DELETE, &format!("/api/roles/{id}/policies/1"), Some(&app.admin_token), None).await.expect(204);
    app.post_empty(&format!("/api/roles/{id}/policies/999")).await.problem(404);
}

#[tokio::test]
async fn permissions_and_policies() {
    let app = spawn_app().await;
    let permissions = app.get("/api/permissions").await.expect(200).json();
    let permissions = permissions.as_array().unwrap();
    assert_eq!(permissions.len(), 45, "D27, D44, D46, D47, D49");
    assert_eq!(
        permissions[40],
        json!({ "id": 41, "collection": "Webhook", "action": "Delete", "description": "Delete webhooks and events" })
    );
    assert_eq!(
        permissions[41],
        json!({ "id": 42, "collection": "Branch", "action": "Read", "description": "View branches" })
    );
    assert_eq!(
        permissions[33],
        json!({ "id": 34, "collection": "BankStatement", "action": "Read", "description": "View bank statements" })
    );
    assert_eq!(
        permissions[0],
        json!({ "id": 1, "collection": "Vendor", "action": "Read", "description": "View vendors" })
    );
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    app.call(Method::GET, "/api/permissions", Some(&pharmacist), None).await.problem(403);

    let policies = app.get("/api/policies").await.expect(200).json();
    assert_eq!(policies[0]["name"], "Pharmacist Default");
    assert_eq!(policies[0]["permissions"].as_array().unwrap().len(), 15, "D49 adds Branch:Read");
    assert_eq!(policies[0]["permissions"][0], json!({ "id": 1, "collection": "Vendor", "action": "Read" }));
    let created =
        app.post("/api/policies", &json!({ "name": "Readers", "description": "d", "permissionIds": [1, 5] })).await;
    let id = created.expect(201).json()["id"].as_i64().unwrap();
    app.post("/api/policies", &json!({ "name": "READERS", "permissionIds": [] })).await.problem(409);
    app.post("/api/policies", &json!({ "name": "Bad", "permissionIds": [1, 999] })).await.invalid("permissionIds");
    app.post_empty(&format!("/api/policies/{id}/permissions/9")).await.expect(204);
    app.call(Method::DELETE, &format!("/api/policies/{id}/permissions/1"), Some(&app.admin_token), None)
        .await
        .expect(204);
    let read = app.get(&format!("/api/policies/{id}")).await.expect(200).json();
    let ids: Vec<i64> = read["permissions"].as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [5, 9]);
    app.put(&format!("/api/policies/{id}"), &json!({ "name": "Readers", "description": "", "permissionIds": [13] }))
        .await
        .expect(200);
    app.delete(&format!("/api/policies/{id}")).await.expect(204);
    app.get(&format!("/api/policies/{id}")).await.problem(404);
    app.post_empty(&format!("/api/policies/{id}/restore")).await.expect(200);
}

#[tokio::test]
async fn settings_change_values_only() {
    let app = spawn_app().await;
    let settings = app.get("/api/settings").await.expect(200).json();
    assert_eq!(
        settings,
        json!([
            { "key": "Currency", "value": "₹", "description": "Currency symbol shown in amounts" },
            {
                "key": "ExpiredLicensePolicy",
                "value": "Warn",
                "description": "Warn or Block: whether invoices dated after a vendor's drug licence expired are refused"
            },
            { "key": "TimeZone", "value": "UTC", "description": "IANA time zone for dates and the Overdue rule" }
        ])
    );
    app.get("/api/settings/Colour").await.problem(404);
    let updated =
        app.put("/api/settings/Currency", &json!({ "value": "$", "key": "Other", "description": "changed" })).await;
    assert_eq!(
        updated.expect(200).json(),
        json!({ "key": "Currency", "value": "$", "description": "Currency symbol shown in amounts" })
    );
    app.put("/api/settings/TimeZone", &json!({ "value": "Mars/Olympus" })).await.invalid("value");
    app.put("/api/settings/TimeZone", &json!({ "value": "Asia/Kolkata" })).await.expect(200);
    app.put("/api/settings/Colour", &json!({ "value": "red" })).await.problem(404);
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    app.call(Method::GET, "/api/settings/Currency", Some(&pharmacist), None).await.expect(200);
    app.call(Method::PUT, "/api/settings/Currency", Some(&pharmacist), Some(&json!({ "value": "€" })))
        .await
        .problem(403);
}
