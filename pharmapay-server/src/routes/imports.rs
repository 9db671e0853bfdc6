//! `POST /api/imports/invoices` and `/api/imports/vendors` (D45): a CSV or xlsx file as the
//! body, up to 20 MiB, and the templates at `GET /api/imports/{kind}/template`.

use hyper::StatusCode;
use hyper::header;
use pharmapay_core::Action::Create;
use pharmapay_core::Collection::{Invoice, Vendor};
use pharmapay_core::idempotency::Created;
use pharmapay_core::imports;
use pharmapay_core::imports::ImportRequest;
use pharmapay_core::imports::template::TemplateKind;
use pharmapay_core::imports::{ImportFile, ImportSummary, MAX_ERROR_KEYS, MAX_FILE_BYTES, MAX_ROWS};
use pharmapay_core::paging::read_bool;
use pharmapay_core::{Error, FieldErrors, PharmaPay, Principal, Store};
use serde::Serialize;

use super::{Call, Route, idempotency_of};
use crate::download::XLSX;
use crate::guard::needs;
use crate::http::Reply;
use crate::openapi::schema;
use crate::openapi::{IDEMPOTENCY_KEY, Json, Operation, Tag, describe, object, query, schema_ref};
use crate::problem::ApiError;

/// The import routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::post("/api/imports/invoices", needs(Invoice, Create), invoices_operation, |call| {
            Box::pin(call.import_file(PharmaPay::import_invoices))
        })
        .with_max_body(MAX_FILE_BYTES),
        Route::post("/api/imports/vendors", needs(Vendor, Create), vendors_operation, |call| {
            Box::pin(call.import_file(PharmaPay::import_vendors))
        })
        .with_max_body(MAX_FILE_BYTES),
        Route::get("/api/imports/invoices/template", needs(Invoice, Create), invoices_template_operation, |_| {
            Box::pin(async { template(TemplateKind::Invoices) })
        }),
        Route::get("/api/imports/vendors/template", needs(Vendor, Create), vendors_template_operation, |_| {
            Box::pin(async { template(TemplateKind::Vendors) })
        }),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Imports");

/// A bound on a template's size, for the document: each is a few kilobytes.
const TEMPLATE_MAX_BYTES: usize = 64 * 1024;

/// The media type of CSV.
const CSV: &str = "text/csv";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
/// What an import did or, in a dry run, would do (D45).
pub struct ImportSummaryDto {
    dry_run: bool,
    row_count: usize,
    created: usize,
    unchanged: usize,
}

impl From<ImportSummary> for ImportSummaryDto {
    fn from(summary: ImportSummary) -> Self {
        Self {
            dry_run: summary.dry_run,
            row_count: summary.row_count,
            created: summary.created,
            unchanged: summary.unchanged,
        }
    }
}

describe! {
    ImportSummaryDto as "ImportSummary": "What an import did or, in a dry run, would do (D45)." {
        dry_run: schema::boolean("True when nothing was written (`?dryRun=true`)."),
        row_count: schema::count("Data rows read (the header aside)."),
        created: schema::count("Records created, or that the dry run would create."),
        unchanged: schema::count(
            "Rows matching an active record exactly (the same invoice number, vendor, amount and dates; the same \
             vendor details), which were not written again."
        ),
    }
}

impl<S: Store> Call<'_, S> {
    /// An import of the body's file: 200 with its summary, or the replay of an earlier import
    /// with the same `Idempotency-Key` (D23, D45).
    ///
    /// # Errors
    /// 415 for a body neither CSV nor xlsx, 400 for `dryRun` or the key; the engine's errors.
    async fn import_file(
        mut self,
        import: impl AsyncFnOnce(&PharmaPay<S>, &Principal, ImportRequest<'_>) -> Result<Created<ImportSummary>, Error>,
    ) -> Result<Reply, ApiError> {
        let principal = self.caller()?;
        let media_type = self.req.header("content-type").unwrap_or_default().to_owned();
        let file = ImportFile::from_upload(&media_type, std::mem::take(&mut self.req.body).to_vec())
            .ok_or(ApiError::NotAFile)?;
        let mut errors = FieldErrors::new();
        let dry_run = read_bool(&self.req.query, "dryRun", &mut errors).unwrap_or(false);
        if !errors.is_empty() {
            return Err(ApiError::Invalid(errors));
        }
        let key = if dry_run { None } else { idempotency_of(&self.req, &file.bytes)? };
        let request = ImportRequest { file, dry_run, idempotency: key.as_ref(), progress: None };
        // D51: a few files are read and written at once; the rest wait their turn.
        let turn = self.app.uploads.take().await.ok_or(ApiError::UploadsBusy)?;
        let result = import(&self.app.engine, principal, request).await;
        drop(turn);
        let result = result?;
        Ok(super::answered(self.app, principal, key.as_ref(), result, ImportSummaryDto::from).await)
    }
}

fn template(kind: TemplateKind) -> Result<Reply, ApiError> {
    let bytes =
        kind.workbook().map_err(|error| ApiError::Core(Error::Store(pharmapay_core::StoreError::backend(error))))?;
    Ok(Reply::bytes(StatusCode::OK, XLSX, bytes)
        .with_header(header::CONTENT_DISPOSITION, &format!("attachment; filename=\"{}\"", kind.file_name())))
}

/// The request body of an import: a CSV or xlsx file.
pub(super) fn file_body() -> Json {
    let binary = object! { "type": "string", "format": "binary", "maxLength": MAX_FILE_BYTES };
    object! {
        "required": true,
        "description": format!(
            "The file: CSV (UTF-8, with or without BOM, RFC 4180 quoting) or xlsx (its first worksheet), at most {} \
             MiB and {MAX_ROWS} data rows (413 beyond). A body labelled `application/vnd.ms-excel` (as browsers on \
             Windows label `.csv` files) is read by its content: a zip archive as xlsx, anything else as CSV (D51); \
             another media type is a 415.",
            MAX_FILE_BYTES >> 20
        ),
        "content": Json::object()
            .with(CSV, object! { "schema": object! { "type": "string", "maxLength": MAX_FILE_BYTES } })
            .with(XLSX, object! { "schema": binary }),
    }
}

fn import_operation(id: &'static str, summary: &'static str, what: &str) -> Operation {
    TAG.operation(
        id,
        summary,
        format!(
            ". {what} The first row names the columns, matched ignoring case, spaces, `_`, `-` and `.`; other \
             columns are ignored, so the matching report imports back. Dates may be `YYYY-MM-DD`, `DD/MM/YYYY`, \
             `DD-MM-YYYY` (day first) or RFC 3339, or real dates in xlsx; amounts numbers or text such as \
             `₹ 1,23,456.50`. Each row obeys the rules of the matching create. A row matching an active record \
             exactly is `unchanged` and not written again; one that matches but differs, or repeats an earlier \
             row, is an error. Any row error answers 400 with `errors` keyed `row<N>.<field>` (N the row's number, \
             the header being row 1; at most {MAX_ERROR_KEYS} keys) and writes nothing; a file without the \
             required headers, or unreadable, is a 400 on `file`. Otherwise every row is written in one \
             transaction, each audited as a create (D45). `?dryRun=true` checks everything and writes nothing. \
             Accepts an `Idempotency-Key` (D23), ignored on a dry run."
        ),
    )
    .parameter(query(
        "dryRun",
        "Check everything, write nothing (D45).",
        object! { "type": "boolean", "default": false },
    ))
    .parameter(IDEMPOTENCY_KEY)
    .file_body(file_body())
    .ok("What the import did.", schema_ref::<ImportSummaryDto>())
    .errors(&[400, 401, 403, 409, 413, 415, 422, 503])
}

fn invoices_operation() -> Operation {
    import_operation(
        "importInvoices",
        "Import invoices from a file",
        "Creates invoices from the rows of a CSV or xlsx file with the columns `Invoice Number`, `Vendor` (an \
         active vendor's name) and/or `Vendor GSTIN` (which wins when filled), `Amount`, `Invoice Date`, `Due Date` \
         and, optionally, `Description`; the vendor must be found exactly once among active vendors (else an error \
         on `row<N>.vendor`).",
    )
}

fn vendors_operation() -> Operation {
    import_operation(
        "importVendors",
        "Import vendors from a file",
        "Creates vendors from the rows of a CSV or xlsx file with the vendors report's columns `Name` and `Type` \
         (required), `Address`, `Phone`, `Email`, `Drug License 1`, `Drug License 2`, `GSTIN` and `License Valid \
         Until`; a vendor matches an active one by name or GSTIN.",
    )
}

fn template_operation(id: &'static str, summary: &'static str, columns: &str) -> Operation {
    TAG.operation(
        id,
        summary,
        format!(
            ". An xlsx with the import's headers ({columns}) and one example row, which imports cleanly once \
             replaced by real values (D45)."
        ),
    )
    .response(
        "200",
        object! {
            "description": "The template.",
            "content": Json::object().with(
                XLSX,
                object! {
                    "schema": object! {
                        "type": "string",
                        "format": "binary",
                        "contentMediaType": XLSX,
                        "maxLength": TEMPLATE_MAX_BYTES,
                    },
                },
            ),
        },
    )
    .errors(&[401, 403])
}

fn invoices_template_operation() -> Operation {
    template_operation(
        "downloadInvoicesImportTemplate",
        "The invoice import template",
        &names(&imports::invoices::COLUMNS),
    )
}

fn vendors_template_operation() -> Operation {
    template_operation(
        "downloadVendorsImportTemplate",
        "The vendor import template",
        &names(&imports::vendors::COLUMNS),
    )
}

fn names(columns: &[(&str, bool)]) -> String {
    columns.iter().map(|(name, _)| format!("`{name}`")).collect::<Vec<_>>().join(", ")
}
