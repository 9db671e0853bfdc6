//! The application state every handler shares, the router over the route table, and the
//! dispatch.
//!
//! The route table is [`crate::routes::table`]: a row per method and path, each naming the
//! [`Guard`] it requires and its handler, written in the file of its resource. [`App::dispatch`]
//! authenticates the caller and checks the guard before anything else about the request is
//! read (its path parameters, query and body), so a caller without access gets 401 or 403 and
//! never learns the parameter rules from a 400; it then runs the row's handler. A path that
//! exists with another method answers 405 with `Allow` (D7); an unknown path answers 404. The
//! OpenAPI document is built from the same table ([`crate::openapi`]).

use std::time::Duration;

use std::pin::Pin;

use hyper::Method;
use pharmapay_core::{Error, PharmaPay, Principal, Store};

use crate::guard::Guard;
use crate::http::{Cors, MAX_BODY_BYTES, Req, parse_query};
use crate::openapi::Operation;
use crate::problem::ApiError;
use crate::reply::Reply;
use crate::turns::{Downloads, Turns};

/// The methods one path answers: each with its row's place in the table.
struct PathRoutes {
    methods: Vec<(Method, usize)>,
    allow: String,
}

/// A request's place in the table.
pub enum Matched<'a, S> {
    /// A route, with its path parameters.
    Route(&'a Route<S>, Vec<(String, String)>),
    /// The path exists with other methods (their `Allow` list).
    WrongMethod(String),
    /// No such path.
    Unknown,
}

/// Maps paths to their routes.
pub struct Router<S> {
    routes: Vec<Route<S>>,
    paths: Vec<PathRoutes>,
    tree: matchit::Router<usize>,
}

impl<S: Store> Router<S> {
    /// The router of `routes`, the route table ([`crate::routes::table`]).
    ///
    /// # Panics
    /// When the table holds conflicting paths, which the tests would catch first.
    pub fn new(routes: Vec<Route<S>>) -> Self {
        let mut paths: Vec<PathRoutes> = Vec::new();
        let mut templates: Vec<&str> = Vec::new();
        let mut tree = matchit::Router::new();
        for (row, route) in routes.iter().enumerate() {
            let index = match templates.iter().position(|known| *known == route.path) {
                Some(index) => index,
                None => {
                    tree.insert(route.path, paths.len()).expect("the route table has no conflicting paths");
                    templates.push(route.path);
                    paths.push(PathRoutes { methods: Vec::new(), allow: String::new() });
                    paths.len() - 1
                }
            };
            paths[index].methods.push((route.method.clone(), row));
        }
        for path in &mut paths {
            let names: Vec<&str> = path.methods.iter().map(|(method, _)| method.as_str()).collect();
            path.allow = names.join(", ");
        }
        Self { routes, paths, tree }
    }
}

impl<S> Router<S> {
    /// Finds the route for `method` and `path`.
    pub fn find(&self, method: &Method, path: &str) -> Matched<'_, S> {
        let Ok(found) = self.tree.at(path) else { return Matched::Unknown };
        let entry = &self.paths[*found.value];
        match entry.methods.iter().find(|(known, _)| known == method) {
            Some((_, row)) => {
                let params = found.params.iter().map(|(name, value)| (name.to_owned(), value.to_owned())).collect();
                Matched::Route(&self.routes[*row], params)
            }
            None => Matched::WrongMethod(entry.allow.clone()),
        }
    }
}

/// The default of [`App::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// How many uploaded files a server reads at once unless configured (D51): each may grow its
/// memory by up to 256 MiB, so two stay within half a gigabyte.
pub const DEFAULT_UPLOADS_AT_ONCE: usize = 2;

/// How long an upload waits for its turn unless configured, as a report does.
pub const DEFAULT_UPLOAD_WAIT: Duration = Duration::from_secs(30);

/// What every handler can reach: the engine and the server's settings.
pub struct App<S> {
    /// The engine.
    pub engine: PharmaPay<S>,
    /// Cross-origin rules.
    pub cors: Cors,
    /// The store's kind, for `/api/health`: `sqlite`, `postgres` or `memory`.
    pub backend: &'static str,
    /// The route table.
    pub router: Router<S>,
    /// The API document of the route table, served at `GET /api/openapi.json`: built on the
    /// first request for it, not at start-up.
    pub api_document: fn() -> &'static [u8],
    /// How long a client may take to send its headers, and again its body, and how long it may
    /// leave an answer unread before it is cut off.
    pub request_timeout: Duration,
    /// How many connections are served at once; further clients wait to be accepted.
    pub max_connections: usize,
    /// How report downloads share the server: their slots, their pace and how many are open.
    pub downloads: Downloads,
    /// The turns at reading and writing uploaded files (D51).
    pub uploads: Turns,
}

impl<S: Store> App<S> {
    /// Checks the caller against `route`'s guard, then reads the query string `query` into
    /// [`Req::query`] and runs the route's handler.
    ///
    /// The check comes first, before any path parameter, query parameter or body is read, so a
    /// caller without access learns nothing from validation errors (403 before 400). Handlers
    /// do not check again, but the engine does.
    ///
    /// # Errors
    /// 401 for a missing or invalid token, 403 for a missing permission, 400 for a malformed
    /// query string, and whatever the handler answers.
    pub async fn dispatch(&self, route: &Route<S>, query: &str, mut req: Req) -> Result<Reply, ApiError> {
        let principal = match route.guard {
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
        (route.handler)(Call { app: self, principal: principal.as_ref(), req }).await
    }
}

/// What a handler answers: the future of its reply, boxed so that every row's handler has the
/// same type (the one allocation a request pays for the table).
pub type Answer<'a> = Pin<Box<dyn Future<Output = Result<Reply, ApiError>> + Send + 'a>>;

/// A route's handler: serves a request that passed the route's guard.
pub type Handler<S> = for<'a> fn(Call<'a, S>) -> Answer<'a>;

/// One row of the route table: a method and path template (parameters in braces), what the
/// route requires of its caller, its operation in the API document, and its handler.
pub struct Route<S> {
    /// The method.
    pub method: Method,
    /// The path template, such as `/api/vendors/{id}`.
    pub path: &'static str,
    /// What the caller must hold; checked before anything else about the request is read.
    pub guard: Guard,
    /// The route in the API document; the document adds what the guard requires.
    pub operation: fn() -> Operation,
    /// Serves the request.
    pub handler: Handler<S>,
    /// The largest body the route reads: [`MAX_BODY_BYTES`] (D7) but for file uploads (D45).
    pub max_body: usize,
}

impl<S> Route<S> {
    /// A `GET` route.
    pub fn get(path: &'static str, guard: Guard, operation: fn() -> Operation, handler: Handler<S>) -> Self {
        Self { method: Method::GET, path, guard, operation, handler, max_body: MAX_BODY_BYTES }
    }

    /// A `POST` route.
    pub fn post(path: &'static str, guard: Guard, operation: fn() -> Operation, handler: Handler<S>) -> Self {
        Self { method: Method::POST, path, guard, operation, handler, max_body: MAX_BODY_BYTES }
    }

    /// A `PUT` route.
    pub fn put(path: &'static str, guard: Guard, operation: fn() -> Operation, handler: Handler<S>) -> Self {
        Self { method: Method::PUT, path, guard, operation, handler, max_body: MAX_BODY_BYTES }
    }

    /// A `DELETE` route.
    pub fn delete(path: &'static str, guard: Guard, operation: fn() -> Operation, handler: Handler<S>) -> Self {
        Self { method: Method::DELETE, path, guard, operation, handler, max_body: MAX_BODY_BYTES }
    }

    /// The route reading bodies of up to `bytes` (a file upload, D45).
    pub fn with_max_body(self, bytes: usize) -> Self {
        Self { max_body: bytes, ..self }
    }
}

/// A request that passed its route's guard, on its way to one engine call: the application, the
/// caller and the request.
///
/// Each method reads the request's parameters in a fixed order (the path's `{id}` first, then
/// the body), calls the engine method it is given with the caller, and answers with the DTO
/// `to_dto` makes of the result.
pub struct Call<'a, S> {
    /// The application.
    pub app: &'a App<S>,
    /// The caller, already checked against the route's guard; `None` on a public route.
    pub principal: Option<&'a Principal>,
    /// The request, its query string read.
    pub req: Req,
}

impl<S: Store> App<S> {
    /// The caller proven by the request's bearer token.
    ///
    /// # Errors
    /// 401 when the token is missing, malformed, forged, expired or revoked.
    pub async fn principal(&self, req: &Req) -> Result<Principal, ApiError> {
        let token = req.bearer_token().ok_or(ApiError::Core(Error::Unauthenticated))?;
        Ok(self.engine.authenticate(token).await?)
    }
}

#[cfg(test)]
mod tests {
    use pharmapay_core::Action::Update;
    use pharmapay_store_memory::MemoryStore;

    use super::*;
    use crate::routes::{route_table, table};

    #[test]
    fn the_table_builds_and_static_segments_win() {
        let router = Router::<MemoryStore>::new(table());
        match router.find(&Method::GET, "/api/users/me/permissions") {
            Matched::Route(route, _) => {
                assert_eq!((route.path, route.guard), ("/api/users/me/permissions", Guard::Token))
            }
            _ => panic!("my permissions route"),
        }
        match router.find(&Method::GET, "/api/users/7/policies") {
            Matched::Route(route, params) => {
                assert_eq!((route.path, route.guard), ("/api/users/{id}/policies", Guard::Token));
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
        let public: Vec<&str> = route_table()
            .into_iter()
            .filter(|(_, _, guard)| *guard == Guard::Public)
            .map(|(_, path, _)| path)
            .collect();
        assert_eq!(
            public,
            ["/api/auth/login", "/api/onboarding/status", "/api/onboarding/setup", "/api/health", "/api/openapi.json"]
        );
    }

    #[test]
    fn restores_need_the_update_permission_of_their_collection() {
        // D15.
        for (_, path, guard) in route_table().into_iter().filter(|(_, path, _)| path.ends_with("/restore")) {
            match guard {
                Guard::Permission(access) => assert_eq!(access.action, Update, "{path}"),
                other => panic!("{path} is guarded by {other:?}"),
            }
        }
    }
}
