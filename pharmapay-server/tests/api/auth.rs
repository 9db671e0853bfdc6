//! Login, token claims, forged tokens and throttling (spec, Authentication; D20, D21).

use hyper::Method;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use pharmapay_core::jiff::SignedDuration;
use serde_json::{Value, json};

use crate::helpers::{ADMIN_EMAIL, ADMIN_PASSWORD, SECRET, base64url, claims, spawn_app};

#[tokio::test]
async fn login_answers_the_login_result_with_the_spec_claims() {
    let app = spawn_app().await;
    let response =
        app.post_public("/api/auth/login", &json!({ "email": "Admin@Example.com", "password": ADMIN_PASSWORD })).await;
    let body = response.expect(200).json();
    assert_eq!(response.header("cache-control"), Some("no-store"));
    assert_eq!(body["user"]["isActive"], true, "the login user carries isActive");
    assert_eq!(body["user"]["email"], ADMIN_EMAIL);
    assert_eq!(body["expiresAt"], "2024-05-11T10:00:00Z", "24 hours by default");
    let token = body["token"].as_str().unwrap();
    let header: Value = {
        let raw = token.split('.').next().unwrap();
        claims(&format!("x.{raw}.y"))
    };
    assert_eq!(header["alg"], "HS256");
    let claims = claims(token);
    let mut keys: Vec<&str> = claims.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "aud",
            "branches",
            "email",
            "exp",
            "family_name",
            "given_name",
            "iat",
            "is_admin",
            "iss",
            "perm",
            "role_id",
            "sub"
        ],
        "the spec's claims, the issue second (D39) and the caller's branches (D49)"
    );
    assert_eq!(claims["branches"], "*");
    assert_eq!(claims["sub"], body["user"]["id"].to_string());
    assert_eq!(claims["given_name"], "Asha");
    assert_eq!(claims["family_name"], "Rao");
    assert_eq!(claims["role_id"], "1");
    assert_eq!(claims["is_admin"], "true");
    assert_eq!(claims["perm"], json!(["*:Create"]));
    assert_eq!(claims["iss"], "pharmapay");
    assert_eq!(claims["aud"], "pharmapay");
    assert_eq!(claims["exp"], json!(1_715_421_600_i64));
    assert_eq!(claims["iat"], json!(1_715_421_600_i64 - 24 * 3600), "issued at the clock's second");

    let (_, pharmacist) = app.user("pharma@example.com", 2).await;
    let claims = crate::helpers::claims(&pharmacist);
    assert_eq!(claims["is_admin"], "false");
    assert_eq!(claims["role_id"], "2");
    assert_eq!(claims["perm"].as_array().unwrap().len(), 15);
    assert_eq!(claims["perm"][0], "Vendor:Read");
}

#[tokio::test]
async fn bad_credentials_answer_401_with_a_message_only() {
    let app = spawn_app().await;
    for (email, password) in [(ADMIN_EMAIL, "wrong-password"), ("nobody@example.com", ADMIN_PASSWORD)] {
        let response = app.post_public("/api/auth/login", &json!({ "email": email, "password": password })).await;
        response.expect(401);
        assert_eq!(response.json(), json!({ "message": "Invalid email or password." }), "same body for both");
        assert_eq!(response.header("www-authenticate"), Some("Bearer"), "D6: every 401 names the scheme");
    }
    app.post_public("/api/auth/login", &json!({ "email": ADMIN_EMAIL })).await.invalid("password");
}

#[tokio::test]
async fn d21_five_failures_throttle_with_retry_after() {
    let app = spawn_app().await;
    for _ in 0..5 {
        app.post_public("/api/auth/login", &json!({ "email": ADMIN_EMAIL, "password": "wrong" })).await.expect(401);
    }
    let started = std::time::Instant::now();
    let throttled =
        app.post_public("/api/auth/login", &json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD })).await;
    throttled.problem(429);
    // D40: a refusal is held before it is sent, so a client cannot send attempts back to back.
    assert!(started.elapsed() >= pharmapay_server::server::THROTTLED_PAUSE, "answered after {:?}", started.elapsed());
    let retry_after: u64 = throttled.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=900).contains(&retry_after), "Retry-After {retry_after}");
    app.advance(SignedDuration::from_mins(15));
    app.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
}

fn forge(claims: &Value, secret: &str) -> String {
    encode(&Header::new(Algorithm::HS256), claims, &EncodingKey::from_secret(secret.as_bytes())).unwrap()
}

#[tokio::test]
async fn forged_expired_and_malformed_tokens_get_401_with_www_authenticate() {
    let app = spawn_app().await;
    let good = claims(&app.admin_token);
    let with = |key: &str, value: Value| {
        let mut claims = good.clone();
        claims[key] = value;
        claims
    };
    let alg_none = {
        let header = base64url(br#"{"alg":"none","typ":"JWT"}"#);
        let payload = base64url(serde_json::to_string(&good).unwrap().as_bytes());
        format!("{header}.{payload}.")
    };
    let tampered = {
        let parts: Vec<&str> = app.admin_token.split('.').collect();
        let payload = base64url(serde_json::to_string(&with("sub", json!("999"))).unwrap().as_bytes());
        format!("{}.{payload}.{}", parts[0], parts[2])
    };
    let mut without_aud = good.clone();
    without_aud.as_object_mut().unwrap().remove("aud");
    let cases: Vec<(&str, String)> = vec![
        ("other secret", forge(&good, "another-secret-another-secret-xyz")),
        ("alg none", alg_none),
        ("tampered payload", tampered),
        ("string exp", forge(&with("exp", json!("1715421600")), SECRET)),
        ("wrong issuer", forge(&with("iss", json!("someone-else")), SECRET)),
        ("wrong audience", forge(&with("aud", json!("someone-else")), SECRET)),
        ("missing audience", forge(&without_aud, SECRET)),
        ("already expired", forge(&with("exp", json!(1_715_335_200_i64)), SECRET)),
        ("boolean is_admin", forge(&with("is_admin", json!(true)), SECRET)),
        ("garbage", "not-a-token".into()),
    ];
    for (label, token) in cases {
        let response = app.call(Method::GET, "/api/vendors", Some(&token), None).await;
        assert_eq!(response.status.as_u16(), 401, "{label}");
        response.problem(401);
        assert_eq!(response.header("www-authenticate"), Some("Bearer"), "{label}");
    }
    let correct = forge(&good, SECRET);
    app.call(Method::GET, "/api/vendors", Some(&correct), None).await.expect(200);
    let missing = app.call(Method::GET, "/api/vendors", None, None).await;
    missing.problem(401);
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));

    app.advance(SignedDuration::from_hours(24));
    app.call(Method::GET, "/api/vendors", Some(&app.admin_token), None).await.problem(401);
}

#[tokio::test]
async fn d20_tokens_die_with_their_user_or_password() {
    let app = spawn_app().await;
    let (id, token) = app.user("leaver@example.com", 2).await;
    app.call(Method::GET, "/api/vendors", Some(&token), None).await.expect(200);
    app.delete(&format!("/api/users/{id}")).await.expect(204);
    app.call(Method::GET, "/api/vendors", Some(&token), None).await.problem(401);

    let (_, token) = app.user("changer@example.com", 2).await;
    let change = json!({ "currentPassword": "user-password", "newPassword": "a-new-password" });
    let changed = app.call(Method::PUT, "/api/profile/password", Some(&token), Some(&change)).await;
    let fresh = changed.expect(200).json()["token"].as_str().unwrap().to_owned();
    app.call(Method::GET, "/api/vendors", Some(&token), None).await.problem(401);
    app.call(Method::GET, "/api/vendors", Some(&fresh), None).await.expect(200);
}
