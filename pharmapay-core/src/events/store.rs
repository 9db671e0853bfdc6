//! Storage of the event feed (D47): [`EventStore`], part of [`crate::store::Store`].
//!
//! Events are written by the writes themselves, beside their audit entries (see
//! [`crate::store::WriteContext::announcements`]); this trait reads them.

use std::future::Future;

use crate::events::Event;
use crate::store::StoreResult;

/// Reading the events writes recorded (D47).
pub trait EventStore: Send + Sync + 'static {
    /// Up to `limit` events with ids above `after`, in id order.
    ///
    /// An event gets its id once its write has committed, in the order writes committed, so a
    /// reader that reads on after the last id it saw never misses one: the store first gives
    /// ids to the events committed since it last did (one at a time across every server
    /// sharing the database), then reads.
    fn events_after(&self, after: i64, limit: u32) -> impl Future<Output = StoreResult<Vec<Event>>> + Send;
}
