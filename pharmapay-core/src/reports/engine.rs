//! Settings (D3), dashboard figures (D12) and the audit log (D22). The Excel reports' use
//! cases are [`crate::reports`]'s.

use jiff::Timestamp;
use serde_json::json;
use tracing::instrument;

use crate::access::{Access, Action, Collection, Principal};
use crate::clock::{BusinessCalendar, MonthWindow};
use crate::engine::{PharmaPay, RECENT_DAYS, store_error};
use crate::error::{Entity, Error, Result};
use crate::invoices::Invoice;
use crate::paging::Page;
use crate::reports::audit::{AuditEntry, AuditQuery};
use crate::reports::dashboard::{MonthlyTotal, Payables, Summary, TopVendor, monthly_totals};
use crate::reports::setting::Setting;
use crate::reports::setting::TIME_ZONE;
use crate::store::Store;
use crate::text::{self, CODE_MAX, NAME_MAX};
use crate::vendors::licence::{EXPIRED_LICENSE_POLICY, ExpiredLicensePolicy};

/// Setting keys are short names without control characters; anything else cannot name a
/// setting, and is answered "not found" before it reaches the store.
pub(crate) fn plausible_setting_key(key: &str) -> bool {
    key.len() <= NAME_MAX && !key.chars().any(char::is_control)
}

impl<S: Store> PharmaPay<S> {
    /// Every setting.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_settings(&self, principal: &Principal) -> Result<Vec<Setting>> {
        principal.require(Access::new(Collection::Setting, Action::Read))?;
        self.store.list_settings().await.map_err(store_error)
    }

    /// One setting.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for an unknown key.
    pub async fn get_setting(&self, principal: &Principal, key: &str) -> Result<Setting> {
        principal.require(Access::new(Collection::Setting, Action::Read))?;
        if !plausible_setting_key(key) {
            return Err(Error::not_found(Entity::Setting));
        }
        self.store.get_setting(key).await.map_err(store_error)?.ok_or(Error::not_found(Entity::Setting))
    }

    /// Changes a setting's value; `TimeZone` must name a known IANA zone (D3).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`] for an unknown key.
    #[instrument(skip_all, fields(key = %key))]
    pub async fn update_setting(&self, principal: &Principal, key: &str, value: &str) -> Result<Setting> {
        principal.require(Access::new(Collection::Setting, Action::Update))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        if !plausible_setting_key(key) {
            return Err(Error::not_found(Entity::Setting));
        }
        let value = text::required(value, CODE_MAX).map_err(|error| Error::invalid("value", error.to_string()))?;
        let calendar = if key == TIME_ZONE {
            let calendar =
                BusinessCalendar::parse(&value).map_err(|error| Error::invalid("value", error.to_string()))?;
            Some(calendar)
        } else {
            None
        };
        // D36: the policy is Warn or Block, in any case, kept in its canonical case.
        let value = if key == EXPIRED_LICENSE_POLICY {
            ExpiredLicensePolicy::parse(&value)
                .ok_or_else(|| Error::invalid("value", "must be Warn or Block"))?
                .name()
                .to_owned()
        } else {
            value
        };
        let mut ctx = self.ctx(principal);
        ctx.changes = Some(json!({ "key": key, "value": value }).to_string());
        // D41: a new zone moves payments between business days, so the day figures are
        // recomputed in the same transaction as the change.
        let setting = self.store.update_setting(key, value, ctx, calendar.as_ref()).await.map_err(store_error)?;
        if let Some(calendar) = calendar {
            self.remember_calendar(calendar);
        }
        Ok(setting)
    }

    /// The summary figures.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn dashboard_summary(&self, principal: &Principal) -> Result<Summary> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        // D49: these figures are the whole chain's until they are kept per branch (D41), so a
        // caller of some branches is refused rather than shown other branches' money.
        principal.require_all_branches()?;
        let calendar = self.calendar().await?;
        let today = calendar.date_of(self.now());
        let first_recent_day = today.checked_sub(jiff::Span::new().days(RECENT_DAYS - 1)).unwrap_or(today);
        let figures = self.store.dashboard_figures(first_recent_day).await.map_err(store_error)?;
        Ok(figures.summary())
    }

    /// What falls due when (D32): overdue, today, within 7 and within 30 days, from the figures
    /// kept per due date.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn payables(&self, principal: &Principal) -> Result<Payables> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        // D49: these figures are the whole chain's until they are kept per branch (D41), so a
        // caller of some branches is refused rather than shown other branches' money.
        principal.require_all_branches()?;
        let calendar = self.calendar().await?;
        let today = calendar.date_of(self.now());
        let start_after =
            |days: i64| calendar.start_of(today.checked_add(jiff::Span::new().days(days)).unwrap_or(today));
        let (today_start, tomorrow_start) = (start_after(0), start_after(1));
        let windows = [
            (Timestamp::MIN, today_start),
            (today_start, tomorrow_start),
            (tomorrow_start, start_after(8)),
            (tomorrow_start, start_after(31)),
        ];
        let open = self.store.open_invoices_due(&windows).await.map_err(store_error)?;
        let due = |index: usize| open.get(index).copied().unwrap_or_default().into();
        let credits = self.store.credit_summary().await.map_err(store_error)?;
        Ok(Payables { overdue: due(0), due_today: due(1), due_in_7_days: due(2), due_in_30_days: due(3), credits })
    }

    /// Active vendors with the largest outstanding balances; `limit` is clamped to 1..=100.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn top_vendors(&self, principal: &Principal, limit: u32) -> Result<Vec<TopVendor>> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        // D49: these figures are the whole chain's until they are kept per branch (D41), so a
        // caller of some branches is refused rather than shown other branches' money.
        principal.require_all_branches()?;
        self.store.top_vendors(limit.clamp(1, 100)).await.map_err(store_error)
    }

    /// The most recently created invoices, canceled ones included; `limit` is clamped to 1..=100.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn recent_invoices(&self, principal: &Principal, limit: u32) -> Result<Vec<Invoice>> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        // D49: these figures are the whole chain's until they are kept per branch (D41), so a
        // caller of some branches is refused rather than shown other branches' money.
        principal.require_all_branches()?;
        let today_start = self.today_start().await?;
        self.store.recent_invoices(limit.clamp(1, 100), today_start).await.map_err(store_error)
    }

    /// Payment totals for the current month and the eleven before it, newest first, months
    /// without payments included as zero rows.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn monthly_transactions(&self, principal: &Principal) -> Result<Vec<MonthlyTotal>> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        // D49: these figures are the whole chain's until they are kept per branch (D41), so a
        // caller of some branches is refused rather than shown other branches' money.
        principal.require_all_branches()?;
        let months: Vec<MonthWindow> = self.calendar().await?.last_twelve_months(self.now());
        let (Some(oldest), Some(newest)) = (months.last(), months.first()) else { return Ok(Vec::new()) };
        let last_day = newest.month.last_of_month();
        let days = self.store.day_figures(oldest.month, last_day).await.map_err(store_error)?;
        Ok(monthly_totals(&months, &days))
    }

    /// A page of the audit log, newest first.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_audit(&self, principal: &Principal, query: &AuditQuery) -> Result<Page<AuditEntry>> {
        principal.require(Access::new(Collection::AuditLog, Action::Read))?;
        // D49: chain-wide, so a scope of every branch.
        principal.require_all_branches()?;
        self.store.list_audit(query).await.map_err(store_error)
    }
}
