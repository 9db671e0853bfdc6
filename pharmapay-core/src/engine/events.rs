//! The event feed (D47), for applications that follow the books without HTTP.

use tracing::instrument;

use super::{PharmaPay, store_error};
use crate::access::{Access, Action, Collection, Principal};
use crate::error::Result;
use crate::events::{EventPage, EventQuery};
use crate::store::Store;

impl<S: Store> PharmaPay<S> {
    /// The events after `query.after`, in id order, at most `query.limit` of them (D47).
    ///
    /// A reader that asks again after the answer's `next_after` never misses an event: ids are
    /// given in the order writes committed.
    ///
    /// # Errors
    /// [`crate::Error::Forbidden`] without `Webhook:Read`; store failures.
    #[instrument(skip_all, fields(after = query.after, limit = query.limit))]
    pub async fn list_events(&self, principal: &Principal, query: &EventQuery) -> Result<EventPage> {
        principal.require(Access::new(Collection::Webhook, Action::Read))?;
        let items = self.store.events_after(query.after, query.limit).await.map_err(store_error)?;
        Ok(EventPage::new(items, query.after))
    }
}
