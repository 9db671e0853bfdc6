//! Importing vendors and invoices from files (D45).
//!
//! The file is read on a thread of lower priority (D48), each row checked by the checks of the
//! matching create; the store then judges the rows against what it holds, under its lock, and
//! writes all of them or none. A file with row errors is answered with every row's errors at
//! once: those the reading found and those the store's check finds for the other rows.

use std::time::Instant;

use tracing::{info, instrument};

use crate::background::read_in_background;
use crate::engine::{PharmaPay, store_error};
use crate::imports::{ImportRequest, ImportStage};
use jiff::SignedDuration;

use crate::access::{ADMIN_ROLE_ID, Access, Action, Collection, PermissionSet, Principal};
use crate::error::{Entity, Error, Result};
use crate::idempotency::Created;
use crate::imports::{
    ImportFile, ImportSummary, InvoiceRow, MAX_FILE_BYTES, MAX_ROWS, ReadError, RowErrors, VendorRow, invoices, vendors,
};
use crate::store::{Store, StoreError, StoreResult, WriteContext};

/// What reads a file's rows: its data rows, those that passed, and the errors of the rest.
type ReadRows<R> = fn(&ImportFile, &dyn Fn(usize)) -> std::result::Result<(usize, Vec<R>, RowErrors), ReadError>;

impl<S: Store> PharmaPay<S> {
    /// The caller a command line acts as when it imports without a server (D45): the active
    /// admin with `email`, or the first active admin. Whoever runs the command holds the
    /// database itself; the audit log names this admin as the author of what it writes.
    ///
    /// # Errors
    /// [`Error::NotFound`] (a user) when no such active admin exists; store failures.
    pub async fn operator(&self, email: Option<&str>) -> Result<Principal> {
        let users = self.store.list_users().await.map_err(store_error)?;
        let admin = users
            .into_iter()
            .filter(|user| user.role_id == ADMIN_ROLE_ID)
            .find(|user| email.is_none_or(|email| user.email.eq_ignore_ascii_case(email.trim())))
            .ok_or(Error::not_found(Entity::User))?;
        Ok(Principal {
            user_id: admin.id,
            email: admin.email,
            first_name: admin.first_name,
            last_name: admin.last_name,
            role_id: admin.role_id,
            is_admin: true,
            permissions: PermissionSet::default(),
            scope: admin.branch_ids,
            expires_at: self.now() + SignedDuration::from_hours(1),
        })
    }

    /// Imports invoices from a CSV or xlsx file (D45; `Invoice:Create`).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] on `file` for an unreadable file or missing
    /// headers; [`Error::TooLarge`] beyond [`MAX_FILE_BYTES`], [`MAX_ROWS`] or the unpacked
    /// bound; [`Error::Rows`] with every row's errors; [`Error::Conflict`] when a write raced
    /// past the check; idempotency clashes.
    #[instrument(skip_all, fields(dry_run = request.dry_run))]
    pub async fn import_invoices(
        &self,
        principal: &Principal,
        request: ImportRequest<'_>,
    ) -> Result<Created<ImportSummary>> {
        principal.require(Access::new(Collection::Invoice, Action::Create))?;
        self.import_rows::<InvoiceRow, _, _>(principal, request, invoices::read, |rows, ctx, dry_run| {
            self.store.import_invoice_rows(rows, ctx, dry_run)
        })
        .await
    }

    /// Imports vendors from a CSV or xlsx file (D45; `Vendor:Create`), as
    /// [`PharmaPay::import_invoices`] does invoices.
    ///
    /// # Errors
    /// As [`PharmaPay::import_invoices`].
    #[instrument(skip_all, fields(dry_run = request.dry_run))]
    pub async fn import_vendors(
        &self,
        principal: &Principal,
        request: ImportRequest<'_>,
    ) -> Result<Created<ImportSummary>> {
        principal.require(Access::new(Collection::Vendor, Action::Create))?;
        self.import_rows::<VendorRow, _, _>(principal, request, vendors::read, |rows, ctx, dry_run| {
            self.store.import_vendor_rows(rows, ctx, dry_run)
        })
        .await
    }

    async fn import_rows<R, W, WF>(
        &self,
        principal: &Principal,
        request: ImportRequest<'_>,
        read: ReadRows<R>,
        write: W,
    ) -> Result<Created<ImportSummary>>
    where
        R: Send + 'static,
        W: Fn(Vec<R>, WriteContext, bool) -> WF,
        WF: Future<Output = StoreResult<ImportSummary>>,
    {
        let ImportRequest { file, dry_run, idempotency, progress } = request;
        if file.bytes.len() > MAX_FILE_BYTES {
            return Err(Error::TooLarge(format!("the file is larger than {} MiB", MAX_FILE_BYTES >> 20)));
        }
        let started = Instant::now();
        let reading = progress.clone();
        let tick = move |rows| {
            if let Some(progress) = &reading {
                progress(ImportStage::Reading(rows));
            }
        };
        let (row_count, rows, mut errors) =
            read_in_background("pharmapay-import", move || read(&file, &tick)).await?.map_err(|error| match error {
                ReadError::File(message) => Error::invalid("file", message),
                ReadError::TooManyRows => Error::TooLarge(format!("the file has more than {MAX_ROWS} data rows")),
                ReadError::TooLarge(message) => Error::TooLarge(message),
            })?;
        info!(
            rows = row_count,
            refused = errors.failed_rows(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "import file read"
        );
        let tell = |stage| {
            if let Some(progress) = &progress {
                progress(stage);
            }
        };
        tell(ImportStage::Read(row_count));
        tell(ImportStage::Writing(rows.len()));
        if !errors.is_empty() {
            // The store's check of the other rows, so the answer lists every error at once.
            if let Err(StoreError::Rows(more)) = write(rows, self.announcing(self.ctx(principal)).await?, true).await {
                errors.merge(more);
            }
            return Err(Error::Rows(errors));
        }
        let summary = |summary: ImportSummary| ImportSummary { dry_run, row_count, ..summary };
        if dry_run {
            let checked = write(rows, self.announcing(self.ctx(principal)).await?, true).await.map_err(store_error)?;
            return Ok(Created::New(summary(checked)));
        }
        let insert = |ctx| async { write(rows, ctx, false).await.map(summary).map_err(store_error) };
        let replay = |id| async move { Ok(Some(ImportSummary::from_claim_id(id))) };
        let created = self
            .create_idempotently(principal, idempotency, self.announcing(self.ctx(principal)).await?, insert, replay)
            .await?;
        if let Created::New(done) = &created {
            info!(
                rows = row_count,
                created = done.created,
                unchanged = done.unchanged,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "import written"
            );
        }
        Ok(created)
    }
}
