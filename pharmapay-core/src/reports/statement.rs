//! A vendor's statement (D35): the ledger a distributor's own is compared against.
//!
//! Over a date range (days in the business time zone, D3), the statement lists the vendor's
//! active invoices by invoice date, the active payments of those invoices by payment date and
//! its active credits with something accepted by decision date (D44), ordered by date, invoices
//! before payments before credits on the same day, then id. The opening balance is what was
//! invoiced minus what was paid and credited before the range; each line carries the running
//! balance after it; the closing balance is the opening plus what was invoiced minus what was
//! paid and credited in the range. A store finds the lines and the opening figures; [`build`]
//! orders them and does the arithmetic, exactly.

use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;

use crate::clock::BusinessCalendar;
use crate::error::FieldErrors;
use crate::figures::VendorDayFigures;
use crate::ids::{InvoiceId, TransactionId, VendorCreditId};
use crate::paging::{PagePlace, PageRequest, Params, read_day};

/// Lines on a page of a statement when `page` comes without `pageSize` (D43).
pub const STATEMENT_PAGE_SIZE: u32 = 100;

/// The range of a statement (D35): business days, both included; and the page of its lines, or
/// all of them (D43).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatementQuery {
    /// The first day; `None` is the first day of the current month.
    pub from_date: Option<Date>,
    /// The last day; `None` is today.
    pub to_date: Option<Date>,
    /// One page of the lines (D43); `None` answers them all.
    pub page: Option<PageRequest>,
}

impl StatementQuery {
    /// Reads `fromDate` and `toDate` (`YYYY-MM-DD`), `page` and `pageSize`; `fromDate` after
    /// `toDate` is an error, and
    /// so is either missing when the other makes the range empty, which the engine checks.
    ///
    /// # Errors
    /// The messages by parameter name.
    pub fn from_params(params: &(impl Params + ?Sized)) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let query = Self {
            from_date: read_day(params, "fromDate", &mut errors),
            to_date: read_day(params, "toDate", &mut errors),
            page: PageRequest::optional_from_params(params, STATEMENT_PAGE_SIZE, &mut errors),
        };
        if let (Some(from), Some(to)) = (query.from_date, query.to_date)
            && from > to
        {
            errors.add("fromDate", "must not be after toDate");
        }
        if errors.is_empty() { Ok(query) } else { Err(errors) }
    }
}

/// A vendor's statement: the vendor, the range and its figures (D35).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// The vendor, active or not.
    pub vendor: crate::vendors::Vendor,
    /// The first day.
    pub from_date: Date,
    /// The last day.
    pub to_date: Date,
    /// The opening balance, the lines and the totals; with a page, its lines alone, each
    /// still with the running balance from the range's opening, and the totals of the whole
    /// range (D43).
    pub figures: StatementFigures,
    /// Where the lines sit among all the range's lines, when a page was asked for (D43).
    pub page: Option<PagePlace>,
}

/// What a store finds for a statement (D35): what was invoiced and paid before the range, and
/// the range's invoices and payments, each with its business day already read in the calendar
/// it was given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatementRows {
    /// The vendor's active invoices dated before the range: the sum of their amounts.
    pub invoiced_before: Decimal,
    /// The active payments of those invoices dated before the range: the sum of their amounts.
    pub paid_before: Decimal,
    /// The vendor's active credits decided before the range: the sum of their accepted amounts
    /// (D44).
    pub credited_before: Decimal,
    /// The range's invoices, payments and credits, in any order.
    pub entries: Vec<StatementEntry>,
}

/// What a statement line records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StatementLineKind {
    /// An invoice: the vendor invoiced its amount.
    Invoice,
    /// A payment against one of the vendor's invoices.
    Payment,
    /// A credit the vendor accepted (D44).
    Credit,
}

impl StatementLineKind {
    /// The name the API writes.
    pub fn name(self) -> &'static str {
        match self {
            StatementLineKind::Invoice => "Invoice",
            StatementLineKind::Payment => "Payment",
            StatementLineKind::Credit => "Credit",
        }
    }
}

/// An invoice, payment or credit found for a statement, before ordering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementEntry {
    /// The business day of its invoice, payment or decision date.
    pub date: Date,
    /// Invoice, payment or credit.
    pub kind: StatementLineKind,
    /// The invoice (the one paid, for a payment; the one claimed against, if any, for a credit).
    pub invoice_id: Option<InvoiceId>,
    /// Its number.
    pub invoice_number: Option<String>,
    /// The payment, for payment lines.
    pub transaction_id: Option<TransactionId>,
    /// The payment's reference (D30), for payment lines that have one.
    pub reference: Option<String>,
    /// The credit, for credit lines (D44).
    pub credit_id: Option<VendorCreditId>,
    /// Its number.
    pub credit_number: Option<String>,
    /// The invoice's, payment's or credit's description.
    pub description: Option<String>,
    /// The invoice's amount, the payment's amount or the credit's accepted amount.
    pub amount: Decimal,
}

impl StatementEntry {
    /// The id that orders lines of one kind on one day: the invoice's, the payment's or the
    /// credit's.
    fn order_id(&self) -> i64 {
        match self.kind {
            StatementLineKind::Invoice => self.invoice_id.map_or(0, InvoiceId::get),
            StatementLineKind::Payment => self.transaction_id.map_or(0, TransactionId::get),
            StatementLineKind::Credit => self.credit_id.map_or(0, VendorCreditId::get),
        }
    }
}

/// A line of a statement, with the running balance after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementLine {
    /// What the line records.
    pub entry: StatementEntry,
    /// The amount invoiced on this line (zero for payments).
    pub invoiced: Decimal,
    /// The amount paid on this line (zero for invoices and credits).
    pub paid: Decimal,
    /// The amount credited on this line (zero for invoices and payments, D44).
    pub credited: Decimal,
    /// The balance after this line.
    pub balance: Decimal,
}

/// A statement's lines and figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementFigures {
    /// Invoiced minus paid and credited before the range.
    pub opening_balance: Decimal,
    /// The lines, in statement order.
    pub lines: Vec<StatementLine>,
    /// Invoiced in the range.
    pub total_invoiced: Decimal,
    /// Paid in the range.
    pub total_paid: Decimal,
    /// Credited in the range (D44).
    pub total_credited: Decimal,
    /// `opening_balance + total_invoiced - total_paid - total_credited`.
    pub closing_balance: Decimal,
}

/// Orders `entries` (date, invoices before payments before credits, then id) and runs the
/// balance from `opening_balance`.
pub fn build(opening_balance: Decimal, mut entries: Vec<StatementEntry>) -> StatementFigures {
    entries.sort_by(|a, b| a.date.cmp(&b.date).then(a.kind.cmp(&b.kind)).then(a.order_id().cmp(&b.order_id())));
    let mut balance = opening_balance;
    let (mut total_invoiced, mut total_paid, mut total_credited) = (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO);
    let lines = entries
        .into_iter()
        .map(|entry| {
            let (mut invoiced, mut paid, mut credited) = (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO);
            match entry.kind {
                StatementLineKind::Invoice => invoiced = entry.amount,
                StatementLineKind::Payment => paid = entry.amount,
                StatementLineKind::Credit => credited = entry.amount,
            }
            total_invoiced += invoiced;
            total_paid += paid;
            total_credited += credited;
            balance += invoiced - paid - credited;
            StatementLine {
                entry,
                invoiced: invoiced.normalize(),
                paid: paid.normalize(),
                credited: credited.normalize(),
                balance: balance.normalize(),
            }
        })
        .collect();
    StatementFigures {
        opening_balance: opening_balance.normalize(),
        lines,
        total_invoiced: total_invoiced.normalize(),
        total_paid: total_paid.normalize(),
        total_credited: total_credited.normalize(),
        closing_balance: (opening_balance + total_invoiced - total_paid - total_credited).normalize(),
    }
}

/// A page of a statement from the vendor's kept figures (D41, D43) rather than from every line
/// of the range.
///
/// A store keeps, per vendor and business day, how many invoices and payments its statement
/// shows and what they add up to ([`VendorDayFigures`]). The opening balance is the vendor's
/// kept balance less what every day from the range's first on added; the totals are the range's
/// days added up; and the page's lines are found by counting lines day by day, so only the days
/// the page spans are read. A store calls [`Self::new`] with the vendor's balance and its day
/// figures from the range's first day on, reads the lines of [`Self::days`], and hands them to
/// [`Self::finish`], all in one snapshot.
#[derive(Debug)]
pub struct StatementPage {
    page: PageRequest,
    opening_balance: Decimal,
    total_invoiced: Decimal,
    total_paid: Decimal,
    total_credited: Decimal,
    total_count: u64,
    /// The first and last day of the page's lines, the balance before the first day's lines and
    /// how many of the range's lines come before them; `None` for a page past the end.
    span: Option<(Date, Date, Decimal, u64)>,
}

impl StatementPage {
    /// The page `page` of the statement over `from_date` to `to_date`, of a vendor whose
    /// statement balance (every active invoice less every active payment of them and every
    /// active credit's accepted amount, [`crate::figures::VendorFigures::statement_balance`]) is
    /// `balance` and whose day figures from `from_date` on, after `to_date` too, are `days`.
    pub fn new(
        page: PageRequest,
        (from_date, to_date): (Date, Date),
        balance: Decimal,
        days: &[(Date, VendorDayFigures)],
    ) -> Self {
        let mut opening_balance = balance;
        let mut totals = VendorDayFigures::default();
        for (day, figures) in days.iter().filter(|(day, _)| *day >= from_date) {
            opening_balance -= figures.net();
            if *day <= to_date {
                totals.apply(figures);
            }
        }
        let (total_invoiced, total_paid, total_credited) = (totals.invoiced, totals.paid, totals.credited);
        let total_count = u64::try_from(totals.lines()).unwrap_or(0);
        let (start, end) = (page.offset(), page.offset() + u64::from(page.page_size()));
        let mut span: Option<(Date, Date, Decimal, u64)> = None;
        let (mut before, mut running) = (0u64, opening_balance);
        let mut range: Vec<&(Date, VendorDayFigures)> =
            days.iter().filter(|(day, _)| (from_date..=to_date).contains(day)).collect();
        range.sort_by_key(|(day, _)| *day);
        for (day, figures) in range {
            let lines = u64::try_from(figures.lines()).unwrap_or(0);
            if lines == 0 {
                continue;
            }
            match &mut span {
                None if before + lines > start => span = Some((*day, *day, running, before)),
                Some((_, last, ..)) if before < end => *last = *day,
                _ => {}
            }
            if before + lines >= end && span.is_some() {
                break;
            }
            before += lines;
            running += figures.net();
        }
        Self { page, opening_balance, total_invoiced, total_paid, total_credited, total_count, span }
    }

    /// The first and the last business day whose lines the page holds, if it holds any.
    pub fn days(&self) -> Option<(Date, Date)> {
        self.span.map(|(first, last, ..)| (first, last))
    }

    /// The instants `[from, before)` of [`Self::days`] in `calendar`, whose lines a store
    /// reads for [`Self::finish`].
    pub fn instants(&self, calendar: &BusinessCalendar) -> Option<(Timestamp, Timestamp)> {
        self.days().map(|(first, last)| {
            (calendar.start_of(first), calendar.start_of(last.saturating_add(jiff::Span::new().days(1))))
        })
    }

    /// The page, from every line of [`Self::days`], in any order.
    pub fn finish(self, entries: Vec<StatementEntry>) -> (StatementFigures, PagePlace) {
        let place =
            PagePlace { page: self.page.page(), page_size: self.page.page_size(), total_count: self.total_count };
        let lines = match self.span {
            Some((_, _, balance, before)) => {
                let mut lines = build(balance, entries).lines;
                let skip = usize::try_from(self.page.offset().saturating_sub(before)).unwrap_or(usize::MAX);
                lines.drain(..skip.min(lines.len()));
                lines.truncate(self.page.page_size() as usize);
                lines
            }
            None => Vec::new(),
        };
        let figures = StatementFigures {
            opening_balance: self.opening_balance.normalize(),
            lines,
            total_invoiced: self.total_invoiced.normalize(),
            total_paid: self.total_paid.normalize(),
            total_credited: self.total_credited.normalize(),
            closing_balance: (self.opening_balance + self.total_invoiced - self.total_paid - self.total_credited)
                .normalize(),
        };
        (figures, place)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).unwrap()
    }

    fn entry(day: &str, kind: StatementLineKind, invoice: i64, payment: Option<i64>, amount: &str) -> StatementEntry {
        let credit = (kind == StatementLineKind::Credit).then_some(VendorCreditId(payment.unwrap_or(invoice)));
        StatementEntry {
            date: day.parse().unwrap(),
            kind,
            invoice_id: (kind != StatementLineKind::Credit).then_some(InvoiceId(invoice)),
            invoice_number: Some(format!("INV-{invoice}")),
            transaction_id: payment.filter(|_| kind == StatementLineKind::Payment).map(TransactionId),
            reference: None,
            credit_id: credit,
            credit_number: credit.map(|id| format!("CN-{id}")),
            description: None,
            amount: dec(amount),
        }
    }

    #[test]
    fn lines_order_by_date_then_invoices_first_then_id() {
        use StatementLineKind::{Invoice, Payment};
        let figures = build(
            dec("100"),
            vec![
                entry("2024-05-02", Payment, 7, Some(30), "10"),
                entry("2024-05-02", Invoice, 9, None, "50"),
                entry("2024-05-01", Payment, 7, Some(31), "5"),
                entry("2024-05-02", Payment, 7, Some(12), "1.25"),
                entry("2024-05-02", Invoice, 8, None, "20"),
            ],
        );
        let order: Vec<(Option<i64>, i64)> = figures
            .lines
            .iter()
            .map(|l| (l.entry.transaction_id.map(TransactionId::get), l.entry.invoice_id.unwrap().get()))
            .collect();
        assert_eq!(order, [(Some(31), 7), (None, 8), (None, 9), (Some(12), 7), (Some(30), 7)]);
        let balances: Vec<Decimal> = figures.lines.iter().map(|l| l.balance).collect();
        assert_eq!(balances, [dec("95"), dec("115"), dec("165"), dec("163.75"), dec("153.75")]);
        assert_eq!((figures.total_invoiced, figures.total_paid), (dec("70"), dec("16.25")));
        assert_eq!(figures.closing_balance, dec("153.75"));
        assert_eq!(figures.closing_balance, figures.lines.last().unwrap().balance);
    }

    #[test]
    fn credits_come_last_on_their_day_and_lower_the_balance() {
        use StatementLineKind::{Credit, Invoice, Payment};
        let figures = build(
            dec("0"),
            vec![
                entry("2024-05-02", Credit, 0, Some(4), "15"),
                entry("2024-05-02", Payment, 7, Some(30), "10"),
                entry("2024-05-02", Credit, 0, Some(3), "5"),
                entry("2024-05-02", Invoice, 7, None, "100"),
            ],
        );
        let kinds: Vec<(StatementLineKind, Option<i64>)> =
            figures.lines.iter().map(|l| (l.entry.kind, l.entry.credit_id.map(VendorCreditId::get))).collect();
        assert_eq!(kinds, [(Invoice, None), (Payment, None), (Credit, Some(3)), (Credit, Some(4))]);
        let credited: Vec<Decimal> = figures.lines.iter().map(|l| l.credited).collect();
        assert_eq!(credited, [dec("0"), dec("0"), dec("5"), dec("15")]);
        assert_eq!((figures.total_credited, figures.closing_balance), (dec("20"), dec("70")));
        assert_eq!(figures.closing_balance, figures.lines.last().unwrap().balance);
    }

    #[test]
    fn a_page_from_day_figures_is_the_whole_statement_cut() {
        use StatementLineKind::{Credit, Invoice, Payment};
        // Lines before the range (opening), in it, and after it (a future-dated invoice).
        let all = vec![
            entry("2024-04-28", Invoice, 1, None, "100"),
            entry("2024-04-29", Payment, 1, Some(10), "30"),
            entry("2024-05-01", Invoice, 2, None, "50"),
            entry("2024-05-01", Payment, 1, Some(11), "5"),
            entry("2024-05-01", Payment, 2, Some(12), "7.5"),
            entry("2024-05-03", Invoice, 3, None, "20"),
            entry("2024-05-03", Invoice, 4, None, "0.25"),
            entry("2024-05-04", Payment, 3, Some(13), "20"),
            entry("2024-05-04", Credit, 0, Some(2), "3"),
            entry("2024-05-02", Credit, 0, Some(1), "1.5"),
            entry("2024-05-09", Invoice, 5, None, "999"),
        ];
        let (from, to): (Date, Date) = ("2024-05-01".parse().unwrap(), "2024-05-05".parse().unwrap());
        let mut days: std::collections::BTreeMap<Date, VendorDayFigures> = Default::default();
        for line in &all {
            let figures = days.entry(line.date).or_default();
            match line.kind {
                Invoice => {
                    figures.apply(&VendorDayFigures { invoices: 1, invoiced: line.amount, ..Default::default() })
                }
                Payment => figures.apply(&VendorDayFigures { payments: 1, paid: line.amount, ..Default::default() }),
                Credit => figures.apply(&VendorDayFigures { credits: 1, credited: line.amount, ..Default::default() }),
            }
        }
        let balance: Decimal = days.values().map(VendorDayFigures::net).sum();
        let days: Vec<(Date, VendorDayFigures)> = days.into_iter().filter(|(day, _)| *day >= from).collect();
        let in_range = |line: &&StatementEntry| line.date >= from && line.date <= to;
        let whole = build(dec("70"), all.iter().filter(in_range).cloned().collect());
        assert_eq!(whole.lines.len(), 8);
        for size in 1..=9 {
            let mut joined = Vec::new();
            for page in 1..=10 {
                let plan = StatementPage::new(PageRequest::new(page, size), (from, to), balance, &days);
                let entries: Vec<StatementEntry> = match plan.days() {
                    Some((first, last)) => {
                        all.iter().filter(|line| line.date >= first && line.date <= last).cloned().collect()
                    }
                    None => Vec::new(),
                };
                let (figures, place) = plan.finish(entries);
                assert_eq!(place.total_count, 8, "size {size}, page {page}");
                assert_eq!(
                    (figures.opening_balance, figures.total_invoiced, figures.total_paid, figures.total_credited),
                    (whole.opening_balance, whole.total_invoiced, whole.total_paid, whole.total_credited),
                    "size {size}, page {page}: the whole range's figures"
                );
                assert_eq!(
                    figures.closing_balance, whole.closing_balance,
                    "size {size}, page {page}: the whole range's figures"
                );
                joined.extend(figures.lines);
            }
            assert_eq!(joined, whole.lines, "pages of {size}, put together");
        }
    }

    #[test]
    fn an_empty_range_closes_at_its_opening() {
        let figures = build(dec("-12.5"), Vec::new());
        assert!(figures.lines.is_empty());
        assert_eq!((figures.opening_balance, figures.closing_balance), (dec("-12.5"), dec("-12.5")));
    }
}
