//! The served OpenAPI document and the route table must describe the same routes (D25).

use std::collections::BTreeSet;

use pharmapay_server::app::ROUTES;

use crate::helpers::spawn_fresh;

fn normalise(path: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push_str("{}");
            }
            '}' => in_param = false,
            _ if in_param => {}
            _ => out.push(c),
        }
    }
    out
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
        ROUTES.iter().map(|(method, path, _)| (method.as_str().to_owned(), normalise(path))).collect();
    let missing_from_document: Vec<_> = served.difference(&documented).collect();
    let missing_from_router: Vec<_> = documented.difference(&served).collect();
    assert!(missing_from_document.is_empty(), "served but not documented: {missing_from_document:?}");
    assert!(missing_from_router.is_empty(), "documented but not served: {missing_from_router:?}");
}
