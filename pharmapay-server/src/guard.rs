//! What a route requires of its caller before its handler runs: nothing, a token, or
//! permissions (the spec's Permission column), checked by [`crate::app::App::dispatch`] before
//! anything else about the request is read.

use pharmapay_core::{Access, Action, Collection};

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
