//! The one error type of the engine.
//!
//! Every engine method returns [`Result<T>`]: its [`Error`] names what went wrong in domain terms
//! (a field was invalid, a record is missing, a rule was broken) and never in transport terms.
//! The server maps each variant to an HTTP status exactly once; embedders match on the variants.
//! Store backends report through [`StoreError`], which the engine translates.

use std::time::Duration;

use crate::base::faults::{StoreError, UniqueKey};
pub use crate::base::fields::{Entity, FieldErrors, RuleBroken};
use crate::base::permissions::Requirement;

/// The result type of every engine method.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an idempotent create was refused (D23).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdempotencyClash {
    /// The key was used before with a different request body (422).
    DifferentRequest,
    /// The first request with this key has not finished yet (409).
    InProgress,
    /// What the first request answered is no longer true and may not be shown again: the
    /// secret of a webhook rotated or deleted since its create (409, D51).
    Superseded,
}

/// Everything that can go wrong in an engine call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input was invalid; messages are keyed by field path.
    #[error("invalid input: {0}")]
    Validation(FieldErrors),
    /// Rows of an imported file were refused (D45): their errors by `row<N>.<field>`, and how
    /// many rows failed.
    #[error("{0}")]
    Rows(crate::imports::RowErrors),
    /// The request is larger than the operation takes: an import's file beyond its rows or its
    /// unpacked size (D45).
    #[error("{0}")]
    TooLarge(String),
    /// The record does not exist, or it was soft-deleted (D17).
    #[error("{entity} not found")]
    NotFound {
        /// What was looked for.
        entity: Entity,
    },
    /// A unique value is already taken (D4, D5, D15); [`UniqueKey::entity`] names the kind of
    /// record holding it.
    #[error("the {0} is already taken")]
    Conflict(UniqueKey),
    /// A business rule refused the request.
    #[error("{}", .0.message())]
    Rule(RuleBroken),
    /// The email and password did not match an active user (login only).
    #[error("invalid email or password")]
    InvalidCredentials,
    /// No valid token: missing, malformed, forged, expired, or revoked (D20).
    #[error("authentication required")]
    Unauthenticated,
    /// The caller is authenticated but lacks what the operation requires.
    #[error("missing permission {required}")]
    Forbidden {
        /// What would have been needed.
        required: Requirement,
    },
    /// Too many failed logins for this email (D21).
    #[error("too many failed logins; retry after {} s", retry_after.as_secs())]
    Throttled {
        /// How long until the next attempt is accepted.
        retry_after: Duration,
    },
    /// An idempotency key was reused in a way that cannot be replayed (D23).
    #[error("idempotency key clash: {0:?}")]
    Idempotency(IdempotencyClash),
    /// The store cannot be reached right now.
    #[error("the store is unavailable")]
    Unavailable(#[source] StoreError),
    /// The store failed in a way the caller cannot fix.
    #[error("store failure")]
    Store(#[source] StoreError),
}

impl Error {
    /// A validation error for one field.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Validation(FieldErrors::single(field, message))
    }

    /// A not-found error for `entity`.
    pub fn not_found(entity: Entity) -> Self {
        Error::NotFound { entity }
    }
}

impl FieldErrors {
    /// `Ok(())` when empty, otherwise [`Error::Validation`] with these messages.
    pub fn into_result(self) -> Result<()> {
        if self.is_empty() { Ok(()) } else { Err(Error::Validation(self)) }
    }
}
