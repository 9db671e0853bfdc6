//! The reconciliation reports (D34, D35): the payables aging with a totals row, and a vendor's
//! statement between its opening and closing balances. Both are small enough to be built from
//! the engine's answer in one go.

use super::{Report, ReportError, ReportKind, SheetWriter, file_name};
use crate::access::Principal;
use crate::engine::PharmaPay;
use crate::error::{Error, Result};
use crate::ids::VendorId;
use crate::reports::aging::AgingQuery;
use crate::reports::statement::StatementQuery;
use crate::store::{Store, StoreError};

fn report_error(error: ReportError) -> Error {
    Error::Store(StoreError::backend(error))
}

impl<S: Store> PharmaPay<S> {
    /// The aging as an Excel file `aging_YYYYMMDD.xlsx`, named after its day (D34): a row per
    /// vendor in the aging's order, then the totals. A download is always the whole aging: the
    /// query's page is ignored (D51 amending D43).
    ///
    /// # Errors
    /// As [`PharmaPay::aging`].
    pub async fn aging_report(&self, principal: &Principal, query: &AgingQuery) -> Result<Report> {
        let aging = self.aging(principal, &AgingQuery { page: None, ..*query }).await?;
        let currency = self.currency().await?;
        let name = file_name(ReportKind::Aging.name(), aging.as_of);
        let mut sheet =
            SheetWriter::named(ReportKind::Aging, &currency, self.calendar().await?, name).map_err(report_error)?;
        for row in &aging.vendors {
            sheet.aging_row(row).map_err(report_error)?;
        }
        sheet.aging_totals(&aging.totals).map_err(report_error)?;
        sheet.finish().map_err(report_error)
    }

    /// A vendor's statement as an Excel file `statement_<vendorId>_YYYYMMDD.xlsx`, dated today
    /// (D35): the opening balance with whose statement it is, the lines with their running
    /// balance, the closing balance. Every line of the range, whatever page the query names
    /// (D51 amending D43).
    ///
    /// # Errors
    /// As [`PharmaPay::vendor_statement`].
    pub async fn statement_report(
        &self,
        principal: &Principal,
        vendor_id: VendorId,
        query: &StatementQuery,
    ) -> Result<Report> {
        let statement = self.vendor_statement(principal, vendor_id, &StatementQuery { page: None, ..*query }).await?;
        let currency = self.currency().await?;
        let calendar = self.calendar().await?;
        let today = calendar.date_of(self.now());
        let name = file_name(&format!("{}_{}", ReportKind::Statement.name(), vendor_id.get()), today);
        let mut sheet = SheetWriter::named(ReportKind::Statement, &currency, calendar, name).map_err(report_error)?;
        let figures = &statement.figures;
        // Whose statement it is, on the opening row: the name, and the GSTIN when known (D37).
        let vendor = &statement.vendor;
        let whose = match &vendor.gstin {
            Some(gstin) => format!("{}, GSTIN {gstin}", vendor.name),
            None => vendor.name.clone(),
        };
        sheet
            .statement_balance(statement.from_date, "Opening balance", Some(&whose), figures.opening_balance)
            .map_err(report_error)?;
        for line in &figures.lines {
            sheet.statement_line(line).map_err(report_error)?;
        }
        sheet
            .statement_balance(statement.to_date, "Closing balance", None, figures.closing_balance)
            .map_err(report_error)?;
        sheet.finish().map_err(report_error)
    }
}
