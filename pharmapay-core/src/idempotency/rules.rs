//! Who holds an idempotency key (D23).
//!
//! A claim attempt first tries to insert its claim; when the key is already claimed, the store
//! locks the stored claim and asks [`decide`], which either answers the attempt from the stored
//! claim or lets the attempt take the key over (the stored claim expired, or its request was
//! abandoned unfinished). Every store decides in this one order.

use jiff::Timestamp;

use crate::idempotency::{ClaimOutcome, IdempotencyClaim};

/// A claim a store holds for a key, as read under its lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredClaim<'a> {
    /// The fingerprint of the request that claimed the key.
    pub fingerprint: &'a str,
    /// When it claimed it.
    pub created_at: Timestamp,
    /// The record its request created, once it finished.
    pub entity_id: Option<i64>,
    /// The response recorded for it, if any.
    pub response: Option<&'a [u8]>,
}

/// What a claim attempt does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimDecision {
    /// Replace the stored claim with the attempt's (or insert it): the attempt now holds the key
    /// and answers [`ClaimOutcome::Claimed`].
    Take,
    /// Write nothing and answer this.
    Answer(ClaimOutcome),
}

/// Decides a claim attempt against the key's stored claim (`None` when there is none).
pub fn decide(stored: Option<StoredClaim<'_>>, claim: &IdempotencyClaim) -> ClaimDecision {
    let Some(stored) = stored else { return ClaimDecision::Take };
    if stored.created_at < claim.expired_before() {
        return ClaimDecision::Take;
    }
    if stored.fingerprint != claim.fingerprint {
        return ClaimDecision::Answer(ClaimOutcome::Mismatch);
    }
    if let Some(entity_id) = stored.entity_id {
        let response = stored.response.map(<[u8]>::to_vec);
        return ClaimDecision::Answer(ClaimOutcome::Completed { entity_id, response });
    }
    if stored.created_at < claim.abandoned_before() {
        return ClaimDecision::Take;
    }
    ClaimDecision::Answer(ClaimOutcome::InProgress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idempotency::{ABANDONED_AFTER, IdempotencyKey, KEY_LIFETIME};
    use crate::ids::UserId;

    fn now() -> Timestamp {
        Timestamp::from_second(1_700_000_000).expect("a valid instant")
    }

    fn attempt(fingerprint: &str) -> IdempotencyClaim {
        IdempotencyClaim {
            user_id: UserId(1),
            key: IdempotencyKey::parse("key-1").expect("a valid key"),
            fingerprint: fingerprint.into(),
            now: now(),
        }
    }

    fn stored<'a>(fingerprint: &'a str, age_seconds: i64, entity_id: Option<i64>) -> StoredClaim<'a> {
        StoredClaim {
            fingerprint,
            created_at: now() - jiff::SignedDuration::from_secs(age_seconds),
            entity_id,
            response: None,
        }
    }

    #[test]
    fn a_free_key_is_taken() {
        assert_eq!(decide(None, &attempt("a")), ClaimDecision::Take);
    }

    #[test]
    fn an_expired_claim_is_replaced_whatever_it_holds() {
        let expired = KEY_LIFETIME.as_secs() + 1;
        assert_eq!(decide(Some(stored("b", expired, Some(4))), &attempt("a")), ClaimDecision::Take);
    }

    #[test]
    fn another_request_under_the_key_is_a_mismatch() {
        assert_eq!(decide(Some(stored("b", 5, Some(4))), &attempt("a")), ClaimDecision::Answer(ClaimOutcome::Mismatch));
    }

    #[test]
    fn a_finished_request_is_replayed_with_its_response() {
        let mut finished = stored("a", 5, Some(4));
        finished.response = Some(b"{}");
        assert_eq!(
            decide(Some(finished), &attempt("a")),
            ClaimDecision::Answer(ClaimOutcome::Completed { entity_id: 4, response: Some(b"{}".to_vec()) })
        );
        let abandoned_but_finished = stored("a", ABANDONED_AFTER.as_secs() + 1, Some(4));
        assert!(matches!(
            decide(Some(abandoned_but_finished), &attempt("a")),
            ClaimDecision::Answer(ClaimOutcome::Completed { entity_id: 4, response: None })
        ));
    }

    #[test]
    fn an_unfinished_request_is_waited_for_until_it_is_abandoned() {
        assert_eq!(decide(Some(stored("a", 5, None)), &attempt("a")), ClaimDecision::Answer(ClaimOutcome::InProgress));
        let abandoned = ABANDONED_AFTER.as_secs() + 1;
        assert_eq!(decide(Some(stored("a", abandoned, None)), &attempt("a")), ClaimDecision::Take);
    }
}
