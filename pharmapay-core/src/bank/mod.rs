//! Bank statements (D46): the money that left the pharmacy's bank account, line by line, held
//! against the payments recorded, so payments never recorded, recorded wrongly, or recorded but
//! never sent stand out.

mod engine;
pub mod keys;
pub mod read;
pub mod rules;
pub mod store;

use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;

use crate::error::FieldErrors;
use crate::ids::{BankLineId, BankStatementId, BranchId, TransactionId, VendorId, VendorPaymentId};
use crate::money::Amount;
use crate::paging::{ListFilter, ListQuery, Params, read_id};
use crate::text::{self, Lines, TEXT_MAX};
use crate::transactions::holders::Holder;
use crate::vendor_payments::rules::RequestedAllocation;

use crate::idempotency::IdempotencyRequest;
use crate::imports::ImportFile;
use crate::transactions::TransactionType;
use read::ReadOptions;

/// The longest account name, in characters after trimming.
pub const ACCOUNT_MAX: usize = 64;

/// How a line stands against the recorded payments (D46).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LineStatus {
    /// Matched to a payment of the same amount.
    Matched,
    /// Matched by reference to a payment of another amount.
    AmountDiffers,
    /// One payment of the same amount within three days: a match to confirm.
    Suggested,
    /// No payment found.
    Unmatched,
    /// Not a vendor payment (rent, salary): set aside by hand.
    Ignored,
}

impl LineStatus {
    /// Every status, in the order the statement counts them.
    pub const ALL: [LineStatus; 5] = [
        LineStatus::Matched,
        LineStatus::AmountDiffers,
        LineStatus::Suggested,
        LineStatus::Unmatched,
        LineStatus::Ignored,
    ];

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            LineStatus::Matched => "Matched",
            LineStatus::AmountDiffers => "AmountDiffers",
            LineStatus::Suggested => "Suggested",
            LineStatus::Unmatched => "Unmatched",
            LineStatus::Ignored => "Ignored",
        }
    }

    /// Parses a status's name in any case (D7).
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        Self::ALL.into_iter().find(|status| status.name().eq_ignore_ascii_case(value))
    }

    /// Whether a line of this status holds its payment, so no other line may match it: matched,
    /// matched with another amount, or suggested (a suggestion is one confirmation away from a
    /// match, so two lines never suggest one payment).
    pub fn holds_payment(self) -> bool {
        matches!(self, LineStatus::Matched | LineStatus::AmountDiffers | LineStatus::Suggested)
    }
}

/// How a line found its payment (D46).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchedBy {
    /// A candidate key of the line is the payment's reference key (D30).
    Reference,
    /// The only payment of the same amount within three days.
    AmountAndDate,
    /// Chosen, or recorded from the line, by a person.
    Hand,
}

impl MatchedBy {
    /// Every way.
    pub const ALL: [MatchedBy; 3] = [MatchedBy::Reference, MatchedBy::AmountAndDate, MatchedBy::Hand];

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            MatchedBy::Reference => "Reference",
            MatchedBy::AmountAndDate => "AmountAndDate",
            MatchedBy::Hand => "Hand",
        }
    }

    /// Parses a name as stored.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|by| by.name() == value)
    }
}

/// How many lines of a statement stand in each status; a statement keeps them beside its row,
/// changed in the transaction of every line action (D41).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Matched lines.
    pub matched: u32,
    /// Lines matched by reference to a payment of another amount.
    pub amount_differs: u32,
    /// Suggested lines.
    pub suggested: u32,
    /// Unmatched lines.
    pub unmatched: u32,
    /// Ignored lines.
    pub ignored: u32,
}

impl LineCounts {
    /// The count of `status`.
    pub fn of(&self, status: LineStatus) -> u32 {
        match status {
            LineStatus::Matched => self.matched,
            LineStatus::AmountDiffers => self.amount_differs,
            LineStatus::Suggested => self.suggested,
            LineStatus::Unmatched => self.unmatched,
            LineStatus::Ignored => self.ignored,
        }
    }

    fn slot(&mut self, status: LineStatus) -> &mut u32 {
        match status {
            LineStatus::Matched => &mut self.matched,
            LineStatus::AmountDiffers => &mut self.amount_differs,
            LineStatus::Suggested => &mut self.suggested,
            LineStatus::Unmatched => &mut self.unmatched,
            LineStatus::Ignored => &mut self.ignored,
        }
    }

    /// Counts one more line of `status`.
    pub fn add(&mut self, status: LineStatus) {
        *self.slot(status) += 1;
    }

    /// Moves one line from `from` to `to`.
    pub fn moved(&mut self, from: LineStatus, to: LineStatus) {
        let slot = self.slot(from);
        *slot = slot.saturating_sub(1);
        self.add(to);
    }

    /// Every line counted.
    pub fn total(&self) -> u32 {
        LineStatus::ALL.iter().map(|status| self.of(*status)).sum()
    }
}

/// An uploaded bank statement (D46).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankStatement {
    /// Id.
    pub id: BankStatementId,
    /// The account it is of, as the upload named it.
    pub account: String,
    /// The branch whose account it is (D49): the head office's match every branch's payments,
    /// another branch's only its own ([`rules::may_match`]).
    pub branch_id: BranchId,
    /// That branch's code.
    pub branch_code: String,
    /// The first kept line's date; `None` when no line was kept.
    pub from_date: Option<Date>,
    /// The last kept line's date.
    pub to_date: Option<Date>,
    /// The kept lines by status; their sum is the line count.
    pub counts: LineCounts,
    /// Lines not kept because another active statement of the account has them.
    pub duplicate_lines: u32,
    /// Money-in lines, counted and dropped.
    pub deposit_lines: u32,
    /// Rows after the header holding no date.
    pub skipped_rows: u32,
    /// False once deleted.
    pub is_active: bool,
    /// When uploaded.
    pub created_at: Timestamp,
}

/// One kept line of a statement (D46).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankLine {
    /// Id.
    pub id: BankLineId,
    /// Its statement.
    pub statement_id: BankStatementId,
    /// Its place among the statement's kept lines, from 1.
    pub line_number: u32,
    /// The day the bank booked it.
    pub date: Date,
    /// The bank's narration.
    pub narration: Option<String>,
    /// The reference cell.
    pub reference: Option<String>,
    /// Money out, positive.
    pub amount: Amount,
    /// How it stands.
    pub status: LineStatus,
    /// How its payment was found, when it holds one.
    pub matched_by: Option<MatchedBy>,
    /// The payment it holds, when it holds one.
    pub payment: Option<Holder>,
}

impl BankLine {
    /// The payment on its own the line holds.
    pub fn transaction_id(&self) -> Option<TransactionId> {
        match self.payment {
            Some(Holder::Payment(id)) => Some(id),
            _ => None,
        }
    }

    /// The vendor payment the line holds.
    pub fn vendor_payment_id(&self) -> Option<VendorPaymentId> {
        match self.payment {
            Some(Holder::VendorPayment(id)) => Some(id),
            _ => None,
        }
    }
}

/// A payment that should have left the bank within a statement's range but that no line holds:
/// an active UPI or NetBanking payment on its own, or a vendor payment as one (D46).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnclearedPayment {
    /// The payment.
    pub payment: Holder,
    /// When paid.
    pub date: Timestamp,
    /// The amount paid (a vendor payment's whole amount, D31).
    pub amount: Amount,
    /// How paid.
    pub transaction_type: TransactionType,
    /// Its reference, as typed.
    pub reference: Option<String>,
}

/// How many payments of a statement's range no line holds, and their sum (D51).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnclearedTotals {
    /// How many.
    pub count: u64,
    /// What they add up to, exactly.
    pub amount: Decimal,
}

/// A statement with how many payments of its range no line holds: `GET /api/bank-statements/:id`
/// (D51: the payments themselves are a list of their own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementDetail {
    /// The statement.
    pub statement: BankStatement,
    /// The payments dated from three days before its first line to its last that no line
    /// holds: how many, and their sum.
    pub uncleared: UnclearedTotals,
}

/// The default page size of a statement's uncleared payments (D51).
pub const UNCLEARED_PAGE_SIZE: u32 = 50;

/// Normalises the `account` of an upload: one line, 1 to 64 characters after trimming.
///
/// # Errors
/// The message under `account`.
pub fn read_account(value: Option<&str>) -> Result<String, FieldErrors> {
    text::required(value.unwrap_or_default(), ACCOUNT_MAX)
        .map_err(|error| FieldErrors::single("account", error.to_string()))
}

/// Which statements to list (D46, D49): of some branches or all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatementFilter {
    /// Only these branches' statements: as read, the repeatable `branchId`; once the engine has
    /// judged it against the caller's scope, the branches kept (`None`: every branch).
    pub branches: Option<Vec<BranchId>>,
}

impl ListFilter for StatementFilter {
    const PAGE_SIZE: u32 = 20;

    /// Reads `branchId` (D49).
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self {
        Self { branches: crate::paging::read_branch_filter(params, errors) }
    }
}

/// The list of statements: newest first (D46).
pub type StatementQuery = ListQuery<StatementFilter>;

/// Which lines of a statement to list: of one status or all, by line number (D46).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineFilter {
    /// Only lines of this status.
    pub status: Option<LineStatus>,
}

impl ListFilter for LineFilter {
    const PAGE_SIZE: u32 = 50;

    /// Reads `status` (D46).
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self {
        let mut status = None;
        if let Some(value) = params.get("status") {
            status = LineStatus::parse(value);
            if status.is_none() {
                errors.add("status", "must be one of Matched, AmountDiffers, Suggested, Unmatched, Ignored");
            }
        }
        Self { status }
    }
}

/// A statement's lines: by line number, of one status or all (D46).
pub type LineQuery = ListQuery<LineFilter>;

/// What a person does with one line (D46).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineAction {
    /// A suggestion becomes a match.
    Confirm,
    /// Matched by hand to this payment (a payment's vendor payment, when it is part of one).
    Match(PaymentChoice),
    /// Holds no payment any more.
    Unmatch,
    /// Not a vendor payment; the reason goes to the audit log.
    Ignore {
        /// Why, for the audit log (D16).
        reason: Option<String>,
    },
}

impl LineAction {
    /// The name the audit log records the action under.
    pub fn name(&self) -> &'static str {
        match self {
            LineAction::Confirm => "confirm",
            LineAction::Match(_) => "match",
            LineAction::Unmatch => "unmatch",
            LineAction::Ignore { .. } => "ignore",
        }
    }

    /// Trims an ignore's reason (at most 1,000 characters, several lines allowed).
    ///
    /// # Errors
    /// The message under `reason`.
    pub fn validate(self) -> Result<Self, FieldErrors> {
        match self {
            LineAction::Ignore { reason } => match text::optional(reason.as_deref(), TEXT_MAX, Lines::Multi) {
                Ok(reason) => Ok(LineAction::Ignore { reason }),
                Err(error) => Err(FieldErrors::single("reason", error.to_string())),
            },
            other => Ok(other),
        }
    }
}

/// The payment a line is matched to by hand: `{transactionId}` or `{vendorPaymentId}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaymentChoice {
    /// A payment: itself, or its vendor payment when it is part of one.
    Transaction(TransactionId),
    /// A vendor payment.
    VendorPayment(VendorPaymentId),
}

/// A vendor payment to record from a line (D46): `record {vendorId, allocations?,
/// transactionType?}`; the amount, the date and the reference come from the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineRecording {
    /// The vendor paid.
    pub vendor_id: VendorId,
    /// How the amount is split; `None` pays the oldest due first (D31).
    pub allocations: Option<Vec<RequestedAllocation>>,
    /// How paid; by default UPI when the narration says so, else NetBanking.
    pub transaction_type: Option<TransactionType>,
}

/// A statement to keep, as read from its file (D46).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewBankStatement {
    /// The account, trimmed ([`read_account`]).
    pub account: String,
    /// The branch it belongs to; `None` takes the default of creates (D49), which the engine
    /// fills in before the store sees it.
    pub branch_id: Option<BranchId>,
    /// Its money-out lines, in file order.
    pub lines: Vec<crate::bank::read::StatementLine>,
    /// Money-in lines, counted and dropped.
    pub deposit_lines: u32,
    /// Rows after the header holding no date.
    pub skipped_rows: u32,
}

impl NewBankStatement {
    /// What the audit log keeps of an upload (D22): its account and counts; the lines are the
    /// statement's own.
    pub(crate) fn audit_changes(&self) -> String {
        serde_json::json!({
            "account": self.account,
            "branchId": self.branch_id.map(BranchId::get),
            "lines": self.lines.len(),
            "depositLines": self.deposit_lines,
            "skippedRows": self.skipped_rows,
        })
        .to_string()
    }
}

/// The body of a match by hand (D46): `{transactionId}` or `{vendorPaymentId}`, exactly one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchRequest {
    /// A payment: itself, or its vendor payment when it is part of one.
    pub transaction_id: Option<TransactionId>,
    /// A vendor payment.
    pub vendor_payment_id: Option<VendorPaymentId>,
}

impl MatchRequest {
    /// The payment chosen.
    ///
    /// # Errors
    /// A message under `transactionId` when neither or both are given.
    pub fn choice(self) -> Result<PaymentChoice, FieldErrors> {
        match (self.transaction_id, self.vendor_payment_id) {
            (Some(id), None) => Ok(PaymentChoice::Transaction(id)),
            (None, Some(id)) => Ok(PaymentChoice::VendorPayment(id)),
            _ => Err(FieldErrors::single("transactionId", "give exactly one of transactionId and vendorPaymentId")),
        }
    }
}

/// What an upload's query parameters say (D46, D49).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UploadParams {
    /// `account`, as given.
    pub account: Option<String>,
    /// `branchId`: the branch whose statement it is; `None` takes the default of creates.
    pub branch_id: Option<BranchId>,
    /// The columns to read and the date order.
    pub options: ReadOptions,
}

/// The query parameters of an upload (D46): `account`, `branchId` (D49), the columns to read
/// instead of the recognised headers, and `dateFormat`.
///
/// # Errors
/// The messages by parameter name: an unknown `dateFormat`, a column name that is blank,
/// longer than 64 characters or the same header as an earlier column parameter, a `branchId`
/// that is no id.
pub fn upload_params(params: &(impl Params + ?Sized)) -> Result<UploadParams, FieldErrors> {
    use crate::bank::read::{DateOrder, ReadOptions};
    let mut errors = FieldErrors::new();
    // Each named column is read as one thing: a header named for two (the date and the amount)
    // is a mistake, answered on the later parameter.
    let mut named: Vec<(&str, String)> = Vec::new();
    let mut column = |name: &'static str| -> Option<String> {
        let value = params.get(name)?;
        let value = match text::required(value, ACCOUNT_MAX) {
            Ok(value) => value,
            Err(error) => {
                errors.add(name, error.to_string());
                return None;
            }
        };
        let key = read::bank_header_key(&value);
        if let Some((earlier, _)) = named.iter().find(|(_, other)| *other == key) {
            errors.add(name, format!("names the same column as {earlier}"));
            return None;
        }
        named.push((name, key));
        Some(value)
    };
    let mut options = ReadOptions {
        date_column: column("dateColumn"),
        narration_column: column("narrationColumn"),
        reference_column: column("referenceColumn"),
        debit_column: column("debitColumn"),
        amount_column: column("amountColumn"),
        date_order: DateOrder::default(),
    };
    if let Some(value) = params.get("dateFormat") {
        match DateOrder::parse(value) {
            Some(order) => options.date_order = order,
            None => errors.add("dateFormat", format!("must be one of {}", DateOrder::NAMES.join(", "))),
        }
    }
    let account = params.get("account").map(str::to_owned);
    let branch_id = read_id(params, "branchId", &mut errors).map(BranchId);
    if errors.is_empty() { Ok(UploadParams { account, branch_id, options }) } else { Err(errors) }
}

/// An upload's request (D46): the account, the file, how to read it, and its idempotency key.
pub struct StatementUpload<'a> {
    /// The account the statement is of, as the user names it (`?account=`).
    pub account: Option<String>,
    /// The branch whose statement it is (`?branchId=`, D49); `None` takes the default of creates.
    pub branch_id: Option<BranchId>,
    /// The file.
    pub file: ImportFile,
    /// Column names and the date order, when the defaults do not fit.
    pub options: ReadOptions,
    /// The create's key, if any (D23).
    pub idempotency: Option<&'a IdempotencyRequest>,
}
