//! Drug licence validity (D36): whether a vendor may still be bought from.
//!
//! Under India's Drugs and Cosmetics Rules a pharmacy may only buy from a licensed
//! distributor, so each vendor may carry the date its drug licence is valid until. Its status
//! is computed for today in the business time zone (D3), never stored: `Unknown` without a
//! date, `Expired` when the date is before today, `ExpiringSoon` from today to today + 30,
//! `Valid` after that. The same days, as instant bounds, let a store filter by status with
//! plain comparisons on the stored date ([`LicenceBounds`]).

use jiff::Timestamp;
use jiff::civil::Date;

use crate::clock::BusinessCalendar;
use crate::ids::VendorId;

/// What a licence alert shows of its vendor (D36), as a store reads it: the whole alert list
/// is answered at once, so it carries only these columns, not the vendor's every field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LicenceHolder {
    /// The vendor.
    pub id: VendorId,
    /// Its name.
    pub name: String,
    /// Its first drug licence number, if recorded.
    pub drug_license_number1: Option<String>,
    /// The day its licence is valid until.
    pub valid_until: Timestamp,
}

/// How many days ahead a licence counts as expiring soon (D36).
pub const EXPIRING_SOON_DAYS: i64 = 30;

/// The setting that decides what an expired licence does to new invoices (D36).
pub const EXPIRED_LICENSE_POLICY: &str = "ExpiredLicensePolicy";

/// A vendor's drug licence, as of today.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LicenseStatus {
    /// No validity date is recorded.
    Unknown,
    /// Valid until a day before today.
    Expired,
    /// Valid until today or one of the next 30 days.
    ExpiringSoon,
    /// Valid until later than that.
    Valid,
}

impl LicenseStatus {
    /// Every status, in the order the API lists them.
    pub const ALL: [LicenseStatus; 4] =
        [LicenseStatus::Unknown, LicenseStatus::Expired, LicenseStatus::ExpiringSoon, LicenseStatus::Valid];

    /// The name the API writes.
    pub fn name(self) -> &'static str {
        match self {
            LicenseStatus::Unknown => "Unknown",
            LicenseStatus::Expired => "Expired",
            LicenseStatus::ExpiringSoon => "ExpiringSoon",
            LicenseStatus::Valid => "Valid",
        }
    }

    /// Reads a name in any case (D7).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.name().eq_ignore_ascii_case(text.trim()))
    }

    /// The status of a licence valid until `valid_until`, for the day `bounds` were made for.
    pub fn of(valid_until: Option<Timestamp>, bounds: &LicenceBounds) -> Self {
        match valid_until {
            None => LicenseStatus::Unknown,
            Some(until) if until < bounds.today_start => LicenseStatus::Expired,
            Some(until) if until < bounds.soon_end => LicenseStatus::ExpiringSoon,
            Some(_) => LicenseStatus::Valid,
        }
    }
}

/// Today's licence boundaries as instants: a licence date before `today_start` has expired,
/// one before `soon_end` (the start of today + 31) expires soon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LicenceBounds {
    /// The first instant of today in the business time zone.
    pub today_start: Timestamp,
    /// The first instant of the day after the last day that counts as expiring soon.
    pub soon_end: Timestamp,
}

impl LicenceBounds {
    /// The bounds for `today` in `calendar`'s zone.
    pub fn for_day(calendar: &BusinessCalendar, today: Date) -> Self {
        Self::within(calendar, today, EXPIRING_SOON_DAYS)
    }

    /// The bounds for `today` with a window of `within_days` days instead of thirty, as the
    /// licence alerts ask (`withinDays`, D36).
    pub fn within(calendar: &BusinessCalendar, today: Date, within_days: i64) -> Self {
        let end_day = today.saturating_add(jiff::Span::new().days(within_days.saturating_add(1)));
        Self { today_start: calendar.start_of(today), soon_end: calendar.start_of(end_day) }
    }
}

/// Whole days from `today` to the day a licence is valid until: 0 on its last day, negative once
/// expired (the licence alerts' `daysLeft`).
pub fn days_left(calendar: &BusinessCalendar, valid_until: Timestamp, today: Date) -> i64 {
    let last_day = calendar.date_of(valid_until);
    today.until(last_day).map(|span| i64::from(span.get_days())).unwrap_or(0)
}

/// What an expired licence does to invoices (the `ExpiredLicensePolicy` setting, D36).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExpiredLicensePolicy {
    /// Invoices are accepted; the status warns (the default).
    #[default]
    Warn,
    /// An invoice dated after the vendor's licence expired is refused.
    Block,
}

impl ExpiredLicensePolicy {
    /// The setting's value as stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            ExpiredLicensePolicy::Warn => "Warn",
            ExpiredLicensePolicy::Block => "Block",
        }
    }

    /// Reads the setting's value in any case (D7); anything else is not a policy.
    pub fn parse(text: &str) -> Option<Self> {
        [ExpiredLicensePolicy::Warn, ExpiredLicensePolicy::Block]
            .into_iter()
            .find(|policy| policy.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// A vendor whose drug licence has expired or expires soon (D36).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LicenceAlert {
    /// The vendor and the day its licence is valid until.
    pub vendor: LicenceHolder,
    /// Its licence status today.
    pub license_status: LicenseStatus,
    /// Whole days from today to that day: 0 on its last day, negative once expired.
    pub days_left: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> Date {
        text.parse().unwrap()
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn status_follows_the_days_around_today() {
        let calendar = BusinessCalendar::utc();
        let bounds = LicenceBounds::for_day(&calendar, day("2024-05-10"));
        let cases = [
            (None, LicenseStatus::Unknown),
            (Some("2024-05-09T23:59:59Z"), LicenseStatus::Expired),
            (Some("2024-05-10T00:00:00Z"), LicenseStatus::ExpiringSoon),
            (Some("2024-06-09T23:59:59Z"), LicenseStatus::ExpiringSoon),
            (Some("2024-06-10T00:00:00Z"), LicenseStatus::Valid),
        ];
        for (until, expected) in cases {
            assert_eq!(LicenseStatus::of(until.map(at), &bounds), expected, "{until:?}");
        }
    }

    #[test]
    fn today_is_the_business_time_zones() {
        let kolkata = BusinessCalendar::parse("Asia/Kolkata").unwrap();
        // 2024-05-09T20:00Z is already 10 May in Kolkata, so a licence valid until 9 May
        // (midnight UTC, 05:30 in Kolkata) has expired there.
        let today = kolkata.date_of(at("2024-05-09T20:00:00Z"));
        let bounds = LicenceBounds::for_day(&kolkata, today);
        assert_eq!(LicenseStatus::of(Some(at("2024-05-09T00:00:00Z")), &bounds), LicenseStatus::Expired);
        assert_eq!(LicenseStatus::of(Some(at("2024-05-10T00:00:00Z")), &bounds), LicenseStatus::ExpiringSoon);
    }

    #[test]
    fn days_left_counts_calendar_days() {
        let calendar = BusinessCalendar::utc();
        assert_eq!(days_left(&calendar, at("2024-05-10T00:00:00Z"), day("2024-05-10")), 0);
        assert_eq!(days_left(&calendar, at("2024-05-13T12:00:00Z"), day("2024-05-10")), 3);
        assert_eq!(days_left(&calendar, at("2024-05-01T00:00:00Z"), day("2024-05-10")), -9);
    }

    #[test]
    fn alert_windows_may_be_narrower_or_wider() {
        let calendar = BusinessCalendar::utc();
        let bounds = LicenceBounds::within(&calendar, day("2024-05-10"), 0);
        assert_eq!(bounds.soon_end, at("2024-05-11T00:00:00Z"), "a zero-day window is today only");
        let bounds = LicenceBounds::within(&calendar, day("2024-05-10"), 366);
        assert_eq!(bounds.soon_end, at("2025-05-12T00:00:00Z"));
    }

    #[test]
    fn names_read_in_any_case() {
        assert_eq!(LicenseStatus::parse("expiringsoon"), Some(LicenseStatus::ExpiringSoon));
        assert_eq!(LicenseStatus::parse("Lapsed"), None);
        assert_eq!(ExpiredLicensePolicy::parse(" block "), Some(ExpiredLicensePolicy::Block));
        assert_eq!(ExpiredLicensePolicy::parse("Deny"), None);
        assert_eq!(ExpiredLicensePolicy::default().name(), "Warn");
    }
}
