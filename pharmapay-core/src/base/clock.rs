//! Time: the injected clock, the business calendar and date parsing (D2, D3).
//!
//! The engine never reads the system time directly: it asks a [`Clock`], so tests can fix and
//! move "now". Calendar questions ("is this invoice overdue today?", "which month is this
//! payment in?") are answered by a [`BusinessCalendar`] built from the `TimeZone` setting (D3).
//!
//! One rule holds everywhere: the calendar date of an instant is its date in the business time
//! zone. A `dueDate` is therefore overdue once the business day after it has started, and a
//! bare `YYYY-MM-DD` in a request means midnight UTC of that day (D2).

use std::sync::{Arc, Mutex};

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan};

/// A source of the current instant.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The real wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to; clones share the same time.
#[derive(Clone, Debug)]
pub struct ManualClock {
    now: Arc<Mutex<Timestamp>>,
}

impl ManualClock {
    /// A clock standing at `now`.
    pub fn new(now: Timestamp) -> Self {
        Self { now: Arc::new(Mutex::new(now)) }
    }

    /// Puts the clock at `now`.
    pub fn set(&self, now: Timestamp) {
        *self.now.lock().expect("clock lock is never poisoned: no code panics under it") = now;
    }

    /// Moves the clock by `by` (which may be negative).
    pub fn advance(&self, by: SignedDuration) {
        let mut now = self.now.lock().expect("clock lock is never poisoned: no code panics under it");
        *now = now.saturating_add(by).expect("a duration is always a valid timestamp offset");
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().expect("clock lock is never poisoned: no code panics under it")
    }
}

/// Drops sub-microsecond precision, the precision every store keeps.
pub fn to_micros(instant: Timestamp) -> Timestamp {
    Timestamp::from_microsecond(instant.as_microsecond()).expect("truncating precision keeps a timestamp in range")
}

/// Why a date or timestamp did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DateError {
    /// Neither RFC 3339 nor `YYYY-MM-DD`.
    #[error("must be an RFC 3339 timestamp with an offset or a date YYYY-MM-DD")]
    Format,
    /// Outside the years 1900 to 9999.
    #[error("must be between the years 1900 and 9999")]
    OutOfRange,
}

/// Parses a request timestamp (D2): RFC 3339 with any offset, normalised to UTC, or a bare date
/// `YYYY-MM-DD` meaning midnight UTC. Precision beyond microseconds is dropped.
///
/// # Errors
/// [`DateError`] when the text is neither form or lies outside the years 1900 to 9999.
pub fn parse_datetime(text: &str) -> Result<Timestamp, DateError> {
    let text = text.trim();
    if text.len() > 64 {
        return Err(DateError::Format);
    }
    let instant = if text.len() == 10 {
        let date: Date = text.parse().map_err(|_| DateError::Format)?;
        date.to_zoned(TimeZone::UTC).map_err(|_| DateError::OutOfRange)?.timestamp()
    } else if text.contains('[') {
        // RFC 9557 annotations are not RFC 3339; refuse rather than guess.
        return Err(DateError::Format);
    } else {
        text.parse::<Timestamp>().map_err(|_| DateError::Format)?
    };
    let year = instant.to_zoned(TimeZone::UTC).year();
    if !(1900..=9999).contains(&year) {
        return Err(DateError::OutOfRange);
    }
    Ok(to_micros(instant))
}

/// Why a time-zone name was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("must be a known IANA time zone such as UTC or Asia/Kolkata")]
pub struct UnknownTimeZone;

/// The pharmacy's calendar: "today", day starts and month windows in its time zone (D3).
#[derive(Clone, Debug)]
pub struct BusinessCalendar {
    zone: TimeZone,
}

impl BusinessCalendar {
    /// The calendar of the IANA zone `name` (for example `UTC` or `Asia/Kolkata`).
    ///
    /// # Errors
    /// [`UnknownTimeZone`] when the name is not in the time-zone database.
    pub fn parse(name: &str) -> Result<Self, UnknownTimeZone> {
        let name = name.trim();
        if name.is_empty() || name.len() > 64 {
            return Err(UnknownTimeZone);
        }
        TimeZone::get(name).map(|zone| Self { zone }).map_err(|_| UnknownTimeZone)
    }

    /// The calendar of the `TimeZone` setting's stored `value` (D3): UTC when there is none or
    /// it names no known zone (the engine refuses such values, but a database edited by hand may
    /// hold one). Engine and stores read the setting through this alone, so they agree on days.
    pub fn from_setting(value: Option<&str>) -> Self {
        value.and_then(|value| Self::parse(value).ok()).unwrap_or_else(Self::utc)
    }

    /// The UTC calendar.
    pub fn utc() -> Self {
        Self { zone: TimeZone::UTC }
    }

    /// The time zone.
    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }

    /// The calendar date of `instant`.
    pub fn date_of(&self, instant: Timestamp) -> Date {
        instant.to_zoned(self.zone.clone()).date()
    }

    /// The first instant of `date`.
    pub fn start_of(&self, date: Date) -> Timestamp {
        date.to_zoned(self.zone.clone())
            .map(|zoned| zoned.timestamp())
            .unwrap_or_else(|_| if date.year() < 0 { Timestamp::MIN } else { Timestamp::MAX })
    }

    /// The start of the day after the calendar date of `instant`.
    pub fn start_of_next_day(&self, instant: Timestamp) -> Timestamp {
        let date = self.date_of(instant);
        self.start_of(date.checked_add(1.day()).unwrap_or(date))
    }

    /// The dashboard's twelve months (D12): for the current month and the eleven before it,
    /// newest first, the month's first day and the instants bounding it (`start <= t < end`).
    pub fn last_twelve_months(&self, now: Timestamp) -> Vec<MonthWindow> {
        let first = self.date_of(now).first_of_month();
        (0..12)
            .map(|back| {
                let month = first.checked_sub(back.months()).unwrap_or(first);
                let next = month.checked_add(1.month()).unwrap_or(month);
                MonthWindow { month, start: self.start_of(month), end: self.start_of(next) }
            })
            .collect()
    }
}

/// One calendar month as a half-open range of instants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonthWindow {
    /// The first day of the month.
    pub month: Date,
    /// The first instant of the month.
    pub start: Timestamp,
    /// The first instant of the next month.
    pub end: Timestamp,
}

impl MonthWindow {
    /// The month as `YYYY-MM`.
    pub fn label(&self) -> String {
        format!("{:04}-{:02}", self.month.year(), self.month.month())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn d2_accepts_offsets_and_bare_dates() {
        assert_eq!(parse_datetime("2024-03-01").unwrap(), ts("2024-03-01T00:00:00Z"));
        assert_eq!(parse_datetime("2024-03-01T10:00:00+05:30").unwrap(), ts("2024-03-01T04:30:00Z"));
        assert_eq!(parse_datetime("2024-03-01T10:00:00.5Z").unwrap(), ts("2024-03-01T10:00:00.5Z"));
        assert_eq!(parse_datetime("2024-03-01T10:00:00.123456789Z").unwrap(), ts("2024-03-01T10:00:00.123456Z"));
    }

    #[test]
    fn d2_rejects_other_shapes() {
        for bad in [
            "",
            "2024-13-01",
            "2024-02-30",
            "01/02/2024",
            "2024-03-01T10:00:00",
            "yesterday",
            "2024-03-01T10:00:00Z[Europe/Paris]",
        ] {
            assert_eq!(parse_datetime(bad), Err(DateError::Format), "input {bad:?}");
        }
        assert_eq!(parse_datetime("1800-01-01"), Err(DateError::OutOfRange));
    }

    #[test]
    fn today_follows_the_business_zone() {
        let kolkata = BusinessCalendar::parse("Asia/Kolkata").unwrap();
        let instant = ts("2024-03-01T20:00:00Z");
        assert_eq!(kolkata.date_of(instant).to_string(), "2024-03-02");
        assert_eq!(BusinessCalendar::utc().date_of(instant).to_string(), "2024-03-01");
        assert_eq!(kolkata.start_of_next_day(instant), ts("2024-03-02T18:30:00Z"));
    }

    #[test]
    fn unknown_zones_are_refused() {
        assert!(BusinessCalendar::parse("Mars/Olympus").is_err());
        assert!(BusinessCalendar::parse("").is_err());
        assert!(BusinessCalendar::parse("Europe/Berlin").is_ok());
    }

    #[test]
    fn twelve_month_windows_are_contiguous_and_newest_first() {
        let calendar = BusinessCalendar::parse("Asia/Kolkata").unwrap();
        let windows = calendar.last_twelve_months(ts("2024-01-31T20:00:00Z"));
        assert_eq!(windows.len(), 12);
        assert_eq!(windows[0].label(), "2024-02");
        assert_eq!(windows[11].label(), "2023-03");
        assert_eq!(windows[0].start, ts("2024-01-31T18:30:00Z"));
        for pair in windows.windows(2) {
            assert_eq!(pair[1].end, pair[0].start);
        }
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(ts("2024-01-01T00:00:00Z"));
        let shared = clock.clone();
        clock.advance(SignedDuration::from_hours(25));
        assert_eq!(shared.now(), ts("2024-01-02T01:00:00Z"));
    }
}
