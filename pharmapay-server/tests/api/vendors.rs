//! Vendors over HTTP (spec, Vendors; D8, D9, D14, D15, D16).

use hyper::Method;
use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test]
async fn vendor_lifecycle_over_http() {
    let app = spawn_app().await;
    let body = json!({
        "name": "Sun Pharma", "vendorType": "manufacturer", "address": "Plot 4", "phone": "+91 22 1234",
        "email": "orders@sun.example", "drugLicenseNumber1": "DL-1", "drugLicenseNumber2": "DL-2",
        "additionalDrugLicenseNumbers": ["DL-3"]
    });
    let created = app.post("/api/vendors", &body).await;
    let vendor = created.expect(201).json();
    let id = vendor["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/vendors/{id}").as_str()), "D9");
    assert_eq!(vendor["vendorType"], "Manufacturer", "D7: canonical case");
    assert_eq!(vendor["additionalDrugLicenseNumbers"], json!(["DL-3"]));
    assert_eq!(vendor["outstandingBalance"], json!(0));
    assert_eq!(vendor["createdAt"], "2024-05-10T10:00:00Z");
    for field in ["totalInvoiceValue", "totalPaidAmount", "isActive", "updatedAt", "address", "phone", "email"] {
        assert!(vendor.get(field).is_some(), "VendorDto has {field}");
    }
    assert_eq!(app.get(&format!("/api/vendors/{id}")).await.expect(200).json(), vendor);

    let replaced =
        app.put(&format!("/api/vendors/{id}"), &json!({ "name": "Sun Pharmaceuticals", "vendorType": "Dealer" })).await;
    let replaced = replaced.expect(200).json();
    assert_eq!(replaced["name"], "Sun Pharmaceuticals");
    assert_eq!(replaced["address"], json!(null), "D14: PUT replaces every field");

    let deleted = app.delete_with(&format!("/api/vendors/{id}"), &json!({ "reason": "duplicate" })).await;
    deleted.expect(204);
    assert!(deleted.body.is_empty(), "204 has no body");
    app.get(&format!("/api/vendors/{id}")).await.problem(404);
    let listed = app.get("/api/vendors?isActive=false").await.expect(200).json();
    assert_eq!(listed["items"][0]["id"], id);
    let restored = app.post_empty(&format!("/api/vendors/{id}/restore")).await;
    assert_eq!(restored.expect(200).json()["isActive"], true);
    app.post_empty(&format!("/api/vendors/{id}/restore")).await.problem(404);
}

#[tokio::test]
async fn vendor_list_pages_sorts_and_rejects_unknown_values() {
    let app = spawn_app().await;
    for name in ["beta", "Alpha", "gamma"] {
        app.vendor(name).await;
    }
    let page = app.get("/api/vendors").await.expect(200).json();
    assert_eq!(page["totalCount"], 4);
    assert_eq!((page["page"].clone(), page["pageSize"].clone()), (json!(1), json!(10)), "defaults");
    let names: Vec<&str> = page["items"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Alpha", "Apollo Pharmacy", "beta", "gamma"]);
    let clamped = app.get("/api/vendors?pageSize=1000000").await.expect(200).json();
    assert_eq!(clamped["pageSize"], 100, "D8: clamped to 100");
    let second = app.get("/api/vendors?page=2&pageSize=3&sortDir=DESC").await.expect(200).json();
    assert_eq!(second["items"].as_array().unwrap().len(), 1);
    assert_eq!(second["items"][0]["name"], "Alpha");
    let searched = app.get("/api/vendors?search=AMM").await.expect(200).json();
    assert_eq!(searched["items"][0]["name"], "gamma");
    for (query, field) in [
        ("page=0", "page"),
        ("pageSize=-1", "pageSize"),
        ("page=two", "page"),
        ("sortBy=price", "sortBy"),
        ("sortDir=up", "sortDir"),
        ("vendorType=Distributor", "vendorType"),
        ("isActive=maybe", "isActive"),
    ] {
        app.get(&format!("/api/vendors?{query}")).await.invalid(field);
    }
}

#[tokio::test]
async fn vendor_rules_over_http() {
    let app = spawn_app().await;
    app.post("/api/vendors", &json!({ "name": "Mine", "vendorType": "OwnPharmacy" })).await.invalid("vendorType");
    app.post("/api/vendors", &json!({ "vendorType": "Dealer" })).await.invalid("name");
    let own = app.get("/api/vendors?vendorType=OwnPharmacy").await.json()["items"][0]["id"].as_i64().unwrap();
    app.delete(&format!("/api/vendors/{own}")).await.problem(400);
    app.put(&format!("/api/vendors/{own}"), &json!({ "name": "Apollo", "vendorType": "Dealer" })).await.problem(400);
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    app.call(Method::GET, "/api/vendors?isActive=false", Some(&pharmacist), None).await.problem(403);
    app.call(Method::DELETE, "/api/vendors/1", Some(&pharmacist), None).await.problem(403);
    app.call(Method::GET, "/api/vendors", Some(&pharmacist), None).await.expect(200);
}
