//! The served OpenAPI document and the route table must describe the same routes, and say the
//! same about what each one requires of its caller (D25).

use std::collections::BTreeSet;

use pharmapay_server::guard::Guard;
use pharmapay_server::routes::route_table;
use serde_json::json;

use crate::helpers::{fill, spawn_fresh};

/// `path` with its parameters' names left out, so templates that name them differently match.
fn normalise(path: &str) -> String {
    fill(path, "{}")
}

#[tokio::test]
async fn the_openapi_document_lists_exactly_the_served_routes() {
    let app = spawn_fresh().await;
    let response = app.call(hyper::Method::GET, "/api/openapi.json", None, None).await;
    let document = response.expect(200).json();
    assert!(document["openapi"].as_str().is_some_and(|v| v.starts_with("3.1")), "OpenAPI 3.1");
    let mut documented = BTreeSet::new();
    for (path, item) in document["paths"].as_object().expect("paths").iter() {
        for method in ["get", "post", "put", "delete", "patch"] {
            if item.get(method).is_some() {
                documented.insert((method.to_uppercase(), normalise(path)));
            }
        }
    }
    let served: BTreeSet<(String, String)> =
        route_table().iter().map(|(method, path, _)| (method.as_str().to_owned(), normalise(path))).collect();
    let missing_from_document: Vec<_> = served.difference(&documented).collect();
    let missing_from_router: Vec<_> = documented.difference(&served).collect();
    assert!(missing_from_document.is_empty(), "served but not documented: {missing_from_document:?}");
    assert!(missing_from_router.is_empty(), "documented but not served: {missing_from_router:?}");
}

#[tokio::test]
async fn the_openapi_document_states_what_every_route_requires() {
    let app = spawn_fresh().await;
    let document = app.call(hyper::Method::GET, "/api/openapi.json", None, None).await.expect(200).json();
    for (method, path, guard) in &route_table() {
        let operation = &document["paths"][*path][method.as_str().to_lowercase()];
        let description = operation["description"].as_str().unwrap_or_default();
        let label = format!("{method} {path}: {description}");
        match guard {
            Guard::Public => assert_eq!(operation["security"], json!([]), "{label}"),
            Guard::Token => {
                assert!(operation.get("security").is_none(), "{label}");
                assert!(description.starts_with("A valid token is enough"), "{label}");
            }
            Guard::Permission(access) => {
                assert!(operation.get("security").is_none(), "{label}");
                assert!(description.starts_with(&format!("Permission `{access}`")), "{label}");
            }
            Guard::AllOf(accesses) => {
                assert!(operation.get("security").is_none(), "{label}");
                let named: Vec<String> = accesses.iter().map(|access| format!("`{access}`")).collect();
                let (last, rest) = named.split_last().expect("a guard names at least one permission");
                let expected = format!("Permissions {} and {last}", rest.join(", "));
                assert!(description.starts_with(&expected), "{label}");
            }
        }
    }
}
