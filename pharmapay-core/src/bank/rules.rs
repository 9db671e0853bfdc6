//! Matching a bank statement against the recorded payments (D46).
//!
//! A store uploading a statement holds the bank statements' lock (so two uploads, or an upload
//! and a line action, are decided one after the other), loads the lines of the account's other
//! active statements on the upload's days and the active payments no line holds that a line
//! could match (by a candidate key, or by amount within the days around the lines), and asks
//! [`plan_statement`]. A line action loads the line and, for a match by hand, the payment and
//! the line holding it, and asks the function of its action here. So a payment is held by one
//! line of the active statements at most, whatever requests race.

use std::collections::{HashMap, HashSet};

use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;

use crate::BusinessCalendar;
use crate::bank::keys::{candidate_keys, says_upi};
use crate::bank::read::StatementLine;
use crate::bank::{LineCounts, LineRecording, LineStatus, MatchedBy, PaymentChoice};
use crate::branches::HEAD_OFFICE_ID;
use crate::error::{Entity, RuleBroken};
use crate::ids::{BankLineId, BranchId};
use crate::store::{StoreError, StoreResult, UniqueKey};
use crate::transactions::TransactionType;
use crate::transactions::reference::PaymentReference;
use crate::vendor_payments::NewVendorPayment;

use crate::transactions::holders::Holder;

/// How far apart, in days, a line and a payment of the same amount may be dated to be
/// suggested as one (D46).
pub const SUGGEST_WITHIN_DAYS: i64 = 3;

/// A payment a line may match, as a store found it: active, and held by no line of an active
/// statement. A vendor payment is one payment (D31), of the amount it was recorded with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenPayment {
    /// The payment.
    pub payment: Holder,
    /// Its amount.
    pub amount: Decimal,
    /// When paid.
    pub date: Timestamp,
    /// How paid.
    pub transaction_type: TransactionType,
    /// Its reference's key (D30).
    pub reference_key: Option<String>,
    /// The branch it is of: its invoice's, or for a vendor payment the one branch of all its
    /// active parts' invoices; `None` for a vendor payment spanning branches (D49).
    pub branch: Option<BranchId>,
}

/// The one branch whose payments a statement of `statement` may match (D49): `None` for the
/// head office's statements, which match every branch's payments; another branch's match only
/// payments of its own invoices. A store reading a statement's candidates or its uncleared
/// payments keeps only this branch's when it is `Some`.
pub fn matched_branch(statement: BranchId) -> Option<BranchId> {
    (statement != HEAD_OFFICE_ID).then_some(statement)
}

/// Whether a caller of `scope` may see and act on a statement of branch `statement` (D49): the
/// head office's statements are chain-wide, for a scope of every branch only; another branch's
/// for those whose scope holds it.
pub fn in_reach(scope: &crate::branches::Scope, statement: BranchId) -> bool {
    if statement == HEAD_OFFICE_ID { scope.is_all() } else { scope.contains(statement) }
}

/// The branches whose statements a caller of `scope` may list, within `requested` if given
/// (D49): `None` for every branch.
pub fn listed_branches(scope: &crate::branches::Scope, requested: Option<&[BranchId]>) -> Option<Vec<BranchId>> {
    let reachable = |branch: &BranchId| in_reach(scope, *branch);
    match (requested, scope.ids()) {
        (Some(requested), _) => Some(requested.iter().copied().filter(reachable).collect()),
        (None, Some(held)) => Some(held.iter().copied().filter(reachable).collect()),
        (None, None) => None,
    }
}

/// Whether a statement of branch `statement` may match a payment of branch `payment` (`None`
/// for a vendor payment spanning branches): the head office's any, another branch's only its
/// own (D49).
pub fn may_match(statement: BranchId, payment: Option<BranchId>) -> bool {
    matched_branch(statement).is_none_or(|only| payment == Some(only))
}

/// What makes two lines the same bank entry (D46): a line of an upload identical to one of
/// another active statement of the account is a duplicate, not kept.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LineIdentity {
    /// The date.
    pub date: Date,
    /// The amount, normalised (`500.00` is `500`).
    pub amount: Decimal,
    /// The narration.
    pub narration: Option<String>,
    /// The reference cell.
    pub reference: Option<String>,
}

impl LineIdentity {
    /// The identity of a line.
    pub fn new(date: Date, amount: Decimal, narration: Option<&str>, reference: Option<&str>) -> Self {
        Self {
            date,
            amount: amount.normalize(),
            narration: narration.map(str::to_owned),
            reference: reference.map(str::to_owned),
        }
    }

    fn of(line: &StatementLine) -> Self {
        Self::new(line.date, line.amount.get(), line.narration.as_deref(), line.reference.as_deref())
    }
}

/// What a store must load before [`plan_statement`]: every candidate key of the lines, and the
/// amounts and days (three either side of the lines') of the payments that may be suggested.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchingNeeds {
    /// The candidate keys of every line.
    pub keys: Vec<String>,
    /// The lines' amounts, normalised.
    pub amounts: Vec<Decimal>,
    /// The first and last day a suggested payment may be dated, if there are lines.
    pub days: Option<(Date, Date)>,
}

impl MatchingNeeds {
    /// What matching `lines` needs.
    pub fn of(lines: &[StatementLine]) -> Self {
        let mut keys = HashSet::new();
        let mut amounts = HashSet::new();
        for line in lines {
            keys.extend(candidate_keys(line.reference.as_deref(), line.narration.as_deref()));
            amounts.insert(line.amount.get().normalize());
        }
        let days = Self::range(lines).map(|(first, last)| {
            (
                first.saturating_sub(jiff::Span::new().days(SUGGEST_WITHIN_DAYS)),
                last.saturating_add(jiff::Span::new().days(SUGGEST_WITHIN_DAYS)),
            )
        });
        let mut keys: Vec<String> = keys.into_iter().collect();
        keys.sort_unstable();
        let mut amounts: Vec<Decimal> = amounts.into_iter().collect();
        amounts.sort_unstable();
        Self { keys, amounts, days }
    }

    /// The first and last day of the lines themselves, if any: where their duplicates may be.
    pub fn range(lines: &[StatementLine]) -> Option<(Date, Date)> {
        first_and_last(lines.iter().map(|line| line.date))
    }
}

/// A line of an upload as it will be kept: its place, status and payment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedLine {
    /// Its number among the kept lines, from 1.
    pub line_number: u32,
    /// The line as read.
    pub line: StatementLine,
    /// How it stands.
    pub status: LineStatus,
    /// How its payment was found.
    pub matched_by: Option<MatchedBy>,
    /// The payment it holds.
    pub payment: Option<Holder>,
}

/// What an upload keeps (D46).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatementPlan {
    /// The kept lines, in file order.
    pub lines: Vec<PlannedLine>,
    /// The lines another active statement of the account already has.
    pub duplicate_lines: u32,
    /// The kept lines by status.
    pub counts: LineCounts,
}

impl StatementPlan {
    /// The first and last day of the kept lines: the statement's range (D46); `None` when no
    /// line is kept.
    pub fn range(&self) -> Option<(Date, Date)> {
        first_and_last(self.lines.iter().map(|line| line.line.date))
    }
}

/// The earliest and latest of `days`; `None` when there are none.
fn first_and_last(days: impl Iterator<Item = Date>) -> Option<(Date, Date)> {
    days.fold(None, |range, day| match range {
        None => Some((day, day)),
        Some((first, last)) => Some((first.min(day), last.max(day))),
    })
}

/// Decides an upload (D46): a line identical to one in `existing` (the identities of the lines
/// of the account's other active statements) is a duplicate; each other line is matched against
/// `open`, each payment going to one line at most.
///
/// First every line looks for a payment whose reference key is one of its candidate keys, in
/// the candidates' order (the reference cell, then the narration's runs), preferring one of the
/// line's amount, then the lowest id: `Matched` when the amounts are equal, else
/// `AmountDiffers`. Then each line still without one looks for payments other than Cash of its
/// amount dated (on the business calendar) within three days of it, not taken by another line:
/// exactly one makes it `Suggested`; none or several leave it `Unmatched`. Reference matches
/// are made for every line first, so a line's reference is never lost to another line's
/// suggestion. A statement of branch `branch` considers only the payments it
/// [`may_match`] (D49): another branch's are left out, as if not recorded.
pub fn plan_statement(
    branch: BranchId,
    lines: Vec<StatementLine>,
    existing: &HashSet<LineIdentity>,
    mut open: Vec<OpenPayment>,
    calendar: &BusinessCalendar,
) -> StatementPlan {
    open.retain(|payment| may_match(branch, payment.branch));
    open.sort_by_key(|payment| payment_order(payment.payment));
    let mut by_key: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_amount: HashMap<Decimal, Vec<usize>> = HashMap::new();
    for (index, payment) in open.iter().enumerate() {
        if let Some(key) = &payment.reference_key {
            by_key.entry(key.as_str()).or_default().push(index);
        }
        if payment.transaction_type != TransactionType::Cash {
            by_amount.entry(payment.amount.normalize()).or_default().push(index);
        }
    }
    let mut plan = StatementPlan::default();
    for line in lines {
        if existing.contains(&LineIdentity::of(&line)) {
            plan.duplicate_lines += 1;
            continue;
        }
        let line_number = plan.lines.len() as u32 + 1;
        plan.lines.push(PlannedLine {
            line_number,
            line,
            status: LineStatus::Unmatched,
            matched_by: None,
            payment: None,
        });
    }
    let mut taken = vec![false; open.len()];
    for planned in &mut plan.lines {
        let amount = planned.line.amount.get();
        let keys = candidate_keys(planned.line.reference.as_deref(), planned.line.narration.as_deref());
        let found: Vec<usize> = keys
            .iter()
            .filter_map(|key| by_key.get(key.as_str()))
            .flatten()
            .copied()
            .filter(|index| !taken[*index])
            .collect();
        let chosen = found.iter().find(|index| open[**index].amount == amount).or(found.first()).copied();
        if let Some(index) = chosen {
            taken[index] = true;
            planned.status = if open[index].amount == amount { LineStatus::Matched } else { LineStatus::AmountDiffers };
            planned.matched_by = Some(MatchedBy::Reference);
            planned.payment = Some(open[index].payment);
        }
    }
    for planned in plan.lines.iter_mut().filter(|planned| planned.payment.is_none()) {
        let near: Vec<usize> = by_amount
            .get(&planned.line.amount.get().normalize())
            .into_iter()
            .flatten()
            .copied()
            .filter(|index| !taken[*index] && within_days(calendar.date_of(open[*index].date), planned.line.date))
            .collect();
        if let [index] = near.as_slice() {
            taken[*index] = true;
            planned.status = LineStatus::Suggested;
            planned.matched_by = Some(MatchedBy::AmountAndDate);
            planned.payment = Some(open[*index].payment);
        }
    }
    for planned in &plan.lines {
        plan.counts.add(planned.status);
    }
    plan
}

/// Payments in id order, payments on their own before vendor payments.
fn payment_order(payment: Holder) -> (u8, i64) {
    match payment {
        Holder::Payment(id) => (0, id.get()),
        Holder::VendorPayment(id) => (1, id.get()),
    }
}

fn within_days(paid: Date, booked: Date) -> bool {
    i64::from((paid - booked).get_days()).abs() <= SUGGEST_WITHIN_DAYS
}

/// A line as an action finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineFacts {
    /// The line.
    pub id: BankLineId,
    /// How it stands.
    pub status: LineStatus,
    /// How its payment was found.
    pub matched_by: Option<MatchedBy>,
    /// The payment it holds.
    pub payment: Option<Holder>,
}

impl LineFacts {
    /// The facts of a line as a store read it.
    pub fn of(line: &crate::bank::BankLine) -> Self {
        Self { id: line.id, status: line.status, matched_by: line.matched_by, payment: line.payment }
    }
}

/// What an action leaves a line as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineChange {
    /// Its new status.
    pub status: LineStatus,
    /// How its payment was found.
    pub matched_by: Option<MatchedBy>,
    /// The payment it holds.
    pub payment: Option<Holder>,
}

/// `confirm` (D46): a suggestion becomes a match.
///
/// # Errors
/// `Rule(LineNotSuggested)` for a line that is not `Suggested`.
pub fn confirm(line: &LineFacts) -> StoreResult<LineChange> {
    if line.status != LineStatus::Suggested {
        return Err(StoreError::Rule(RuleBroken::LineNotSuggested));
    }
    Ok(LineChange { status: LineStatus::Matched, ..change_of(line) })
}

/// A payment a line is matched to by hand, as the store found it: active, its amount, and the
/// line of an active statement holding it, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChosenPayment {
    /// The payment (a payment's vendor payment when it is part of one).
    pub payment: Holder,
    /// Its amount (a vendor payment's whole amount).
    pub amount: Decimal,
    /// The line holding it.
    pub held_by: Option<BankLineId>,
    /// Its branch, as [`OpenPayment::branch`] (D49).
    pub branch: Option<BranchId>,
}

/// `match` by hand (D46) of a line of a statement of branch `statement` to the payment `named`
/// (as found, `chosen`): the line holds the payment, `Matched` when the amounts are equal,
/// else `AmountDiffers`, matched by `Hand`.
///
/// # Errors
/// `NotFound` of what `named` names when the statement may not match the payment (D49:
/// another branch's payment is answered as a missing one); `Conflict(BankMatch)` when another
/// line holds the payment.
pub fn match_by_hand(
    line: &LineFacts,
    statement: BranchId,
    amount: Decimal,
    named: PaymentChoice,
    chosen: &ChosenPayment,
) -> StoreResult<LineChange> {
    if !may_match(statement, chosen.branch) {
        let missing = match named {
            PaymentChoice::Transaction(_) => Entity::Transaction,
            PaymentChoice::VendorPayment(_) => Entity::VendorPayment,
        };
        return Err(StoreError::NotFound(missing));
    }
    if let Some(holder) = chosen.held_by.filter(|holder| *holder != line.id) {
        let vendor_payment = matches!(chosen.payment, Holder::VendorPayment(_));
        return Err(StoreError::Conflict(UniqueKey::BankMatch { line: holder, vendor_payment }));
    }
    let status = if chosen.amount == amount { LineStatus::Matched } else { LineStatus::AmountDiffers };
    Ok(LineChange { status, matched_by: Some(MatchedBy::Hand), payment: Some(chosen.payment) })
}

/// `unmatch` (D46): the line holds nothing and is `Unmatched`, whatever it was.
pub fn unmatch() -> LineChange {
    LineChange { status: LineStatus::Unmatched, matched_by: None, payment: None }
}

/// `ignore` (D46): the line holds nothing and is `Ignored`.
pub fn ignore() -> LineChange {
    LineChange { status: LineStatus::Ignored, matched_by: None, payment: None }
}

/// What deleting the payment a line holds does to the line (D51 amending D46): it is set back
/// to `Unmatched`, holding nothing, in the delete's own transaction; restoring the payment does
/// not match it again.
pub fn released() -> LineChange {
    unmatch()
}

/// `record` (D46), checked under the lock: only a line holding no payment records one.
///
/// # Errors
/// `Rule(LineHoldsPayment)`.
pub fn check_record(line: &LineFacts) -> StoreResult<()> {
    match line.payment {
        Some(_) => Err(StoreError::Rule(RuleBroken::LineHoldsPayment)),
        None => Ok(()),
    }
}

/// A line once the vendor payment recorded from it holds it: `Matched` by `Hand`.
pub fn recorded(payment: Holder) -> LineChange {
    LineChange { status: LineStatus::Matched, matched_by: Some(MatchedBy::Hand), payment: Some(payment) }
}

fn change_of(line: &LineFacts) -> LineChange {
    LineChange { status: line.status, matched_by: line.matched_by, payment: line.payment }
}

/// The vendor payment `record` writes for a line (D46): the line's amount, its day (as a day
/// alone is read, D2: midnight UTC), its first candidate key as the reference (none when it has
/// none, or when the key is longer than a reference may be), and the type asked for, else UPI
/// when the narration says so, else NetBanking; over the invoices of the branch a statement of
/// `statement` matches (D49: a store's statement records over its own bills only, the head
/// office's over every branch's).
pub fn recording(
    statement: BranchId,
    amount: crate::money::Amount,
    date: Date,
    narration: Option<&str>,
    reference: Option<&str>,
    recording: LineRecording,
) -> NewVendorPayment {
    let reference =
        candidate_keys(reference, narration).into_iter().next().and_then(|key| PaymentReference::parse(&key).ok());
    let transaction_type = recording.transaction_type.unwrap_or(if says_upi(narration) {
        TransactionType::Upi
    } else {
        TransactionType::NetBanking
    });
    let transaction_date =
        date.to_zoned(jiff::tz::TimeZone::UTC).map(|zoned| zoned.timestamp()).unwrap_or(Timestamp::UNIX_EPOCH);
    NewVendorPayment {
        amount,
        transaction_date,
        transaction_type,
        reference,
        description: None,
        allocations: recording.allocations,
        branch_id: matched_branch(statement),
    }
}

#[cfg(test)]
mod tests {
    use jiff::civil::date;

    use super::*;
    use crate::ids::{TransactionId, VendorPaymentId};
    use crate::money::Amount;

    fn line(day: i8, amount: &str, narration: &str, reference: Option<&str>) -> StatementLine {
        StatementLine {
            row: 1,
            date: date(2026, 4, day),
            narration: Some(narration.to_owned()),
            reference: reference.map(str::to_owned),
            amount: Amount::parse(amount).expect("an amount"),
        }
    }

    fn paid(id: i64, day: i8, amount: &str, kind: TransactionType, reference: Option<&str>) -> OpenPayment {
        OpenPayment {
            payment: Holder::Payment(TransactionId(id)),
            amount: amount.parse().expect("a decimal"),
            date: date(2026, 4, day).to_zoned(jiff::tz::TimeZone::UTC).expect("a day").timestamp(),
            transaction_type: kind,
            reference_key: reference.map(PaymentReference::key_of),
            branch: Some(HEAD_OFFICE_ID),
        }
    }

    fn plan(lines: Vec<StatementLine>, open: Vec<OpenPayment>) -> StatementPlan {
        plan_statement(HEAD_OFFICE_ID, lines, &HashSet::new(), open, &BusinessCalendar::utc())
    }

    fn outcome(plan: &StatementPlan) -> Vec<(LineStatus, Option<MatchedBy>, Option<Holder>)> {
        plan.lines.iter().map(|line| (line.status, line.matched_by, line.payment)).collect()
    }

    fn single(id: i64) -> Option<Holder> {
        Some(Holder::Payment(TransactionId(id)))
    }

    #[test]
    fn a_narration_utr_matches_its_payment_and_an_amount_difference_shows() {
        // HDFC-shaped UPI narrations: the UTR is the 12-digit run.
        let lines = vec![
            line(5, "12500.00", "UPI-MEDPLUS DISTRIB-medplus@okhdfcbank-HDFC0000123-412345678901-PAYMENT", None),
            line(6, "8000", "UPI-APOLLO-apollo@okicici-ICIC0000456-412345678902-INV 77", None),
        ];
        let open = vec![
            paid(1, 5, "12500", TransactionType::Upi, Some("4123-4567-8901")),
            paid(2, 6, "8000.50", TransactionType::Upi, Some("412345678902")),
        ];
        let plan = plan(lines, open);
        assert_eq!(
            outcome(&plan),
            [
                (LineStatus::Matched, Some(MatchedBy::Reference), single(1)),
                (LineStatus::AmountDiffers, Some(MatchedBy::Reference), single(2)),
            ]
        );
        assert_eq!((plan.counts.matched, plan.counts.amount_differs, plan.counts.total()), (1, 1, 2));
    }

    #[test]
    fn the_reference_cell_is_a_candidate_and_an_equal_amount_is_preferred() {
        // An SBI-shaped line: the reference is its own cell; two payment types hold the key.
        let lines = vec![line(7, "5000", "TO TRANSFER-NEFT APOLLO PHARMA", Some("N098765432101234"))];
        let open = vec![
            paid(3, 7, "4000", TransactionType::Upi, Some("N098765432101234")),
            paid(4, 7, "5000", TransactionType::NetBanking, Some("n0987-6543-2101-234")),
        ];
        assert_eq!(outcome(&plan(lines, open)), [(LineStatus::Matched, Some(MatchedBy::Reference), single(4))]);
    }

    #[test]
    fn one_payment_of_the_amount_within_three_days_is_suggested() {
        let lines =
            vec![line(10, "2750", "CHQ PAID-MICR CLG-SHREE MEDICALS", None), line(20, "999", "NEFT DR-ACME", None)];
        let open = vec![
            paid(5, 13, "2750.0000", TransactionType::NetBanking, None),
            // Four days away: too far.
            paid(6, 16, "999", TransactionType::Upi, None),
        ];
        assert_eq!(
            outcome(&plan(lines, open)),
            [(LineStatus::Suggested, Some(MatchedBy::AmountAndDate), single(5)), (LineStatus::Unmatched, None, None),]
        );
    }

    #[test]
    fn cash_two_candidates_or_none_leave_a_line_unmatched() {
        let lines = vec![line(10, "300", "ATM WDL", None), line(11, "450", "IMPS", None)];
        let open = vec![
            paid(7, 10, "300", TransactionType::Cash, None),
            paid(8, 11, "450", TransactionType::Upi, None),
            paid(9, 12, "450", TransactionType::NetBanking, None),
        ];
        assert_eq!(
            outcome(&plan(lines, open)),
            [(LineStatus::Unmatched, None, None), (LineStatus::Unmatched, None, None)]
        );
    }

    #[test]
    fn a_payment_goes_to_one_line_and_references_come_before_suggestions() {
        // The first line could be suggested payment 10, but the second line names it by reference.
        let lines = vec![
            line(3, "1000", "IMPS-NO REF", None),
            line(3, "1000", "IMPS-612345678901-DISTRIBUTOR", None),
            line(3, "1000", "IMPS-612345678901-REPEATED", None),
        ];
        let open = vec![paid(10, 3, "1000", TransactionType::Upi, Some("612345678901"))];
        assert_eq!(
            outcome(&plan(lines, open)),
            [
                (LineStatus::Unmatched, None, None),
                (LineStatus::Matched, Some(MatchedBy::Reference), single(10)),
                (LineStatus::Unmatched, None, None),
            ]
        );
    }

    #[test]
    fn lines_another_statement_has_are_duplicates_not_kept() {
        let lines = vec![line(1, "100", "A", Some("R1")), line(2, "200.00", "B", None), line(2, "200", "B", None)];
        let existing: HashSet<LineIdentity> =
            [LineIdentity::new(date(2026, 4, 2), "200".parse().expect("a decimal"), Some("B"), None)].into();
        let plan = plan_statement(HEAD_OFFICE_ID, lines, &existing, Vec::new(), &BusinessCalendar::utc());
        assert_eq!(plan.duplicate_lines, 2);
        assert_eq!(plan.lines.len(), 1);
        assert_eq!(plan.lines[0].line_number, 1);
    }

    #[test]
    fn a_vendor_payment_is_one_payment() {
        let lines = vec![line(9, "30000", "NEFT-HDFCN52026040912345-WHOLESALE", None)];
        let open = vec![OpenPayment {
            payment: Holder::VendorPayment(VendorPaymentId(2)),
            ..paid(0, 9, "30000", TransactionType::NetBanking, Some("HDFCN52026040912345"))
        }];
        let plan = plan(lines, open);
        assert_eq!(plan.lines[0].payment, Some(Holder::VendorPayment(VendorPaymentId(2))));
    }

    #[test]
    fn needs_name_the_keys_amounts_and_days_around_the_lines() {
        let lines = vec![line(10, "500.50", "UPI/512345678901/x", Some("REF 1")), line(12, "20", "-", None)];
        let needs = MatchingNeeds::of(&lines);
        assert_eq!(needs.keys, ["512345678901", "REF1"]);
        assert_eq!(needs.amounts.len(), 2);
        assert_eq!(needs.days, Some((date(2026, 4, 7), date(2026, 4, 15))));
        assert_eq!(MatchingNeeds::range(&lines), Some((date(2026, 4, 10), date(2026, 4, 12))));
        assert_eq!(MatchingNeeds::of(&[]).days, None);
    }

    fn facts(status: LineStatus, payment: Option<Holder>) -> LineFacts {
        LineFacts { id: BankLineId(1), status, matched_by: None, payment }
    }

    #[test]
    fn only_a_suggestion_is_confirmed() {
        let suggested = facts(LineStatus::Suggested, single(3));
        let confirmed = confirm(&suggested).expect("a suggestion");
        assert_eq!((confirmed.status, confirmed.payment), (LineStatus::Matched, single(3)));
        for status in [LineStatus::Matched, LineStatus::AmountDiffers, LineStatus::Unmatched, LineStatus::Ignored] {
            assert!(matches!(confirm(&facts(status, None)), Err(StoreError::Rule(RuleBroken::LineNotSuggested))));
        }
    }

    #[test]
    fn a_match_by_hand_refuses_a_payment_another_line_holds() {
        let line = facts(LineStatus::Unmatched, None);
        let asked = PaymentChoice::Transaction(TransactionId(4));
        let free = ChosenPayment {
            payment: single(4).expect("a payment"),
            amount: "10".parse().expect("a decimal"),
            held_by: None,
            branch: Some(HEAD_OFFICE_ID),
        };
        let change =
            match_by_hand(&line, HEAD_OFFICE_ID, "10".parse().expect("a decimal"), asked, &free).expect("free");
        assert_eq!((change.status, change.matched_by), (LineStatus::Matched, Some(MatchedBy::Hand)));
        let differs =
            match_by_hand(&line, HEAD_OFFICE_ID, "11".parse().expect("a decimal"), asked, &free).expect("free");
        assert_eq!(differs.status, LineStatus::AmountDiffers);
        // Held by this same line: matching again is fine.
        let own = ChosenPayment { held_by: Some(BankLineId(1)), ..free };
        assert!(match_by_hand(&line, HEAD_OFFICE_ID, "10".parse().expect("a decimal"), asked, &own).is_ok());
        let taken = ChosenPayment { held_by: Some(BankLineId(9)), ..free };
        assert!(matches!(
            match_by_hand(&line, HEAD_OFFICE_ID, "10".parse().expect("a decimal"), asked, &taken),
            Err(StoreError::Conflict(UniqueKey::BankMatch { line: BankLineId(9), vendor_payment: false }))
        ));
    }

    #[test]
    fn a_payment_is_recorded_only_from_a_line_holding_none() {
        assert!(check_record(&facts(LineStatus::Unmatched, None)).is_ok());
        assert!(check_record(&facts(LineStatus::Ignored, None)).is_ok());
        assert!(matches!(
            check_record(&facts(LineStatus::Suggested, single(1))),
            Err(StoreError::Rule(RuleBroken::LineHoldsPayment))
        ));
    }

    #[test]
    fn a_recorded_payment_takes_the_line_day_amount_and_first_key() {
        let upi = LineRecording { vendor_id: crate::ids::VendorId(1), allocations: None, transaction_type: None };
        let payment = recording(
            HEAD_OFFICE_ID,
            Amount::parse("1234.5").expect("an amount"),
            date(2026, 4, 5),
            Some("UPI/412345678901/MEDPLUS"),
            None,
            upi.clone(),
        );
        assert_eq!(payment.amount, Amount::parse("1234.5").expect("an amount"));
        assert_eq!(payment.transaction_date.to_string(), "2026-04-05T00:00:00Z");
        assert_eq!(payment.transaction_type, TransactionType::Upi);
        assert_eq!(payment.reference.as_ref().map(PaymentReference::as_str), Some("412345678901"));
        let neft = recording(
            HEAD_OFFICE_ID,
            Amount::parse("1").expect("an amount"),
            date(2026, 4, 5),
            Some("NEFT TO X"),
            None,
            upi.clone(),
        );
        assert_eq!((neft.transaction_type, neft.reference), (TransactionType::NetBanking, None));
        let cash = LineRecording { transaction_type: Some(TransactionType::Cash), ..upi };
        let chosen = recording(
            HEAD_OFFICE_ID,
            Amount::parse("1").expect("an amount"),
            date(2026, 4, 5),
            Some("UPI"),
            Some("CHQ 000123"),
            cash,
        );
        assert_eq!(chosen.transaction_type, TransactionType::Cash);
        assert_eq!(chosen.reference.as_ref().map(PaymentReference::as_str), Some("CHQ000123"));
        assert_eq!(chosen.branch_id, None, "the head office's statement records over every branch's bills");
        let store = LineRecording { vendor_id: crate::ids::VendorId(1), allocations: None, transaction_type: None };
        let own = recording(BranchId(4), Amount::parse("1").expect("an amount"), date(2026, 4, 5), None, None, store);
        assert_eq!(own.branch_id, Some(BranchId(4)), "a store's statement records over its own bills only (D49)");
    }

    #[test]
    fn a_store_statement_matches_only_its_own_payments() {
        // D49: the head office's statement matches every branch's payments; a store's only its
        // own, and never a vendor payment spanning branches.
        let store = BranchId(2);
        let lines = || {
            vec![
                line(5, "100", "UPI-412345678901-A", None),
                line(5, "200", "UPI-412345678902-B", None),
                line(5, "300", "UPI-412345678903-C", None),
            ]
        };
        let open = || {
            vec![
                OpenPayment { branch: Some(store), ..paid(1, 5, "100", TransactionType::Upi, Some("412345678901")) },
                OpenPayment {
                    branch: Some(BranchId(3)),
                    ..paid(2, 5, "200", TransactionType::Upi, Some("412345678902"))
                },
                OpenPayment { branch: None, ..paid(3, 5, "300", TransactionType::Upi, Some("412345678903")) },
            ]
        };
        let own = plan_statement(store, lines(), &HashSet::new(), open(), &BusinessCalendar::utc());
        assert_eq!(
            outcome(&own),
            [
                (LineStatus::Matched, Some(MatchedBy::Reference), single(1)),
                (LineStatus::Unmatched, None, None),
                (LineStatus::Unmatched, None, None),
            ]
        );
        let head = plan_statement(HEAD_OFFICE_ID, lines(), &HashSet::new(), open(), &BusinessCalendar::utc());
        assert_eq!(head.counts.matched, 3);
        assert!(may_match(HEAD_OFFICE_ID, None) && may_match(store, Some(store)));
        assert!(!may_match(store, None) && !may_match(store, Some(HEAD_OFFICE_ID)));
        assert_eq!((matched_branch(HEAD_OFFICE_ID), matched_branch(store)), (None, Some(store)));
    }

    #[test]
    fn another_branch_payment_matched_by_hand_is_missing() {
        let line = facts(LineStatus::Unmatched, None);
        let chosen = ChosenPayment {
            payment: Holder::VendorPayment(VendorPaymentId(7)),
            amount: "10".parse().expect("a decimal"),
            held_by: None,
            branch: None,
        };
        let ten: Decimal = "10".parse().expect("a decimal");
        let by_part = PaymentChoice::Transaction(TransactionId(70));
        assert!(matches!(
            match_by_hand(&line, BranchId(2), ten, by_part, &chosen),
            Err(StoreError::NotFound(Entity::Transaction))
        ));
        let by_whole = PaymentChoice::VendorPayment(VendorPaymentId(7));
        assert!(matches!(
            match_by_hand(&line, BranchId(2), ten, by_whole, &chosen),
            Err(StoreError::NotFound(Entity::VendorPayment))
        ));
        assert!(match_by_hand(&line, HEAD_OFFICE_ID, ten, by_whole, &chosen).is_ok());
        let own = ChosenPayment { branch: Some(BranchId(2)), ..chosen };
        assert!(match_by_hand(&line, BranchId(2), ten, by_whole, &own).is_ok());
    }
}
