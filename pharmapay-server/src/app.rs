//! The route table and the application state every handler shares.
//!
//! [`ROUTES`] lists every method and path the server answers, each naming a [`Route`] and the
//! [`Guard`] it requires. [`App::dispatch`] authenticates the caller and checks the guard before
//! anything else about the request is read (its path parameters, query and body), so a caller
//! without access gets 401 or 403 and never learns the parameter rules from a 400; it then sends
//! the request to its handler: for most routes one of [`Call`]'s, named with the engine method
//! it calls and the DTO it answers with, for the rest one in `routes/`. A path that exists with
//! another method answers 405 with `Allow` (D7); an unknown path answers 404. The OpenAPI
//! document is checked against this table by a test, so the two cannot drift apart.

use std::sync::Arc;
use std::time::Duration;

use hyper::Method;
// The route table names permissions by their parts, as the spec writes them (`Vendor:Read`).
use pharmapay_core::Action::{Create, Delete, Read, Update};
use pharmapay_core::Collection::{
    AuditLog, Dashboard, Invoice, Permission, Policy, Role, Setting, Transaction, User, Vendor,
};
use pharmapay_core::{Access, Action, Collection, Error, PharmaPay, Principal, Store};

use pharmapay_core::domain::NewVendorPayment;
use pharmapay_core::domain::aging::AgingQuery;
use pharmapay_core::domain::statement::StatementQuery;
use pharmapay_core::domain::{AuditQuery, InvoiceQuery, TransactionQuery, VendorQuery};
use pharmapay_core::idempotency::IdempotencyRequest;
use pharmapay_core::ids::VendorId;

use crate::dto::{
    AgingDto, AuditEntryDto, InvoiceDto, MonthlyDto, PayablesDto, PermissionDto, PolicyDto, ProfileDto, RoleDto,
    SettingDto, StatementDto, SummaryDto, TransactionDto, UserDto, VendorDto, VendorPaymentDto,
};
use crate::http::{Cors, Reply, Req, parse_query};
use crate::problem::ApiError;
use crate::routes::reports::{DownloadLimits, Downloads};
use crate::routes::{self, Call};

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
    CreateVendorPayment,
    GetVendorPayment,
    DeleteVendorPayment,
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
    Payables,
    LicenceAlerts,
    Aging,
    VendorStatement,
    GetProfile,
    UpdateProfile,
    ChangePassword,
    ListAudit,
    VendorsReport,
    InvoicesReport,
    TransactionsReport,
    AgingReport,
    VendorStatementReport,
}

/// Every route: method, path template, operation and what it requires of its caller (the spec's
/// Permission column; D15 for restores, D19 for a user's policies, D22 for the audit log, D24 for
/// the profile). Path parameters are in braces.
pub const ROUTES: &[(Method, &str, Route, Guard)] = &[
    (Method::POST, "/api/auth/login", Route::Login, Guard::Public),
    (Method::GET, "/api/onboarding/status", Route::OnboardingStatus, Guard::Public),
    (Method::POST, "/api/onboarding/setup", Route::OnboardingSetup, Guard::Public),
    (Method::GET, "/api/health", Route::Health, Guard::Public),
    (Method::GET, "/api/openapi.json", Route::OpenApi, Guard::Public),
    (Method::GET, "/api/vendors", Route::ListVendors, needs(Vendor, Read)),
    (Method::POST, "/api/vendors", Route::CreateVendor, needs(Vendor, Create)),
    (Method::GET, "/api/vendors/{id}", Route::GetVendor, needs(Vendor, Read)),
    (Method::PUT, "/api/vendors/{id}", Route::UpdateVendor, needs(Vendor, Update)),
    (Method::DELETE, "/api/vendors/{id}", Route::DeleteVendor, needs(Vendor, Delete)),
    (Method::POST, "/api/vendors/{id}/restore", Route::RestoreVendor, needs(Vendor, Update)),
    (Method::GET, "/api/vendors/{id}/statement", Route::VendorStatement, needs_all(STATEMENT)),
    (Method::GET, "/api/invoices", Route::ListInvoices, needs(Invoice, Read)),
    (Method::POST, "/api/invoices", Route::CreateInvoice, needs(Invoice, Create)),
    (Method::GET, "/api/invoices/{id}", Route::GetInvoice, needs(Invoice, Read)),
    (Method::PUT, "/api/invoices/{id}", Route::UpdateInvoice, needs(Invoice, Update)),
    (Method::DELETE, "/api/invoices/{id}", Route::DeleteInvoice, needs(Invoice, Delete)),
    (Method::POST, "/api/invoices/{id}/restore", Route::RestoreInvoice, needs(Invoice, Update)),
    (Method::GET, "/api/transactions", Route::ListTransactions, needs(Transaction, Read)),
    (Method::POST, "/api/transactions", Route::CreateTransaction, needs(Transaction, Create)),
    (Method::GET, "/api/transactions/{id}", Route::GetTransaction, needs(Transaction, Read)),
    (Method::PUT, "/api/transactions/{id}", Route::UpdateTransaction, needs(Transaction, Update)),
    (Method::DELETE, "/api/transactions/{id}", Route::DeleteTransaction, needs(Transaction, Delete)),
    (Method::POST, "/api/transactions/{id}/restore", Route::RestoreTransaction, needs(Transaction, Update)),
    (Method::POST, "/api/vendors/{id}/payments", Route::CreateVendorPayment, needs(Transaction, Create)),
    (Method::GET, "/api/vendor-payments/{id}", Route::GetVendorPayment, needs(Transaction, Read)),
    (Method::DELETE, "/api/vendor-payments/{id}", Route::DeleteVendorPayment, needs(Transaction, Delete)),
    (Method::GET, "/api/users", Route::ListUsers, Guard::Token),
    (Method::POST, "/api/users", Route::CreateUser, needs(User, Create)),
    (Method::GET, "/api/users/me/permissions", Route::MyPermissions, Guard::Token),
    (Method::GET, "/api/users/{id}", Route::GetUser, Guard::Token),
    (Method::PUT, "/api/users/{id}", Route::UpdateUser, needs(User, Update)),
    (Method::DELETE, "/api/users/{id}", Route::DeleteUser, needs(User, Delete)),
    (Method::POST, "/api/users/{id}/restore", Route::RestoreUser, needs(User, Update)),
    (Method::GET, "/api/users/{id}/policies", Route::ListUserPolicies, Guard::Token),
    (Method::POST, "/api/users/{id}/policies/{policyId}", Route::AttachUserPolicy, needs(User, Update)),
    (Method::DELETE, "/api/users/{id}/policies/{policyId}", Route::DetachUserPolicy, needs(User, Update)),
    (Method::GET, "/api/roles", Route::ListRoles, Guard::Token),
    (Method::POST, "/api/roles", Route::CreateRole, needs(Role, Create)),
    (Method::GET, "/api/roles/{id}", Route::GetRole, Guard::Token),
    (Method::PUT, "/api/roles/{id}", Route::UpdateRole, needs(Role, Update)),
    (Method::DELETE, "/api/roles/{id}", Route::DeleteRole, needs(Role, Delete)),
    (Method::POST, "/api/roles/{id}/restore", Route::RestoreRole, needs(Role, Update)),
    (Method::POST, "/api/roles/{id}/policies/{policyId}", Route::AttachRolePolicy, needs(Role, Update)),
    (Method::DELETE, "/api/roles/{id}/policies/{policyId}", Route::DetachRolePolicy, needs(Role, Update)),
    (Method::GET, "/api/permissions", Route::ListPermissions, needs(Permission, Read)),
    (Method::GET, "/api/policies", Route::ListPolicies, needs(Policy, Read)),
    (Method::POST, "/api/policies", Route::CreatePolicy, needs(Policy, Create)),
    (Method::GET, "/api/policies/{id}", Route::GetPolicy, needs(Policy, Read)),
    (Method::PUT, "/api/policies/{id}", Route::UpdatePolicy, needs(Policy, Update)),
    (Method::DELETE, "/api/policies/{id}", Route::DeletePolicy, needs(Policy, Delete)),
    (Method::POST, "/api/policies/{id}/restore", Route::RestorePolicy, needs(Policy, Update)),
    (Method::POST, "/api/policies/{id}/permissions/{permissionId}", Route::AddPolicyPermission, needs(Policy, Update)),
    (
        Method::DELETE,
        "/api/policies/{id}/permissions/{permissionId}",
        Route::RemovePolicyPermission,
        needs(Policy, Update),
    ),
    (Method::GET, "/api/settings", Route::ListSettings, needs(Setting, Read)),
    (Method::GET, "/api/settings/{key}", Route::GetSetting, needs(Setting, Read)),
    (Method::PUT, "/api/settings/{key}", Route::UpdateSetting, needs(Setting, Update)),
    (Method::GET, "/api/dashboard/summary", Route::DashboardSummary, needs(Dashboard, Read)),
    (Method::GET, "/api/dashboard/top-vendors", Route::TopVendors, needs(Dashboard, Read)),
    (Method::GET, "/api/dashboard/recent-invoices", Route::RecentInvoices, needs(Dashboard, Read)),
    (Method::GET, "/api/dashboard/monthly-transactions", Route::MonthlyTransactions, needs(Dashboard, Read)),
    (Method::GET, "/api/dashboard/payables", Route::Payables, needs(Dashboard, Read)),
    (Method::GET, "/api/dashboard/license-alerts", Route::LicenceAlerts, needs(Dashboard, Read)),
    (Method::GET, "/api/payables/aging", Route::Aging, needs(Invoice, Read)),
    (Method::GET, "/api/profile", Route::GetProfile, Guard::Token),
    (Method::PUT, "/api/profile", Route::UpdateProfile, Guard::Token),
    (Method::PUT, "/api/profile/password", Route::ChangePassword, Guard::Token),
    (Method::GET, "/api/audit-log", Route::ListAudit, needs(AuditLog, Read)),
    (Method::GET, "/api/reports/vendors", Route::VendorsReport, needs(Vendor, Read)),
    (Method::GET, "/api/reports/invoices", Route::InvoicesReport, needs(Invoice, Read)),
    (Method::GET, "/api/reports/transactions", Route::TransactionsReport, needs(Transaction, Read)),
    (Method::GET, "/api/reports/aging", Route::AgingReport, needs(Invoice, Read)),
    (Method::GET, "/api/reports/vendor-statement", Route::VendorStatementReport, needs_all(STATEMENT)),
];

/// What a route requires of its caller before its handler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Anyone may call it; a token, if sent, is not read.
    Public,
    /// A valid bearer token, with no particular permission (the spec's Permission "none").
    Token,
    /// A valid bearer token that carries this permission; admins pass every check.
    Permission(Access),
    /// A valid bearer token that carries every one of these permissions (a vendor's statement:
    /// D35, D48).
    AllOf(&'static [Access]),
}

/// The guard of a route that needs `collection:action`.
const fn needs(collection: Collection, action: Action) -> Guard {
    Guard::Permission(Access::new(collection, action))
}

/// The guard of a route that needs `first:action` and `second:action`.
const fn needs_all(accesses: &'static [Access]) -> Guard {
    Guard::AllOf(accesses)
}

/// D35, D48: a statement shows the vendor, its invoices and its payments with their references.
const STATEMENT: &[Access] =
    &[Access::new(Vendor, Read), Access::new(Invoice, Read), Access::new(Collection::Transaction, Read)];

/// The methods one path answers.
struct PathRoutes {
    methods: Vec<(Method, Route, Guard)>,
    allow: String,
}

/// A request's place in the table.
pub enum Matched {
    /// A route, with its guard and its path parameters.
    Route(Route, Guard, Vec<(String, String)>),
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
        for (method, template, route, guard) in ROUTES {
            let index = match templates.iter().position(|known| known == template) {
                Some(index) => index,
                None => {
                    tree.insert(*template, paths.len()).expect("the route table has no conflicting paths");
                    templates.push(template);
                    paths.push(PathRoutes { methods: Vec::new(), allow: String::new() });
                    paths.len() - 1
                }
            };
            paths[index].methods.push((method.clone(), *route, *guard));
        }
        for path in &mut paths {
            let names: Vec<&str> = path.methods.iter().map(|(method, _, _)| method.as_str()).collect();
            path.allow = names.join(", ");
        }
        Self { paths, tree }
    }

    /// Finds the route for `method` and `path`.
    pub fn find(&self, method: &Method, path: &str) -> Matched {
        let Ok(found) = self.tree.at(path) else { return Matched::Unknown };
        let entry = &self.paths[*found.value];
        match entry.methods.iter().find(|(known, _, _)| known == method) {
            Some((_, route, guard)) => {
                let params = found.params.iter().map(|(name, value)| (name.to_owned(), value.to_owned())).collect();
                Matched::Route(*route, *guard, params)
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

/// The default of [`App::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

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
    /// How long a client may take to send its headers, and again its body, and how long it may
    /// leave an answer unread before it is cut off.
    pub request_timeout: Duration,
    /// How many connections are served at once; further clients wait to be accepted.
    pub max_connections: usize,
    /// How report downloads share the server: their slots, their pace and how many are open.
    pub downloads: Downloads,
}

impl<S: Store> App<S> {
    /// An application over `engine` that gives clients `request_timeout` to send their
    /// headers and again their body, serving at most [`DEFAULT_MAX_CONNECTIONS`] at once.
    pub fn new(engine: PharmaPay<S>, cors: Cors, backend: &'static str, request_timeout: Duration) -> Arc<Self> {
        Self::with_limits(engine, cors, backend, request_timeout, DEFAULT_MAX_CONNECTIONS, DownloadLimits::default())
    }

    /// As [`App::new`], serving at most `max_connections` connections at once (at least one),
    /// with report downloads held to `downloads`.
    pub fn with_limits(
        engine: PharmaPay<S>,
        cors: Cors,
        backend: &'static str,
        request_timeout: Duration,
        max_connections: usize,
        downloads: DownloadLimits,
    ) -> Arc<Self> {
        Arc::new(Self {
            engine,
            cors,
            backend,
            router: Router::new(),
            request_timeout,
            max_connections: max_connections.max(1),
            downloads: Downloads::new(downloads),
        })
    }

    /// Checks the caller against `guard`, then reads the query string `query` into
    /// [`Req::query`] and runs the handler of `route`.
    ///
    /// The check comes first, before any path parameter, query parameter or body is read, so a
    /// caller without access learns nothing from validation errors (403 before 400). Handlers
    /// do not check again, but the engine does.
    ///
    /// # Errors
    /// 401 for a missing or invalid token, 403 for a missing permission, 400 for a malformed
    /// query string, and whatever the handler answers.
    pub async fn dispatch(&self, route: Route, guard: Guard, query: &str, mut req: Req) -> Result<Reply, ApiError> {
        let principal = match guard {
            Guard::Public => None,
            Guard::Token => Some(self.principal(&req).await?),
            Guard::Permission(access) => {
                let principal = self.principal(&req).await?;
                principal.require(access)?;
                Some(principal)
            }
            Guard::AllOf(accesses) => {
                let principal = self.principal(&req).await?;
                for access in accesses {
                    principal.require(*access)?;
                }
                Some(principal)
            }
        };
        req.query = parse_query(query)?;
        match principal {
            None => self.public(route, req).await,
            Some(principal) => self.guarded(route, &principal, req).await,
        }
    }

    /// Runs a public route's handler.
    async fn public(&self, route: Route, req: Req) -> Result<Reply, ApiError> {
        use routes::{auth, onboarding, system};
        match route {
            Route::Login => auth::login(self, req).await,
            Route::OnboardingStatus => onboarding::status(self, req).await,
            Route::OnboardingSetup => onboarding::setup(self, req).await,
            Route::Health => system::health(self, req).await,
            Route::OpenApi => system::openapi(self, req).await,
            // Every other route needs a caller: without one, it is refused.
            _ => Err(ApiError::Core(Error::Unauthenticated)),
        }
    }

    /// Runs the handler of a route that acts for `principal`: most are one call of a [`Call`]
    /// handler with the engine method to call, the rest a handler in `routes/`.
    async fn guarded(&self, route: Route, principal: &Principal, req: Req) -> Result<Reply, ApiError> {
        use routes::{dashboard, each, profile, reports, settings};
        let call = Call { app: self, principal, req };
        match route {
            Route::Login | Route::OnboardingStatus | Route::OnboardingSetup | Route::Health | Route::OpenApi => {
                self.public(route, call.req).await
            }
            Route::ListVendors => call.page(VendorQuery::from_params, PharmaPay::list_vendors, VendorDto::from).await,
            Route::CreateVendor => {
                call.create("vendors", PharmaPay::create_vendor, |vendor| vendor.id.get(), VendorDto::from).await
            }
            Route::GetVendor => call.by_id(PharmaPay::get_vendor, VendorDto::from).await,
            Route::UpdateVendor => call.replace(PharmaPay::update_vendor, VendorDto::from).await,
            Route::DeleteVendor => call.delete(PharmaPay::delete_vendor).await,
            Route::RestoreVendor => call.by_id(PharmaPay::restore_vendor, VendorDto::from).await,
            Route::ListInvoices => {
                call.page(InvoiceQuery::from_params, PharmaPay::list_invoices, InvoiceDto::from).await
            }
            Route::CreateInvoice => {
                call.create("invoices", PharmaPay::create_invoice, |invoice| invoice.id.get(), InvoiceDto::from).await
            }
            Route::GetInvoice => call.by_id(PharmaPay::get_invoice, InvoiceDto::from).await,
            Route::UpdateInvoice => call.replace(PharmaPay::update_invoice, InvoiceDto::from).await,
            Route::DeleteInvoice => call.delete(PharmaPay::delete_invoice).await,
            Route::RestoreInvoice => call.by_id(PharmaPay::restore_invoice, InvoiceDto::from).await,
            Route::ListTransactions => {
                call.page(TransactionQuery::from_params, PharmaPay::list_transactions, TransactionDto::from).await
            }
            Route::CreateTransaction => {
                call.create(
                    "transactions",
                    PharmaPay::create_transaction,
                    |payment| payment.id.get(),
                    TransactionDto::from,
                )
                .await
            }
            Route::GetTransaction => call.by_id(PharmaPay::get_transaction, TransactionDto::from).await,
            Route::UpdateTransaction => call.replace(PharmaPay::update_transaction, TransactionDto::from).await,
            Route::DeleteTransaction => call.delete(PharmaPay::delete_transaction).await,
            Route::RestoreTransaction => call.by_id(PharmaPay::restore_transaction, TransactionDto::from).await,
            Route::CreateVendorPayment => {
                // D31: the vendor is the path's; the payment and its split are the body's.
                let vendor_id = VendorId(call.req.id("id")?);
                let create = async move |engine: &PharmaPay<S>,
                                         principal: &Principal,
                                         payment: NewVendorPayment,
                                         idempotency: Option<&IdempotencyRequest>| {
                    engine.create_vendor_payment(principal, vendor_id, payment, idempotency).await
                };
                call.create("vendor-payments", create, |payment| payment.id.get(), VendorPaymentDto::from).await
            }
            Route::GetVendorPayment => call.by_id(PharmaPay::get_vendor_payment, VendorPaymentDto::from).await,
            Route::DeleteVendorPayment => call.delete(PharmaPay::delete_vendor_payment).await,
            Route::ListUsers => call.read(PharmaPay::list_users, each(UserDto::from)).await,
            Route::CreateUser => {
                call.create("users", PharmaPay::create_user, |user| user.id.get(), UserDto::from).await
            }
            Route::MyPermissions => call.read(PharmaPay::my_permissions, each(PermissionDto::from)).await,
            Route::GetUser => call.by_id(PharmaPay::get_user, UserDto::from).await,
            Route::UpdateUser => call.replace(PharmaPay::update_user, UserDto::from).await,
            Route::DeleteUser => call.delete(PharmaPay::delete_user).await,
            Route::RestoreUser => call.by_id(PharmaPay::restore_user, UserDto::from).await,
            Route::ListUserPolicies => call.by_id(PharmaPay::list_user_policies, each(PolicyDto::from)).await,
            Route::AttachUserPolicy => call.link("policyId", PharmaPay::attach_user_policy).await,
            Route::DetachUserPolicy => call.link("policyId", PharmaPay::detach_user_policy).await,
            Route::ListRoles => call.read(PharmaPay::list_roles, each(RoleDto::from)).await,
            Route::CreateRole => {
                call.create("roles", PharmaPay::create_role, |role| role.id.get(), RoleDto::from).await
            }
            Route::GetRole => call.by_id(PharmaPay::get_role, RoleDto::from).await,
            Route::UpdateRole => call.replace(PharmaPay::update_role, RoleDto::from).await,
            Route::DeleteRole => call.delete(PharmaPay::delete_role).await,
            Route::RestoreRole => call.by_id(PharmaPay::restore_role, RoleDto::from).await,
            Route::AttachRolePolicy => call.link("policyId", PharmaPay::attach_role_policy).await,
            Route::DetachRolePolicy => call.link("policyId", PharmaPay::detach_role_policy).await,
            Route::ListPermissions => call.read(PharmaPay::list_permissions, each(PermissionDto::from)).await,
            Route::ListPolicies => call.read(PharmaPay::list_policies, each(PolicyDto::from)).await,
            Route::CreatePolicy => {
                call.create("policies", PharmaPay::create_policy, |policy| policy.id.get(), PolicyDto::from).await
            }
            Route::GetPolicy => call.by_id(PharmaPay::get_policy, PolicyDto::from).await,
            Route::UpdatePolicy => call.replace(PharmaPay::update_policy, PolicyDto::from).await,
            Route::DeletePolicy => call.delete(PharmaPay::delete_policy).await,
            Route::RestorePolicy => call.by_id(PharmaPay::restore_policy, PolicyDto::from).await,
            Route::AddPolicyPermission => call.link("permissionId", PharmaPay::add_policy_permission).await,
            Route::RemovePolicyPermission => call.link("permissionId", PharmaPay::remove_policy_permission).await,
            Route::ListSettings => call.read(PharmaPay::list_settings, each(SettingDto::from)).await,
            Route::GetSetting => settings::get(self, principal, call.req).await,
            Route::UpdateSetting => settings::update(self, principal, call.req).await,
            Route::DashboardSummary => call.read(PharmaPay::dashboard_summary, SummaryDto::from).await,
            Route::TopVendors => dashboard::top_vendors(self, principal, call.req).await,
            Route::RecentInvoices => dashboard::recent_invoices(self, principal, call.req).await,
            Route::MonthlyTransactions => call.read(PharmaPay::monthly_transactions, each(MonthlyDto::from)).await,
            Route::Payables => call.read(PharmaPay::payables, PayablesDto::from).await,
            Route::LicenceAlerts => dashboard::licence_alerts(self, principal, call.req).await,
            Route::Aging => call.page_like(AgingQuery::from_params, PharmaPay::aging, AgingDto::from).await,
            Route::VendorStatement => {
                let vendor_id = VendorId(call.req.id("id")?);
                let query = StatementQuery::from_params(&call.req.query)?;
                let statement = self.engine.vendor_statement(principal, vendor_id, &query).await?;
                Ok(routes::ok(&StatementDto::from(statement)))
            }
            Route::GetProfile => call.read(PharmaPay::profile, ProfileDto::from).await,
            Route::UpdateProfile => profile::update(self, principal, call.req).await,
            Route::ChangePassword => profile::change_password(self, principal, call.req).await,
            Route::ListAudit => call.page(AuditQuery::from_params, PharmaPay::list_audit, AuditEntryDto::from).await,
            Route::VendorsReport => reports::vendors(self, principal, call.req).await,
            Route::InvoicesReport => reports::invoices(self, principal, call.req).await,
            Route::TransactionsReport => reports::transactions(self, principal, call.req).await,
            Route::AgingReport => reports::aging(self, principal, call.req).await,
            Route::VendorStatementReport => reports::vendor_statement(self, principal, call.req).await,
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
            Matched::Route(Route::MyPermissions, Guard::Token, _)
        ));
        match router.find(&Method::GET, "/api/users/7/policies") {
            Matched::Route(Route::ListUserPolicies, Guard::Token, params) => {
                assert_eq!(params, [("id".to_owned(), "7".to_owned())])
            }
            _ => panic!("user policies route"),
        }
        match router.find(&Method::PATCH, "/api/vendors/1") {
            Matched::WrongMethod(allow) => assert_eq!(allow, "GET, PUT, DELETE"),
            _ => panic!("405 for a known path"),
        }
        assert!(matches!(router.find(&Method::GET, "/api/nothing"), Matched::Unknown));
        assert!(matches!(router.find(&Method::GET, "/api/vendors/1/extra"), Matched::Unknown));
    }

    #[test]
    fn only_sign_in_onboarding_health_and_the_document_are_public() {
        let public: Vec<&str> =
            ROUTES.iter().filter(|(_, _, _, guard)| *guard == Guard::Public).map(|(_, path, _, _)| *path).collect();
        assert_eq!(
            public,
            ["/api/auth/login", "/api/onboarding/status", "/api/onboarding/setup", "/api/health", "/api/openapi.json"]
        );
    }

    #[test]
    fn restores_need_the_update_permission_of_their_collection() {
        // D15.
        for (_, path, _, guard) in ROUTES.iter().filter(|(_, path, _, _)| path.ends_with("/restore")) {
            match guard {
                Guard::Permission(access) => assert_eq!(access.action, Update, "{path}"),
                other => panic!("{path} is guarded by {other:?}"),
            }
        }
    }
}
