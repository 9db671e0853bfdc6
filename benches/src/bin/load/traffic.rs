//! What each endpoint the harness drives sends: the requests of its connections and the
//! answer each must get.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use hyper::{Method, StatusCode};
use pharmapay_core::jiff::Timestamp;

use crate::client::{Traffic, request};
use crate::setup::Fixture;
use crate::sql::{self, ListPage};
use crate::table::Endpoint;

/// What one endpoint sends.
pub fn traffic_for(endpoint: Endpoint, addr: SocketAddr, fixture: &Fixture, connections: usize) -> Traffic {
    let token = Arc::new(fixture.token.clone());
    let get = |path: String| -> Traffic {
        let token = Arc::clone(&token);
        Traffic {
            connections,
            make: Arc::new(move |_, _| request(addr, Method::GET, &path, Some(&token), None)),
            expect: StatusCode::OK,
            pace: None,
        }
    };
    let today = fixture.calendar.date_of(Timestamp::now());
    match endpoint {
        Endpoint::GetVendor | Endpoint::VendorDuringLogins | Endpoint::VendorDuringAging => {
            get(format!("/api/vendors/{}", fixture.vendor_id))
        }
        Endpoint::VendorsDefault => get("/api/vendors".into()),
        Endpoint::VendorsByBalance => get(ListPage::VendorsByBalance.path().into()),
        Endpoint::VendorsSearch => get("/api/vendors?search=Remedies".into()),
        Endpoint::InvoicesDefault => get(ListPage::InvoicesDefault.path().into()),
        Endpoint::InvoicesOverdue => get(ListPage::InvoicesOverdue.path().into()),
        Endpoint::InvoicesPartly => get("/api/invoices?status=PartiallyPaid".into()),
        Endpoint::InvoicesSearch => get("/api/invoices?search=D1-000042".into()),
        Endpoint::Transactions => get("/api/transactions".into()),
        Endpoint::Summary => get("/api/dashboard/summary".into()),
        Endpoint::TopVendors => get("/api/dashboard/top-vendors".into()),
        Endpoint::RecentInvoices => get("/api/dashboard/recent-invoices".into()),
        Endpoint::Monthly => get("/api/dashboard/monthly-transactions".into()),
        Endpoint::Payables => get("/api/dashboard/payables".into()),
        Endpoint::LicenceAlerts => get("/api/dashboard/license-alerts".into()),
        Endpoint::Aging => get("/api/payables/aging".into()),
        Endpoint::AgingYearBack => get(format!("/api/payables/aging?asOf={}", sql::year_back(today))),
        Endpoint::Statement => get(fixture.year_statement(today, "")),
        Endpoint::AgingPage => get("/api/payables/aging?page=1".into()),
        Endpoint::StatementFirstPage => get(fixture.year_statement(today, "&page=1&pageSize=100")),
        Endpoint::StatementLastPage => {
            get(fixture.year_statement(today, &format!("&page={}&pageSize=100", fixture.statement_pages)))
        }
        Endpoint::VendorPayment => {
            let plans: Arc<Vec<(i64, Bytes)>> = Arc::new(
                fixture
                    .vendor_payments
                    .iter()
                    .map(|(vendor, invoices)| {
                        let allocations: Vec<serde_json::Value> = invoices
                            .iter()
                            .map(|invoice| serde_json::json!({ "invoiceId": invoice, "amount": 0.01 }))
                            .collect();
                        let body = serde_json::json!({ "amount": 0.1, "transactionDate": today.to_string(),
                            "transactionType": "NetBanking", "allocations": allocations });
                        (*vendor, Bytes::from(body.to_string()))
                    })
                    .collect(),
            );
            Traffic {
                connections,
                make: Arc::new(move |connection, _| {
                    // Each connection pays one of the vendors, as several counters would.
                    let (vendor, body) = &plans[connection % plans.len()];
                    let path = format!("/api/vendors/{vendor}/payments");
                    request(addr, Method::POST, &path, Some(&token), Some(body.clone()))
                }),
                expect: StatusCode::CREATED,
                pace: None,
            }
        }
        Endpoint::ApplyCredit => {
            // The same ten invoices of each vendor as the vendor payments, credited 0.01 each,
            // each request from a credit of its own (a connection walks the credits on its own
            // stride), as a credit note is set against a few bills once.
            let plans: Arc<Vec<(i64, Bytes)>> = Arc::new(
                fixture
                    .credits
                    .iter()
                    .map(|(credit, invoices)| {
                        let allocations: Vec<serde_json::Value> = invoices
                            .iter()
                            .map(|invoice| serde_json::json!({ "invoiceId": invoice, "amount": 0.01 }))
                            .collect();
                        let body = serde_json::json!({ "allocations": allocations });
                        (*credit, Bytes::from(body.to_string()))
                    })
                    .collect(),
            );
            Traffic {
                connections,
                make: Arc::new(move |connection, n| {
                    let (credit, body) = &plans[(connection * 7_919 + n as usize) % plans.len()];
                    let path = format!("/api/vendor-credits/{credit}/applications");
                    request(addr, Method::POST, &path, Some(&token), Some(body.clone()))
                }),
                expect: StatusCode::CREATED,
                pace: None,
            }
        }
        Endpoint::CreatePayment => {
            let ids = Arc::new(fixture.invoice_ids.clone());
            Traffic {
                connections,
                make: Arc::new(move |connection, n| {
                    // Spread the payments over the invoices, each connection on its own stride.
                    let invoice_id = ids[(connection * 37 + n as usize) % ids.len()];
                    let body = format!(
                        r#"{{"invoiceId":{invoice_id},"amount":0.01,"transactionDate":"2024-05-10","transactionType":"UPI"}}"#
                    );
                    request(addr, Method::POST, "/api/transactions", Some(&token), Some(Bytes::from(body)))
                }),
                expect: StatusCode::CREATED,
                pace: None,
            }
        }
        Endpoint::Login => logins(addr, fixture, connections),
    }
}

/// Logins, each connection as its own user: one email's attempts are counted together (D21),
/// so more than five in flight for one email would be throttled by design.
pub fn logins(addr: SocketAddr, fixture: &Fixture, connections: usize) -> Traffic {
    let bodies: Arc<Vec<Bytes>> = Arc::new(
        fixture
            .users
            .iter()
            .map(|(email, password)| {
                Bytes::from(serde_json::json!({ "email": email, "password": password }).to_string())
            })
            .collect(),
    );
    Traffic {
        connections: connections.min(bodies.len()),
        make: Arc::new(move |connection, _| {
            let body = bodies[connection % bodies.len()].clone();
            request(addr, Method::POST, "/api/auth/login", None, Some(body))
        }),
        expect: StatusCode::OK,
        pace: None,
    }
}
