//! The chain's branches over HTTP (D49): the head office from the first start, named after the
//! pharmacy, never deleted; codes upper-cased and unique among active branches; every write
//! audited; reads for the pharmacist, writes for those who hold the permissions.

use hyper::Method;
use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test]
async fn the_head_office_is_branch_one_named_after_the_pharmacy() {
    let app = spawn_app().await;
    let branches = app.get("/api/branches").await.expect(200).json();
    let branches = branches.as_array().unwrap();
    assert_eq!(branches.len(), 1, "{branches:?}");
    assert_eq!(branches[0]["id"], 1);
    assert_eq!(branches[0]["code"], "HO");
    assert_eq!(branches[0]["name"], "Apollo Pharmacy");
    assert_eq!(branches[0]["isHeadOffice"], true);
    assert_eq!(app.get("/api/branches/1").await.expect(200).json(), branches[0]);
    let refused = app.delete("/api/branches/1").await.problem(400);
    assert_eq!(refused["detail"], "The head office cannot be deleted.");
}

#[tokio::test]
async fn branches_are_created_replaced_deleted_and_restored() {
    let app = spawn_app().await;
    let body = json!({
        "code": " andheri-w ", "name": "Andheri West", "gstin": "27aapfu0939f1zv", "phone": "022 2634 0000",
        "isHeadOffice": true, "isActive": false
    });
    let created = app.post("/api/branches", &body).await;
    let branch = created.expect(201).json();
    let id = branch["id"].as_i64().unwrap();
    assert_eq!(created.header("location"), Some(format!("/api/branches/{id}").as_str()));
    assert_eq!(branch["code"], "ANDHERI-W");
    assert_eq!(branch["gstin"], "27AAPFU0939F1ZV");
    assert_eq!((branch["isHeadOffice"].clone(), branch["isActive"].clone()), (json!(false), json!(true)), "D7");
    assert_eq!(branch["address"], json!(null));

    let replaced = app.put(&format!("/api/branches/{id}"), &json!({ "code": "AW", "name": "Andheri (West)" })).await;
    let replaced = replaced.expect(200).json();
    assert_eq!((replaced["code"].clone(), replaced["gstin"].clone()), (json!("AW"), json!(null)), "D14");

    app.post("/api/branches", &json!({ "code": "aw", "name": "Again" })).await.problem(409);
    let taken = app.post("/api/branches", &json!({ "code": "ho", "name": "Another" })).await.problem(409);
    assert_eq!(taken["errors"]["code"][0], "is already taken");

    app.delete_with(&format!("/api/branches/{id}"), &json!({ "reason": "closed down" })).await.expect(204);
    app.get(&format!("/api/branches/{id}")).await.problem(404);
    let listed = app.get("/api/branches").await.json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "a deleted branch is not listed");
    app.post_empty(&format!("/api/branches/{id}/restore")).await.expect(200);
    app.post_empty(&format!("/api/branches/{id}/restore")).await.problem(404);
    app.get("/api/branches/999").await.problem(404);

    let audit = app.get(&format!("/api/audit-log?entity=Branch&entityId={id}")).await.expect(200).json();
    let actions: Vec<&str> = audit["items"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["restore", "delete", "update", "create"]);
}

#[tokio::test]
async fn bad_branch_fields_are_400s_naming_them() {
    let app = spawn_app().await;
    app.post("/api/branches", &json!({ "name": "No code" })).await.invalid("code");
    app.post("/api/branches", &json!({ "code": "A B", "name": "Space" })).await.invalid("code");
    app.post("/api/branches", &json!({ "code": "X".repeat(17), "name": "Long" })).await.invalid("code");
    app.post("/api/branches", &json!({ "code": "OK", "name": "  " })).await.invalid("name");
    app.post("/api/branches", &json!({ "code": "OK", "name": "Ok", "gstin": "27AAPFU0939F1ZX" }))
        .await
        .invalid("gstin");
    app.post("/api/branches", &json!({ "code": 12, "name": "Number" })).await.invalid("code");
    let listed = app.get("/api/branches").await.json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "nothing was created");
}

#[tokio::test]
async fn pharmacists_read_branches_and_only_holders_of_the_permissions_write() {
    let app = spawn_app().await;
    for code in ["ZED", "ABC"] {
        app.post("/api/branches", &json!({ "code": code, "name": code })).await.expect(201);
    }
    let (_, pharmacist) = app.user("p@example.com", 2).await;
    let listed = app.call(Method::GET, "/api/branches", Some(&pharmacist), None).await.expect(200).json();
    let codes: Vec<&str> = listed.as_array().unwrap().iter().map(|b| b["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["HO", "ABC", "ZED"], "the head office first, then by code");
    let body = json!({ "code": "PH", "name": "Pharmacist's" });
    app.call(Method::POST, "/api/branches", Some(&pharmacist), Some(&body)).await.problem(403);
    app.call(Method::DELETE, "/api/branches/2", Some(&pharmacist), None).await.problem(403);
    let nobody = app.user_without_permissions("nobody@example.com").await;
    app.call(Method::GET, "/api/branches", Some(&nobody), None).await.problem(403);
    app.call(Method::GET, "/api/branches", None, None).await.problem(401);
}

#[tokio::test]
async fn invoices_name_their_branch_and_payments_follow_them() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let branch = app.post("/api/branches", &json!({ "code": "AND", "name": "Andheri" })).await.expect(201).json();
    let branch_id = branch["id"].as_i64().unwrap();
    let body = |number: &str, branch: Option<i64>| {
        json!({
            "vendorId": vendor, "invoiceNumber": number, "amount": 100, "invoiceDate": "2024-05-01",
            "dueDate": "2024-06-01", "branchId": branch
        })
    };
    let head = app.post("/api/invoices", &body("H-1", None)).await.expect(201).json();
    assert_eq!((head["branchId"].clone(), head["branchCode"].clone()), (json!(1), json!("HO")));
    let own = app.post("/api/invoices", &body("A-1", Some(branch_id))).await.expect(201).json();
    assert_eq!((own["branchId"].clone(), own["branchCode"].clone()), (json!(branch_id), json!("AND")));
    app.post("/api/invoices", &body("X-1", Some(999))).await.invalid("branchId");
    let own_id = own["id"].as_i64().unwrap();
    let payment = app.pay(own_id, "30").await;
    let paid = app.get(&format!("/api/transactions/{payment}")).await.expect(200).json();
    assert_eq!((paid["branchCode"].clone(), paid["invoice"]["branchCode"].clone()), (json!("AND"), json!("AND")));

    let kept = app.put(&format!("/api/invoices/{own_id}"), &body("A-1", None)).await.expect(200).json();
    assert_eq!(kept["branchId"], branch_id, "a replacement without branchId keeps the branch");
    app.put(&format!("/api/invoices/{own_id}"), &body("A-1", Some(1))).await.expect(200);
    let moved = app.get(&format!("/api/transactions/{payment}")).await.json();
    assert_eq!(moved["branchId"], 1, "the payment moved with its invoice");
    app.delete(&format!("/api/branches/{branch_id}")).await.expect(204);
    app.put(&format!("/api/invoices/{own_id}"), &body("A-1", Some(branch_id))).await.invalid("branchId");
    let detail = app.get(&format!("/api/invoices/{own_id}")).await.expect(200).json();
    assert_eq!(detail["branchCode"], "HO");
}

#[tokio::test]
async fn an_invoice_file_names_branches_by_code_and_the_report_shows_them() {
    let app = spawn_app().await;
    app.vendor("Cipla").await;
    app.post("/api/branches", &json!({ "code": "AND", "name": "Andheri" })).await.expect(201);
    let file = "Invoice Number,Vendor,Amount,Invoice Date,Due Date,Branch\n\
                I-1,Cipla,10,2024-05-01,2024-06-01, and \nI-2,Cipla,10,2024-05-01,2024-06-01,\n";
    let path = "/api/imports/invoices";
    let bad = "Invoice Number,Vendor,Amount,Invoice Date,Due Date,Branch\nI-9,Cipla,10,2024-05-01,2024-06-01,XYZ\n";
    let refused = app.call_raw(Method::POST, path, Some(&app.admin_token), Some("text/csv"), bad).await.problem(400);
    assert!(refused["errors"]["row2.branch"].is_array(), "{refused}");
    let done =
        app.call_raw(Method::POST, path, Some(&app.admin_token), Some("text/csv"), file).await.expect(200).json();
    assert_eq!(done["created"], 2);
    let listed = app.get("/api/invoices?search=I-").await.expect(200).json();
    let mut codes: Vec<(String, String)> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["invoiceNumber"].as_str().unwrap().to_owned(), i["branchCode"].as_str().unwrap().to_owned()))
        .collect();
    codes.sort();
    assert_eq!(codes, [("I-1".to_owned(), "AND".to_owned()), ("I-2".to_owned(), "HO".to_owned())]);
}

#[tokio::test]
async fn credits_name_their_branch_and_credit_its_bills_only() {
    let app = spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let branch = app.post("/api/branches", &json!({ "code": "AND", "name": "Andheri" })).await.expect(201).json();
    let branch_id = branch["id"].as_i64().unwrap();
    let invoice = |number: &str, branch: i64| {
        json!({
            "vendorId": vendor, "invoiceNumber": number, "amount": 100, "invoiceDate": "2024-05-01",
            "dueDate": "2024-06-01", "branchId": branch
        })
    };
    let head_bill = app.post("/api/invoices", &invoice("H-1", 1)).await.expect(201).json()["id"].as_i64().unwrap();
    let own_bill =
        app.post("/api/invoices", &invoice("A-1", branch_id)).await.expect(201).json()["id"].as_i64().unwrap();
    let claim = |number: &str, branch: Option<i64>, against: Option<i64>| {
        json!({
            "vendorId": vendor, "creditNumber": number, "kind": "Breakage", "claimedAmount": 40,
            "claimDate": "2024-05-09", "branchId": branch, "againstInvoiceId": against
        })
    };
    let default = app.post("/api/vendor-credits", &claim("CN-H", None, None)).await.expect(201).json();
    assert_eq!((default["branchId"].clone(), default["branchCode"].clone()), (json!(1), json!("HO")));
    app.post("/api/vendor-credits", &claim("CN-X", Some(999), None)).await.invalid("branchId");
    app.post("/api/vendor-credits", &claim("CN-X", Some(branch_id), Some(head_bill))).await.invalid("againstInvoiceId");
    let credit =
        app.post("/api/vendor-credits", &claim("CN-A", Some(branch_id), Some(own_bill))).await.expect(201).json();
    assert_eq!(credit["branchCode"], "AND");
    let id = credit["id"].as_i64().unwrap();
    let decision = json!({ "acceptedAmount": 40, "decisionDate": "2024-05-09" });
    app.post(&format!("/api/vendor-credits/{id}/decision"), &decision).await.expect(200);
    let to_head = json!({ "allocations": [{ "invoiceId": head_bill, "amount": 10 }] });
    app.post(&format!("/api/vendor-credits/{id}/applications"), &to_head).await.invalid("allocations[0].invoiceId");
    let applied = app.post(&format!("/api/vendor-credits/{id}/applications"), &json!({})).await.expect(201).json();
    let applications = applied["applications"].as_array().unwrap();
    assert_eq!((applications.len(), applications[0]["invoiceId"].clone()), (1, json!(own_bill)), "{applied}");
    let moved = claim("CN-A", Some(1), None);
    app.put(&format!("/api/vendor-credits/{id}"), &moved).await.invalid("branchId");
    let head = app.get(&format!("/api/invoices/{head_bill}")).await.expect(200).json();
    assert_eq!(head["pendingAmount"], json!(100), "the head office's bill owes all of it");
}

/// A store's account: its own payment, the head office's, and a line nobody recorded.
const STORE_STATEMENT: &str = "Date,Narration,Chq./Ref.No.,Withdrawal Amt.,Deposit Amt.\n\
    05/05/24,UPI-CIPLA-412345678902-STORE BILL,,60.00,\n\
    05/05/24,UPI-CIPLA-412345678901-HO BILL,,100.00,\n\
    08/05/24,NEFT-N999888777666555-UNRECORDED,,15.00,\n";

#[tokio::test]
async fn statements_name_their_branch_and_match_its_payments_only() {
    let app = &spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let branch = app.post("/api/branches", &json!({ "code": "AND", "name": "Andheri" })).await.expect(201).json();
    let branch_id = branch["id"].as_i64().unwrap();
    let bill = |number: &str, amount: i64, due: &str, branch: i64| {
        json!({
            "vendorId": vendor, "invoiceNumber": number, "amount": amount, "invoiceDate": "2024-03-01",
            "dueDate": due, "branchId": branch
        })
    };
    let head_bill =
        app.post("/api/invoices", &bill("H-1", 200, "2024-04-01", 1)).await.expect(201).json()["id"].clone();
    let own_bill =
        app.post("/api/invoices", &bill("A-1", 75, "2024-04-20", branch_id)).await.expect(201).json()["id"].clone();
    let pay = |invoice: &serde_json::Value, amount: i64, reference: &str| {
        json!({ "invoiceId": invoice, "amount": amount, "transactionDate": "2024-05-05", "transactionType": "UPI",
                "reference": reference })
    };
    let head_paid =
        app.post("/api/transactions", &pay(&head_bill, 100, "412345678901")).await.expect(201).json()["id"].clone();
    let own_paid =
        app.post("/api/transactions", &pay(&own_bill, 60, "412345678902")).await.expect(201).json()["id"].clone();

    let upload = |query: String| {
        let path = format!("/api/bank-statements{query}");
        let token = app.admin_token.clone();
        async move {
            app.call_raw(Method::POST, &path, Some(&token), Some("text/csv"), STORE_STATEMENT.as_bytes().to_vec()).await
        }
    };
    upload("?account=AND&branchId=999".into()).await.invalid("branchId");
    upload("?account=AND&branchId=x".into()).await.invalid("branchId");
    let statement = upload(format!("?account=AND&branchId={branch_id}")).await.expect(201).json();
    assert_eq!((statement["branchId"].clone(), statement["branchCode"].clone()), (json!(branch_id), json!("AND")));
    assert_eq!((statement["matched"].clone(), statement["unmatched"].clone()), (json!(1), json!(2)), "{statement}");
    let id = statement["id"].as_i64().unwrap();
    let detail = app.get(&format!("/api/bank-statements/{id}")).await.expect(200).json();
    assert_eq!(detail["unclearedCount"], 0, "the head office's payment is not awaited on the store's account");
    let lines = app.get(&format!("/api/bank-statements/{id}/lines")).await.expect(200).json();
    let lines = lines["items"].as_array().unwrap().clone();
    assert_eq!(lines[0]["transactionId"], own_paid);
    let line = |n: usize| format!("/api/bank-statements/{id}/lines/{}", lines[n]["id"]);
    let head = app.post(&format!("{}/match", line(1)), &json!({ "transactionId": head_paid })).await;
    head.expect(404);
    let elsewhere = json!({ "vendorId": vendor, "allocations": [{ "invoiceId": head_bill, "amount": 15 }] });
    app.post(&format!("{}/record", line(2)), &elsewhere).await.invalid("allocations[0].invoiceId");
    let recorded = app.post(&format!("{}/record", line(2)), &json!({ "vendorId": vendor })).await.expect(200).json();
    let made = app.get(&format!("/api/vendor-payments/{}", recorded["vendorPaymentId"])).await.expect(200).json();
    let parts = made["transactions"].as_array().unwrap();
    assert_eq!((parts.len(), parts[0]["invoiceId"].clone()), (1, own_bill.clone()), "the store's bill: {made}");

    // The head office pays one store's bills with `branchId`; beside allocations it is ignored.
    let head_payment = |body: serde_json::Value| {
        let path = format!("/api/vendors/{vendor}/payments");
        async move { app.post(&path, &body).await }
    };
    let day = "2024-05-09";
    let kind = "NetBanking";
    head_payment(json!({ "amount": 1, "transactionDate": day, "transactionType": kind, "branchId": 999 }))
        .await
        .invalid("branchId");
    let owed_by_store = json!({ "amount": 1, "transactionDate": day, "transactionType": kind, "branchId": branch_id });
    head_payment(owed_by_store).await.invalid("amount");
    let only_head = json!({ "amount": 50, "transactionDate": day, "transactionType": kind, "branchId": 1 });
    let paid = head_payment(only_head).await.expect(201).json();
    assert_eq!(paid["transactions"][0]["invoiceId"], head_bill);
    let named = json!({ "amount": 5, "transactionDate": day, "transactionType": kind, "branchId": branch_id,
                        "allocations": [{ "invoiceId": head_bill, "amount": 5 }] });
    let paid = head_payment(named).await.expect(201).json();
    assert_eq!(paid["transactions"][0]["invoiceId"], head_bill, "allocations name their invoices");
}

#[tokio::test]
async fn users_carry_their_branches_in_the_token_and_lose_them_at_once() {
    let app = &spawn_app().await;
    let branch = |code: &'static str| async move {
        app.post("/api/branches", &json!({ "code": code, "name": code })).await.expect(201).json()["id"]
            .as_i64()
            .unwrap()
    };
    let (andheri, bandra) = (branch("AND").await, branch("BAN").await);
    let person = |email: &str, branches: serde_json::Value| {
        json!({ "firstName": "Ravi", "lastName": "Kumar", "email": email, "password": "user-password", "roleId": 2,
                "branchIds": branches })
    };
    let created =
        app.post("/api/users", &person("clerk@example.com", json!([bandra, andheri]))).await.expect(201).json();
    assert_eq!(created["branchIds"], json!([andheri, bandra]), "in id order");
    let id = created["id"].as_i64().unwrap();
    let everyone = app.post("/api/users", &person("all@example.com", json!(null))).await.expect(201).json();
    assert_eq!(everyone["branchIds"], json!(null));
    let omitted = json!({ "firstName": "A", "lastName": "B", "email": "o@example.com", "password": "user-password",
                          "roleId": 2 });
    assert_eq!(app.post("/api/users", &omitted).await.expect(201).json()["branchIds"], json!(null), "the admin's own");
    app.post("/api/users", &person("x@example.com", json!([]))).await.invalid("branchIds");
    app.post("/api/users", &person("x@example.com", json!([andheri, andheri]))).await.invalid("branchIds");
    app.post("/api/users", &person("x@example.com", json!([999]))).await.invalid("branchIds");
    app.post("/api/users", &person("x@example.com", json!(["AND"]))).await.invalid("branchIds[0]");
    let admin = json!({ "firstName": "A", "lastName": "B", "email": "adm@example.com", "password": "user-password",
                        "roleId": 1, "branchIds": [andheri] });
    app.post("/api/users", &admin).await.invalid("branchIds");

    // The token, the sign-in and the profile show the scope.
    let signed_in =
        app.post("/api/auth/login", &json!({ "email": "clerk@example.com", "password": "user-password" })).await;
    let signed_in = signed_in.expect(200).json();
    assert_eq!(signed_in["user"]["branchIds"], json!([andheri, bandra]));
    let token = signed_in["token"].as_str().unwrap().to_owned();
    assert_eq!(crate::helpers::claims(&token)["branches"], json!([andheri, bandra]));
    let profile = app.call_raw(Method::GET, "/api/profile", Some(&token), None, Vec::new()).await.expect(200).json();
    assert_eq!(profile["branchIds"], json!([andheri, bandra]));

    // Narrowing: the older token stops at once.
    let narrowed = json!({ "firstName": "Ravi", "lastName": "Kumar", "email": "clerk@example.com", "roleId": 2,
                           "branchIds": [andheri] });
    assert_eq!(app.put(&format!("/api/users/{id}"), &narrowed).await.expect(200).json()["branchIds"], json!([andheri]));
    app.call_raw(Method::GET, "/api/profile", Some(&token), None, Vec::new()).await.expect(401);
    let unchanged = json!({ "firstName": "Ravi", "lastName": "Kumar", "email": "clerk@example.com", "roleId": 2 });
    assert_eq!(
        app.put(&format!("/api/users/{id}"), &unchanged).await.expect(200).json()["branchIds"],
        json!([andheri])
    );
    assert_eq!(app.get(&format!("/api/users/{id}")).await.expect(200).json()["branchIds"], json!([andheri]));
}

#[tokio::test]
async fn a_store_user_reads_and_writes_only_their_branch_over_http() {
    let app = &spawn_app().await;
    let vendor = app.vendor("Cipla").await;
    let branch = |code: &'static str| async move {
        app.post("/api/branches", &json!({ "code": code, "name": code })).await.expect(201).json()["id"]
            .as_i64()
            .unwrap()
    };
    let (andheri, bandra) = (branch("AND").await, branch("BAN").await);
    let bill = |number: &str, branch: i64| {
        json!({ "vendorId": vendor, "invoiceNumber": number, "amount": 100, "invoiceDate": "2024-05-01",
                "dueDate": "2024-06-01", "branchId": branch })
    };
    let id_of = |response: crate::helpers::TestResponse| response.expect(201).json()["id"].as_i64().unwrap();
    let head = id_of(app.post("/api/invoices", &bill("H-1", 1)).await);
    let own = id_of(app.post("/api/invoices", &bill("A-1", andheri)).await);
    let other = id_of(app.post("/api/invoices", &bill("B-1", bandra)).await);
    let pay = |invoice: i64| json!({ "invoiceId": invoice, "amount": 10, "transactionDate": "2024-05-05", "transactionType": "Cash" });
    let head_paid = id_of(app.post("/api/transactions", &pay(head)).await);
    let own_paid = id_of(app.post("/api/transactions", &pay(own)).await);
    let clerk = json!({ "firstName": "Ravi", "lastName": "Kumar", "email": "clerk@example.com",
                        "password": "user-password", "roleId": 2, "branchIds": [andheri] });
    app.post("/api/users", &clerk).await.expect(201);
    let token = app.login("clerk@example.com", "user-password").await;
    let as_clerk = |method: Method, path: String, body: Option<serde_json::Value>| {
        let token = token.clone();
        async move { app.call(method, &path, Some(&token), body.as_ref()).await }
    };

    let listed = as_clerk(Method::GET, "/api/invoices".into(), None).await.expect(200).json();
    let ids: Vec<i64> = listed["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect();
    assert_eq!((ids, listed["totalCount"].clone()), (vec![own], json!(1)));
    let payments = as_clerk(Method::GET, "/api/transactions".into(), None).await.expect(200).json();
    assert_eq!(payments["items"][0]["id"], own_paid);
    assert_eq!(payments["totalCount"], 1);
    for id in [head, other] {
        as_clerk(Method::GET, format!("/api/invoices/{id}"), None).await.expect(404);
        as_clerk(Method::PUT, format!("/api/invoices/{id}"), Some(bill("X", andheri))).await.expect(404);
    }
    as_clerk(Method::GET, format!("/api/transactions/{head_paid}"), None).await.expect(404);
    as_clerk(Method::POST, "/api/transactions".into(), Some(pay(head))).await.invalid("invoiceId");
    let forbidden = as_clerk(Method::GET, format!("/api/invoices?branchId={bandra}"), None).await;
    forbidden.expect(403);
    assert!(forbidden.json()["detail"].as_str().unwrap().contains("BAN"), "{}", forbidden.json());
    as_clerk(Method::GET, "/api/invoices?branchId=999".into(), None).await.invalid("branchId");
    as_clerk(Method::GET, "/api/invoices?branchId=x".into(), None).await.invalid("branchId");
    let created = as_clerk(
        Method::POST,
        "/api/invoices".into(),
        Some(json!({ "vendorId": vendor,
        "invoiceNumber": "A-2", "amount": 5, "invoiceDate": "2024-05-01", "dueDate": "2024-06-01" })),
    )
    .await;
    assert_eq!(created.expect(201).json()["branchId"], andheri, "the store's only branch");
    let elsewhere = as_clerk(Method::POST, "/api/invoices".into(), Some(bill("B-2", bandra))).await;
    elsewhere.expect(403);

    // The chain-wide caller narrows with the repeatable filter.
    let both = app.get(&format!("/api/invoices?branchId={andheri}&branchId={bandra}")).await.expect(200).json();
    assert_eq!(both["totalCount"], 3, "A-1, A-2 and B-1: {both}");
    // The branch list is the caller's; another branch is missing to them.
    let branches = as_clerk(Method::GET, "/api/branches".into(), None).await.expect(200).json();
    assert_eq!(branches.as_array().unwrap().iter().map(|b| b["id"].clone()).collect::<Vec<_>>(), [json!(andheri)]);
    as_clerk(Method::GET, format!("/api/branches/{bandra}"), None).await.expect(404);
}
