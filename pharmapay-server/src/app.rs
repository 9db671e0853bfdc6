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

use std::sync::Arc;
use std::time::Duration;

use hyper::Method;
use pharmapay_core::{Access, Action, Collection, PharmaPay, Store};
use pharmapay_store_memory::MemoryStore;

use crate::download::{DownloadLimits, Downloads};
use crate::http::{Cors, Reply, Req, parse_query};
use crate::problem::ApiError;
use crate::routes::{self, Call, Route};
use crate::turns::Turns;

/// Every route as the table states it: method, path template and what it requires of its
/// caller (the spec's Permission column; D15 for restores, D19 for a user's policies, D22 for
/// the audit log, D24 for the profile), in the table's order. Path parameters are in braces.
///
/// Handlers are the one part of a row that depends on the store; these rows are read from the
/// memory store's table, and every store's table holds the same ones.
pub fn route_table() -> Vec<(Method, &'static str, Guard)> {
    routes::table::<MemoryStore>().into_iter().map(|route| (route.method, route.path, route.guard)).collect()
}

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
pub const fn needs(collection: Collection, action: Action) -> Guard {
    Guard::Permission(Access::new(collection, action))
}

/// The guard of a route that needs every one of `accesses`.
pub const fn needs_all(accesses: &'static [Access]) -> Guard {
    Guard::AllOf(accesses)
}

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
    /// The router of [`routes::table`].
    ///
    /// # Panics
    /// When the table holds conflicting paths, which the tests would catch first.
    pub fn new() -> Self {
        let routes = routes::table::<S>();
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

impl<S: Store> Default for Router<S> {
    fn default() -> Self {
        Self::new()
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
            router: Router::new(),
            request_timeout,
            max_connections: max_connections.max(1),
            downloads: Downloads::new(downloads),
            uploads,
        })
    }

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

#[cfg(test)]
mod tests {
    use pharmapay_core::Action::Update;

    use super::*;

    #[test]
    fn the_table_builds_and_static_segments_win() {
        let router = Router::<MemoryStore>::new();
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
