//! Typed record ids, so a vendor id can never be passed where an invoice id is expected.

use std::fmt;

macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub i64);

        impl $name {
            /// The raw integer.
            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<i64> for $name {
            fn from(id: i64) -> Self {
                $name(id)
            }
        }
    )*};
}

ids! {
    /// Id of a vendor.
    VendorId,
    /// Id of an invoice.
    InvoiceId,
    /// Id of a payment transaction.
    TransactionId,
    /// Id of a user.
    UserId,
    /// Id of a role.
    RoleId,
    /// Id of a permission.
    PermissionId,
    /// Id of a policy.
    PolicyId,
    /// Id of an audit-log entry.
    AuditId,
    /// Id of a vendor payment: one payment over several invoices (D31).
    VendorPaymentId,
    /// Id of a vendor credit: a claim on a distributor and its decision (D44).
    VendorCreditId,
    /// Id of one application of a vendor credit to an invoice (D44).
    CreditApplicationId,
    /// Id of an uploaded bank statement (D46).
    BankStatementId,
    /// Id of one line of a bank statement (D46).
    BankLineId,
    /// Id of a webhook (D47).
    WebhookId,
    /// Id of one event's delivery to one webhook (D47).
    DeliveryId,
    /// Id of a branch of the chain (D49).
    BranchId,
}
