//! Deliveries of events to webhooks (D47): which events a webhook takes, which pending
//! deliveries a server may claim, and what a try leaves a delivery as.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};

use crate::domain::webhook::{ALL_EVENTS, Attempt, DeliveryStatus};

/// How long after each failed try the next is made: about 5 s, 30 s, 2 min, 10 min and 1 h,
/// then hourly (D47).
pub const RETRY_DELAYS: [SignedDuration; 5] = [
    SignedDuration::from_secs(5),
    SignedDuration::from_secs(30),
    SignedDuration::from_mins(2),
    SignedDuration::from_mins(10),
    SignedDuration::from_hours(1),
];

/// How long a delivery is tried before it is marked `Failed` (D47).
pub const GIVE_UP_AFTER: SignedDuration = SignedDuration::from_hours(24);

/// Tries of one webhook a server makes at once (D47: a few).
pub const IN_FLIGHT_PER_WEBHOOK: usize = 4;

/// Deliveries of one webhook claimed at once, across every servers: a server tries them
/// [`IN_FLIGHT_PER_WEBHOOK`] at a time, so one round of the database serves several rounds of
/// tries.
pub const CLAIMED_PER_WEBHOOK: usize = 16;

/// How long a claim keeps other servers off a delivery: longer than the claimed deliveries'
/// tries take at [`IN_FLIGHT_PER_WEBHOOK`] at once with a 10 s timeout each (40 s), so a
/// delivery is never tried twice at once, and short enough that a server that died mid-try
/// leaves its claims to others within a minute.
pub const CLAIM_LEASE: SignedDuration = SignedDuration::from_secs(60);

/// Whether a webhook that takes `events` takes an event of type `kind`.
pub fn takes(events: &[String], kind: &str) -> bool {
    events.iter().any(|taken| taken == ALL_EVENTS || taken == kind)
}

/// What a delivery stands as after a try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AfterAttempt {
    /// Its status.
    pub status: DeliveryStatus,
    /// When it is tried next, if it is still pending.
    pub next_attempt_at: Option<Timestamp>,
    /// When it was delivered, if it was.
    pub delivered_at: Option<Timestamp>,
}

/// What a delivery queued at `created_at`, tried `attempts_before` times already, stands as
/// after `attempt`: delivered on a 2xx; otherwise tried again after the next of
/// [`RETRY_DELAYS`] (hourly once they run out), unless that falls more than
/// [`GIVE_UP_AFTER`] after it was queued, when it has failed.
pub fn after_attempt(created_at: Timestamp, attempts_before: u32, attempt: &Attempt) -> AfterAttempt {
    if attempt.delivered() {
        return AfterAttempt {
            status: DeliveryStatus::Delivered,
            next_attempt_at: None,
            delivered_at: Some(attempt.at),
        };
    }
    let delay = RETRY_DELAYS.get(attempts_before as usize).copied().unwrap_or(SignedDuration::from_hours(1));
    let next = attempt.at.saturating_add(delay).unwrap_or(attempt.at);
    if next > created_at.saturating_add(GIVE_UP_AFTER).unwrap_or(created_at) {
        return AfterAttempt { status: DeliveryStatus::Failed, next_attempt_at: None, delivered_at: None };
    }
    AfterAttempt { status: DeliveryStatus::Pending, next_attempt_at: Some(next), delivered_at: None }
}

/// Which of the due `candidates` (delivery id and webhook id, oldest event first) a server may
/// claim now, when `in_flight` deliveries of each webhook are claimed already: at most
/// [`CLAIMED_PER_WEBHOOK`] of a webhook at once, and at most `limit` in all, in the
/// candidates' order.
pub fn claimable(candidates: &[(i64, i64)], in_flight: &HashMap<i64, usize>, limit: usize) -> Vec<i64> {
    let mut taken: HashMap<i64, usize> = HashMap::new();
    let mut claimed = Vec::new();
    for (delivery, webhook) in candidates {
        if claimed.len() == limit {
            break;
        }
        let busy = in_flight.get(webhook).copied().unwrap_or(0) + taken.get(webhook).copied().unwrap_or(0);
        if busy < CLAIMED_PER_WEBHOOK {
            *taken.entry(*webhook).or_default() += 1;
            claimed.push(*delivery);
        }
    }
    claimed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(at: Timestamp) -> Attempt {
        Attempt { at, status_code: Some(500), error: Some("answered 500".into()) }
    }

    #[test]
    fn failures_are_tried_again_on_the_schedule_until_a_day_has_passed() {
        let queued: Timestamp = "2024-05-10T10:00:00Z".parse().unwrap();
        let mut at = queued;
        let mut delays = Vec::new();
        for attempts in 0.. {
            let after = after_attempt(queued, attempts, &failed(at));
            match after.status {
                DeliveryStatus::Pending => {
                    let next = after.next_attempt_at.unwrap();
                    delays.push((next - at).get_seconds());
                    at = next;
                }
                DeliveryStatus::Failed => break,
                DeliveryStatus::Delivered => unreachable!(),
            }
        }
        assert_eq!(delays[..6], [5, 30, 120, 600, 3600, 3600]);
        assert!(at <= queued.saturating_add(GIVE_UP_AFTER).unwrap(), "never tried past a day");
        assert!(delays.len() > 20 && delays.len() < 30, "{}", delays.len());
        let ok = Attempt { at, status_code: Some(200), error: None };
        assert_eq!(after_attempt(queued, 3, &ok).status, DeliveryStatus::Delivered);
        assert_eq!(after_attempt(queued, 3, &ok).delivered_at, Some(at));
    }

    #[test]
    fn a_webhook_takes_its_types_or_all() {
        let some = vec!["invoice.paid".to_owned()];
        assert!(takes(&some, "invoice.paid"));
        assert!(!takes(&some, "invoice.created"));
        assert!(takes(&["*".to_owned()], "vendor.deleted"));
    }

    #[test]
    fn claims_keep_a_few_of_each_webhook_in_flight() {
        let candidates: Vec<(i64, i64)> = (1..=40).map(|id| (id, if id % 2 == 0 { 7 } else { 8 })).collect();
        let in_flight = HashMap::from([(7, CLAIMED_PER_WEBHOOK - 1)]);
        let claimed = claimable(&candidates, &in_flight, 100);
        let odd: Vec<i64> = (1..=31).step_by(2).collect();
        assert_eq!(claimed[..2], [1, 2], "one more of webhook 7, oldest first");
        assert_eq!(claimed.iter().filter(|id| *id % 2 == 1).copied().collect::<Vec<_>>(), odd, "a full claim of 8");
        assert_eq!(claimable(&candidates, &HashMap::new(), 3), [1, 2, 3]);
    }
}
