//! Deliveries of events to webhooks (D47): which events a webhook takes, which addresses a
//! delivery may reach, which pending deliveries a server may claim and how many it may ask for,
//! and what a try leaves a delivery as.
//!
//! A receiver that never answers holds only its own webhook's deliveries (D51): a server tries
//! [`IN_FLIGHT_PER_WEBHOOK`] of a webhook at once and holds up to [`CLAIMED_PER_WEBHOOK`] of it
//! claimed, the rest waiting only for that webhook's own tries; it asks for no more than its
//! [`TRIES_AT_ONCE`] can start at once ([`claim_limit`]), so a claimed delivery never waits for
//! another webhook's tries; and a claim serves the webhooks with the fewest in flight first
//! ([`claimable`]), so a slow webhook's backlog never keeps another's deliveries from a claim.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use jiff::{SignedDuration, Timestamp};

use crate::events::ALL_EVENTS;
#[cfg(test)]
use crate::webhooks::DeliveryFailure;
use crate::webhooks::{Attempt, DeliveryStatus};

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

/// Tries a server makes at once across all webhooks.
pub const TRIES_AT_ONCE: usize = 64;

/// Deliveries of one webhook claimed at once, across every server: a server tries them
/// [`IN_FLIGHT_PER_WEBHOOK`] at a time, so one round of the database serves several rounds of
/// tries.
pub const CLAIMED_PER_WEBHOOK: usize = 16;

/// How long a claim keeps other servers off a delivery. A claimed delivery waits only for the
/// tries of its own webhook claimed before it (D51): at most `CLAIMED_PER_WEBHOOK /
/// IN_FLIGHT_PER_WEBHOOK - 1` rounds of 10 s, then its own 10 s try, 40 s in all; so a
/// delivery is never tried twice at once, and a server that died mid-try leaves its claims to
/// others within a minute.
pub const CLAIM_LEASE: SignedDuration = SignedDuration::from_secs(60);

/// How many deliveries a server may claim now, when `claimed_here` lists how many it holds of
/// each webhook (tried or waiting for their webhook's turn): what [`TRIES_AT_ONCE`] leaves once
/// each webhook's tries that can run now (up to [`IN_FLIGHT_PER_WEBHOOK`]) are counted. Each
/// delivery claimed adds at most one try that can run now, so a claim of this many never makes
/// a delivery whose webhook's turn is free wait for a slot held by another webhook (D51).
pub fn claim_limit(claimed_here: impl IntoIterator<Item = usize>) -> usize {
    let running: usize = claimed_here.into_iter().map(|held| held.min(IN_FLIGHT_PER_WEBHOOK)).sum();
    TRIES_AT_ONCE.saturating_sub(running)
}

/// Whether `ip` is an address deliveries must not reach without
/// `PHARMAPAY_WEBHOOK_ALLOW_PRIVATE` (D47, D51): loopback, private (RFC 1918, unique-local),
/// link-local, unspecified and "this network", shared (carrier-grade NAT, `100.64.0.0/10`),
/// benchmarking (`198.18.0.0/15`), documentation, reserved (`240.0.0.0/4`, broadcast included)
/// and multicast addresses; in IPv6 also site-local, and an internal IPv4 address written in
/// IPv6 as IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), IPv4-translated
/// (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`). The local-use NAT64
/// prefix `64:ff9b:1::/48` is internal whole: where it holds the IPv4 address is the local
/// network's choice (RFC 8215), and it never leaves that network.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

fn is_internal_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    a == 0
        || v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_documentation()
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (18..20).contains(&b))
        || v4.is_multicast()
        || a >= 240
}

fn is_internal_v6(v6: Ipv6Addr) -> bool {
    let o = v6.octets();
    // The IPv4 address in the last 32 bits, and the one after a 6to4 prefix.
    let (last, after_6to4) = (Ipv4Addr::new(o[12], o[13], o[14], o[15]), Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    match v6.segments() {
        // IPv4-compatible (`::a.b.c.d`), `::` and `::1` among them (0.0.0.0/8).
        [0, 0, 0, 0, 0, 0, ..]
        // IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-translated (`::ffff:0:a.b.c.d`).
        | [0, 0, 0, 0, 0, 0xffff, ..]
        | [0, 0, 0, 0, 0xffff, 0, ..]
        // NAT64, the well-known prefix (RFC 6052).
        | [0x64, 0xff9b, 0, 0, 0, 0, ..] => is_internal_v4(last),
        // NAT64, the local-use prefix (RFC 8215).
        [0x64, 0xff9b, 1, ..] => true,
        // 6to4 (RFC 3056).
        [0x2002, ..] => is_internal_v4(after_6to4),
        // Documentation.
        [0x2001, 0x0db8, ..] => true,
        [first, ..] => {
            (first & 0xfe00) == 0xfc00 // unique-local
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first & 0xffc0) == 0xfec0 // site-local
                || (first & 0xff00) == 0xff00 // multicast
        }
    }
}

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
/// [`CLAIMED_PER_WEBHOOK`] of a webhook at once, and at most `limit` in all. The webhooks with
/// the fewest claimed go first (each webhook's first before any webhook's second, and so on),
/// each webhook's in the candidates' order, so a webhook whose receiver is slow or dead never
/// keeps another's deliveries from the claim (D51).
pub fn claimable(candidates: &[(i64, i64)], in_flight: &HashMap<i64, usize>, limit: usize) -> Vec<i64> {
    let mut taken: HashMap<i64, usize> = HashMap::new();
    // (how many of its webhook would be claimed before it, its place among the candidates, id)
    let mut ranked: Vec<(usize, usize, i64)> = Vec::new();
    for (place, (delivery, webhook)) in candidates.iter().enumerate() {
        let before = in_flight.get(webhook).copied().unwrap_or(0) + taken.get(webhook).copied().unwrap_or(0);
        if before < CLAIMED_PER_WEBHOOK {
            *taken.entry(*webhook).or_default() += 1;
            ranked.push((before, place, *delivery));
        }
    }
    ranked.sort_unstable();
    ranked.truncate(limit);
    // Answered in the candidates' order: first tries start in id order (D51).
    ranked.sort_unstable_by_key(|(_, place, _)| *place);
    ranked.into_iter().map(|(_, _, delivery)| delivery).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(at: Timestamp) -> Attempt {
        Attempt { at, status_code: Some(500), error: Some(DeliveryFailure::Answered(500)) }
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
    fn every_failure_is_tried_again_on_the_schedule() {
        let queued: Timestamp = "2024-05-10T10:00:00Z".parse().unwrap();
        let failures = [
            DeliveryFailure::RefusedInternal,
            DeliveryFailure::Unresolved,
            DeliveryFailure::NotConnected,
            DeliveryFailure::NoAnswer,
            DeliveryFailure::Answered(410),
            DeliveryFailure::Tls,
        ];
        for failure in failures {
            let status_code = match failure {
                DeliveryFailure::Answered(status) => Some(status),
                _ => None,
            };
            let attempt = Attempt { at: queued, status_code, error: Some(failure) };
            let after = after_attempt(queued, 0, &attempt);
            assert_eq!(after.status, DeliveryStatus::Pending, "{failure}");
            assert_eq!(after.next_attempt_at, queued.checked_add(SignedDuration::from_secs(5)).ok(), "{failure}");
        }
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

    #[test]
    fn a_claim_serves_the_webhooks_with_fewest_in_flight_first() {
        // Webhook 1's backlog is older than webhook 2's events, and it has 12 in flight.
        let mut candidates: Vec<(i64, i64)> = (1..=30).map(|id| (id, 1)).collect();
        candidates.extend((31..=40).map(|id| (id, 2)));
        let in_flight = HashMap::from([(1, 12)]);
        assert_eq!(claimable(&candidates, &in_flight, 4), [31, 32, 33, 34], "webhook 2 first");
        assert_eq!(claimable(&candidates, &in_flight, 16), [1, 2, 3, 4, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40]);
        // Alike, each webhook's first before any webhook's second, answered oldest first.
        let even: Vec<(i64, i64)> = (1..=8).map(|id| (id, if id <= 4 { 1 } else { 2 })).collect();
        assert_eq!(claimable(&even, &HashMap::new(), 4), [1, 2, 5, 6]);
    }

    #[test]
    fn a_server_asks_for_what_its_tries_can_start() {
        assert_eq!(claim_limit([]), TRIES_AT_ONCE);
        // Five webhooks with a full claim each run four tries apiece; the rest wait their turn.
        assert_eq!(claim_limit([CLAIMED_PER_WEBHOOK; 5]), TRIES_AT_ONCE - 5 * IN_FLIGHT_PER_WEBHOOK);
        assert_eq!(claim_limit([1, 2, 0]), TRIES_AT_ONCE - 3);
        assert_eq!(claim_limit([CLAIMED_PER_WEBHOOK; 40]), 0);
        // The longest a claimed delivery waits, then its own try, fits in its lease.
        let rounds = CLAIMED_PER_WEBHOOK.div_ceil(IN_FLIGHT_PER_WEBHOOK) as i64;
        assert!(SignedDuration::from_secs(10 * rounds) < CLAIM_LEASE);
    }

    fn internal(address: &str) -> bool {
        is_internal(address.parse().expect(address))
    }

    #[test]
    fn internal_ipv4_ranges_are_refused_and_public_addresses_allowed() {
        for address in [
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.8.9.10",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(internal(address), "{address}");
        }
        for address in [
            "8.8.8.8",
            "1.1.1.1",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "198.17.255.255",
            "198.20.0.1",
            "223.255.255.254",
        ] {
            assert!(!internal(address), "{address}");
        }
    }

    #[test]
    fn internal_ipv6_ranges_and_ipv4_forms_are_refused_and_public_ones_allowed() {
        for address in [
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "ff0e::101",
            "2001:db8::1",
            // IPv4-mapped, IPv4-compatible and IPv4-translated forms of internal addresses.
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "::169.254.169.254",
            "::ffff:0:127.0.0.1",
            "::ffff:0:192.168.0.1",
            // NAT64 and 6to4 forms.
            "64:ff9b::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::8.8.8.8",
            "64:ff9b:1:ffff::1",
            "2002:7f00:1::",
            "2002:a00:1::1",
            "2002:c0a8:101::1",
            "2002:e000:1::",
            // The newly listed IPv4 ranges in IPv6 forms.
            "::ffff:100.64.0.1",
            "::ffff:198.18.0.1",
            "::ffff:240.0.0.1",
            "::ffff:224.0.0.1",
        ] {
            assert!(internal(address), "{address}");
        }
        for address in [
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "::8.8.8.8",
            "::ffff:0:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "64:ff9b::101:101",
            "2002:808:808::1",
            "2001:4860::8888",
        ] {
            assert!(!internal(address), "{address}");
        }
    }
}
