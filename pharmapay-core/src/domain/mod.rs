//! The records pharmapay keeps, the inputs that create and change them, and the filters that
//! list them. One file per resource; each input has a `validate` that applies the text rules of
//! [`crate::text`] and the cross-field rules of the decisions, so stores only ever see clean data.

pub mod aging;
pub mod audit;
pub mod bank_statement;
pub mod credit;
pub mod gstin;
pub mod invoice;
pub mod licence;
pub mod policy;
pub mod reference;
pub mod role;
pub mod setting;
pub mod statement;
mod tidy;
pub mod transaction;
pub mod user;
pub mod vendor;
pub mod vendor_payment;
pub mod webhook;

pub use audit::{AuditEntry, AuditFilter, AuditQuery, NewAuditEntry};
pub use credit::{
    CreditApplication, CreditDecision, CreditFilter, CreditKind, CreditQuery, CreditStatus, NewCreditApplication,
    NewVendorCredit, VendorCredit,
};
pub use invoice::{
    Invoice, InvoiceBrief, InvoiceDetail, InvoiceFilter, InvoiceQuery, InvoiceSortKey, InvoiceStatus, NewInvoice,
};
pub use policy::{NewPolicy, Policy};
pub use reference::PaymentReference;
pub use role::{NewRole, Role};
pub use setting::Setting;
pub use transaction::{
    NewTransaction, Transaction, TransactionFilter, TransactionQuery, TransactionSortKey, TransactionType,
};
pub use user::{NewUser, PasswordChange, Profile, ProfileUpdate, User, UserUpdate};
pub use vendor::{NewVendor, Vendor, VendorBrief, VendorFilter, VendorQuery, VendorSortKey, VendorTotals, VendorType};
pub use vendor_payment::{NewVendorPayment, VendorPayment};

pub use tidy::*;
