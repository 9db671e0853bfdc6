//! The route table and the application state every handler shares.
//!
//! [`ROUTES`] lists every method and path the server answers, each naming a [`Route`];
//! [`App::dispatch`] sends a routed request to its handler in `routes/`. A path that exists with
//! another method answers 405 with `Allow` (D7); an unknown path answers 404. The OpenAPI
//! document is checked against this table by a test, so the two cannot drift apart.

use std::sync::Arc;

use hyper::Method;
use pharmapay_core::{PharmaPay, Store};

use crate::http::{Cors, Reply, Req};
use crate::problem::ApiError;
use crate::routes;

/// Every operation the API offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Route {
    Login,
    OnboardingStatus,
    OnboardingSetup,
    Health,
    OpenApi,
    ListVendors,
    CreateVendor,
    GetVendor,
    UpdateVendor,
    DeleteVendor,
    RestoreVendor,
    ListInvoices,
    CreateInvoice,
    GetInvoice,
    UpdateInvoice,
    DeleteInvoice,
    RestoreInvoice,
    ListTransactions,
    CreateTransaction,
    GetTransaction,
    UpdateTransaction,
    DeleteTransaction,
    RestoreTransaction,
    ListUsers,
    CreateUser,
    MyPermissions,
    GetUser,
    UpdateUser,
    DeleteUser,
    RestoreUser,
    ListUserPolicies,
    AttachUserPolicy,
    DetachUserPolicy,
    ListRoles,
    CreateRole,
    GetRole,
    UpdateRole,
    DeleteRole,
    RestoreRole,
    AttachRolePolicy,
    DetachRolePolicy,
    ListPermissions,
    ListPolicies,
    CreatePolicy,
    GetPolicy,
    UpdatePolicy,
    DeletePolicy,
    RestorePolicy,
    AddPolicyPermission,
    RemovePolicyPermission,
    ListSettings,
    GetSetting,
    UpdateSetting,
    DashboardSummary,
    TopVendors,
    RecentInvoices,
    MonthlyTransactions,
    GetProfile,
    UpdateProfile,
    ChangePassword,
    ListAudit,
    VendorsReport,
    InvoicesReport,
    TransactionsReport,
}

/// Every route: method, path template and operation. Path parameters are in braces.
pub const ROUTES: &[(Method, &str, Route)] = &[
    (Method::POST, "/api/auth/login", Route::Login),
    (Method::GET, "/api/onboarding/status", Route::OnboardingStatus),
    (Method::POST, "/api/onboarding/setup", Route::OnboardingSetup),
    (Method::GET, "/api/health", Route::Health),
    (Method::GET, "/api/openapi.json", Route::OpenApi),
    (Method::GET, "/api/vendors", Route::ListVendors),
    (Method::POST, "/api/vendors", Route::CreateVendor),
    (Method::GET, "/api/vendors/{id}", Route::GetVendor),
    (Method::PUT, "/api/vendors/{id}", Route::UpdateVendor),
    (Method::DELETE, "/api/vendors/{id}", Route::DeleteVendor),
    (Method::POST, "/api/vendors/{id}/restore", Route::RestoreVendor),
    (Method::GET, "/api/invoices", Route::ListInvoices),
    (Method::POST, "/api/invoices", Route::CreateInvoice),
    (Method::GET, "/api/invoices/{id}", Route::GetInvoice),
    (Method::PUT, "/api/invoices/{id}", Route::UpdateInvoice),
    (Method::DELETE, "/api/invoices/{id}", Route::DeleteInvoice),
    (Method::POST, "/api/invoices/{id}/restore", Route::RestoreInvoice),
    (Method::GET, "/api/transactions", Route::ListTransactions),
    (Method::POST, "/api/transactions", Route::CreateTransaction),
    (Method::GET, "/api/transactions/{id}", Route::GetTransaction),
    (Method::PUT, "/api/transactions/{id}", Route::UpdateTransaction),
    (Method::DELETE, "/api/transactions/{id}", Route::DeleteTransaction),
    (Method::POST, "/api/transactions/{id}/restore", Route::RestoreTransaction),
    (Method::GET, "/api/users", Route::ListUsers),
    (Method::POST, "/api/users", Route::CreateUser),
    (Method::GET, "/api/users/me/permissions", Route::MyPermissions),
    (Method::GET, "/api/users/{id}", Route::GetUser),
    (Method::PUT, "/api/users/{id}", Route::UpdateUser),
    (Method::DELETE, "/api/users/{id}", Route::DeleteUser),
    (Method::POST, "/api/users/{id}/restore", Route::RestoreUser),
    (Method::GET, "/api/users/{id}/policies", Route::ListUserPolicies),
    (Method::POST, "/api/users/{id}/policies/{policyId}", Route::AttachUserPolicy),
    (Method::DELETE, "/api/users/{id}/policies/{policyId}", Route::DetachUserPolicy),
    (Method::GET, "/api/roles", Route::ListRoles),
    (Method::POST, "/api/roles", Route::CreateRole),
    (Method::GET, "/api/roles/{id}", Route::GetRole),
    (Method::PUT, "/api/roles/{id}", Route::UpdateRole),
    (Method::DELETE, "/api/roles/{id}", Route::DeleteRole),
    (Method::POST, "/api/roles/{id}/restore", Route::RestoreRole),
    (Method::POST, "/api/roles/{id}/policies/{policyId}", Route::AttachRolePolicy),
    (Method::DELETE, "/api/roles/{id}/policies/{policyId}", Route::DetachRolePolicy),
    (Method::GET, "/api/permissions", Route::ListPermissions),
    (Method::GET, "/api/policies", Route::ListPolicies),
    (Method::POST, "/api/policies", Route::CreatePolicy),
    (Method::GET, "/api/policies/{id}", Route::GetPolicy),
    (Method::PUT, "/api/policies/{id}", Route::UpdatePolicy),
    (Method::DELETE, "/api/policies/{id}", Route::DeletePolicy),
    (Method::POST, "/api/policies/{id}/restore", Route::RestorePolicy),
    (Method::POST, "/api/policies/{id}/permissions/{permissionId}", Route::AddPolicyPermission),
    (Method::DELETE, "/api/policies/{id}/permissions/{permissionId}", Route::RemovePolicyPermission),
    (Method::GET, "/api/settings", Route::ListSettings),
    (Method::GET, "/api/settings/{key}", Route::GetSetting),
    (Method::PUT, "/api/settings/{key}", Route::UpdateSetting),
    (Method::GET, "/api/dashboard/summary", Route::DashboardSummary),
    (Method::GET, "/api/dashboard/top-vendors", Route::TopVendors),
    (Method::GET, "/api/dashboard/recent-invoices", Route::RecentInvoices),
    (Method::GET, "/api/dashboard/monthly-transactions", Route::MonthlyTransactions),
    (Method::GET, "/api/profile", Route::GetProfile),
    (Method::PUT, "/api/profile", Route::UpdateProfile),
    (Method::PUT, "/api/profile/password", Route::ChangePassword),
    (Method::GET, "/api/audit-log", Route::ListAudit),
    (Method::GET, "/api/reports/vendors", Route::VendorsReport),
    (Method::GET, "/api/reports/invoices", Route::InvoicesReport),
    (Method::GET, "/api/reports/transactions", Route::TransactionsReport),
];

/// The methods one path answers.
struct PathRoutes {
    methods: Vec<(Method, Route)>,
    allow: String,
}

/// A request's place in the table.
pub enum Matched {
    /// A route, with its path parameters.
    Route(Route, Vec<(String, String)>),
    /// The path exists with other methods (their `Allow` list).
    WrongMethod(String),
    /// No such path.
    Unknown,
}

/// Maps paths to their routes.
pub struct Router {
    paths: Vec<PathRoutes>,
    tree: matchit::Router<usize>,
}

impl Router {
    /// The router of [`ROUTES`].
    ///
    /// # Panics
    /// When the table holds conflicting paths, which the tests would catch first.
    pub fn new() -> Self {
        let mut paths: Vec<PathRoutes> = Vec::new();
        let mut templates: Vec<&str> = Vec::new();
        let mut tree = matchit::Router::new();
        for (method, template, route) in ROUTES {
            let index = match templates.iter().position(|known| known == template) {
                Some(index) => index,
                None => {
                    tree.insert(*template, paths.len()).expect("the route table has no conflicting paths");
                    templates.push(template);
                    paths.push(PathRoutes { methods: Vec::new(), allow: String::new() });
                    paths.len() - 1
                }
            };
            paths[index].methods.push((method.clone(), *route));
        }
        for path in &mut paths {
            let names: Vec<&str> = path.methods.iter().map(|(method, _)| method.as_str()).collect();
            path.allow = names.join(", ");
        }
        Self { paths, tree }
    }

    /// Finds the route for `method` and `path`.
    pub fn find(&self, method: &Method, path: &str) -> Matched {
        let Ok(found) = self.tree.at(path) else { return Matched::Unknown };
        let entry = &self.paths[*found.value];
        match entry.methods.iter().find(|(known, _)| known == method) {
            Some((_, route)) => {
                let params = found.params.iter().map(|(name, value)| (name.to_owned(), value.to_owned())).collect();
                Matched::Route(*route, params)
            }
            None => Matched::WrongMethod(entry.allow.clone()),
        }
    }
}

impl Default for Router {
    fn default() -> Self {
        Self::new()
    }
}

/// What every handler can reach: the engine and the server's settings.
pub struct App<S> {
    /// The engine.
    pub engine: PharmaPay<S>,
    /// Cross-origin rules.
    pub cors: Cors,
    /// The store's kind, for `/api/health`: `sqlite`, `postgres` or `memory`.
    pub backend: &'static str,
    /// The route table.
    pub router: Router,
    /// How long a client may take to send its headers, and again its body.
    pub request_timeout: std::time::Duration,
}

impl<S: Store> App<S> {
    /// An application over `engine` that gives clients `request_timeout` to send their
    /// headers and again their body.
    pub fn new(
        engine: PharmaPay<S>,
        cors: Cors,
        backend: &'static str,
        request_timeout: std::time::Duration,
    ) -> Arc<Self> {
        Arc::new(Self { engine, cors, backend, router: Router::new(), request_timeout })
    }

    /// Runs the handler of `route`.
    pub async fn dispatch(&self, route: Route, req: &Req) -> Result<Reply, ApiError> {
        use routes::{
            audit, auth, dashboard, invoices, onboarding, permissions, policies, profile, reports, roles, settings,
            system, transactions, users, vendors,
        };
        match route {
            Route::Login => auth::login(self, req).await,
            Route::OnboardingStatus => onboarding::status(self, req).await,
            Route::OnboardingSetup => onboarding::setup(self, req).await,
            Route::Health => system::health(self, req).await,
            Route::OpenApi => system::openapi(self, req).await,
            Route::ListVendors => vendors::list(self, req).await,
            Route::CreateVendor => vendors::create(self, req).await,
            Route::GetVendor => vendors::get(self, req).await,
            Route::UpdateVendor => vendors::update(self, req).await,
            Route::DeleteVendor => vendors::delete(self, req).await,
            Route::RestoreVendor => vendors::restore(self, req).await,
            Route::ListInvoices => invoices::list(self, req).await,
            Route::CreateInvoice => invoices::create(self, req).await,
            Route::GetInvoice => invoices::get(self, req).await,
            Route::UpdateInvoice => invoices::update(self, req).await,
            Route::DeleteInvoice => invoices::delete(self, req).await,
            Route::RestoreInvoice => invoices::restore(self, req).await,
            Route::ListTransactions => transactions::list(self, req).await,
            Route::CreateTransaction => transactions::create(self, req).await,
            Route::GetTransaction => transactions::get(self, req).await,
            Route::UpdateTransaction => transactions::update(self, req).await,
            Route::DeleteTransaction => transactions::delete(self, req).await,
            Route::RestoreTransaction => transactions::restore(self, req).await,
            Route::ListUsers => users::list(self, req).await,
            Route::CreateUser => users::create(self, req).await,
            Route::MyPermissions => users::my_permissions(self, req).await,
            Route::GetUser => users::get(self, req).await,
            Route::UpdateUser => users::update(self, req).await,
            Route::DeleteUser => users::delete(self, req).await,
            Route::RestoreUser => users::restore(self, req).await,
            Route::ListUserPolicies => users::policies(self, req).await,
            Route::AttachUserPolicy => users::attach_policy(self, req).await,
            Route::DetachUserPolicy => users::detach_policy(self, req).await,
            Route::ListRoles => roles::list(self, req).await,
            Route::CreateRole => roles::create(self, req).await,
            Route::GetRole => roles::get(self, req).await,
            Route::UpdateRole => roles::update(self, req).await,
            Route::DeleteRole => roles::delete(self, req).await,
            Route::RestoreRole => roles::restore(self, req).await,
            Route::AttachRolePolicy => roles::attach_policy(self, req).await,
            Route::DetachRolePolicy => roles::detach_policy(self, req).await,
            Route::ListPermissions => permissions::list(self, req).await,
            Route::ListPolicies => policies::list(self, req).await,
            Route::CreatePolicy => policies::create(self, req).await,
            Route::GetPolicy => policies::get(self, req).await,
            Route::UpdatePolicy => policies::update(self, req).await,
            Route::DeletePolicy => policies::delete(self, req).await,
            Route::RestorePolicy => policies::restore(self, req).await,
            Route::AddPolicyPermission => policies::add_permission(self, req).await,
            Route::RemovePolicyPermission => policies::remove_permission(self, req).await,
            Route::ListSettings => settings::list(self, req).await,
            Route::GetSetting => settings::get(self, req).await,
            Route::UpdateSetting => settings::update(self, req).await,
            Route::DashboardSummary => dashboard::summary(self, req).await,
            Route::TopVendors => dashboard::top_vendors(self, req).await,
            Route::RecentInvoices => dashboard::recent_invoices(self, req).await,
            Route::MonthlyTransactions => dashboard::monthly(self, req).await,
            Route::GetProfile => profile::get(self, req).await,
            Route::UpdateProfile => profile::update(self, req).await,
            Route::ChangePassword => profile::change_password(self, req).await,
            Route::ListAudit => audit::list(self, req).await,
            Route::VendorsReport => reports::vendors(self, req).await,
            Route::InvoicesReport => reports::invoices(self, req).await,
            Route::TransactionsReport => reports::transactions(self, req).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_builds_and_static_segments_win() {
        let router = Router::new();
        assert!(matches!(
            router.find(&Method::GET, "/api/users/me/permissions"),
            Matched::Route(Route::MyPermissions, _)
        ));
        match router.find(&Method::GET, "/api/users/7/policies") {
            Matched::Route(Route::ListUserPolicies, params) => assert_eq!(params, [("id".to_owned(), "7".to_owned())]),
            _ => panic!("user policies route"),
        }
        match router.find(&Method::PATCH, "/api/vendors/1") {
            Matched::WrongMethod(allow) => assert_eq!(allow, "GET, PUT, DELETE"),
            _ => panic!("405 for a known path"),
        }
        assert!(matches!(router.find(&Method::GET, "/api/nothing"), Matched::Unknown));
        assert!(matches!(router.find(&Method::GET, "/api/vendors/1/extra"), Matched::Unknown));
    }
}
