//! Paging, sorting and the reading of list parameters (D8).
//!
//! List endpoints take `page`, `pageSize`, `sortBy` and `sortDir` as text. The rules for them
//! live here so every list, whatever its transport, treats them alike: `page` and `pageSize`
//! below 1 or not integers are errors, a `pageSize` above 100 is clamped to 100, unknown sort
//! keys are errors, and every sort ends with the record id as tie-breaker.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::fields::FieldErrors;
use super::ids::BranchId;

/// Largest page size; larger requests are clamped to it (D8).
pub const MAX_PAGE_SIZE: u32 = 100;

/// Named text parameters, such as a URL query string.
pub trait Params {
    /// The value of `name`, if given.
    fn get(&self, name: &str) -> Option<&str>;

    /// Every value of `name`, in order, for a parameter that may repeat (`?branchId=2&branchId=5`,
    /// D49); a map holds one.
    fn all(&self, name: &str) -> Vec<&str> {
        self.get(name).into_iter().collect()
    }
}

impl Params for HashMap<String, String> {
    fn get(&self, name: &str) -> Option<&str> {
        HashMap::get(self, name).map(String::as_str)
    }
}

impl Params for [(&str, &str)] {
    fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(key, _)| *key == name).map(|(_, value)| *value)
    }

    fn all(&self, name: &str) -> Vec<&str> {
        self.iter().filter(|(key, _)| *key == name).map(|(_, value)| *value).collect()
    }
}

impl<const N: usize> Params for [(&str, &str); N] {
    fn get(&self, name: &str) -> Option<&str> {
        Params::get(self.as_slice(), name)
    }

    fn all(&self, name: &str) -> Vec<&str> {
        Params::all(self.as_slice(), name)
    }
}

impl Params for Vec<(String, String)> {
    fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    fn all(&self, name: &str) -> Vec<&str> {
        self.iter().filter(|(key, _)| key == name).map(|(_, value)| value.as_str()).collect()
    }
}

/// Sort direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SortDir {
    /// Smallest first.
    #[default]
    Asc,
    /// Largest first.
    Desc,
}

impl SortDir {
    /// Parses `asc` or `desc`, in any case.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "asc" => Some(SortDir::Asc),
            "desc" => Some(SortDir::Desc),
            _ => None,
        }
    }

    /// `asc` or `desc`.
    pub fn as_str(self) -> &'static str {
        match self {
            SortDir::Asc => "asc",
            SortDir::Desc => "desc",
        }
    }

    /// Applies the direction to an ascending ordering.
    pub fn apply(self, ordering: std::cmp::Ordering) -> std::cmp::Ordering {
        match self {
            SortDir::Asc => ordering,
            SortDir::Desc => ordering.reverse(),
        }
    }
}

/// A sort key plus direction; ties are always broken by id in the same direction (D8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sort<K> {
    /// What to sort by.
    pub key: K,
    /// Which way.
    pub dir: SortDir,
}

/// Sort keys that can be parsed from their API names.
pub trait SortKey: Sized + Copy + 'static {
    /// Every key with its API name.
    const NAMES: &'static [(&'static str, Self)];

    /// The list's order when the request names none.
    const DEFAULT: Sort<Self>;

    /// Parses an API name, in any case.
    fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        Self::NAMES.iter().find(|(name, _)| name.eq_ignore_ascii_case(value)).map(|(_, key)| *key)
    }

    /// The API name of this key.
    fn name(self) -> &'static str
    where
        Self: PartialEq,
    {
        Self::NAMES.iter().find(|(_, key)| *key == self).map(|(name, _)| *name).unwrap_or("id")
    }
}

impl<K: SortKey> Sort<K> {
    /// Reads `sortBy` and `sortDir`, falling back to the given defaults when absent.
    pub fn from_params(params: &(impl Params + ?Sized), default: Sort<K>, errors: &mut FieldErrors) -> Sort<K> {
        let mut sort = default;
        if let Some(value) = params.get("sortBy") {
            match K::parse(value) {
                Some(key) => sort.key = key,
                None => {
                    let names: Vec<&str> = K::NAMES.iter().map(|(name, _)| *name).collect();
                    errors.add("sortBy", format!("must be one of {}", names.join(", ")));
                }
            }
        }
        if let Some(value) = params.get("sortDir") {
            match SortDir::parse(value) {
                Some(dir) => sort.dir = dir,
                None => errors.add("sortDir", "must be asc or desc"),
            }
        }
        sort
    }
}

/// What a list's parameters select (D8), read by [`ListQuery::from_params`] with the sort and
/// the page: each list names its filter and its default page size once.
pub trait ListFilter: Default {
    /// The page size when the request names none.
    const PAGE_SIZE: u32;

    /// Reads the filter's own parameters, recording each bad one in `errors`.
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self;
}

/// The filter of a list that has none: every record, `SIZE` to a page unless the request
/// names a size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unfiltered<const SIZE: u32>;

impl<const SIZE: u32> ListFilter for Unfiltered<SIZE> {
    const PAGE_SIZE: u32 = SIZE;

    fn read(_: &(impl Params + ?Sized), _: &mut FieldErrors) -> Self {
        Self
    }
}

/// How a list is ordered: a [`Sort`] the caller may choose, or `()` for a list kept in one
/// order (newest first, or by line number).
pub trait ListOrder: Copy {
    /// The order when the request names none.
    fn default_order() -> Self;

    /// Reads `sortBy` and `sortDir`, recording each bad one in `errors`.
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self;
}

impl ListOrder for () {
    fn default_order() -> Self {}

    fn read(_: &(impl Params + ?Sized), _: &mut FieldErrors) -> Self {}
}

impl<K: SortKey> ListOrder for Sort<K> {
    fn default_order() -> Self {
        K::DEFAULT
    }

    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self {
        Sort::from_params(params, K::DEFAULT, errors)
    }
}

/// A page of a list: its filter, its order and the page, the one shape every list query takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListQuery<F, O = ()> {
    /// Which records.
    pub filter: F,
    /// In which order.
    pub sort: O,
    /// Which page.
    pub page: PageRequest,
}

impl<F: ListFilter, O: ListOrder> ListQuery<F, O> {
    /// The page size when the request names none.
    pub const PAGE_SIZE: u32 = F::PAGE_SIZE;

    /// Reads every list parameter: the filter's, `sortBy` and `sortDir` where the list may be
    /// sorted, `page` and `pageSize` (D8).
    ///
    /// # Errors
    /// The messages by parameter name, all of them at once.
    pub fn from_params(params: &(impl Params + ?Sized)) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let query = Self {
            filter: F::read(params, &mut errors),
            sort: O::read(params, &mut errors),
            page: PageRequest::from_params(params, F::PAGE_SIZE, &mut errors),
        };
        if errors.is_empty() { Ok(query) } else { Err(errors) }
    }
}

impl<F: ListFilter, O: ListOrder> Default for ListQuery<F, O> {
    fn default() -> Self {
        Self { filter: F::default(), sort: O::default_order(), page: PageRequest::new(1, F::PAGE_SIZE) }
    }
}

/// Which page of a list to return: 1-based `page`, `page_size` in 1..=100.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageRequest {
    page: u32,
    page_size: u32,
}

impl PageRequest {
    /// A page request; `page_size` is clamped to 1..=100 and `page` to at least 1.
    pub fn new(page: u32, page_size: u32) -> Self {
        Self { page: page.max(1), page_size: page_size.clamp(1, MAX_PAGE_SIZE) }
    }

    /// Reads `page` and `pageSize` (D8): absent means 1 and `default_size`; below 1 or not an
    /// integer is an error; above 100 is clamped to 100.
    pub fn from_params(params: &(impl Params + ?Sized), default_size: u32, errors: &mut FieldErrors) -> Self {
        let page = read_positive(params, "page", errors).unwrap_or(1);
        let page_size = read_positive(params, "pageSize", errors).unwrap_or(u64::from(default_size));
        let page = u32::try_from(page).unwrap_or(u32::MAX);
        let page_size = u32::try_from(page_size.min(u64::from(MAX_PAGE_SIZE))).unwrap_or(MAX_PAGE_SIZE);
        Self::new(page, page_size)
    }

    /// The 1-based page number.
    pub fn page(self) -> u32 {
        self.page
    }

    /// Items per page.
    pub fn page_size(self) -> u32 {
        self.page_size
    }

    /// How many items come before this page.
    pub fn offset(self) -> u64 {
        u64::from(self.page - 1) * u64::from(self.page_size)
    }

    /// Cuts this page out of a whole, already sorted list.
    pub fn slice<T>(self, mut items: Vec<T>) -> Page<T> {
        let place = self.cut(&mut items);
        Page { items, total_count: place.total_count, page: place.page, page_size: place.page_size }
    }

    /// Cuts this page out of an unsorted list, in the order of `compare`: the page
    /// [`slice`](Self::slice) would cut from the list sorted whole, when `compare` is a total
    /// order (every list breaks its ties by id). Only the items up to the page's end are
    /// sorted; a selection, linear on average, sets the others apart first, so the first page of
    /// 90,000 payments costs about one pass over them rather than a sort of them all.
    pub fn sorted_slice<T>(self, mut items: Vec<T>, mut compare: impl FnMut(&T, &T) -> Ordering) -> Page<T> {
        let total_count = items.len() as u64;
        let offset = usize::try_from(self.offset()).unwrap_or(usize::MAX);
        let end = offset.saturating_add(self.page_size as usize).min(items.len());
        if offset >= end {
            items.clear();
        } else {
            if end < items.len() {
                // The `end` first items of the order, themselves in no order.
                items.select_nth_unstable_by(end - 1, &mut compare);
                items.truncate(end);
            }
            items.sort_unstable_by(&mut compare);
            items.drain(..offset);
        }
        Page { items, total_count, page: self.page, page_size: self.page_size }
    }

    /// Reads `page` and `pageSize` for a screen that answers whole unless asked for a page
    /// (D43): `None` when neither is given, else as [`from_params`](Self::from_params) reads
    /// them, `page` alone taking `default_size`.
    pub fn optional_from_params(
        params: &(impl Params + ?Sized),
        default_size: u32,
        errors: &mut FieldErrors,
    ) -> Option<Self> {
        (params.get("page").is_some() || params.get("pageSize").is_some())
            .then(|| Self::from_params(params, default_size, errors))
    }

    /// Keeps only this page of a whole, already sorted list, and says where it sits (D43).
    pub fn cut<T>(self, items: &mut Vec<T>) -> PagePlace {
        let total_count = items.len() as u64;
        let offset = usize::try_from(self.offset()).unwrap_or(usize::MAX).min(items.len());
        items.drain(..offset);
        items.truncate(self.page_size as usize);
        PagePlace { page: self.page, page_size: self.page_size, total_count }
    }
}

/// Where one page of a screen that can also answer whole sits in that whole answer (D43).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PagePlace {
    /// The 1-based page number.
    pub page: u32,
    /// Rows per page, as clamped.
    pub page_size: u32,
    /// How many rows the whole answer holds.
    pub total_count: u64,
}

fn read_positive(params: &(impl Params + ?Sized), name: &str, errors: &mut FieldErrors) -> Option<u64> {
    let value = params.get(name)?;
    match value.trim().parse::<i64>() {
        Ok(number) if number >= 1 => Some(number as u64),
        Ok(_) => {
            errors.add(name, "must be at least 1");
            None
        }
        Err(_) => {
            // Integers too large for i64 are still integers: treat them as very large.
            let digits = value.trim();
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                Some(u64::MAX)
            } else {
                errors.add(name, "must be an integer");
                None
            }
        }
    }
}

/// One page of a list, with the size of the whole filtered list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page<T> {
    /// The items of this page, in order.
    pub items: Vec<T>,
    /// How many items the whole filtered list holds.
    pub total_count: u64,
    /// The 1-based page number.
    pub page: u32,
    /// Items per page, as clamped.
    pub page_size: u32,
}

impl<T> Page<T> {
    /// Converts every item.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            total_count: self.total_count,
            page: self.page,
            page_size: self.page_size,
        }
    }
}

/// Reads an optional boolean parameter (`true`/`false`, any case).
pub fn read_bool(params: &(impl Params + ?Sized), name: &str, errors: &mut FieldErrors) -> Option<bool> {
    let value = params.get(name)?;
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => {
            errors.add(name, "must be true or false");
            None
        }
    }
}

/// The largest window of days a parameter such as `dueWithinDays` or `withinDays` takes
/// (D32, D36): a year and a day.
pub const MAX_DAYS: u16 = 366;

/// Reads an optional number of days from 0 to [`MAX_DAYS`].
pub fn read_days(params: &(impl Params + ?Sized), name: &str, errors: &mut FieldErrors) -> Option<u16> {
    let value = params.get(name)?;
    match value.trim().parse::<u16>() {
        Ok(days) if days <= MAX_DAYS => Some(days),
        _ => {
            errors.add(name, format!("must be a whole number of days from 0 to {MAX_DAYS}"));
            None
        }
    }
}

/// Reads an optional calendar day `YYYY-MM-DD` (D34, D35) of the years 1900 to 9999, the
/// years a request's dates may name (D2); anything else is an error.
pub fn read_day(params: &(impl Params + ?Sized), name: &str, errors: &mut FieldErrors) -> Option<jiff::civil::Date> {
    let value = params.get(name)?.trim();
    let parsed = (value.len() == 10).then(|| value.parse::<jiff::civil::Date>().ok()).flatten();
    match parsed {
        None => errors.add(name, "must be a date written YYYY-MM-DD"),
        Some(day) if !(1900..=9999).contains(&day.year()) => {
            errors.add(name, crate::clock::DateError::OutOfRange.to_string());
            return None;
        }
        Some(_) => {}
    }
    parsed
}

/// Reads an optional positive integer id parameter.
pub fn read_id(params: &(impl Params + ?Sized), name: &str, errors: &mut FieldErrors) -> Option<i64> {
    let value = params.get(name)?;
    match value.trim().parse::<i64>() {
        Ok(id) if id >= 1 => Some(id),
        _ => {
            errors.add(name, "must be a positive integer");
            None
        }
    }
}

/// The most branches one `branchId` filter names.
pub const MAX_BRANCH_FILTER: usize = 100;

/// Reads the repeatable `branchId` filter (D49): each a positive integer, else a message under
/// `branchId`; `None` when none is given. Whether each is a branch in the caller's scope is the
/// engine's to judge.
pub fn read_branch_filter(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Option<Vec<BranchId>> {
    let values = params.all("branchId");
    if values.is_empty() {
        return None;
    }
    if values.len() > MAX_BRANCH_FILTER {
        errors.add("branchId", format!("may name at most {MAX_BRANCH_FILTER} branches"));
        return None;
    }
    let mut ids = Vec::with_capacity(values.len());
    for value in values {
        match value.trim().parse::<i64>() {
            Ok(id) if id >= 1 => ids.push(BranchId(id)),
            _ => {
                errors.add("branchId", "must be a positive integer");
                return None;
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    Some(ids)
}

/// Reads the dashboard's `limit` (D8): default 5, clamped to 1..=100; not an integer is an error.
pub fn read_limit(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> u32 {
    let Some(value) = params.get("limit") else { return 5 };
    let value = value.trim();
    match value.parse::<i64>() {
        Ok(limit) => limit.clamp(1, i64::from(MAX_PAGE_SIZE)) as u32,
        Err(_) if !value.is_empty() && value.trim_start_matches('-').bytes().all(|b| b.is_ascii_digit()) => {
            if value.starts_with('-') { 1 } else { MAX_PAGE_SIZE }
        }
        Err(_) => {
            errors.add("limit", "must be an integer");
            5
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn days_are_read_within_the_years_requests_may_name() {
        let read = |value: &str| {
            let mut errors = FieldErrors::new();
            let day = read_day(&[("fromDate", value)][..], "fromDate", &mut errors);
            (day.map(|day| day.to_string()), errors.contains("fromDate"))
        };
        assert_eq!(read("2024-05-10"), (Some("2024-05-10".to_owned()), false));
        assert_eq!(read("1900-01-01"), (Some("1900-01-01".to_owned()), false));
        // A report from the year 401 would reach dates no store or workbook can hold.
        assert_eq!(read("0401-09-03"), (None, true));
        assert_eq!(read("1899-12-31"), (None, true));
        assert_eq!(read("2024-5-10"), (None, true));
    }

    proptest! {
        /// Every page of a list cut by selection is the page of the list sorted whole, with
        /// the same count: keys repeat, ties are broken by a unique id, pages run past the end.
        #[test]
        fn a_page_cut_by_selection_is_the_page_of_the_whole_sort(
            keys in proptest::collection::vec(0u8..8, 0..200),
            page in 1u32..30,
            page_size in 1u32..40,
            descending in any::<bool>(),
        ) {
            let items: Vec<(u8, usize)> = keys.into_iter().enumerate().map(|(id, key)| (key, id)).collect();
            let compare = |a: &(u8, usize), b: &(u8, usize)| {
                let ordering = a.cmp(b);
                if descending { ordering.reverse() } else { ordering }
            };
            let request = PageRequest::new(page, page_size);
            let mut sorted = items.clone();
            sorted.sort_by(compare);

            let selected = request.sorted_slice(items, compare);

            let whole = request.slice(sorted);
            prop_assert_eq!(selected.total_count, whole.total_count);
            prop_assert_eq!(selected.items, whole.items);
        }
    }

    fn page(params: &[(&str, &str)]) -> (PageRequest, FieldErrors) {
        let mut errors = FieldErrors::new();
        let request = PageRequest::from_params(params, 15, &mut errors);
        (request, errors)
    }

    #[test]
    fn defaults_apply_when_absent() {
        let (request, errors) = page(&[]);
        assert!(errors.is_empty());
        assert_eq!((request.page(), request.page_size()), (1, 15));
    }

    #[test]
    fn d8_clamps_large_page_sizes_to_100() {
        for size in ["101", "1000000", "99999999999999999999999"] {
            let (request, errors) = page(&[("pageSize", size)]);
            assert!(errors.is_empty(), "size {size}");
            assert_eq!(request.page_size(), 100, "size {size}");
        }
    }

    #[test]
    fn d8_rejects_values_below_one_or_not_integers() {
        for (name, value) in
            [("page", "0"), ("page", "-1"), ("pageSize", "0"), ("pageSize", "ten"), ("page", "1.5"), ("page", "")]
        {
            let (_, errors) = page(&[(name, value)]);
            assert!(errors.contains(name), "{name}={value:?} should be rejected");
        }
    }

    #[test]
    fn slicing_reports_the_whole_count() {
        let request = PageRequest::new(2, 3);
        let result = request.slice((1..=8).collect::<Vec<_>>());
        assert_eq!(result.items, vec![4, 5, 6]);
        assert_eq!(result.total_count, 8);
        assert_eq!(PageRequest::new(9, 3).slice(vec![1, 2]).items, Vec::<i32>::new());
    }

    #[test]
    fn dashboard_limit_is_clamped_to_1_through_100() {
        let mut errors = FieldErrors::new();
        assert_eq!(read_limit(&[], &mut errors), 5);
        assert_eq!(read_limit(&[("limit", "0")], &mut errors), 1);
        assert_eq!(read_limit(&[("limit", "-7")], &mut errors), 1);
        assert_eq!(read_limit(&[("limit", "500")], &mut errors), 100);
        assert_eq!(read_limit(&[("limit", "99999999999999999999")], &mut errors), 100);
        assert!(errors.is_empty());
        assert_eq!(read_limit(&[("limit", "five")], &mut errors), 5);
        assert!(errors.contains("limit"));
    }

    #[test]
    fn sort_direction_parses_in_any_case() {
        assert_eq!(SortDir::parse("DESC"), Some(SortDir::Desc));
        assert_eq!(SortDir::parse("Asc"), Some(SortDir::Asc));
        assert_eq!(SortDir::parse("up"), None);
    }
}
