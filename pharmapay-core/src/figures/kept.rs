//! Every kept figure at once ([`KeptFigures`]): what a store keeps, or a recount of it from the
//! rows; the memory store keeps its figures in one, and the property tests compare a store's
//! with a recount. Also the keys stores file business days under.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use jiff::civil::Date;

use super::contribution::{Contribution, FigureChange};
use super::kinds::{DayFigures, LedgerTotals, OpenFigures, VendorDayFigures, VendorFigures};
use crate::clock::BusinessCalendar;
use crate::ids::VendorId;

/// Every kept figure at once: what a store keeps, or a recount of it from the rows. Entries
/// that hold nothing are left out, so two sets of figures are equal exactly when every figure
/// is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeptFigures {
    /// Per vendor.
    pub vendors: BTreeMap<VendorId, VendorFigures>,
    /// Open invoices per due date.
    pub open_by_due_date: BTreeMap<Timestamp, OpenFigures>,
    /// Active payments per business day.
    pub days: BTreeMap<Date, DayFigures>,
    /// Each vendor's statement lines per business day.
    pub vendor_days: BTreeMap<(VendorId, Date), VendorDayFigures>,
    /// The installation's totals.
    pub totals: LedgerTotals,
}

impl KeptFigures {
    /// The figures of `rows`, counted afresh.
    pub fn recount<R: Contribution>(rows: impl IntoIterator<Item = R>) -> Self {
        let mut figures = KeptFigures::default();
        figures.add_rows(rows);
        figures
    }

    /// Adds what `rows` contribute.
    pub fn add_rows<R: Contribution>(&mut self, rows: impl IntoIterator<Item = R>) {
        let mut change = FigureChange::new();
        for row in rows {
            row.add_to(&mut change, 1);
        }
        self.apply(&change);
    }

    /// Applies `change`.
    pub fn apply(&mut self, change: &FigureChange) {
        add_all(&mut self.vendors, change.vendors());
        add_all(&mut self.open_by_due_date, change.open_by_due_date());
        add_all(&mut self.days, change.days());
        add_all(&mut self.vendor_days, change.vendor_days());
        if let Some(totals) = change.totals() {
            self.totals.apply(totals);
        }
    }

    /// These figures as a change from none at all, for a store that writes them afresh.
    pub fn as_change(&self) -> FigureChange {
        FigureChange {
            vendors: self.vendors.clone(),
            open_by_due_date: self.open_by_due_date.clone(),
            days: self.days.clone(),
            vendor_days: self.vendor_days.clone(),
            totals: self.totals,
            paid: BTreeSet::new(),
        }
    }

    /// A vendor's figures (zero for a vendor without active invoices).
    pub fn vendor(&self, vendor_id: VendorId) -> VendorFigures {
        self.vendors.get(&vendor_id).copied().unwrap_or_default()
    }

    /// The open invoices due before `today_start`: the Overdue ones (D10).
    pub fn open_due_before(&self, today_start: Timestamp) -> i64 {
        self.open_by_due_date.range(..today_start).map(|(_, open)| open.invoices).sum()
    }

    /// The open invoices due from `from` (included) to `before` (excluded).
    pub fn open_due_between(&self, from: Timestamp, before: Timestamp) -> OpenFigures {
        let mut sum = OpenFigures::default();
        if from < before {
            for (_, open) in self.open_by_due_date.range(from..before) {
                sum.apply(open);
            }
        }
        sum
    }

    /// Replaces the day figures by the days of `calendar` (D41: a new `TimeZone`), from the
    /// active payments' dates and amounts, given as groups of payments sharing one date.
    pub fn recount_days(
        &mut self,
        calendar: &BusinessCalendar,
        groups: impl IntoIterator<Item = (Timestamp, DayFigures)>,
    ) {
        self.days = days_of(calendar, groups);
    }
}

/// A kind of figure kept per key: it adds a change to itself, and holds nothing when zero.
trait Kept: Default {
    fn add(&mut self, change: &Self);
    fn is_nothing(&self) -> bool;
}

macro_rules! kept_kind {
    ($($kind:ty),*) => {
        $(impl Kept for $kind {
            fn add(&mut self, change: &Self) {
                self.apply(change);
            }

            fn is_nothing(&self) -> bool {
                self.is_zero()
            }
        })*
    };
}

kept_kind!(VendorFigures, OpenFigures, DayFigures, VendorDayFigures);

/// Adds each change to its key's figures, leaving out keys that then hold nothing.
fn add_all<'a, K: Ord + Copy, F: Kept + 'a>(figures: &mut BTreeMap<K, F>, changes: impl Iterator<Item = (K, &'a F)>) {
    for (key, change) in changes {
        let entry = figures.entry(key).or_default();
        entry.add(change);
        if entry.is_nothing() {
            figures.remove(&key);
        }
    }
}

/// The day figures of active payments given as groups sharing one `transactionDate`, filed
/// under their business days in `calendar` (D3).
pub fn days_of(
    calendar: &BusinessCalendar,
    groups: impl IntoIterator<Item = (Timestamp, DayFigures)>,
) -> BTreeMap<Date, DayFigures> {
    let mut days: BTreeMap<Date, DayFigures> = BTreeMap::new();
    for (date, group) in groups {
        days.entry(calendar.date_of(date)).or_default().apply(&group);
    }
    days.retain(|_, figures| !figures.is_zero());
    days
}

/// Each vendor's statement lines per business day (D35), from groups of its lines sharing one
/// instant (an invoice date or a payment date), filed under their business days in `calendar`
/// (D3): for a new `TimeZone`, which moves lines between days.
pub fn vendor_days_of(
    calendar: &BusinessCalendar,
    groups: impl IntoIterator<Item = (VendorId, Timestamp, VendorDayFigures)>,
) -> BTreeMap<(VendorId, Date), VendorDayFigures> {
    let mut days: BTreeMap<(VendorId, Date), VendorDayFigures> = BTreeMap::new();
    for (vendor_id, date, group) in groups {
        days.entry((vendor_id, calendar.date_of(date))).or_default().apply(&group);
    }
    days.retain(|_, figures| !figures.is_zero());
    days
}

/// A business day as an integer `YYYYMMDD`, the key stores file day figures under: it orders
/// as the days do, and a month's days lie between `YYYYMM00` and `YYYYMM99`.
pub fn day_key(day: Date) -> i64 {
    i64::from(day.year()) * 10_000 + i64::from(day.month()) * 100 + i64::from(day.day())
}

/// The business day of a [`day_key`]; `None` for a number that names no day.
pub fn day_of_key(key: i64) -> Option<Date> {
    let year = i16::try_from(key / 10_000).ok()?;
    let month = i8::try_from(key / 100 % 100).ok()?;
    let day = i8::try_from(key % 100).ok()?;
    Date::new(year, month, day).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::test_values::{dec, ts};

    #[test]
    fn day_keys_round_trip_and_order_like_days() {
        let day: Date = "2024-02-29".parse().unwrap();
        assert_eq!(day_key(day), 20_240_229);
        assert_eq!(day_of_key(20_240_229), Some(day));
        assert_eq!(day_of_key(20_240_230), None);
        assert!(day_key("2023-12-31".parse().unwrap()) < day_key("2024-01-01".parse().unwrap()));
    }

    #[test]
    fn payments_are_filed_under_their_business_day() {
        let kolkata = BusinessCalendar::parse("Asia/Kolkata").unwrap();
        let group = |at: &str, amount: &str| (ts(at), DayFigures { payments: 1, amount: dec(amount) });
        // A Kolkata day runs from 18:30 UTC to 18:30 UTC.
        let days = days_of(
            &kolkata,
            [
                group("2024-05-19T18:29:59Z", "1"),
                group("2024-05-19T18:30:00Z", "2"),
                group("2024-05-20T18:29:59Z", "4"),
            ],
        );
        let days: Vec<_> = days.iter().map(|(day, figures)| (day.to_string(), *figures)).collect();
        assert_eq!(
            days,
            [
                ("2024-05-19".to_owned(), DayFigures { payments: 1, amount: dec("1") }),
                ("2024-05-20".to_owned(), DayFigures { payments: 2, amount: dec("6") }),
            ]
        );
        let utc = days_of(&BusinessCalendar::utc(), [group("2024-05-19T18:30:00Z", "2")]);
        assert_eq!(utc.keys().next().map(ToString::to_string).as_deref(), Some("2024-05-19"));
    }
}
