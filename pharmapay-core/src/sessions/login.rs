//! The failed-login window (D21, D40).
//!
//! Failures are counted per email key in a window that opens with the first failure and lasts
//! [`WINDOW`]. Once [`LIMIT`] failures are recorded in the window, every attempt for that email
//! is refused until it closes, whatever the password; a success before that clears the count.
//! Only failures count, never attempts in flight, so however many right-password sign-ins run
//! at once none is refused while fewer than five failures are recorded, and parallel wrong
//! guesses still get at most five answers before the refusals, because each failure is recorded
//! (or refused) atomically under the attempts row's lock.
//!
//! A refused attempt writes nothing, except that the first one of a window may leave a single
//! note in the audit log ([`note_throttling`]).
//!
//! D48 amends D40: failures count against the user's account as well as against the email
//! typed ([`account_key`]), so a caller who changes the account's email (with a stolen token,
//! say) does not start the count again. A sign-in or a password change is refused while either
//! count has reached the limit ([`gate_both`]).

use jiff::{SignedDuration, Timestamp};

use crate::ids::UserId;

/// Failures allowed per email within [`WINDOW`] (D21).
pub const LIMIT: u32 = 5;
/// How long the window of failures lasts from its first failure (D21).
pub const WINDOW: SignedDuration = SignedDuration::from_mins(15);
/// The key under which attempts with an email that cannot be an address are counted and
/// audited (D40): never the text as typed, which may be a password.
pub const INVALID_EMAIL_KEY: &str = "(invalid)";

/// The failures recorded for one email key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoginAttempts {
    /// The first failure of the window.
    pub window_start: Timestamp,
    /// Failures recorded in the window.
    pub failures: u32,
    /// Whether the window's throttling was noted in the audit log.
    pub throttle_noted: bool,
}

/// Whether a login attempt may go on (D21).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoginGate {
    /// The attempt may check its password.
    Allowed,
    /// Too many failures: no attempt until `until`.
    Throttled {
        /// When the window closes.
        until: Timestamp,
    },
}

/// The key under which failures are counted against the account of `user` (D48), beside the
/// email key: no email key takes this form (an address holds an `@`, and neither it nor
/// [`INVALID_EMAIL_KEY`] starts with `#`).
pub fn account_key(user: UserId) -> String {
    format!("#user:{}", user.get())
}

/// Whether an attempt at `now` may check its password, given the failures recorded for the
/// email typed and for the account it names (D48): refused while either is throttled, until the
/// later of their windows closes.
pub fn gate_both(email: Option<LoginAttempts>, account: Option<LoginAttempts>, now: Timestamp) -> LoginGate {
    match (gate(email, now), gate(account, now)) {
        (LoginGate::Throttled { until: first }, LoginGate::Throttled { until: second }) => {
            LoginGate::Throttled { until: first.max(second) }
        }
        (throttled @ LoginGate::Throttled { .. }, LoginGate::Allowed) | (LoginGate::Allowed, throttled) => throttled,
    }
}

/// When a window that started at `window_start` closes.
pub fn window_end(window_start: Timestamp) -> Timestamp {
    window_start.saturating_add(WINDOW).unwrap_or(Timestamp::MAX)
}

/// The attempts still in their window at `now` (`None` once it has closed).
pub fn current(attempts: Option<LoginAttempts>, now: Timestamp) -> Option<LoginAttempts> {
    attempts.filter(|attempts| now < window_end(attempts.window_start))
}

/// Whether an attempt at `now` may check its password.
pub fn gate(attempts: Option<LoginAttempts>, now: Timestamp) -> LoginGate {
    match current(attempts, now) {
        Some(attempts) if attempts.failures >= LIMIT => {
            LoginGate::Throttled { until: window_end(attempts.window_start) }
        }
        _ => LoginGate::Allowed,
    }
}

/// What a failed password check at `now` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The failure is recorded: write these attempts and audit the failure.
    Counted(LoginAttempts),
    /// The limit was reached meanwhile: write nothing and answer as throttled.
    Throttled {
        /// When the window closes.
        until: Timestamp,
    },
}

/// Records a failed password check at `now` against `attempts`.
pub fn fail(attempts: Option<LoginAttempts>, now: Timestamp) -> Failure {
    match current(attempts, now) {
        Some(attempts) if attempts.failures >= LIMIT => Failure::Throttled { until: window_end(attempts.window_start) },
        Some(attempts) => Failure::Counted(LoginAttempts { failures: attempts.failures + 1, ..attempts }),
        None => Failure::Counted(LoginAttempts { window_start: now, failures: 1, throttle_noted: false }),
    }
}

/// The attempts to write when a throttled attempt at `now` is the window's first to be noted in
/// the audit log; `None` when there is nothing to note (not throttled, or noted already).
pub fn note_throttling(attempts: Option<LoginAttempts>, now: Timestamp) -> Option<LoginAttempts> {
    let attempts = current(attempts, now)?;
    (attempts.failures >= LIMIT && !attempts.throttle_noted)
        .then_some(LoginAttempts { throttle_noted: true, ..attempts })
}

/// The instant before which windows have closed: rows older than this may be purged.
pub fn purge_before(now: Timestamp) -> Timestamp {
    now.saturating_sub(WINDOW).unwrap_or(Timestamp::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(minutes: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + minutes * 60).unwrap()
    }

    fn after(failures: u32, start: Timestamp) -> Option<LoginAttempts> {
        Some(LoginAttempts { window_start: start, failures, throttle_noted: false })
    }

    #[test]
    fn an_account_is_throttled_whichever_email_is_typed() {
        let (now, full, one) = (t(1), after(LIMIT, t(0)), after(1, t(0)));
        assert_eq!(gate_both(one, None, now), LoginGate::Allowed);
        assert_eq!(gate_both(one, full, now), LoginGate::Throttled { until: window_end(t(0)) }, "the account is full");
        assert_eq!(gate_both(full, one, now), LoginGate::Throttled { until: window_end(t(0)) }, "the email is full");
        let later = after(LIMIT, t(1));
        assert_eq!(gate_both(full, later, now), LoginGate::Throttled { until: window_end(t(1)) }, "the later close");
        assert_ne!(account_key(UserId(7)), "(invalid)");
        assert!(!account_key(UserId(7)).contains('@'), "no email key can be an account's");
    }

    #[test]
    fn a_first_failure_opens_the_window() {
        assert_eq!(
            fail(None, t(0)),
            Failure::Counted(LoginAttempts { window_start: t(0), failures: 1, throttle_noted: false })
        );
    }

    #[test]
    fn five_failures_are_counted_and_the_sixth_is_refused() {
        let mut attempts = None;
        for n in 1..=LIMIT {
            assert_eq!(gate(attempts, t(1)), LoginGate::Allowed, "attempt {n} may check");
            match fail(attempts, t(1)) {
                Failure::Counted(next) => attempts = Some(next),
                other => panic!("failure {n} must count, got {other:?}"),
            }
        }
        assert_eq!(
            gate(attempts, t(1)),
            LoginGate::Throttled { until: t(16) },
            "closed a quarter hour after the first"
        );
        assert_eq!(fail(attempts, t(2)), Failure::Throttled { until: t(16) }, "a late failure is not counted");
    }

    #[test]
    fn fewer_than_five_failures_never_refuse() {
        for failures in 0..LIMIT {
            assert_eq!(gate(after(failures, t(0)), t(14)), LoginGate::Allowed, "{failures} failures");
        }
    }

    #[test]
    fn the_window_closes_fifteen_minutes_after_its_first_failure() {
        assert_eq!(gate(after(LIMIT, t(0)), t(15)), LoginGate::Allowed);
        assert_eq!(
            fail(after(LIMIT, t(0)), t(15)),
            Failure::Counted(LoginAttempts { window_start: t(15), failures: 1, throttle_noted: false })
        );
    }

    #[test]
    fn throttling_is_noted_once_per_window() {
        let throttled = after(LIMIT, t(0));
        let noted = note_throttling(throttled, t(3)).expect("the first refusal is noted");
        assert!(noted.throttle_noted);
        assert_eq!(note_throttling(Some(noted), t(4)), None, "later refusals write nothing");
        assert_eq!(note_throttling(after(LIMIT - 1, t(0)), t(3)), None, "nothing to note before the limit");
        assert_eq!(note_throttling(Some(noted), t(16)), None, "a closed window needs no note");
    }

    #[test]
    fn rows_of_closed_windows_may_be_purged() {
        assert_eq!(purge_before(t(20)), t(5));
    }
}
