//! Payables aging (D34): what was owed on a day, by how late it was.
//!
//! Over the active invoices dated on or before the day, what was still owed on it is the amount
//! less the invoice's active payments dated on or before it; only a positive remainder counts.
//! Each remainder falls in a bucket by the days its due date lies before the day (date parts in
//! the business time zone, D3): not due, 1-30, 31-60, 61-90, 91-180, or over 180 days, the last
//! being where input tax credit on an unpaid bill is lost. Payments made later never shrink a
//! back-dated aging.
//!
//! Core owns the buckets: [`AgingBounds`] turns a day into instant thresholds a store can compare
//! stored dates with, and [`AgingBuilder`] adds up what a store found into the answer, exactly
//! and in a stable order.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;

use crate::clock::BusinessCalendar;
use crate::error::FieldErrors;
use crate::ids::VendorId;
use crate::paging::{PagePlace, PageRequest, Params, read_day, read_id};
use crate::text;

/// Vendor rows on a page of the aging when `page` comes without `pageSize` (D43).
pub const AGING_PAGE_SIZE: u32 = 25;

/// The parameters of an aging (D34): the day, today when absent, and one vendor or all; and
/// the page of vendor rows, or all of them (D43).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgingQuery {
    /// The aging day; `None` is today in the business time zone.
    pub as_of: Option<Date>,
    /// Only this vendor.
    pub vendor_id: Option<VendorId>,
    /// One page of the vendor rows (D43); `None` answers them all.
    pub page: Option<PageRequest>,
}

impl AgingQuery {
    /// Reads `asOf`, `vendorId`, `page` and `pageSize`; a day after today is the engine's to
    /// refuse.
    ///
    /// # Errors
    /// The messages by parameter name.
    pub fn from_params(params: &(impl Params + ?Sized)) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let query = Self {
            as_of: read_day(params, "asOf", &mut errors),
            vendor_id: read_id(params, "vendorId", &mut errors).map(VendorId),
            page: PageRequest::optional_from_params(params, AGING_PAGE_SIZE, &mut errors),
        };
        if errors.is_empty() { Ok(query) } else { Err(errors) }
    }
}

/// How late an amount is on the aging day.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AgingBucket {
    /// Due on or after the day.
    NotDue,
    /// 1 to 30 days past due.
    Days1To30,
    /// 31 to 60 days past due.
    Days31To60,
    /// 61 to 90 days past due.
    Days61To90,
    /// 91 to 180 days past due.
    Days91To180,
    /// More than 180 days past due.
    Over180,
}

impl AgingBucket {
    /// Every bucket, least late first.
    pub const ALL: [AgingBucket; 6] = [
        AgingBucket::NotDue,
        AgingBucket::Days1To30,
        AgingBucket::Days31To60,
        AgingBucket::Days61To90,
        AgingBucket::Days91To180,
        AgingBucket::Over180,
    ];

    /// The bucket of an amount whose due date lies `days_past_due` days before the aging day
    /// (zero or negative: not due).
    pub fn of_days_past_due(days_past_due: i64) -> Self {
        match days_past_due {
            ..=0 => AgingBucket::NotDue,
            1..=30 => AgingBucket::Days1To30,
            31..=60 => AgingBucket::Days31To60,
            61..=90 => AgingBucket::Days61To90,
            91..=180 => AgingBucket::Days91To180,
            _ => AgingBucket::Over180,
        }
    }

    /// The field name the API writes (`notDue`, `days1To30` ...).
    pub fn field(self) -> &'static str {
        match self {
            AgingBucket::NotDue => "notDue",
            AgingBucket::Days1To30 => "days1To30",
            AgingBucket::Days31To60 => "days31To60",
            AgingBucket::Days61To90 => "days61To90",
            AgingBucket::Days91To180 => "days91To180",
            AgingBucket::Over180 => "over180",
        }
    }

    /// The column heading of the aging report.
    pub fn heading(self) -> &'static str {
        match self {
            AgingBucket::NotDue => "Not Due",
            AgingBucket::Days1To30 => "1-30 Days",
            AgingBucket::Days31To60 => "31-60 Days",
            AgingBucket::Days61To90 => "61-90 Days",
            AgingBucket::Days91To180 => "91-180 Days",
            AgingBucket::Over180 => "Over 180 Days",
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|bucket| *bucket == self).expect("ALL lists every bucket")
    }
}

/// The instants an aging on one day compares stored dates with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgingBounds {
    /// The aging day.
    pub as_of: Date,
    /// The first instant after the aging day: invoices and payments dated before it count.
    pub counts_before: Timestamp,
    /// Lower due-date bounds of the buckets from `NotDue` to `Days91To180`: a due date at or
    /// after `due_from[i]` (and before the bound of the bucket above) falls in bucket `i`;
    /// one before them all is over 180 days late.
    pub due_from: [Timestamp; 5],
}

impl AgingBounds {
    /// The bounds of an aging on `as_of` in `calendar`'s zone.
    pub fn for_day(calendar: &BusinessCalendar, as_of: Date) -> Self {
        let start = |days_before: i64| calendar.start_of(as_of.saturating_sub(jiff::Span::new().days(days_before)));
        Self {
            as_of,
            counts_before: calendar.start_of(as_of.saturating_add(jiff::Span::new().days(1))),
            due_from: [start(0), start(30), start(60), start(90), start(180)],
        }
    }

    /// The bucket of an amount due at `due_date`.
    pub fn bucket(&self, due_date: Timestamp) -> AgingBucket {
        self.due_from
            .iter()
            .position(|from| due_date >= *from)
            .map_or(AgingBucket::Over180, |index| AgingBucket::ALL[index])
    }
}

/// The six bucket sums, their total and how many invoices they hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgingFigures {
    /// The sum in each bucket, in [`AgingBucket::ALL`] order.
    pub buckets: [Decimal; 6],
    /// Invoices with something owed.
    pub invoice_count: u64,
}

impl AgingFigures {
    /// The sum in `bucket`.
    pub fn get(&self, bucket: AgingBucket) -> Decimal {
        self.buckets[bucket.index()]
    }

    /// The sum of every bucket.
    pub fn total(&self) -> Decimal {
        self.buckets.iter().copied().sum()
    }

    /// Adds `owed` over `invoices` invoices in `bucket`.
    pub fn add(&mut self, bucket: AgingBucket, owed: Decimal, invoices: u64) {
        self.buckets[bucket.index()] += owed;
        self.invoice_count += invoices;
    }

    fn remove(&mut self, bucket: AgingBucket, owed: Decimal, invoices: u64) {
        self.buckets[bucket.index()] -= owed;
        self.invoice_count = self.invoice_count.saturating_sub(invoices);
    }

    fn add_figures(&mut self, other: &AgingFigures) {
        for (sum, add) in self.buckets.iter_mut().zip(other.buckets) {
            *sum += add;
        }
        self.invoice_count += other.invoice_count;
    }

    fn normalized(mut self) -> Self {
        for sum in &mut self.buckets {
            *sum = sum.normalize();
        }
        self
    }
}

/// One vendor's row of an aging.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgingRow {
    /// The vendor.
    pub vendor_id: VendorId,
    /// Its name.
    pub vendor_name: String,
    /// What it was owed, by bucket.
    pub figures: AgingFigures,
}

/// An aging: vendors owed something, most owed first, and the totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aging {
    /// The aging day.
    pub as_of: Date,
    /// Vendors with a positive total, by total descending, then name, then id.
    pub vendors: Vec<AgingRow>,
    /// The sums over every vendor, whatever the page (D43).
    pub totals: AgingFigures,
    /// Where `vendors` sits among all the rows, when a page was asked for (D43).
    pub page: Option<PagePlace>,
}

/// Adds up what a store found, invoice by invoice or already summed by vendor and bucket.
#[derive(Debug, Default)]
pub struct AgingBuilder {
    vendors: BTreeMap<VendorId, AgingRow>,
}

impl AgingBuilder {
    /// An empty aging.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `owed` over `invoices` invoices of one vendor in one bucket. Amounts that are not
    /// positive are owed nothing and are left out, as are their invoices.
    pub fn add(&mut self, vendor_id: VendorId, vendor_name: &str, bucket: AgingBucket, owed: Decimal, invoices: u64) {
        if owed <= Decimal::ZERO {
            return;
        }
        let row = self.vendors.entry(vendor_id).or_insert_with(|| AgingRow {
            vendor_id,
            vendor_name: vendor_name.to_owned(),
            figures: AgingFigures::default(),
        });
        row.figures.add(bucket, owed, invoices);
    }

    /// Adds one invoice's remainder due at `due_date`: only a positive remainder counts.
    pub fn add_invoice(
        &mut self,
        bounds: &AgingBounds,
        vendor_id: VendorId,
        vendor_name: &str,
        due_date: Timestamp,
        owed: Decimal,
    ) {
        self.add(vendor_id, vendor_name, bounds.bucket(due_date), owed, 1);
    }

    /// The aging on `as_of`, in its stable order.
    pub fn finish(self, as_of: Date) -> Aging {
        let mut vendors: Vec<AgingRow> = self.vendors.into_values().collect();
        for row in &mut vendors {
            row.figures = row.figures.normalized();
        }
        vendors.sort_by(|a, b| {
            rank(a.figures.total(), &a.vendor_name, a.vendor_id, b.figures.total(), &b.vendor_name, b.vendor_id)
        });
        let mut totals = AgingFigures::default();
        for row in &vendors {
            totals.add_figures(&row.figures);
        }
        Aging { as_of, vendors, totals: totals.normalized(), page: None }
    }

    fn into_rows(self) -> BTreeMap<VendorId, AgingRow> {
        self.vendors
    }
}

/// The order of an aging's vendor rows: total descending, then name without case, then name,
/// then id.
fn rank(a_total: Decimal, a_name: &str, a_id: VendorId, b_total: Decimal, b_name: &str, b_id: VendorId) -> Ordering {
    b_total
        .cmp(&a_total)
        .then_with(|| text::key(a_name).cmp(&text::key(b_name)))
        .then_with(|| a_name.cmp(b_name))
        .then(a_id.cmp(&b_id))
}

/// The most disturbed vendors [`TodaysAgingPage`] adds up one by one; past it the whole aging is
/// read (a few hundred vendors' invoices cost about what every open invoice does).
const MOST_DISTURBED: usize = 500;

/// A vendor as the kept figures rank it for today's aging (D41): what its open invoices still
/// owe ([`VendorFigures::owed`](crate::figures::VendorFigures)), its aging total today unless
/// it is disturbed (see [`TodaysAgingPage`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptOwed {
    /// The vendor.
    pub vendor_id: VendorId,
    /// Its name.
    pub vendor_name: String,
    /// What its open invoices owe, by the kept figures.
    pub owed: Decimal,
}

/// A page of today's aging from the kept figures (D41, D43) rather than from every open
/// invoice.
///
/// Today, what an open invoice owes is its amount less its kept paid total, except where a row
/// is dated after today: an invoice dated in the future (D2 allows it) does not count yet, and a
/// payment dated after today (possible once the `TimeZone` setting moves a day back) does not
/// shrink it yet. A vendor with such a row is *disturbed*; the store names them, and adds up
/// their rows exactly as it adds up the whole aging. Every other vendor's aging total is its
/// kept `owed`, so the page comes from the kept ranking merged with the disturbed rows, and
/// only the page's vendors' open invoices are read for their buckets. The totals are the kept
/// open figures by due date, bucketed, less what the disturbed vendors' open invoices hold
/// there, plus their exact rows. A store calls, in one snapshot: [`Self::new`] with the
/// disturbed vendors, [`Self::choose`] with the first [`Self::ranked_needed`] vendors of the
/// kept ranking and the disturbed vendors' exact rows, then [`Self::finish`].
#[derive(Debug)]
pub struct TodaysAgingPage {
    bounds: AgingBounds,
    page: PageRequest,
    disturbed: BTreeSet<VendorId>,
    exact: BTreeMap<VendorId, AgingRow>,
    chosen: Vec<Slot>,
}

#[derive(Debug)]
enum Slot {
    Kept(KeptOwed),
    Exact(VendorId),
}

impl TodaysAgingPage {
    /// A page of the aging on `bounds`' day, which must be today, with the vendors the store
    /// found disturbed.
    pub fn new(bounds: AgingBounds, page: PageRequest, disturbed: impl IntoIterator<Item = VendorId>) -> Self {
        Self { bounds, page, disturbed: disturbed.into_iter().collect(), exact: BTreeMap::new(), chosen: Vec::new() }
    }

    /// The disturbed vendors, in id order.
    pub fn disturbed(&self) -> impl Iterator<Item = VendorId> + '_ {
        self.disturbed.iter().copied()
    }

    /// Whether so many vendors are disturbed (a bulk of invoices dated ahead) that adding up
    /// the whole aging and cutting the page from it is the better read: then [`Self::cut`].
    pub fn whole_is_better(&self) -> bool {
        self.disturbed.len() > MOST_DISTURBED
    }

    /// The page cut from the whole aging on this page's day, as the kept figures would give it.
    pub fn cut(self, whole: AgingBuilder) -> Aging {
        let mut aging = whole.finish(self.bounds.as_of);
        aging.page = Some(self.page.cut(&mut aging.vendors));
        aging
    }

    /// How many vendors of the kept ranking (owed descending, then name without case, then
    /// name, then id; only vendors owed something) the store must read: the page's end plus one
    /// for each disturbed vendor, which may sit anywhere in that ranking.
    pub fn ranked_needed(&self) -> u64 {
        self.page.offset() + u64::from(self.page.page_size()) + self.disturbed.len() as u64
    }

    /// Picks the page's vendors from the first [`Self::ranked_needed`] of the kept ranking and
    /// the disturbed vendors' exact rows (added up over them alone, as [`AgingBuilder`] does the
    /// whole aging); answers the undisturbed ones, whose open invoices the store reads next.
    pub fn choose(&mut self, ranked: Vec<KeptOwed>, exact: AgingBuilder) -> Vec<VendorId> {
        self.exact = exact
            .into_rows()
            .into_iter()
            .filter(|(id, _)| self.disturbed.contains(id))
            .map(|(id, row)| (id, AgingRow { figures: row.figures.normalized(), ..row }))
            .collect();
        let mut slots: Vec<(Decimal, String, VendorId, Slot)> = ranked
            .into_iter()
            .filter(|kept| kept.owed > Decimal::ZERO && !self.disturbed.contains(&kept.vendor_id))
            .map(|kept| (kept.owed, kept.vendor_name.clone(), kept.vendor_id, Slot::Kept(kept)))
            .collect();
        slots.extend(
            self.exact
                .values()
                .map(|row| (row.figures.total(), row.vendor_name.clone(), row.vendor_id, Slot::Exact(row.vendor_id))),
        );
        slots.sort_by(|a, b| rank(a.0, &a.1, a.2, b.0, &b.1, b.2));
        let offset = usize::try_from(self.page.offset()).unwrap_or(usize::MAX);
        self.chosen =
            slots.into_iter().skip(offset).take(self.page.page_size() as usize).map(|(.., slot)| slot).collect();
        self.chosen
            .iter()
            .filter_map(|slot| match slot {
                Slot::Kept(kept) => Some(kept.vendor_id),
                Slot::Exact(_) => None,
            })
            .collect()
    }

    /// The page, from:
    /// - `owing_vendors`, how many vendors the kept figures hold owed something;
    /// - `disturbed_kept`, the kept ranking's entries of the disturbed vendors (those owed
    ///   nothing may be left out);
    /// - `open`, the open invoices (active, `amount > paid`, whatever their dates) of the
    ///   chosen undisturbed vendors and of the disturbed ones, as (vendor, due date bucket,
    ///   what they owe, how many);
    /// - `kept_totals`, the kept open figures by due date, bucketed on this page's day.
    pub fn finish(
        self,
        owing_vendors: u64,
        disturbed_kept: &[KeptOwed],
        open: &[(VendorId, AgingBucket, Decimal, u64)],
        kept_totals: AgingFigures,
    ) -> Aging {
        let mut totals = kept_totals;
        let mut chosen: BTreeMap<VendorId, AgingFigures> = BTreeMap::new();
        for (vendor_id, bucket, owed, invoices) in open {
            if self.disturbed.contains(vendor_id) {
                totals.remove(*bucket, *owed, *invoices);
            } else {
                chosen.entry(*vendor_id).or_default().add(*bucket, *owed, *invoices);
            }
        }
        for row in self.exact.values() {
            totals.add_figures(&row.figures);
        }
        let disturbed_owing = disturbed_kept
            .iter()
            .filter(|kept| kept.owed > Decimal::ZERO && self.disturbed.contains(&kept.vendor_id))
            .count() as u64;
        let total_count = owing_vendors.saturating_sub(disturbed_owing) + self.exact.len() as u64;
        let mut exact = self.exact;
        let vendors = self
            .chosen
            .into_iter()
            .filter_map(|slot| match slot {
                Slot::Kept(kept) => Some(AgingRow {
                    figures: chosen.remove(&kept.vendor_id).unwrap_or_default().normalized(),
                    vendor_id: kept.vendor_id,
                    vendor_name: kept.vendor_name,
                }),
                Slot::Exact(id) => exact.remove(&id),
            })
            .collect();
        Aging {
            as_of: self.bounds.as_of,
            vendors,
            totals: totals.normalized(),
            page: Some(PagePlace { page: self.page.page(), page_size: self.page.page_size(), total_count }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).unwrap()
    }

    #[test]
    fn buckets_follow_days_past_due() {
        let cases = [
            (-5, AgingBucket::NotDue),
            (0, AgingBucket::NotDue),
            (1, AgingBucket::Days1To30),
            (30, AgingBucket::Days1To30),
            (31, AgingBucket::Days31To60),
            (60, AgingBucket::Days31To60),
            (61, AgingBucket::Days61To90),
            (90, AgingBucket::Days61To90),
            (91, AgingBucket::Days91To180),
            (180, AgingBucket::Days91To180),
            (181, AgingBucket::Over180),
        ];
        for (days, bucket) in cases {
            assert_eq!(AgingBucket::of_days_past_due(days), bucket, "{days} days");
        }
    }

    #[test]
    fn bounds_agree_with_days_past_due_for_every_day_around_the_edges() {
        let calendar = BusinessCalendar::parse("Asia/Kolkata").unwrap();
        let as_of: Date = "2024-09-30".parse().unwrap();
        let bounds = AgingBounds::for_day(&calendar, as_of);
        for days in -3..=200 {
            let due_day = as_of.saturating_sub(jiff::Span::new().days(days));
            // Any instant of the due day, in the business zone, lands in the same bucket.
            for hour in [0, 13, 23] {
                let due = calendar.start_of(due_day) + jiff::SignedDuration::from_hours(hour);
                assert_eq!(bounds.bucket(due), AgingBucket::of_days_past_due(days), "{days} days, hour {hour}");
            }
        }
        assert_eq!(bounds.counts_before, calendar.start_of("2024-10-01".parse().unwrap()));
    }

    #[test]
    fn rows_add_up_exactly_and_sort_by_total_then_name() {
        let calendar = BusinessCalendar::utc();
        let bounds = AgingBounds::for_day(&calendar, "2024-05-10".parse().unwrap());
        let mut aging = AgingBuilder::new();
        aging.add_invoice(&bounds, VendorId(2), "beta", at("2024-05-20T00:00:00Z"), dec("0.1"));
        aging.add_invoice(&bounds, VendorId(2), "beta", at("2024-05-01T00:00:00Z"), dec("0.2"));
        aging.add_invoice(&bounds, VendorId(1), "Alpha", at("2023-01-01T00:00:00Z"), dec("0.3"));
        aging.add_invoice(&bounds, VendorId(3), "Gamma", at("2024-05-01T00:00:00Z"), dec("-5"));
        aging.add_invoice(&bounds, VendorId(4), "Delta", at("2024-05-01T00:00:00Z"), Decimal::ZERO);
        let aging = aging.finish(bounds.as_of);
        let order: Vec<i64> = aging.vendors.iter().map(|row| row.vendor_id.get()).collect();
        assert_eq!(order, [1, 2], "equal totals sort by name without case; nothing owed is left out");
        assert_eq!(aging.vendors[1].figures.get(AgingBucket::NotDue), dec("0.1"));
        assert_eq!(aging.vendors[1].figures.get(AgingBucket::Days1To30), dec("0.2"));
        assert_eq!(aging.vendors[1].figures.invoice_count, 2);
        assert_eq!(aging.totals.total(), dec("0.6"), "exact decimal sums");
        assert_eq!(aging.totals.get(AgingBucket::Over180), dec("0.3"));
        assert_eq!(aging.totals.invoice_count, 3);
    }
}
