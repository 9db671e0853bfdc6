//! Events (D47): what a committed write announces, for integrations that follow the books.
//!
//! Every write of vendors, invoices, transactions, vendor payments, vendor credits and bank
//! statements records an event in its own transaction, beside its audit entry (D22): the
//! stores write both where a write ends, so no write announces itself by hand. This module
//! decides which event a write's audit entry stands for ([`kind_of`]), when a payment brings an
//! invoice to FullyPaid ([`crate::figures::became_paid`]), and renders an event's `data` through the
//! [`Render`] the engine was opened with: the resource as its read would answer right after
//! the change. Core derives no `Serialize` for its records, so the JSON is the embedding
//! application's (the server renders each record with the DTO its `GET` answers with).
//!
//! Events are read in the order of their ids, which a reader can follow with `after`: an id is
//! given once the event's write has committed, in commit order, so no event becomes visible
//! with an id below one already seen ([`EventPage`]).

mod engine;
pub mod store;

use std::fmt;
use std::sync::Arc;

use jiff::Timestamp;

use crate::access::{Access, Action, Collection, PermissionSet, Principal};
use crate::bank::{BankLine, BankStatement};
use crate::credits::VendorCredit;
use crate::invoices::InvoiceDetail;
use crate::paging::Params;
use crate::transactions::Transaction;
use crate::vendor_payments::VendorPayment;
use crate::vendors::Vendor;
use crate::vendors::licence::{LicenceBounds, LicenseStatus};
use crate::{Entity, FieldErrors};

/// The most events one read of the feed answers (D47).
pub const MAX_EVENT_PAGE: u32 = 1_000;

/// The events one read of the feed answers when it names no limit (D47).
pub const DEFAULT_EVENT_PAGE: u32 = 100;

/// The events filter that takes every type.
pub const ALL_EVENTS: &str = "*";

/// Every type an event may have (D47), as [`kind_of`] and [`Announcement`] name them.
pub const EVENT_TYPES: [&str; 24] = [
    "vendor.created",
    "vendor.updated",
    "vendor.deleted",
    "vendor.restored",
    "invoice.created",
    "invoice.updated",
    "invoice.deleted",
    "invoice.restored",
    "invoice.paid",
    "transaction.created",
    "transaction.updated",
    "transaction.deleted",
    "transaction.restored",
    "vendorPayment.created",
    "vendorPayment.deleted",
    "vendorCredit.created",
    "vendorCredit.updated",
    "vendorCredit.deleted",
    "vendorCredit.restored",
    "vendorCredit.decided",
    "vendorCredit.applied",
    "bankStatement.created",
    "bankStatement.updated",
    "bankStatement.deleted",
];

/// A read of the feed (D47): the events after `after`, at most `limit` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventQuery {
    /// The last id the reader saw (0 before any).
    pub after: i64,
    /// How many events to answer at most, 1 to [`MAX_EVENT_PAGE`].
    pub limit: u32,
}

impl EventQuery {
    /// Reads `after` (default 0, an integer of at least 0) and `limit` (default
    /// [`DEFAULT_EVENT_PAGE`], 1 to [`MAX_EVENT_PAGE`]); anything else is an error (D47).
    ///
    /// # Errors
    /// The messages by parameter name.
    pub fn from_params(params: &(impl Params + ?Sized)) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let after = match params.get("after").map(|value| value.trim().parse::<i64>()) {
            None => 0,
            Some(Ok(after)) if after >= 0 => after,
            Some(_) => {
                errors.add("after", "must be an integer of at least 0");
                0
            }
        };
        let limit = match params.get("limit").map(|value| value.trim().parse::<u32>()) {
            None => DEFAULT_EVENT_PAGE,
            Some(Ok(limit)) if (1..=MAX_EVENT_PAGE).contains(&limit) => limit,
            Some(_) => {
                errors.add("limit", format!("must be an integer from 1 to {MAX_EVENT_PAGE}"));
                DEFAULT_EVENT_PAGE
            }
        };
        if errors.is_empty() { Ok(Self { after, limit }) } else { Err(errors) }
    }
}

/// A record an event carries, as a write left it.
#[derive(Clone, Copy, Debug)]
pub enum Announced<'a> {
    /// A vendor, with its licence status for the day of the write (D36).
    Vendor(&'a Vendor),
    /// An invoice with its vendor (D13), its status for the day of the write.
    Invoice(&'a InvoiceDetail),
    /// A payment with its invoice.
    Transaction(&'a Transaction),
    /// A vendor payment with its payments (D31).
    VendorPayment(&'a VendorPayment),
    /// A vendor credit with its applications (D44).
    VendorCredit(&'a VendorCredit),
    /// A bank statement with its kept counts (D46).
    BankStatement(&'a BankStatement),
}

/// Renders an announced record as the JSON its read answers with: an event's `data`.
pub trait Render: Send + Sync + fmt::Debug + 'static {
    /// `record` as a JSON value's text.
    fn render(&self, record: Announced<'_>) -> String;
}

/// A record a write may answer with, and what of it an event can carry as it is.
///
/// Records whose read answers more than the write does (an invoice's read adds its vendor)
/// and writes that answer nothing announce nothing here; the store reads what it announces
/// by id instead, in the same transaction.
pub trait Announce {
    /// The record as an event carries it, if it is one.
    fn announced(&self) -> Option<Announced<'_>> {
        None
    }
}

macro_rules! announces {
    ($($record:ty => $variant:ident),* $(,)?) => {
        $(impl Announce for $record {
            fn announced(&self) -> Option<Announced<'_>> {
                Some(Announced::$variant(self))
            }
        })*
    };
}

announces! {
    Vendor => Vendor,
    InvoiceDetail => Invoice,
    Transaction => Transaction,
    VendorPayment => VendorPayment,
    VendorCredit => VendorCredit,
    BankStatement => BankStatement,
}

macro_rules! silent {
    ($($record:ty),* $(,)?) => {
        $(impl Announce for $record {})*
    };
}

silent! {
    (),
    bool,
    crate::invoices::Invoice,
    crate::access::user::User,
    crate::access::role::Role,
    crate::access::policy::Policy,
    crate::reports::setting::Setting,
    BankLine,
    crate::store::SignIn,
    crate::webhooks::Webhook,
    crate::webhooks::Delivery,
    crate::branches::Branch,
}

impl<T: Announce> Announce for Vec<T> {}

/// What renders the events of one write: the application's [`Render`] and the day the write
/// falls on, for the statuses that depend on it (D36, D10).
#[derive(Clone)]
pub struct Announcer {
    render: Arc<dyn Render>,
    bounds: LicenceBounds,
}

impl Announcer {
    /// An announcer rendering through `render`, for a write on the day `bounds` describe.
    pub fn new(render: Arc<dyn Render>, bounds: LicenceBounds) -> Self {
        Self { render, bounds }
    }

    /// The first instant of the write's day: what invoices' statuses are read for.
    pub fn today_start(&self) -> Timestamp {
        self.bounds.today_start
    }

    /// `record`'s JSON, as its read would answer on the write's day.
    pub fn render(&self, record: Announced<'_>) -> String {
        match record {
            Announced::Vendor(vendor) if vendor.license_status != self.status_of(vendor) => {
                let vendor = Vendor { license_status: self.status_of(vendor), ..vendor.clone() };
                self.render.render(Announced::Vendor(&vendor))
            }
            record => self.render.render(record),
        }
    }

    fn status_of(&self, vendor: &Vendor) -> LicenseStatus {
        LicenseStatus::of(vendor.drug_license_valid_until, &self.bounds)
    }
}

impl fmt::Debug for Announcer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Announcer").field("bounds", &self.bounds).finish_non_exhaustive()
    }
}

impl PartialEq for Announcer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.render, &other.render) && self.bounds == other.bounds
    }
}

impl Eq for Announcer {}

/// What one event announces: `kind` of the record `entity` number `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Announcement {
    /// The event's type, such as `invoice.paid`.
    pub kind: &'static str,
    /// The record it carries.
    pub entity: Entity,
    /// Its id.
    pub id: i64,
}

/// The event a write's audit entry stands for (D47): `action` on `entity` number `id`, or
/// `None` when such a write announces nothing (users, roles, settings...).
///
/// A bank line's action announces its statement as `bankStatement.updated`; its statement's
/// id is the store's to find ([`Entity::BankLine`] is kept as the entity). A write recording
/// a vendor payment from a bank line (`record`) also announces the payment
/// (`vendorPayment.created`), which the store adds.
pub fn kind_of(action: &str, entity: Entity) -> Option<&'static str> {
    use Entity as E;
    let kind = match (entity, action) {
        (E::BankLine, _) => "bankStatement.updated",
        (E::Vendor, "create") => "vendor.created",
        (E::Vendor, "update") => "vendor.updated",
        (E::Vendor, "delete") => "vendor.deleted",
        (E::Vendor, "restore") => "vendor.restored",
        (E::Invoice, "create") => "invoice.created",
        (E::Invoice, "update") => "invoice.updated",
        (E::Invoice, "delete") => "invoice.deleted",
        (E::Invoice, "restore") => "invoice.restored",
        (E::Transaction, "create") => "transaction.created",
        (E::Transaction, "update") => "transaction.updated",
        (E::Transaction, "delete") => "transaction.deleted",
        (E::Transaction, "restore") => "transaction.restored",
        (E::VendorPayment, "create") => "vendorPayment.created",
        (E::VendorPayment, "delete") => "vendorPayment.deleted",
        (E::VendorCredit, "create") => "vendorCredit.created",
        (E::VendorCredit, "update") => "vendorCredit.updated",
        (E::VendorCredit, "delete") => "vendorCredit.deleted",
        (E::VendorCredit, "restore") => "vendorCredit.restored",
        (E::VendorCredit, "decide") => "vendorCredit.decided",
        (E::VendorCredit, "apply") => "vendorCredit.applied",
        (E::BankStatement, "create") => "bankStatement.created",
        (E::BankStatement, "delete") => "bankStatement.deleted",
        _ => return None,
    };
    Some(kind)
}

/// The event the audit entry `action` on `entity` number `id` stands for, if any.
pub fn announcement(action: &str, entity: Entity, id: i64) -> Option<Announcement> {
    kind_of(action, entity).map(|kind| Announcement { kind, entity, id })
}

impl Announcement {
    /// `invoice.paid` for invoice number `id` (D47).
    pub fn paid(id: i64) -> Self {
        Self { kind: "invoice.paid", entity: Entity::Invoice, id }
    }

    /// `vendorCredit.updated` for credit number `id`, whose application a write undid (D44).
    pub fn credit_released(id: i64) -> Self {
        Self { kind: "vendorCredit.updated", entity: Entity::VendorCredit, id }
    }

    /// `vendorPayment.created` for vendor payment number `id`, recorded by a bank line's
    /// `record` (D46, D47).
    pub fn vendor_payment_recorded(id: i64) -> Self {
        Self { kind: "vendorPayment.created", entity: Entity::VendorPayment, id }
    }

    /// The statement of line `line_id` changed by a write of something else: a payment the
    /// line held was deleted (D51).
    pub fn statement_updated(line_id: i64) -> Self {
        Self { kind: "bankStatement.updated", entity: Entity::BankLine, id: line_id }
    }
}

/// An event as a store writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    /// `<entity>.<action>`.
    pub kind: &'static str,
    /// The instant of the write.
    pub occurred_at: Timestamp,
    /// The record as JSON text.
    pub data: String,
}

/// An event of the feed (D47).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Its place in the feed: ids grow in the order events became visible.
    pub id: i64,
    /// `<entity>.<action>`, such as `invoice.paid`.
    pub kind: String,
    /// The instant of the write.
    pub occurred_at: Timestamp,
    /// The record as its read answered right after the write, as JSON text.
    pub data: String,
}

/// The most events one read of the feed examines for a caller who may read only some types
/// (D51): past it, the read answers what it found and moves `nextAfter` on.
pub const MAX_EVENTS_EXAMINED: usize = 10_000;

/// The permissions reading an event of type `kind` needs (D51): the read permission of the
/// resource it carries; a bank statement's also `Transaction:Read`, as its lines name payments.
pub fn read_permissions(kind: &str) -> PermissionSet {
    let read = |collection| Access::new(collection, Action::Read);
    let mut needed = PermissionSet::empty();
    match kind.split('.').next().unwrap_or_default() {
        "vendor" => needed.insert(read(Collection::Vendor)),
        "invoice" => needed.insert(read(Collection::Invoice)),
        "transaction" | "vendorPayment" => needed.insert(read(Collection::Transaction)),
        "vendorCredit" => needed.insert(read(Collection::VendorCredit)),
        "bankStatement" => {
            needed.insert(read(Collection::BankStatement));
            needed.insert(read(Collection::Transaction));
        }
        _ => {}
    }
    needed
}

/// What `principal` lacks to read events of every type `kinds` names, `*` naming them all
/// (D51): nothing for an admin.
pub fn unreadable<'a>(principal: &Principal, kinds: impl IntoIterator<Item = &'a str>) -> PermissionSet {
    if principal.is_admin {
        return PermissionSet::empty();
    }
    let mut needed = PermissionSet::empty();
    for kind in kinds {
        let types: &[&str] = if kind == ALL_EVENTS { &EVENT_TYPES } else { std::slice::from_ref(&kind) };
        for kind in types {
            needed = needed.union(read_permissions(kind));
        }
    }
    needed.without(principal.permissions)
}

/// Whether `principal` may read an event of type `kind` (D51).
pub fn may_read(principal: &Principal, kind: &str) -> bool {
    unreadable(principal, [kind]).is_empty()
}

/// One read of the feed: the events after `after`, in id order, and where to read on from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventPage {
    /// The events, in id order.
    pub items: Vec<Event>,
    /// The id of the last event examined (D51: it moves past the events a caller may not
    /// read), or the `after` read when there is none.
    pub next_after: i64,
}

impl EventPage {
    /// The page of `items`, read after `after`.
    pub fn new(items: Vec<Event>, after: i64) -> Self {
        let next_after = items.last().map_or(after, |event| event.id);
        Self { items, next_after }
    }
}

#[cfg(test)]
mod tests {
    use crate::figures::InvoiceFacts;
    use crate::figures::became_paid;
    use jiff::civil::date;
    use rust_decimal::Decimal;

    use super::*;
    use crate::ids::VendorId;

    fn facts(is_active: bool, amount: i64, paid: i64) -> InvoiceFacts {
        InvoiceFacts {
            vendor_id: VendorId(1),
            branch_id: crate::branches::HEAD_OFFICE_ID,
            is_active,
            amount: Decimal::from(amount),
            paid: Decimal::from(paid),
            credited: Decimal::ZERO,
            due_date: Timestamp::UNIX_EPOCH,
            day: date(2026, 4, 1),
        }
    }

    #[test]
    fn an_invoice_is_paid_once_when_it_comes_to_owe_nothing() {
        assert!(became_paid(&facts(true, 100, 40), &facts(true, 100, 100)));
        assert!(became_paid(&facts(true, 100, 40), &facts(true, 100, 120)), "overpaid is FullyPaid");
        assert!(!became_paid(&facts(true, 100, 100), &facts(true, 100, 110)), "already FullyPaid");
        assert!(!became_paid(&facts(true, 100, 40), &facts(true, 100, 99)));
        assert!(!became_paid(&facts(false, 100, 40), &facts(false, 100, 100)), "canceled is not paid");
        assert!(became_paid(&facts(false, 100, 100), &facts(true, 100, 100)), "restored paid in full");
    }

    #[test]
    fn writes_announce_their_entity_and_action() {
        assert_eq!(kind_of("create", Entity::Vendor), Some("vendor.created"));
        assert_eq!(kind_of("decide", Entity::VendorCredit), Some("vendorCredit.decided"));
        assert_eq!(kind_of("ignore", Entity::BankLine), Some("bankStatement.updated"));
        assert_eq!(kind_of("create", Entity::User), None);
        assert_eq!(kind_of("update", Entity::Setting), None);
        assert_eq!(kind_of("delete", Entity::CreditApplication), None);
        let actions = ["create", "update", "delete", "restore", "decide", "apply"];
        let entities =
            [Entity::Vendor, Entity::Invoice, Entity::Transaction, Entity::VendorPayment, Entity::VendorCredit];
        let written = entities.iter().flat_map(|entity| actions.iter().filter_map(|action| kind_of(action, *entity)));
        let also = [
            Announcement::paid(1).kind,
            Announcement::credit_released(1).kind,
            kind_of("x", Entity::BankLine).unwrap(),
        ];
        let statements = ["create", "delete"].iter().filter_map(|action| kind_of(action, Entity::BankStatement));
        let mut named: Vec<&str> = written.chain(also).chain(statements).collect();
        named.sort_unstable();
        named.dedup();
        let mut listed = EVENT_TYPES.to_vec();
        listed.sort_unstable();
        assert_eq!(named, listed, "every type written is listed, and only those");
    }

    #[test]
    fn a_read_names_where_it_begins_and_how_many_it_takes() {
        let read = |pairs: &[(&str, &str)]| EventQuery::from_params(pairs);
        assert_eq!(read(&[]), Ok(EventQuery { after: 0, limit: DEFAULT_EVENT_PAGE }));
        assert_eq!(read(&[("after", "17"), ("limit", "1000")]), Ok(EventQuery { after: 17, limit: 1000 }));
        for (name, value) in [("after", "-1"), ("after", "x"), ("limit", "0"), ("limit", "1001"), ("limit", "")] {
            let errors = read(&[(name, value)]).expect_err(value);
            assert!(errors.contains(name), "{name}={value}: {errors:?}");
        }
    }

    #[test]
    fn a_page_reads_on_from_its_last_event_or_where_it_began() {
        assert_eq!(EventPage::new(Vec::new(), 41).next_after, 41);
        let event =
            Event { id: 44, kind: "vendor.created".into(), occurred_at: Timestamp::UNIX_EPOCH, data: "{}".into() };
        assert_eq!(EventPage::new(vec![event], 41).next_after, 44);
    }
}
