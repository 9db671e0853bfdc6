//! What a pharmacy reconciles with: the payables aging (D34), a vendor's statement (D35) and
//! the drug licences about to lapse (D36). The stores find the figures; the days, buckets,
//! order and arithmetic are core's.

use jiff::Span;
use jiff::civil::Date;

use crate::access::{Access, Action, Collection, Principal};
use crate::engine::{PharmaPay, licensed, store_error};
use crate::error::{Entity, Error, Result};
use crate::ids::VendorId;
use crate::reports::aging::{Aging, AgingBounds, AgingQuery};
use crate::reports::statement::{self, Statement, StatementQuery};
use crate::store::Store;
use crate::vendors::licence::LicenceAlert;
use crate::vendors::licence::{LicenceBounds, LicenseStatus, days_left};

impl<S: Store> PharmaPay<S> {
    /// The payables aging as of a day (D34), today when the query names none: what each vendor
    /// was owed on that day, by how late it was; later payments never shrink it. With a page,
    /// that page of the vendor rows and the totals of them all (D43).
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Invoice:Read`; [`Error::Validation`] for a day after
    /// today; [`Error::NotFound`] for an unknown vendor.
    pub async fn aging(&self, principal: &Principal, query: &AgingQuery) -> Result<Aging> {
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        // D49: these figures are the whole chain's until they are kept per branch (D41), so a
        // caller of some branches is refused rather than shown other branches' money.
        principal.require_all_branches()?;
        let calendar = self.calendar().await?;
        let today = calendar.date_of(self.now());
        let as_of = query.as_of.unwrap_or(today);
        if as_of > today {
            return Err(Error::invalid("asOf", "must not be after today"));
        }
        if let Some(vendor_id) = query.vendor_id {
            self.store.get_vendor(vendor_id).await.map_err(store_error)?.ok_or(Error::not_found(Entity::Vendor))?;
        }
        let bounds = AgingBounds::for_day(&calendar, as_of);
        if let (Some(page), None, true) = (query.page, query.vendor_id, as_of == today) {
            // D43 with D41: today's first pages come from the kept figures.
            return self.store.todays_aging_page(&bounds, page).await.map_err(store_error);
        }
        let mut aging = self.store.aging(&bounds, query.vendor_id).await.map_err(store_error)?;
        // D43: the page is cut from the whole answer, whose totals stay.
        aging.page = query.page.map(|page| page.cut(&mut aging.vendors));
        Ok(aging)
    }

    /// A vendor's statement over a range of days (D35): by default from the first day of the
    /// current month to today. A deleted vendor's statement is still served. With a page, that
    /// page of the lines, balances running from the range's opening (D43).
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Vendor:Read`, `Invoice:Read` and `Transaction:Read` (D48);
    /// [`Error::Validation`] for a range whose start comes after its end; [`Error::NotFound`] for
    /// an unknown vendor.
    pub async fn vendor_statement(
        &self,
        principal: &Principal,
        vendor_id: VendorId,
        query: &StatementQuery,
    ) -> Result<Statement> {
        principal.require(Access::new(Collection::Vendor, Action::Read))?;
        // D49: these figures are the whole chain's until they are kept per branch (D41), so a
        // caller of some branches is refused rather than shown other branches' money.
        principal.require_all_branches()?;
        principal.require(Access::new(Collection::Invoice, Action::Read))?;
        // D48: it shows payments and their references.
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        let calendar = self.calendar().await?;
        let today = calendar.date_of(self.now());
        let from_date = query.from_date.unwrap_or_else(|| today.first_of_month());
        let to_date = query.to_date.unwrap_or(today);
        if from_date > to_date {
            let field = if query.from_date.is_some() { "fromDate" } else { "toDate" };
            return Err(Error::invalid(field, "the range must not start after it ends"));
        }
        let vendor =
            self.store.get_vendor(vendor_id).await.map_err(store_error)?.ok_or(Error::not_found(Entity::Vendor))?;
        let vendor = licensed(&LicenceBounds::for_day(&calendar, today), vendor);
        if let Some(page) = query.page {
            // D43 with D41: a page comes from the kept figures, balances running over the whole
            // range.
            let (figures, page) = self
                .store
                .statement_page(vendor_id, (from_date, to_date), &calendar, page)
                .await
                .map_err(store_error)?;
            return Ok(Statement { vendor, from_date, to_date, figures, page: Some(page) });
        }
        let from = calendar.start_of(from_date);
        let before = calendar.start_of(to_date.saturating_add(Span::new().days(1)));
        let rows = self.store.statement_rows(vendor_id, from, before, &calendar).await.map_err(store_error)?;
        let figures = statement::build(rows.invoiced_before - rows.paid_before - rows.credited_before, rows.entries);
        Ok(Statement { vendor, from_date, to_date, figures, page: None })
    }

    /// Active vendors whose drug licence has expired or expires within `within_days` days
    /// (D36), soonest first.
    ///
    /// # Errors
    /// [`Error::Forbidden`] without `Dashboard:Read`; store failures.
    pub async fn licence_alerts(&self, principal: &Principal, within_days: u16) -> Result<Vec<LicenceAlert>> {
        principal.require(Access::new(Collection::Dashboard, Action::Read))?;
        let calendar = self.calendar().await?;
        let today: Date = calendar.date_of(self.now());
        let window = LicenceBounds::within(&calendar, today, i64::from(within_days));
        let status_bounds = LicenceBounds::for_day(&calendar, today);
        let mut holders = self.store.licence_alerts(window.soon_end).await.map_err(store_error)?;
        // Soonest first, then by id (D36). Stores answer mostly in this order already, which a
        // stable sort merely checks.
        holders.sort_by_key(|holder| (holder.valid_until, holder.id));
        Ok(holders
            .into_iter()
            .map(|vendor| LicenceAlert {
                license_status: LicenseStatus::of(Some(vendor.valid_until), &status_bounds),
                days_left: days_left(&calendar, vendor.valid_until, today),
                vendor,
            })
            .collect())
    }
}
