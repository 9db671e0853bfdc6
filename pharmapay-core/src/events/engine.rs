//! The event feed (D47), for applications that follow the books without HTTP.

use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal};
use crate::engine::{PharmaPay, store_error};
use crate::error::Result;
use crate::events::ALL_EVENTS;
use crate::events::{EventPage, EventQuery, MAX_EVENT_PAGE, MAX_EVENTS_EXAMINED, may_read, unreadable};
use crate::store::Store;

impl<S: Store> PharmaPay<S> {
    /// The events after `query.after` that `principal` may read, in id order, at most
    /// `query.limit` of them (D47, D51: each type needs its resource's read permission, as
    /// [`crate::events::read_permissions`] says).
    ///
    /// A reader that asks again after the answer's `next_after` never misses an event it may
    /// read: ids are given in the order writes committed, and `next_after` is the last event
    /// examined, so it moves past those left out. One read examines at most
    /// [`MAX_EVENTS_EXAMINED`] events, then answers what it found.
    ///
    /// # Errors
    /// [`crate::Error::Forbidden`] without `Webhook:Read`; store failures.
    #[instrument(skip_all, fields(after = query.after, limit = query.limit))]
    pub async fn list_events(&self, principal: &Principal, query: &EventQuery) -> Result<EventPage> {
        principal.require(Access::new(Collection::Webhook, Action::Read))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        let wanted = query.limit as usize;
        // A caller who may read every type reads the page asked for; any other reads in large
        // batches, so a feed of events it may not read is passed over in a few statements.
        let batch_size = if unreadable(principal, [ALL_EVENTS]).is_empty() { query.limit } else { MAX_EVENT_PAGE };
        let (mut items, mut examined, mut last) = (Vec::new(), 0usize, query.after);
        'reading: loop {
            let batch = self.store.events_after(last, batch_size).await.map_err(store_error)?;
            let full = batch.len() == batch_size as usize;
            for event in batch {
                examined += 1;
                last = event.id;
                if may_read(principal, &event.kind) {
                    items.push(event);
                    if items.len() == wanted {
                        break 'reading;
                    }
                }
            }
            if !full || examined >= MAX_EVENTS_EXAMINED {
                break;
            }
        }
        Ok(EventPage { items, next_after: last })
    }
}
