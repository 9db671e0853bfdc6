//! Request-shape failures: every one a clear 4xx problem-details answer (D6, D7).

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request};
use serde_json::json;

use crate::helpers::spawn_app;

fn raw(
    app: &crate::helpers::TestApp,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: impl Into<Bytes>,
) -> Request<Full<Bytes>> {
    let mut builder = Request::builder()
        .method(method)
        .uri(format!("{}{path}", app.base))
        .header("authorization", format!("Bearer {}", app.admin_token));
    if let Some(content_type) = content_type {
        builder = builder.header("content-type", content_type);
    }
    builder.body(Full::new(body.into())).unwrap()
}

#[tokio::test]
async fn malformed_bodies_are_400_problems() {
    let app = spawn_app().await;
    let cases: Vec<(&str, Bytes)> = vec![
        ("truncated JSON", Bytes::from_static(b"{\"name\": \"Acme\"")),
        ("not JSON", Bytes::from_static(b"name=Acme")),
        ("empty body", Bytes::new()),
        ("deep nesting", Bytes::from(format!("{}{}", "[".repeat(100), "]".repeat(100)))),
        ("a JSON array", Bytes::from_static(b"[1,2]")),
        ("wrong types", Bytes::from_static(b"{\"name\": 5, \"vendorType\": [\"Dealer\"]}")),
        ("invalid UTF-8", Bytes::from_static(b"{\"name\": \"\xff\"}")),
    ];
    for (label, body) in cases {
        let response = app.send(raw(&app, Method::POST, "/api/vendors", Some("application/json"), body)).await;
        assert_eq!(response.status.as_u16(), 400, "{label}");
        response.problem(400);
    }
    let typed = app
        .send(raw(
            &app,
            Method::POST,
            "/api/vendors",
            Some("application/json"),
            Bytes::from_static(b"{\"name\": 5, \"vendorType\": true}"),
        ))
        .await;
    let problem = typed.problem(400);
    assert!(
        problem["errors"]["name"].is_array() && problem["errors"]["vendorType"].is_array(),
        "every field is named: {problem}"
    );
}

#[tokio::test]
async fn media_type_size_route_and_method_errors() {
    let app = spawn_app().await;
    let json_body = Bytes::from_static(br#"{"name":"Acme","vendorType":"Dealer"}"#);
    let unsupported = app.send(raw(&app, Method::POST, "/api/vendors", Some("text/plain"), json_body.clone())).await;
    unsupported.problem(415);
    let missing = app.send(raw(&app, Method::POST, "/api/vendors", None, json_body.clone())).await;
    missing.problem(415);
    app.send(raw(&app, Method::POST, "/api/vendors", Some("application/json; charset=utf-8"), json_body))
        .await
        .expect(201);

    let big = format!(r#"{{"name":"{}","vendorType":"Dealer"}}"#, "x".repeat(2 * 1024 * 1024));
    app.send(raw(&app, Method::POST, "/api/vendors", Some("application/json"), big)).await.problem(413);
    let ten_mib = vec![b' '; 10 * 1024 * 1024];
    app.send(raw(&app, Method::POST, "/api/vendors", Some("application/json"), ten_mib)).await.problem(413);

    app.get("/api/nothing-here").await.problem(404);
    app.get("/elsewhere").await.problem(404);
    let wrong = app.send(raw(&app, Method::PATCH, "/api/vendors", None, Bytes::new())).await;
    wrong.problem(405);
    assert_eq!(wrong.header("allow"), Some("GET, POST"));
    app.get("/api/vendors/abc").await.invalid("id");
    app.get("/api/vendors/0").await.invalid("id");
    app.get("/api/vendors/99999999999999999999").await.invalid("id");
    app.get("/api/vendors?search=%ZZ").await.problem(400);
}

#[tokio::test]
async fn unknown_fields_are_ignored_and_hostile_text_is_bounded() {
    let app = spawn_app().await;
    let body = json!({ "name": "Acme", "vendorType": "Dealer", "id": 999, "isActive": false, "outstandingBalance": 5, "extra": { "deep": true } });
    let vendor = app.post("/api/vendors", &body).await.expect(201).json();
    assert_ne!(vendor["id"], 999, "mass assignment of id has no effect");
    assert_eq!(vendor["isActive"], true);
    assert_eq!(vendor["outstandingBalance"], 0);
    let vendor_id = vendor["id"].as_i64().unwrap();
    let invoice = app
        .post(
            "/api/invoices",
            &json!({ "vendorId": vendor_id, "invoiceNumber": "M-1", "amount": 100, "invoiceDate": "2024-05-01",
            "dueDate": "2024-06-01", "paidAmount": 100, "pendingAmount": 0, "status": "FullyPaid", "isActive": false }),
        )
        .await;
    let invoice = invoice.expect(201).json();
    assert_eq!(
        (invoice["paidAmount"].clone(), invoice["status"].clone(), invoice["isActive"].clone()),
        (json!(0), json!("PartiallyPaid"), json!(true)),
        "computed fields in a body have no effect"
    );
    let user = app.post("/api/users", &json!({ "firstName": "A", "lastName": "B", "email": "ab@example.com", "password": "password-1", "roleId": 2, "isActive": false, "isAdmin": true })).await;
    assert_eq!(user.expect(201).json()["isActive"], true);
    let token = app.login("ab@example.com", "password-1").await;
    let body = json!({ "firstName": "A", "lastName": "B", "email": "ab@example.com", "roleId": 1, "isAdmin": true });
    let profile = app.put_as(&token, "/api/profile", &body).await;
    assert_eq!(
        (profile.expect(200).json()["roleId"].clone(), profile.json()["isAdmin"].clone()),
        (json!(2), json!(false)),
        "a profile cannot change its role"
    );
    app.call(hyper::Method::GET, "/api/users/1/policies", Some(&token), None).await.expect(200);
    let others = app
        .put_as(
            &token,
            "/api/users/1",
            &json!({ "firstName": "X", "lastName": "Y", "email": "x@example.com", "roleId": 2 }),
        )
        .await;
    others.problem(403);
    app.post("/api/vendors", &json!({ "name": "x".repeat(201), "vendorType": "Dealer" })).await.invalid("name");
    app.post("/api/vendors", &json!({ "name": "bad\u{0}name", "vendorType": "Dealer" })).await.invalid("name");
    let unicode = app.post("/api/vendors", &json!({ "name": "दवाई घर 🏥", "vendorType": "Dealer" })).await;
    assert_eq!(unicode.expect(201).json()["name"], "दवाई घर 🏥");
    let search = format!("/api/vendors?search={}", "a".repeat(500));
    app.get(&search).await.invalid("search");
    app.get("/api/vendors?search=%27%20OR%201%3D1%20--").await.expect(200);
    app.get("/api/invoices?sortBy=amount%3B%20DROP%20TABLE%20invoices").await.invalid("sortBy");
}

#[tokio::test]
async fn hostile_search_and_sort_values_are_refused_or_matched_literally() {
    let app = spawn_app().await;
    let vendor = app.vendor("Acme").await;
    app.invoice(vendor, "A-1", "10", "2024-06-01").await;
    let hostile =
        ["%27%20OR%201%3D1%20--", "%25", "_", "%5C", "%22%3B%20DROP%20TABLE%20vendors%3B%20--", "%E2%80%AE%00"];
    // The audit log has one order (newest first) and no sort parameters.
    for list in ["vendors", "invoices", "transactions"] {
        for sort_param in ["sortBy", "sortDir"] {
            for value in hostile {
                let response = app.get(&format!("/api/{list}?{sort_param}={value}")).await;
                assert_eq!(response.status.as_u16(), 400, "{list} {sort_param}={value}");
            }
        }
        let long = app.get(&format!("/api/{list}?sortBy={}", "a".repeat(5000))).await;
        assert_eq!(long.status.as_u16(), 400, "{list}: a long sort key");
    }
    for (list, param) in
        [("vendors", "search"), ("invoices", "search"), ("invoices", "invoiceNumber"), ("audit-log", "entity")]
    {
        for value in hostile {
            let response = app.get(&format!("/api/{list}?{param}={value}")).await;
            let status = response.status.as_u16();
            assert!(status == 200 || status == 400, "{list} {param}={value}: {status}");
            if status == 200 {
                assert_eq!(response.json()["totalCount"], 0, "{list} {param}={value} matches literally, so nothing");
            }
        }
        let long = app.get(&format!("/api/{list}?{param}={}", "a".repeat(5000))).await;
        assert_eq!(long.status.as_u16(), 400, "{list}: a long {param}");
    }
    // A NUL byte in a login email or a setting key is just an unknown one (PostgreSQL would
    // refuse it, so it must never reach the store).
    let login = app.post_public("/api/auth/login", &json!({ "email": "admin\0@example.com", "password": "x" })).await;
    assert_eq!(login.status.as_u16(), 401, "NUL in a login email");
    app.get("/api/settings/Curr%00ency").await.problem(404);
    app.put("/api/settings/Curr%00ency", &json!({ "value": "$" })).await.problem(404);
    for list in ["vendors", "invoices", "transactions", "audit-log"] {
        let page = app.get(&format!("/api/{list}?pageSize=1000000&page=1")).await.expect(200).json();
        assert_eq!(page["pageSize"], 100, "{list}: D8 clamp");
        app.get(&format!("/api/{list}?page=99999999999999999999")).await.expect(200);
    }
}
