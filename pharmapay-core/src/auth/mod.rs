//! Proving who the caller is: password hashing (D29) and signed tokens (spec, Authentication).
//!
//! Passwords are hashed with Argon2id. Hashing costs about 20 ms of one core and 19 MiB, so it
//! runs on threads of its own, never on the async workers, and a semaphore bounds how many
//! hashes run at once: a flood of logins queues instead of exhausting memory. On Linux those
//! threads run at a lower scheduling priority (nice 10) than the rest of the process, so while
//! the machine is busy a burst of logins takes what serving requests leaves and slows logins,
//! not every other request.
//!
//! Tokens are HS256 JWTs carrying the spec's claims and their issue second `iat` (D39).
//! Verification pins the algorithm, requires `exp`, `iat`, `iss` and `aud`, rejects claims of
//! the wrong JSON type, checks expiry against the engine's [`crate::Clock`] rather than the
//! system time, and refuses a token whose lifetime is longer than the configured one or whose
//! `iat` lies more than a minute ahead (see [`crate::sessions::rules`]).
//!
//! # Layout
//! - `tokens.rs`: the signing secret, token settings, and issuing and verifying tokens.
//! - `passwords.rs`: Argon2id hashing and verifying, on threads of their own.

mod passwords;
mod tokens;

pub use passwords::PasswordOptions;
pub(crate) use passwords::Passwords;
pub(crate) use tokens::Tokens;
pub use tokens::{IssuedToken, MIN_SECRET_CHARS, Secret, TokenConfigError, TokenSettings};
