//! Permission before parameters: a caller without a route's permission gets 403 whatever is
//! wrong with its path, query or body, so it never learns the parameter rules from a 400; a
//! caller without a token gets 401 the same way.

use hyper::Method;
use pharmapay_server::guard::Guard;
use pharmapay_server::routes::route_table;
use serde_json::json;

use crate::helpers::{TestApp, TestResponse, fill, spawn_app};

/// A query breaking the rules of every list, report, dashboard card and the audit log at once.
const MALFORMED_QUERY: &str = "page=0&pageSize=x&sortBy=nope&sortDir=up&status=nope&vendorType=nope\
    &transactionType=nope&fromDate=bad&toDate=bad&minAmount=x&maxAmount=x&limit=x&isActive=maybe\
    &vendorId=x&invoiceId=x&entity=Nope&entityId=x&userId=x";

/// A query string that cannot be percent-decoded.
const UNDECODABLE_QUERY: &str = "search=%ZZ";

/// A JSON body cut short.
const TRUNCATED_JSON: &str = r#"{"name": "#;

/// Asserts a 403 that names `permission`, with `label` in every failure message.
#[track_caller]
fn assert_forbidden(response: &TestResponse, permission: &str, label: &str) {
    assert_eq!(
        response.status.as_u16(),
        403,
        "{label}: expected 403, body: {}",
        String::from_utf8_lossy(&response.body)
    );
    let problem = response.problem(403);
    assert_eq!(problem["detail"], format!("This needs the {permission} permission."), "{label}: {problem}");
    assert!(problem.get("errors").is_none(), "{label}: no parameter rule leaks: {problem}");
}

#[tokio::test]
async fn every_route_that_needs_a_permission_answers_403_before_reading_its_parameters() {
    let app = spawn_app().await;
    let nobody = app.user_without_permissions("nobody@example.com").await;
    let mut walked = 0;
    for (method, template, guard) in &route_table() {
        // A caller holding nothing is refused on the first permission a route needs.
        let access = match guard {
            Guard::Permission(access) => access,
            Guard::AllOf(accesses) => &accesses[0],
            Guard::Public | Guard::Token => continue,
        };
        walked += 1;
        let permission = access.to_string();
        let (bad_path, good_path) = (fill(template, "abc"), fill(template, "1"));
        let cases: [(&str, String, Option<&str>, &str); 6] = [
            ("malformed path ids", bad_path.clone(), None, ""),
            ("malformed query parameters", format!("{good_path}?{MALFORMED_QUERY}"), None, ""),
            ("an undecodable query string", format!("{good_path}?{UNDECODABLE_QUERY}"), None, ""),
            ("a truncated JSON body", good_path.clone(), Some("application/json"), TRUNCATED_JSON),
            ("a body that is not JSON", good_path.clone(), Some("text/plain"), "name=x"),
            ("everything malformed at once", format!("{bad_path}?{MALFORMED_QUERY}"), Some("application/json"), "[1,"),
        ];
        for (case, path, content_type, body) in cases {
            let label = format!("{method} {template} with {case}");
            let response = app.call_raw(method.clone(), &path, Some(&nobody), content_type, body).await;
            assert_forbidden(&response, &permission, &label);
        }
        let anonymous = app
            .call_raw(method.clone(), &format!("{bad_path}?{MALFORMED_QUERY}"), None, Some("application/json"), "[1,")
            .await;
        assert_eq!(anonymous.status.as_u16(), 401, "{method} {template} without a token");
    }
    assert!(walked >= 50, "the walk covers every guarded route, {walked} of them");
}

#[tokio::test]
async fn routes_that_need_only_a_token_still_answer_401_first() {
    let app = spawn_app().await;
    for (method, template, guard) in &route_table() {
        if *guard != Guard::Token {
            continue;
        }
        let path = format!("{}?{UNDECODABLE_QUERY}", fill(template, "abc"));
        let response = app.call_raw(method.clone(), &path, None, Some("application/json"), TRUNCATED_JSON).await;
        assert_eq!(response.status.as_u16(), 401, "{method} {template}");
        assert_eq!(response.header("www-authenticate"), Some("Bearer"), "{method} {template}");
    }
}

/// One request, sent by the admin (who sees the parameter rules) and by a caller without the
/// permission (who does not).
struct Case {
    label: &'static str,
    method: Method,
    path: &'static str,
    body: Option<&'static str>,
    /// What the admin gets: the status, and for a 400 the field or parameter named.
    admin: (u16, Option<&'static str>),
    permission: &'static str,
}

fn case(
    label: &'static str,
    method: Method,
    path: &'static str,
    admin: (u16, Option<&'static str>),
    permission: &'static str,
) -> Case {
    Case { label, method, path, body: None, admin, permission }
}

/// A `GET` whose query or path the admin is told is wrong about `parameter`.
fn bad_query(label: &'static str, path: &'static str, parameter: &'static str, permission: &'static str) -> Case {
    case(label, Method::GET, path, (400, Some(parameter)), permission)
}

/// Checks `cases` on an application of their own, for a caller holding no permission.
async fn check_on_a_fresh_app(cases: Vec<Case>) {
    let app = spawn_app().await;
    let nobody = app.user_without_permissions("nobody@example.com").await;
    check(&app, &nobody, cases).await;
}

async fn check(app: &TestApp, nobody: &str, cases: Vec<Case>) {
    for case in cases {
        let content_type = case.body.map(|_| "application/json");
        let body = case.body.unwrap_or("");
        let as_admin = app.call_raw(case.method.clone(), case.path, Some(&app.admin_token), content_type, body).await;
        let (status, field) = case.admin;
        assert_eq!(as_admin.status.as_u16(), status, "{}: the admin sees the rule", case.label);
        if let Some(field) = field {
            as_admin.invalid(field);
        }
        let as_nobody = app.call_raw(case.method.clone(), case.path, Some(nobody), content_type, body).await;
        assert_forbidden(&as_nobody, case.permission, case.label);
    }
}

#[tokio::test]
async fn lists_answer_403_before_400_for_a_bad_query() {
    check_on_a_fresh_app(vec![
        bad_query("vendors page", "/api/vendors?page=0", "page", "Vendor:Read"),
        bad_query("vendors sort", "/api/vendors?sortBy=nope", "sortBy", "Vendor:Read"),
        bad_query("vendors isActive", "/api/vendors?isActive=maybe", "isActive", "Vendor:Read"),
        bad_query("invoices page size", "/api/invoices?pageSize=x", "pageSize", "Invoice:Read"),
        bad_query("invoices date", "/api/invoices?fromDate=bad", "fromDate", "Invoice:Read"),
        bad_query("invoices status", "/api/invoices?status=nope", "status", "Invoice:Read"),
        bad_query(
            "transactions type",
            "/api/transactions?transactionType=cheque",
            "transactionType",
            "Transaction:Read",
        ),
        bad_query("undecodable query", "/api/vendors?search=%ZZ", "search", "Vendor:Read"),
    ])
    .await;
}

#[tokio::test]
async fn reports_answer_403_before_400_for_a_bad_filter() {
    check_on_a_fresh_app(vec![
        bad_query("vendors report", "/api/reports/vendors?vendorType=nope", "vendorType", "Vendor:Read"),
        bad_query("invoices report", "/api/reports/invoices?fromDate=bad", "fromDate", "Invoice:Read"),
        bad_query("transactions report", "/api/reports/transactions?invoiceId=x", "invoiceId", "Transaction:Read"),
    ])
    .await;
}

#[tokio::test]
async fn the_audit_log_and_the_dashboard_answer_403_before_400() {
    check_on_a_fresh_app(vec![
        bad_query("audit log entity id", "/api/audit-log?entityId=x", "entityId", "AuditLog:Read"),
        bad_query("audit log page", "/api/audit-log?page=0", "page", "AuditLog:Read"),
        bad_query("top vendors limit", "/api/dashboard/top-vendors?limit=x", "limit", "Dashboard:Read"),
        bad_query("recent invoices limit", "/api/dashboard/recent-invoices?limit=x", "limit", "Dashboard:Read"),
    ])
    .await;
}

#[tokio::test]
async fn path_ids_restores_and_bodies_answer_403_before_400() {
    let app = spawn_app().await;
    let nobody = app.user_without_permissions("nobody@example.com").await;
    let mut cases = vec![
        bad_query("vendor id", "/api/vendors/abc", "id", "Vendor:Read"),
        bad_query("invoice id zero", "/api/invoices/0", "id", "Invoice:Read"),
        case("vendor restore", Method::POST, "/api/vendors/abc/restore", (400, Some("id")), "Vendor:Update"),
        case("user restore", Method::POST, "/api/users/x/restore", (400, Some("id")), "User:Update"),
        case("policy restore", Method::POST, "/api/policies/-1/restore", (400, Some("id")), "Policy:Update"),
        case("role policy", Method::POST, "/api/roles/1/policies/abc", (400, Some("policyId")), "Role:Update"),
        case(
            "policy permission",
            Method::DELETE,
            "/api/policies/1/permissions/abc",
            (400, Some("permissionId")),
            "Policy:Update",
        ),
    ];
    cases.push(Case {
        body: Some(r#"{"name": 5}"#),
        ..case("vendor body", Method::POST, "/api/vendors", (400, Some("name")), "Vendor:Create")
    });
    cases.push(Case {
        body: Some(r#"{"value": "#),
        ..case("setting body", Method::PUT, "/api/settings/Currency", (400, None), "Setting:Update")
    });
    cases.push(Case {
        body: Some(r#"{"name": "Renamed"}"#),
        ..case("role update of a bad id", Method::PUT, "/api/roles/abc", (400, Some("id")), "Role:Update")
    });
    check(&app, &nobody, cases).await;
    // A body that is not JSON: 415 for the admin, 403 for the caller without the permission.
    let as_admin = app.call_raw(Method::POST, "/api/invoices", Some(&app.admin_token), Some("text/plain"), "x").await;
    as_admin.problem(415);
    let as_nobody = app.call_raw(Method::POST, "/api/invoices", Some(&nobody), Some("text/plain"), "x").await;
    assert_forbidden(&as_nobody, "Invoice:Create", "a create without a JSON content type");
}

#[tokio::test]
async fn a_caller_with_the_permission_still_learns_the_parameter_rules() {
    let app = spawn_app().await;
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    // Vendor:Read is the pharmacist's (D27), so the query's rules apply to them.
    let response = app.call(Method::GET, "/api/vendors?isActive=maybe", Some(&pharmacist), None).await;
    response.invalid("isActive");
    // Soft-deleted vendors still need an admin token, checked once the query is read (spec).
    let response = app.call(Method::GET, "/api/vendors?isActive=false", Some(&pharmacist), None).await;
    assert_eq!(response.problem(403)["detail"], "This needs the admin permission.");
    app.get("/api/vendors?isActive=false").await.expect(200);
    // AuditLog:Read is not the pharmacist's: a bad query answers 403 all the same.
    let response = app.call(Method::GET, "/api/audit-log?entityId=x", Some(&pharmacist), None).await;
    assert_forbidden(&response, "AuditLog:Read", "the audit log for a pharmacist");
    // Token-only routes read their parameters for anyone signed in.
    let response = app.call(Method::GET, "/api/users/abc", Some(&pharmacist), None).await;
    response.invalid("id");
    assert_eq!(
        app.call(Method::GET, "/api/users/1", Some(&pharmacist), None).await.expect(200).json()["email"],
        json!(crate::helpers::ADMIN_EMAIL)
    );
}
