//! Payment transactions: partial payments recorded against an invoice.

mod engine;
pub mod holders;
pub mod reference;
pub mod rules;
pub mod store;

use jiff::Timestamp;

use crate::base::tidy::{decimal_text, tidy_optional};
use crate::error::FieldErrors;
use crate::ids::{BranchId, InvoiceId, TransactionId, VendorPaymentId};
use crate::money::Amount;
use crate::paging::{ListFilter, ListQuery, Params, Sort, SortDir, SortKey, read_bool, read_branch_filter, read_id};
use crate::text::{Lines, TEXT_MAX};

use crate::invoices::{InvoiceBrief, read_date};
use crate::transactions::reference::PaymentReference;

/// How a payment was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransactionType {
    /// Physical cash.
    Cash,
    /// Mobile payment.
    Upi,
    /// Bank transfer.
    NetBanking,
}

impl TransactionType {
    /// Every type.
    pub const ALL: [TransactionType; 3] = [TransactionType::Cash, TransactionType::Upi, TransactionType::NetBanking];

    /// Parses a type name in any case (D7).
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        Self::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(value))
    }

    /// The canonical API name: `Cash`, `UPI` or `NetBanking`.
    pub fn name(self) -> &'static str {
        match self {
            TransactionType::Cash => "Cash",
            TransactionType::Upi => "UPI",
            TransactionType::NetBanking => "NetBanking",
        }
    }

    /// The name a person reads in a report: `Cash`, `UPI` or `Net Banking`.
    pub fn label(self) -> &'static str {
        match self {
            TransactionType::Cash => "Cash",
            TransactionType::Upi => "UPI",
            TransactionType::NetBanking => "Net Banking",
        }
    }

    /// The error message for a value that is not a type.
    pub fn expected() -> &'static str {
        "must be one of Cash, UPI, NetBanking"
    }
}

/// A payment with the invoice it pays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    /// Id.
    pub id: TransactionId,
    /// The invoice paid.
    pub invoice_id: InvoiceId,
    /// Amount paid, positive.
    pub amount: Amount,
    /// When the payment was made.
    pub transaction_date: Timestamp,
    /// How it was made.
    pub transaction_type: TransactionType,
    /// The UPI UTR, bank reference or cheque number, trimmed (D30).
    pub reference: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// The vendor payment this payment is a part of, if any (D31).
    pub vendor_payment_id: Option<VendorPaymentId>,
    /// False once soft-deleted.
    pub is_active: bool,
    /// When recorded.
    pub created_at: Timestamp,
    /// When last changed.
    pub updated_at: Timestamp,
    /// The invoice, with its pending amount as of now (D13).
    pub invoice: InvoiceBrief,
}

/// The fields of a payment create, and of a full replacement (D14).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTransaction {
    /// The invoice paid; must be active.
    pub invoice_id: InvoiceId,
    /// Amount, positive (D1).
    pub amount: Amount,
    /// When paid; not after today (D2).
    pub transaction_date: Timestamp,
    /// How paid.
    pub transaction_type: TransactionType,
    /// The UPI UTR, bank reference or cheque number (D30).
    pub reference: Option<PaymentReference>,
    /// Free text.
    pub description: Option<String>,
}

impl NewTransaction {
    /// Trims the text and checks that the payment is not dated after today: `tomorrow_start` is
    /// the first instant of tomorrow in the business time zone (D2, D3).
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self, tomorrow_start: Timestamp) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        tidy_optional(&mut self.description, "description", TEXT_MAX, Lines::Multi, &mut errors);
        if self.transaction_date >= tomorrow_start {
            errors.add("transactionDate", "must not be after today");
        }
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }
}

/// What to sort payments by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransactionSortKey {
    /// Payment date (the default, newest first).
    TransactionDate,
    /// Amount.
    Amount,
    /// Type name.
    TransactionType,
    /// When recorded.
    CreatedAt,
}

impl SortKey for TransactionSortKey {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("transactionDate", TransactionSortKey::TransactionDate),
        ("amount", TransactionSortKey::Amount),
        ("transactionType", TransactionSortKey::TransactionType),
        ("createdAt", TransactionSortKey::CreatedAt),
    ];

    const DEFAULT: Sort<Self> = Sort { key: TransactionSortKey::TransactionDate, dir: SortDir::Desc };
}

/// Which payments to list (spec, Transaction list query).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionFilter {
    /// Only this invoice's payments.
    pub invoice_id: Option<InvoiceId>,
    /// Payment date at or after.
    pub from_date: Option<Timestamp>,
    /// Payment date at or before.
    pub to_date: Option<Timestamp>,
    /// Only this type.
    pub transaction_type: Option<TransactionType>,
    /// Only payments whose reference has this key (D30; see [`PaymentReference::key_of`]).
    pub reference: Option<String>,
    /// Active (true, the default) or soft-deleted (false) payments.
    pub is_active: bool,
    /// Only payments of these branches' invoices (D49): as read, the repeatable `branchId`;
    /// once the engine has judged it against the caller's scope, the branches kept (`None`:
    /// every branch).
    pub branches: Option<Vec<BranchId>>,
}

impl Default for TransactionFilter {
    fn default() -> Self {
        Self {
            invoice_id: None,
            from_date: None,
            to_date: None,
            transaction_type: None,
            reference: None,
            is_active: true,
            branches: None,
        }
    }
}

impl ListFilter for TransactionFilter {
    const PAGE_SIZE: u32 = 15;

    /// Reads the filter parameters of `GET /api/transactions` (also used by the report, D26).
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self {
        let mut filter = Self { invoice_id: read_id(params, "invoiceId", errors).map(InvoiceId), ..Self::default() };
        filter.from_date = read_date(params, "fromDate", errors);
        filter.to_date = read_date(params, "toDate", errors);
        if let (Some(from), Some(to)) = (filter.from_date, filter.to_date)
            && to < from
        {
            errors.add("toDate", "must not be earlier than fromDate");
        }
        if let Some(value) = params.get("transactionType") {
            match TransactionType::parse(value) {
                Some(kind) => filter.transaction_type = Some(kind),
                None => errors.add("transactionType", TransactionType::expected()),
            }
        }
        if let Some(value) = params.get("reference") {
            // Matched by key (D30): `utr-1` finds `UTR 1`.
            match PaymentReference::parse(value) {
                Ok(reference) => filter.reference = Some(reference.key().to_owned()),
                Err(error) => errors.add("reference", error.to_string()),
            }
        }
        if let Some(is_active) = read_bool(params, "isActive", errors) {
            filter.is_active = is_active;
        }
        filter.branches = read_branch_filter(params, errors);
        filter
    }
}

/// A page of the list: filter, sort and page (D8).
pub type TransactionQuery = ListQuery<TransactionFilter, Sort<TransactionSortKey>>;

impl NewTransaction {
    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self) -> String {
        serde_json::json!({
            "invoiceId": self.invoice_id.get(),
            "amount": decimal_text(self.amount.get()),
            "transactionDate": self.transaction_date.to_string(),
            "transactionType": self.transaction_type.name(),
            "reference": self.reference.as_ref().map(PaymentReference::as_str),
            "description": self.description,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_types_parse_in_any_case_and_print_canonically() {
        assert_eq!(TransactionType::parse("upi"), Some(TransactionType::Upi));
        assert_eq!(TransactionType::parse("NETBANKING"), Some(TransactionType::NetBanking));
        assert_eq!(TransactionType::parse("Net Banking"), None);
        assert_eq!(TransactionType::Upi.name(), "UPI");
        assert_eq!(TransactionType::NetBanking.label(), "Net Banking");
    }

    #[test]
    fn d2_refuses_payments_dated_after_today() {
        let tomorrow: Timestamp = "2024-05-11T00:00:00Z".parse().unwrap();
        let payment = NewTransaction {
            invoice_id: InvoiceId(1),
            amount: Amount::parse("1").unwrap(),
            transaction_date: tomorrow,
            transaction_type: TransactionType::Cash,
            reference: None,
            description: None,
        };
        assert!(payment.clone().validate(tomorrow).unwrap_err().contains("transactionDate"));
        let today = "2024-05-10T23:59:59Z".parse().unwrap();
        assert!(NewTransaction { transaction_date: today, ..payment }.validate(tomorrow).is_ok());
    }

    #[test]
    fn list_defaults_show_active_payments_newest_first() {
        let query = TransactionQuery::from_params(&[]).unwrap();
        assert!(query.filter.is_active);
        assert_eq!(query.sort.dir, SortDir::Desc);
        let errors = TransactionQuery::from_params(&[("transactionType", "Cheque")]).unwrap_err();
        assert!(errors.contains("transactionType"));
        let by_reference = TransactionQuery::from_params(&[("reference", " utr-12/3 ")]).unwrap();
        assert_eq!(by_reference.filter.reference.as_deref(), Some("UTR123"), "D30: matched by key");
        let errors = TransactionQuery::from_params(&[("reference", "--")]).unwrap_err();
        assert!(errors.contains("reference"));
    }
}
