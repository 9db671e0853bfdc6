//! Idempotent creates (D23).
//!
//! A client may send an `Idempotency-Key` with any create. The first request with a key claims
//! it; the write it guards marks the claim complete inside the write's own store transaction, so
//! a key never points at a half-made record. The same key with the same request then replays the
//! first answer instead of creating again; with a different request it is refused (422); while
//! the first request is still running, a retry is told so (409). Claims live in the store, so
//! every server on one database agrees, and they expire after 24 hours.

pub mod rules;

use jiff::{SignedDuration, Timestamp};

use crate::ids::UserId;

/// How long a key is remembered.
pub const KEY_LIFETIME: SignedDuration = SignedDuration::from_hours(24);

/// How long a claim may stay unfinished before it is taken to be abandoned (the server that
/// held it died mid-request) and may be claimed again.
pub const ABANDONED_AFTER: SignedDuration = SignedDuration::from_secs(60);

/// Longest key accepted.
pub const KEY_MAX: usize = 255;

/// A client-chosen idempotency key: 1 to 255 visible ASCII characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

/// Why a key was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("must be 1 to 255 visible ASCII characters")]
pub struct InvalidIdempotencyKey;

impl IdempotencyKey {
    /// Parses a key.
    ///
    /// # Errors
    /// [`InvalidIdempotencyKey`] when empty, too long or not visible ASCII.
    pub fn parse(value: &str) -> Result<Self, InvalidIdempotencyKey> {
        let valid = !value.is_empty() && value.len() <= KEY_MAX && value.bytes().all(|b| b.is_ascii_graphic());
        if valid { Ok(Self(value.to_owned())) } else { Err(InvalidIdempotencyKey) }
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A create request carrying a key: the key plus a fingerprint of the request (for example a
/// hash of method, path and canonical body) that tells "the same request" from another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyRequest {
    /// The client's key.
    pub key: IdempotencyKey,
    /// A fingerprint of the request, at most 128 characters.
    pub fingerprint: String,
}

/// Proof that this request holds the claim on a key; the store completes it in the same
/// transaction as the write it guards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyTicket {
    /// Whose key.
    pub user_id: UserId,
    /// The key.
    pub key: IdempotencyKey,
}

/// A claim attempt, as the store receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyClaim {
    /// Whose key: keys are per user.
    pub user_id: UserId,
    /// The key.
    pub key: IdempotencyKey,
    /// The request's fingerprint.
    pub fingerprint: String,
    /// Now.
    pub now: Timestamp,
}

impl IdempotencyClaim {
    /// Claims made before this instant have expired and may be replaced.
    pub fn expired_before(&self) -> Timestamp {
        self.now.checked_sub(KEY_LIFETIME).unwrap_or(Timestamp::MIN)
    }

    /// Unfinished claims made before this instant are abandoned and may be taken over.
    pub fn abandoned_before(&self) -> Timestamp {
        self.now.checked_sub(ABANDONED_AFTER).unwrap_or(Timestamp::MIN)
    }
}

/// What a claim attempt found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// The key is now held by this request.
    Claimed,
    /// Another request holds the key and has not finished.
    InProgress,
    /// The key was used with a different request.
    Mismatch,
    /// The key's request finished: it created record `entity_id`, and the caller may have
    /// recorded the response it sent.
    Completed {
        /// The id of the record created.
        entity_id: i64,
        /// The response recorded with [`crate::store::SessionStore::record_idempotent_response`], if any.
        response: Option<Vec<u8>>,
    },
}

/// The result of a create that may have been replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Created<T> {
    /// The record was created by this call.
    New(T),
    /// The key had been used for this request before: nothing was created.
    Replayed(Replay<T>),
}

impl<T> Created<T> {
    /// The same result with the record mapped by `f`; a recorded response stays as it was.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Created<U> {
        match self {
            Created::New(value) => Created::New(f(value)),
            Created::Replayed(Replay::Current(value)) => Created::Replayed(Replay::Current(f(value))),
            Created::Replayed(Replay::Recorded(bytes)) => Created::Replayed(Replay::Recorded(bytes)),
        }
    }
}

/// What a replay answers with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replay<T> {
    /// The response recorded for the first request, byte for byte.
    Recorded(Vec<u8>),
    /// No response was recorded (the first server stopped right after the write): the record
    /// the first request created, as it is now.
    Current(T),
}
