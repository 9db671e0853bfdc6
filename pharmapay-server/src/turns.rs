//! Turns at work a server does only a few of at once: report downloads (D48) and the reading
//! of uploaded files (D51). Each kind has its own [`Turns`]: a queue, first come first served,
//! in which a request waits for a free turn up to a bound, and is then answered 503.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A few turns at one kind of work, and how long a request waits for one.
pub struct Turns {
    slots: Arc<Semaphore>,
    wait: Duration,
}

/// A turn, given back when dropped.
pub type Turn = OwnedSemaphorePermit;

impl Turns {
    /// `at_once` turns (at least one), each waited for up to `wait`.
    pub fn new(at_once: usize, wait: Duration) -> Self {
        Self { slots: Arc::new(Semaphore::new(at_once.clamp(1, Semaphore::MAX_PERMITS))), wait }
    }

    /// Waits for a turn, first come first served; `None` when none came free within the wait.
    pub async fn take(&self) -> Option<Turn> {
        // The semaphore is never closed; a closed one would be as busy as a full one.
        tokio::time::timeout(self.wait, Arc::clone(&self.slots).acquire_owned()).await.ok()?.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_turn_is_waited_for_and_given_back_when_dropped() {
        let turns = Turns::new(1, Duration::from_millis(50));
        let first = turns.take().await.expect("a free turn");
        assert!(turns.take().await.is_none(), "the only turn is taken for the whole wait");
        drop(first);
        assert!(turns.take().await.is_some(), "given back");
        assert!(Turns::new(0, Duration::from_secs(1)).take().await.is_some(), "at least one turn");
    }
}
