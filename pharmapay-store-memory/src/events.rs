//! The event feed (D47): each write announces itself where it ends (`State::finish_write`),
//! under the same lock, so an event is visible exactly when its write is, in the order writes
//! happened.

use pharmapay_core::Entity;
use pharmapay_core::events::{Announced, Announcement, Announcer, Event};
use pharmapay_core::invoices::InvoiceDetail;
use pharmapay_core::store::{EventStore, StoreResult, WriteContext};

use crate::{MemoryStore, State};

impl State {
    /// Records the events of `announcements`, each carrying its record as it now stands.
    pub(crate) fn announce(&mut self, ctx: &WriteContext, announcements: Vec<Announcement>) {
        let Some(announcer) = &ctx.announce else { return };
        for announcement in announcements {
            let Some(data) = self.render(announcer, announcement) else { continue };
            self.last_event += 1;
            let id = self.last_event;
            self.events.insert(id, Event { id, kind: announcement.kind.to_owned(), occurred_at: ctx.at, data });
        }
    }

    /// The record `announcement` carries, rendered; a bank line's is its statement.
    fn render(&self, announcer: &Announcer, announcement: Announcement) -> Option<String> {
        let id = announcement.id;
        let data = match announcement.entity {
            Entity::Vendor => announcer.render(Announced::Vendor(&self.vendor(id)?)),
            Entity::Invoice => {
                let invoice = self.invoice(id, announcer.today_start())?;
                let vendor = self.vendor_brief(invoice.vendor_id.get())?;
                announcer.render(Announced::Invoice(&InvoiceDetail { invoice, vendor }))
            }
            Entity::Transaction => announcer.render(Announced::Transaction(&self.transaction(id)?)),
            Entity::VendorPayment => announcer.render(Announced::VendorPayment(&self.vendor_payment(id)?)),
            Entity::VendorCredit => announcer.render(Announced::VendorCredit(&self.credit(id)?)),
            Entity::BankStatement => announcer.render(Announced::BankStatement(&self.statement(id)?)),
            Entity::BankLine => {
                let statement = self.statement(self.bank_lines.get(&id)?.statement_id)?;
                announcer.render(Announced::BankStatement(&statement))
            }
            _ => return None,
        };
        Some(data)
    }
}

impl EventStore for MemoryStore {
    async fn events_after(&self, after: i64, limit: u32) -> StoreResult<Vec<Event>> {
        let state = self.read();
        Ok(state.events.range(after.saturating_add(1)..).take(limit as usize).map(|(_, event)| event.clone()).collect())
    }
}
