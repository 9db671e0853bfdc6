//! When tokens are issued and when they stop working, to the second (D20, D39).
//!
//! A token carries its issue time `iat` in whole seconds. Each user has a [`TokenState`]: the
//! last second up to which tokens are revoked, and the latest `iat` ever issued to them. A token
//! works while its `iat` is after the revoked second. Whole seconds must not blur the order of a
//! revocation and an issue that happen in the same second, so both move the state forward:
//! - an issue takes a second after the revoked one, even if that is a second ahead of the clock;
//! - a revocation covers every token issued before it, even one dated a second ahead.
//!
//! Stores apply [`issue`] and [`revoke`] under the user's row lock, in the transaction that
//! signs the user in or takes something away from them, so a sign-in racing a demotion either
//! sees the demotion or is revoked by it.

use jiff::Timestamp;

/// How far ahead of the clock a token's `iat` may lie before it is refused (D39).
pub const MAX_FUTURE_SECONDS: i64 = 60;

/// A user's token bookkeeping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenState {
    /// Tokens issued in or before this second (Unix seconds) no longer work; 0 revokes nothing.
    pub revoked_through: i64,
    /// The latest `iat` issued to the user (Unix seconds); 0 when none was.
    pub last_issued: i64,
}

/// The `iat` of a token issued at `now`, and the state after issuing it.
pub fn issue(state: TokenState, now: Timestamp) -> (i64, TokenState) {
    let iat = now.as_second().max(state.revoked_through.saturating_add(1));
    (iat, TokenState { last_issued: state.last_issued.max(iat), ..state })
}

/// The state after revoking, at `at`, every token issued so far.
pub fn revoke(state: TokenState, at: Timestamp) -> TokenState {
    let revoked_through = at.as_second().max(state.last_issued).max(state.revoked_through);
    TokenState { revoked_through, ..state }
}

/// True when a token issued at second `iat` still works for a user whose tokens are revoked
/// through second `revoked_through`.
pub fn is_current(iat: i64, revoked_through: i64) -> bool {
    iat > revoked_through
}

/// True when a token's own times are believable at `now`: its lifetime (`exp - iat`) is at most
/// `lifetime_seconds`, and its `iat` is at most [`MAX_FUTURE_SECONDS`] ahead of `now`.
pub fn times_are_plausible(iat: i64, exp: i64, lifetime_seconds: i64, now: Timestamp) -> bool {
    exp.saturating_sub(iat) <= lifetime_seconds && iat <= now.as_second().saturating_add(MAX_FUTURE_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(second: i64, millis: i64) -> Timestamp {
        Timestamp::from_millisecond(second * 1000 + millis).unwrap()
    }

    #[test]
    fn a_fresh_user_gets_tokens_dated_now() {
        let (iat, state) = issue(TokenState::default(), at(1_000, 250));
        assert_eq!(iat, 1_000);
        assert_eq!(state, TokenState { revoked_through: 0, last_issued: 1_000 });
        assert!(is_current(iat, state.revoked_through));
    }

    #[test]
    fn a_revocation_ends_every_earlier_token() {
        let (iat, state) = issue(TokenState::default(), at(1_000, 0));
        let state = revoke(state, at(1_500, 0));
        assert!(!is_current(iat, state.revoked_through));
    }

    #[test]
    fn a_token_issued_in_the_second_of_a_revocation_but_before_it_is_revoked() {
        let (iat, state) = issue(TokenState::default(), at(1_000, 100));
        let state = revoke(state, at(1_000, 900));
        assert!(!is_current(iat, state.revoked_through));
    }

    #[test]
    fn a_token_issued_in_the_second_of_a_revocation_but_after_it_works() {
        let state = revoke(TokenState::default(), at(1_000, 100));
        let (iat, _) = issue(state, at(1_000, 900));
        assert_eq!(iat, 1_001, "dated a second ahead of the clock");
        assert!(is_current(iat, state.revoked_through));
    }

    #[test]
    fn a_second_revocation_in_the_same_second_still_revokes() {
        let first = revoke(TokenState::default(), at(1_000, 100));
        let (iat, issued) = issue(first, at(1_000, 500));
        let second = revoke(issued, at(1_000, 900));
        assert!(
            !is_current(iat, second.revoked_through),
            "the token dated 1001 must not outlive the second revocation"
        );
        let (later, _) = issue(second, at(1_000, 950));
        assert!(is_current(later, second.revoked_through), "a token issued after both works");
    }

    #[test]
    fn revocations_never_move_backwards() {
        let state = TokenState { revoked_through: 2_000, last_issued: 1_500 };
        assert_eq!(revoke(state, at(1_000, 0)).revoked_through, 2_000, "a clock behind the state changes nothing");
    }

    #[test]
    fn token_times_must_be_plausible() {
        let now = at(10_000, 0);
        assert!(times_are_plausible(10_000, 10_000 + 86_400, 86_400, now));
        assert!(!times_are_plausible(10_000, 10_000 + 86_401, 86_400, now), "longer than the configured lifetime");
        assert!(times_are_plausible(10_060, 10_060 + 3_600, 86_400, now), "a minute ahead is tolerated");
        assert!(!times_are_plausible(10_061, 10_061 + 3_600, 86_400, now), "more than a minute ahead");
    }
}
