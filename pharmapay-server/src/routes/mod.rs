//! The route table, resource by resource, and the handlers most routes share.
//!
//! Each file below holds everything of one resource's wire: its rows of the route table (method,
//! path, [`Guard`], OpenAPI operation and handler), the bodies it decodes, the DTOs it answers
//! with and their schemas, and the handlers that read something of their own (a setting's key,
//! a dashboard limit, report filters) or answer in their own way (sessions, downloads).
//! [`table`] lists the resources; a new resource is a new file here and its line there.
//!
//! Most routes only read their parameters, call one engine method and encode its result in one
//! of a few ways: a page of a list, one record by `{id}`, a create, a replacement, a delete with
//! an optional reason, a link between two records. [`Call`] holds those ways once, each taking
//! the engine method to call and the DTO to answer with, so such a route's handler is one line
//! of its row (`call.rs`). The rules live in the engine.

pub mod audit;
pub mod auth;
pub mod bank_statements;
pub mod branches;
pub mod dashboard;
pub mod events;
pub mod imports;
pub mod invoices;
pub mod onboarding;
pub mod permissions;
pub mod policies;
pub mod profile;
pub mod reconciliation;
pub mod reports;
pub mod roles;
pub mod settings;
pub mod system;
pub mod transactions;
pub mod users;
pub mod vendor_credits;
pub mod vendor_payments;
pub mod vendors;
pub mod webhooks;

mod call;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hyper::Method;
use pharmapay_core::{PharmaPay, Store};
use pharmapay_store_memory::MemoryStore;

pub use crate::app::{Answer, Call, Handler, Route};
use crate::app::{App, DEFAULT_MAX_CONNECTIONS, DEFAULT_UPLOAD_WAIT, DEFAULT_UPLOADS_AT_ONCE, Router};
use crate::guard::Guard;
use crate::http::Cors;
use crate::openapi;
use crate::turns::{DownloadLimits, Downloads, Turns};
pub use call::*;

/// Every route of the API, resource by resource, in the order the router tries them for a
/// path's `Allow` list. A new resource adds its `routes` here.
pub fn table<S: Store>() -> Vec<Route<S>> {
    let resources: &[fn() -> Vec<Route<S>>] = &[
        auth::routes,
        onboarding::routes,
        system::routes,
        vendors::routes,
        invoices::routes,
        transactions::routes,
        vendor_payments::routes,
        vendor_credits::routes,
        imports::routes,
        bank_statements::routes,
        branches::routes,
        users::routes,
        roles::routes,
        permissions::routes,
        policies::routes,
        settings::routes,
        dashboard::routes,
        profile::routes,
        reconciliation::routes,
        audit::routes,
        events::routes,
        webhooks::routes,
        reports::routes,
    ];
    resources.iter().flat_map(|routes| routes()).collect()
}

/// The API document of the route table, as its bytes, built on first use: what
/// `GET /api/openapi.json` serves and `pharmapay openapi` writes.
pub fn api_document() -> &'static [u8] {
    static DOCUMENT: OnceLock<Vec<u8>> = OnceLock::new();
    DOCUMENT.get_or_init(|| openapi::document(&table::<MemoryStore>()).to_pretty_bytes())
}

/// Every route as the table states it: method, path template and what it requires of its
/// caller (the spec's Permission column; D15 for restores, D19 for a user's policies, D22 for
/// the audit log, D24 for the profile), in the table's order. Path parameters are in braces.
///
/// Handlers are the one part of a row that depends on the store; these rows are read from the
/// memory store's table, and every store's table holds the same ones.
pub fn route_table() -> Vec<(Method, &'static str, Guard)> {
    table::<MemoryStore>().into_iter().map(|route| (route.method, route.path, route.guard)).collect()
}

impl<S: Store> App<S> {
    /// An application over `engine` that gives clients `request_timeout` to send their
    /// headers and again their body, serving at most [`DEFAULT_MAX_CONNECTIONS`] at once.
    pub fn new(engine: PharmaPay<S>, cors: Cors, backend: &'static str, request_timeout: Duration) -> Arc<Self> {
        let uploads = Turns::new(DEFAULT_UPLOADS_AT_ONCE, DEFAULT_UPLOAD_WAIT);
        Self::with_limits(
            engine,
            cors,
            backend,
            request_timeout,
            DEFAULT_MAX_CONNECTIONS,
            DownloadLimits::default(),
            uploads,
        )
    }

    /// As [`App::new`], serving at most `max_connections` connections at once (at least one),
    /// with report downloads held to `downloads` and uploads to `uploads`.
    pub fn with_limits(
        engine: PharmaPay<S>,
        cors: Cors,
        backend: &'static str,
        request_timeout: Duration,
        max_connections: usize,
        downloads: DownloadLimits,
        uploads: Turns,
    ) -> Arc<Self> {
        Arc::new(Self {
            engine,
            cors,
            backend,
            router: Router::new(table()),
            api_document,
            request_timeout,
            max_connections: max_connections.max(1),
            downloads: Downloads::new(downloads),
            uploads,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_document_is_the_one_the_code_builds() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json");
        let committed = std::fs::read(path).expect("pharmapay-server/openapi.json is readable");
        assert!(
            committed == api_document(),
            "pharmapay-server/openapi.json differs from the document the code builds; write it again with \
             `cargo run -p pharmapay-server -- openapi pharmapay-server/openapi.json`"
        );
    }
}
