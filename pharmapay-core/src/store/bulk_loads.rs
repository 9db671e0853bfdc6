//! Bulk loads of vendors, invoices, payments and credits outside [`Store`](crate::store::Store):
//! [`BulkLoadStore`] and the records it takes.

use std::future::Future;

use jiff::Timestamp;

use crate::credits::{CreditDecision, NewCreditApplication, NewVendorCredit};
use crate::ids::{InvoiceId, TransactionId, VendorCreditId, VendorId};
use crate::invoices::NewInvoice;
use crate::store::StoreResult;
use crate::transactions::NewTransaction;
use crate::vendors::NewVendor;

/// Bulk loads of vendors, invoices, payments and credits (a demo, a move from another system):
/// records with their ids and times as they were, written without audit entries.
pub trait BulkLoadStore: Send + Sync + 'static {
    /// Inserts vendors; returns their ids in input order. OwnPharmacy is refused
    /// (`Rule(OwnPharmacyType)`).
    fn load_vendors(&self, vendors: Vec<BulkVendor>) -> impl Future<Output = StoreResult<Vec<VendorId>>> + Send;

    /// Inserts invoices of existing vendors; returns their ids in input order.
    fn load_invoices(&self, invoices: Vec<BulkInvoice>) -> impl Future<Output = StoreResult<Vec<InvoiceId>>> + Send;

    /// Inserts payments on existing invoices, adding the active ones to the paid totals;
    /// returns their ids in input order.
    fn load_transactions(
        &self,
        transactions: Vec<BulkTransaction>,
    ) -> impl Future<Output = StoreResult<Vec<TransactionId>>> + Send;

    /// Inserts vendor credits (D44) with their decisions and applications; returns their ids in
    /// input order. The vendor must exist (active or not); an active credit's number must be free
    /// among its vendor's active credits and the batch's (`Conflict(CreditNumber)`); a decision
    /// is judged by [`crate::credits::rules::check_decision`] and applications, made only of an
    /// active credit, by [`crate::credits::rules::plan_application`] over their invoices as the
    /// batch leaves them, each added to its invoice's credited total.
    fn load_credits(&self, credits: Vec<BulkCredit>) -> impl Future<Output = StoreResult<Vec<VendorCreditId>>> + Send;

    /// Readies the store for a long run of loads (a demo load, a move from another system):
    /// a store may set aside the indexes and search upkeep the loads do not read, so each
    /// batch writes little more than its rows, until [`BulkLoadStore::finish_bulk_load`] builds
    /// them again in one pass. Everything stays correct meanwhile; lists and searches may be
    /// slow. A store that stops before the finish builds them when it next opens. The default
    /// does nothing.
    fn begin_bulk_load(&self) -> impl Future<Output = StoreResult<()>> + Send {
        std::future::ready(Ok(()))
    }

    /// Builds whatever [`BulkLoadStore::begin_bulk_load`] set aside; nothing to do otherwise.
    /// The default does nothing.
    fn finish_bulk_load(&self) -> impl Future<Output = StoreResult<()>> + Send {
        std::future::ready(Ok(()))
    }
}

/// A vendor to import, with its state and creation time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkVendor {
    /// Its fields, already validated.
    pub vendor: NewVendor,
    /// False to import it soft-deleted.
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}

/// An invoice to import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkInvoice {
    /// Its fields, already validated; the vendor must exist.
    pub invoice: NewInvoice,
    /// False to import it canceled.
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}

/// A vendor credit to import (D44).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkCredit {
    /// Its claim, already validated; the vendor must exist.
    pub credit: NewVendorCredit,
    /// The distributor's decision, if it was made.
    pub decision: Option<CreditDecision>,
    /// What was set against bills, with explicit allocations and a date, if anything was.
    pub application: Option<NewCreditApplication>,
    /// False to import it soft-deleted (without applications).
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}

/// A payment to import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkTransaction {
    /// Its fields, already validated; the invoice must exist.
    pub transaction: NewTransaction,
    /// False to import it deleted (it then adds nothing to the paid total).
    pub is_active: bool,
    /// Its creation (and last change) time.
    pub created_at: Timestamp,
}
