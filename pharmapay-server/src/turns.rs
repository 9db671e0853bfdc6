//! Turns at work a server does only a few of at once: report downloads (D48) and the reading
//! of uploaded files (D51). Each kind has its own [`Turns`]: a queue, first come first served,
//! in which a request waits for a free turn up to a bound, and is then answered 503.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::problem::ApiError;

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

/// How report downloads share a server (D48).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DownloadLimits {
    /// How many reports are generated and sent at once; the others queue for a slot.
    pub at_once: usize,
    /// How long a report waits for a slot before it is answered 503.
    pub queue_wait: Duration,
    /// The slowest a client may take a download, in bytes a second over each request timeout.
    pub min_bytes_per_second: u64,
}

impl Default for DownloadLimits {
    /// Half the cores at once, at least one (a report keeps a core busy while its rows are read,
    /// written and zipped: with as many as cores, other users' profile fetches took three times
    /// as long), a wait of 30 seconds like a long read's, and 32 KiB a second: far below any
    /// working connection, far above a client that reads a chunk now and then to keep a slot.
    fn default() -> Self {
        Self { at_once: Self::default_at_once(), queue_wait: Duration::from_secs(30), min_bytes_per_second: 32 * 1024 }
    }
}

impl DownloadLimits {
    /// Reports at once unless set: half the cores, at least one.
    pub fn default_at_once() -> usize {
        std::thread::available_parallelism().map_or(1, |cores| cores.get() / 2).max(1)
    }
}

/// The report slots of a server and the downloads open now.
pub struct Downloads {
    pub(crate) limits: DownloadLimits,
    pub(crate) slots: Turns,
    /// How many report downloads are being written right now.
    pub open: Arc<AtomicUsize>,
}

impl Downloads {
    /// Slots for `limits.at_once` reports (at least one).
    pub fn new(limits: DownloadLimits) -> Self {
        Self { limits, slots: Turns::new(limits.at_once, limits.queue_wait), open: Arc::new(AtomicUsize::new(0)) }
    }

    /// Waits for a slot, first come first served, up to the report wait.
    pub(crate) async fn slot(&self) -> Result<Turn, ApiError> {
        self.slots.take().await.ok_or(ApiError::ReportsBusy)
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
