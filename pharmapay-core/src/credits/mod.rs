//! Vendor credits (D44): what a pharmacy claims back from a distributor for expired or broken
//! stock returned, or for a rate difference; the distributor's decision on the claim; and the
//! accepted credit set against the vendor's bills as applications.

mod engine;
pub mod rules;
pub mod store;

use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;

use crate::base::tidy::{decimal_text, tidy_optional, tidy_required};
use crate::error::FieldErrors;
use crate::ids::{BranchId, CreditApplicationId, InvoiceId, VendorCreditId, VendorId};
use crate::money::Amount;
use crate::paging::{ListFilter, ListQuery, Params, read_bool, read_day, read_id};
use crate::text::{CODE_MAX, Lines, TEXT_MAX};
use crate::vendor_payments::rules as vendor_payment_rules;
use crate::vendor_payments::rules::RequestedAllocation;

use crate::invoices::read_date;

/// The longest credit number, in characters after trimming (D44).
pub const CREDIT_NUMBER_MAX: usize = 64;

/// Why a credit was claimed (D44).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CreditKind {
    /// Expired stock sent back.
    ExpiryReturn,
    /// Broken or damaged stock sent back.
    Breakage,
    /// A rate billed above the agreed one.
    RateDifference,
    /// Anything else (a scheme, a shortage).
    Other,
}

impl CreditKind {
    /// Every kind.
    pub const ALL: [CreditKind; 4] =
        [CreditKind::ExpiryReturn, CreditKind::Breakage, CreditKind::RateDifference, CreditKind::Other];

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            CreditKind::ExpiryReturn => "ExpiryReturn",
            CreditKind::Breakage => "Breakage",
            CreditKind::RateDifference => "RateDifference",
            CreditKind::Other => "Other",
        }
    }

    /// Parses a kind's name in any case (D7).
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        Self::ALL.into_iter().find(|kind| kind.name().eq_ignore_ascii_case(value))
    }
}

/// A credit's computed status (D44), the first that matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CreditStatus {
    /// Soft-deleted.
    Canceled,
    /// Not decided yet.
    Claimed,
    /// Decided, nothing accepted.
    Rejected,
    /// Decided, accepted below the claimed amount.
    PartlyAccepted,
    /// Decided, accepted in full.
    Accepted,
}

impl CreditStatus {
    /// Every status, in the order D44 tests them.
    pub const ALL: [CreditStatus; 5] = [
        CreditStatus::Canceled,
        CreditStatus::Claimed,
        CreditStatus::Rejected,
        CreditStatus::PartlyAccepted,
        CreditStatus::Accepted,
    ];

    /// The status of a credit, active or not, claiming `claimed`, of which `accepted` was
    /// accepted (`None` while undecided).
    pub fn compute(is_active: bool, claimed: Decimal, accepted: Option<Decimal>) -> Self {
        match accepted {
            _ if !is_active => CreditStatus::Canceled,
            None => CreditStatus::Claimed,
            Some(accepted) if accepted.is_zero() => CreditStatus::Rejected,
            Some(accepted) if accepted < claimed => CreditStatus::PartlyAccepted,
            Some(_) => CreditStatus::Accepted,
        }
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            CreditStatus::Canceled => "Canceled",
            CreditStatus::Claimed => "Claimed",
            CreditStatus::Rejected => "Rejected",
            CreditStatus::PartlyAccepted => "PartlyAccepted",
            CreditStatus::Accepted => "Accepted",
        }
    }

    /// Parses a status name in any case (D7).
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        Self::ALL.into_iter().find(|status| status.name().eq_ignore_ascii_case(value))
    }
}

/// A credit to record, and the full replacement of one (D14): the body of
/// `POST /api/vendor-credits` and of its `PUT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewVendorCredit {
    /// The vendor claimed from; must be active.
    pub vendor_id: VendorId,
    /// The branch whose claim it is (D49): an active one. On a create `None` is the caller's
    /// default ([`crate::branches::rules::branch_of_create`]); on a replacement it keeps the
    /// credit's branch.
    pub branch_id: Option<BranchId>,
    /// The credit note's or claim's number, unique per vendor among active credits (D4, D5).
    pub credit_number: String,
    /// Why claimed.
    pub kind: CreditKind,
    /// What is claimed (D1).
    pub claimed_amount: Amount,
    /// When claimed; not after today (D2).
    pub claim_date: Timestamp,
    /// The invoice the claim is about, one of the vendor's (active or not).
    pub against_invoice_id: Option<InvoiceId>,
    /// Free text.
    pub description: Option<String>,
}

impl NewVendorCredit {
    /// Trims the text and checks that the claim is not dated after today (`tomorrow_start` is
    /// the first instant of tomorrow in the business zone, D2, D3). Every problem comes back at
    /// once.
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self, tomorrow_start: Timestamp) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        tidy_required(&mut self.credit_number, "creditNumber", CREDIT_NUMBER_MAX, &mut errors);
        tidy_optional(&mut self.description, "description", TEXT_MAX, Lines::Multi, &mut errors);
        if self.claim_date >= tomorrow_start {
            errors.add("claimDate", "must not be after today");
        }
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }

    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self) -> String {
        serde_json::json!({
            "vendorId": self.vendor_id.get(),
            "branchId": self.branch_id.map(BranchId::get),
            "creditNumber": self.credit_number,
            "kind": self.kind.name(),
            "claimedAmount": decimal_text(self.claimed_amount.get()),
            "claimDate": self.claim_date.to_string(),
            "againstInvoiceId": self.against_invoice_id.map(InvoiceId::get),
            "description": self.description,
        })
        .to_string()
    }
}

/// The distributor's decision on a claim: the body of `POST /api/vendor-credits/:id/decision`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditDecision {
    /// What the distributor accepted: from 0 (rejected) to the claimed amount.
    pub accepted_amount: Decimal,
    /// When decided: from the claim date to today.
    pub decision_date: Timestamp,
    /// The distributor's credit note number, or other reference.
    pub distributor_reference: Option<String>,
}

impl CreditDecision {
    /// Trims the reference and checks what needs no stored credit: the amount is not negative
    /// and the decision is not dated after today (`tomorrow_start`, D2, D3). What needs the credit
    /// (its claimed amount, its claim date, what is applied) is [`crate::credits::rules`]'s.
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self, tomorrow_start: Timestamp) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        tidy_optional(&mut self.distributor_reference, "distributorReference", CODE_MAX, Lines::Single, &mut errors);
        if self.accepted_amount.is_sign_negative() && !self.accepted_amount.is_zero() {
            errors.add("acceptedAmount", "must not be negative");
        }
        self.accepted_amount = self.accepted_amount.normalize();
        if self.decision_date >= tomorrow_start {
            errors.add("decisionDate", "must not be after today");
        }
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }

    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self) -> String {
        serde_json::json!({
            "acceptedAmount": decimal_text(self.accepted_amount),
            "decisionDate": self.decision_date.to_string(),
            "distributorReference": self.distributor_reference,
        })
        .to_string()
    }
}

/// Setting a credit against the vendor's bills: the body of
/// `POST /api/vendor-credits/:id/applications` (D44).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewCreditApplication {
    /// How much to apply; with `allocations`, their sum when absent; without, all that is
    /// available when absent.
    pub amount: Option<Amount>,
    /// When applied; now when absent. Not after today, not before the decision.
    pub date: Option<Timestamp>,
    /// Which invoices take how much; `None` takes the open invoices oldest due first (D31).
    pub allocations: Option<Vec<RequestedAllocation>>,
}

impl NewCreditApplication {
    /// Checks what needs no stored credit: not dated after today (`tomorrow_start`, D2, D3) and
    /// allocations that fit together ([`vendor_payment_rules::check_request`], with `amount` their sum when
    /// it is absent). Every problem comes back at once.
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(self, tomorrow_start: Timestamp) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        if self.date.is_some_and(|date| date >= tomorrow_start) {
            errors.add("date", "must not be after today");
        }
        if let Some(allocations) = self.allocations.as_deref() {
            let sum: Decimal = allocations.iter().map(|allocation| allocation.amount.get()).sum();
            let amount = self.amount.or_else(|| Amount::try_from(sum).ok());
            match amount {
                Some(amount) => {
                    if let Err(shape) = vendor_payment_rules::check_request(amount, Some(allocations)) {
                        errors.merge(shape);
                    }
                }
                None => errors
                    .add("allocations", "must list at least one invoice, or be left out to credit the oldest first"),
            }
        }
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }

    /// The values written, as the audit log keeps them (D22), applied at `at` when no date was
    /// given.
    pub(crate) fn audit_changes(&self, at: Timestamp) -> String {
        let allocations = vendor_payment_rules::allocations_json(self.allocations.as_deref());
        serde_json::json!({
            "amount": self.amount.map(|amount| decimal_text(amount.get())),
            "date": self.date.unwrap_or(at).to_string(),
            "allocations": allocations,
        })
        .to_string()
    }
}

/// One active application of a credit to an invoice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditApplication {
    /// Id.
    pub id: CreditApplicationId,
    /// The invoice credited.
    pub invoice_id: InvoiceId,
    /// Its number.
    pub invoice_number: String,
    /// How much of the credit it took.
    pub amount: Amount,
    /// When applied.
    pub date: Timestamp,
    /// When recorded.
    pub created_at: Timestamp,
}

/// A recorded credit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorCredit {
    /// Id.
    pub id: VendorCreditId,
    /// The vendor claimed from.
    pub vendor_id: VendorId,
    /// Its name.
    pub vendor_name: String,
    /// The branch whose claim it is (D49).
    pub branch_id: BranchId,
    /// That branch's code.
    pub branch_code: String,
    /// The credit's number.
    pub credit_number: String,
    /// Why claimed.
    pub kind: CreditKind,
    /// The invoice the claim is about.
    pub against_invoice_id: Option<InvoiceId>,
    /// What is claimed.
    pub claimed_amount: Amount,
    /// When claimed.
    pub claim_date: Timestamp,
    /// What the distributor accepted; `None` until decided.
    pub accepted_amount: Option<Decimal>,
    /// When decided.
    pub decision_date: Option<Timestamp>,
    /// The distributor's reference.
    pub distributor_reference: Option<String>,
    /// The sum of its active applications.
    pub applied_amount: Decimal,
    /// Free text.
    pub description: Option<String>,
    /// False once soft-deleted.
    pub is_active: bool,
    /// When recorded.
    pub created_at: Timestamp,
    /// When last changed.
    pub updated_at: Timestamp,
    /// Its active applications, oldest first; filled by the single read, the create and every
    /// action, empty in lists.
    pub applications: Vec<CreditApplication>,
}

impl VendorCredit {
    /// `(acceptedAmount or 0) - appliedAmount`: what is left to set against bills.
    pub fn available_amount(&self) -> Decimal {
        (self.accepted_amount.unwrap_or_default() - self.applied_amount).normalize()
    }

    /// The computed status (D44).
    pub fn status(&self) -> CreditStatus {
        CreditStatus::compute(self.is_active, self.claimed_amount.get(), self.accepted_amount)
    }
}

/// Which credits to list (D44); by default the active ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditFilter {
    /// Only this vendor's.
    pub vendor_id: Option<VendorId>,
    /// Only this computed status.
    pub status: Option<CreditStatus>,
    /// Only this kind.
    pub kind: Option<CreditKind>,
    /// Claim date at or after.
    pub from_date: Option<Timestamp>,
    /// Claim date at or before.
    pub to_date: Option<Timestamp>,
    /// Active only (`Some(true)`, the default), canceled only (`Some(false)`), or either
    /// (`None`: a `status=Canceled` filter given without `isActive`, which names inactive credits
    /// itself).
    pub is_active: Option<bool>,
    /// Only claims still undecided since before this day (D44): the ones to chase. The engine
    /// turns it into [`CreditFilter::claimed_before_start`].
    pub claimed_before: Option<Date>,
    /// The first instant of `claimed_before` in the business zone (D3); stores read this.
    pub claimed_before_start: Option<Timestamp>,
    /// Only these branches' credits (D49): as read, the repeatable `branchId`; once the engine
    /// has judged it against the caller's scope, the branches kept (`None`: every branch).
    pub branches: Option<Vec<BranchId>>,
}

impl Default for CreditFilter {
    fn default() -> Self {
        Self {
            vendor_id: None,
            status: None,
            kind: None,
            from_date: None,
            to_date: None,
            is_active: Some(true),
            claimed_before: None,
            claimed_before_start: None,
            branches: None,
        }
    }
}

impl CreditFilter {
    /// Whether a credit, active or not, claiming `claimed` on `claim_date`, of which `accepted`
    /// was accepted, is selected: the one reading of the filter, which the memory store applies
    /// and the SQL store renders.
    pub fn admits(
        &self,
        vendor_id: VendorId,
        kind: CreditKind,
        is_active: bool,
        (claimed, accepted): (Decimal, Option<Decimal>),
        claim_date: Timestamp,
    ) -> bool {
        self.vendor_id.is_none_or(|wanted| wanted == vendor_id)
            && self.kind.is_none_or(|wanted| wanted == kind)
            && self.is_active.is_none_or(|wanted| wanted == is_active)
            && self.status.is_none_or(|wanted| wanted == CreditStatus::compute(is_active, claimed, accepted))
            && self.from_date.is_none_or(|from| claim_date >= from)
            && self.to_date.is_none_or(|to| claim_date <= to)
            && self.claimed_before_start.is_none_or(|before| is_active && accepted.is_none() && claim_date < before)
    }
}

impl ListFilter for CreditFilter {
    /// The default page size (D44).
    const PAGE_SIZE: u32 = 15;

    /// Reads the filter parameters (D8, D44): active credits unless `isActive` or a `Canceled`
    /// status says otherwise.
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self {
        let mut filter =
            CreditFilter { vendor_id: read_id(params, "vendorId", errors).map(VendorId), ..Self::default() };
        if let Some(value) = params.get("status") {
            filter.status = CreditStatus::parse(value);
            if filter.status.is_none() {
                errors.add("status", "must be one of Canceled, Claimed, Rejected, PartlyAccepted, Accepted");
            }
        }
        if let Some(value) = params.get("kind") {
            filter.kind = CreditKind::parse(value);
            if filter.kind.is_none() {
                errors.add("kind", "must be one of ExpiryReturn, Breakage, RateDifference, Other");
            }
        }
        filter.from_date = read_date(params, "fromDate", errors);
        filter.to_date = read_date(params, "toDate", errors);
        if let (Some(from), Some(to)) = (filter.from_date, filter.to_date)
            && to < from
        {
            errors.add("toDate", "must not be earlier than fromDate");
        }
        filter.is_active = match read_bool(params, "isActive", errors) {
            Some(wanted) => Some(wanted),
            None if filter.status == Some(CreditStatus::Canceled) => None,
            None => Some(true),
        };
        filter.claimed_before = read_day(params, "claimedBefore", errors);
        filter.branches = crate::paging::read_branch_filter(params, errors);
        filter
    }
}

/// A page of credits: newest `claimDate` first, then id descending (D44).
pub type CreditQuery = ListQuery<CreditFilter>;

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).unwrap()
    }

    #[test]
    fn the_status_is_the_first_row_that_matches() {
        let claimed = dec("100");
        let rows = [
            ("canceled beats accepted", false, Some(dec("100")), CreditStatus::Canceled),
            ("undecided is claimed", true, None, CreditStatus::Claimed),
            ("nothing accepted is rejected", true, Some(dec("0")), CreditStatus::Rejected),
            ("below the claim is partly accepted", true, Some(dec("99.9999")), CreditStatus::PartlyAccepted),
            ("the whole claim is accepted", true, Some(dec("100")), CreditStatus::Accepted),
        ];
        for (label, is_active, accepted, expected) in rows {
            assert_eq!(CreditStatus::compute(is_active, claimed, accepted), expected, "{label}");
        }
        assert_eq!(CreditStatus::parse("partlyaccepted"), Some(CreditStatus::PartlyAccepted));
        assert_eq!(CreditKind::parse(" expiryreturn "), Some(CreditKind::ExpiryReturn));
        assert_eq!(CreditKind::parse("Refund"), None);
    }

    #[test]
    fn a_credit_and_a_decision_report_every_problem_at_once() {
        let tomorrow = ts("2024-05-11T00:00:00Z");
        let credit = NewVendorCredit {
            vendor_id: VendorId(1),
            branch_id: None,
            credit_number: " ".into(),
            kind: CreditKind::Breakage,
            claimed_amount: Amount::parse("10").unwrap(),
            claim_date: tomorrow,
            against_invoice_id: None,
            description: Some("x".repeat(TEXT_MAX + 1)),
        };
        let errors = credit.clone().validate(tomorrow).unwrap_err();
        for field in ["creditNumber", "claimDate", "description"] {
            assert!(errors.contains(field), "{field}: {errors}");
        }
        let long = NewVendorCredit { credit_number: "C".repeat(CREDIT_NUMBER_MAX + 1), ..credit.clone() };
        assert!(long.validate(ts("2024-06-01T00:00:00Z")).unwrap_err().contains("creditNumber"));
        let fine = NewVendorCredit { credit_number: " CN-1 ".into(), description: None, ..credit }
            .validate(ts("2024-06-01T00:00:00Z"))
            .unwrap();
        assert_eq!(fine.credit_number, "CN-1");

        let decision = CreditDecision {
            accepted_amount: dec("-1"),
            decision_date: tomorrow,
            distributor_reference: Some(" ".into()),
        };
        let errors = decision.validate(tomorrow).unwrap_err();
        for field in ["acceptedAmount", "decisionDate"] {
            assert!(errors.contains(field), "{field}: {errors}");
        }
        let zero = CreditDecision {
            accepted_amount: dec("0.00"),
            decision_date: ts("2024-05-10T00:00:00Z"),
            distributor_reference: Some(" ".into()),
        };
        let zero = zero.validate(tomorrow).unwrap();
        assert_eq!((zero.accepted_amount, zero.distributor_reference), (Decimal::ZERO, None));
    }

    #[test]
    fn list_parameters_are_checked_and_default_to_active_credits() {
        let query = CreditQuery::from_params(&[]).unwrap();
        assert_eq!(query, CreditQuery::default());
        let canceled = CreditQuery::from_params(&[("status", "canceled")]).unwrap();
        assert_eq!((canceled.filter.status, canceled.filter.is_active), (Some(CreditStatus::Canceled), None));
        let errors = CreditQuery::from_params(&[
            ("status", "Paid"),
            ("kind", "Refund"),
            ("claimedBefore", "2024-13-01"),
            ("fromDate", "2024-05-02"),
            ("toDate", "2024-05-01"),
            ("vendorId", "0"),
            ("isActive", "maybe"),
        ])
        .unwrap_err();
        for field in ["status", "kind", "claimedBefore", "toDate", "vendorId", "isActive"] {
            assert!(errors.contains(field), "{field}: {errors}");
        }
    }

    #[test]
    fn the_filter_selects_undecided_claims_older_than_a_day() {
        let filter = CreditFilter { claimed_before_start: Some(ts("2024-05-01T00:00:00Z")), ..CreditFilter::default() };
        let claim = |active, accepted, date: &str| {
            filter.admits(VendorId(1), CreditKind::Other, active, (dec("10"), accepted), ts(date))
        };
        assert!(claim(true, None, "2024-04-30T23:59:59Z"));
        assert!(!claim(true, None, "2024-05-01T00:00:00Z"), "claimed on the day itself");
        assert!(!claim(true, Some(dec("0")), "2024-04-01T00:00:00Z"), "decided");
        assert!(!claim(false, None, "2024-04-01T00:00:00Z"), "canceled");
    }
}
