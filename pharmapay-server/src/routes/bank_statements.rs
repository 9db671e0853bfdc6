//! `/api/bank-statements` (D46): a bank statement uploaded as its file, its lines matched
//! against the recorded payments, the lists, and the actions on one line.

use pharmapay_core::Action::{Create, Delete, Read, Update};
use pharmapay_core::Collection::{BankStatement as Statements, Transaction};
use pharmapay_core::access::Access;
use pharmapay_core::bank::StatementUpload;
use pharmapay_core::bank::read::{DateOrder, HEADER_ROWS};
use pharmapay_core::bank::{
    ACCOUNT_MAX, BankLine, BankStatement, LineQuery, LineRecording, LineStatus, MatchRequest, MatchedBy,
    StatementDetail, StatementQuery, UNCLEARED_PAGE_SIZE, UnclearedPayment, UploadParams, upload_params,
};
use pharmapay_core::branches::BRANCH_CODE_MAX;
use pharmapay_core::ids::{BankLineId, BankStatementId, TransactionId, VendorPaymentId};
use pharmapay_core::imports::{ImportFile, MAX_FILE_BYTES, MAX_ROWS};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::paging::PageRequest;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::text::TEXT_MAX;
use pharmapay_core::transactions::TransactionType;
use pharmapay_core::transactions::holders::Holder;
use pharmapay_core::{Amount, Error, FieldErrors, PharmaPay, Principal, Store};
use serde::Serialize;

use super::imports::file_body;
use super::transactions::transaction_type_input;
use super::vendor_payments::{AllocationBody, allocations};
use super::{Call, Route, idempotency_of, ok};
use crate::decode::{self, Body, Objects, ReasonBody, Slot, bodies};
use crate::dto::{PageDto, amount, day, instant, money, optional_day, page_schema};
use crate::guard::{needs, needs_all};
use crate::http::Reply;
use crate::openapi::schema::{self, names};
use crate::openapi::{
    IDEMPOTENCY_KEY, Json, Operation, PAGE, Schema, Tag, branch_filter, created, describe, flatten, link_by_id,
    no_content, object, page_size, path_id, positive_id, query, schema_ref,
};
use crate::problem::ApiError;

/// `record` changes a line and records a payment (D46), and shows payments (D51).
const RECORD: &[Access] =
    &[Access::new(Statements, Update), Access::new(Transaction, Create), Access::new(Transaction, Read)];

/// `match` tells whether a payment id exists, so it needs `Transaction:Read` too (D51).
const MATCH: &[Access] = &[Access::new(Statements, Update), Access::new(Transaction, Read)];

/// The uncleared payments show payments and their references (D51).
const UNCLEARED: &[Access] = &[Access::new(Statements, Read), Access::new(Transaction, Read)];

/// The bank statement routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/bank-statements", needs(Statements, Read), list, |call| {
            Box::pin(call.page(StatementQuery::from_params, PharmaPay::list_statements, BankStatementDto::from))
        }),
        Route::post("/api/bank-statements", needs(Statements, Create), upload_operation, |call| Box::pin(upload(call)))
            .with_max_body(MAX_FILE_BYTES),
        Route::get("/api/bank-statements/{id}", needs(Statements, Read), get, |call| {
            Box::pin(call.by_id(PharmaPay::get_statement, BankStatementDetailDto::from))
        }),
        Route::delete("/api/bank-statements/{id}", needs(Statements, Delete), delete, |call| {
            Box::pin(call.delete(PharmaPay::delete_statement))
        }),
        Route::get("/api/bank-statements/{id}/lines", needs(Statements, Read), lines, |call| {
            Box::pin(list_lines(call))
        }),
        Route::get("/api/bank-statements/{id}/uncleared-payments", needs_all(UNCLEARED), uncleared, |call| {
            Box::pin(list_uncleared(call))
        }),
        Route::post("/api/bank-statements/{id}/lines/{lineId}/confirm", needs(Statements, Update), confirm, |call| {
            Box::pin(act(call, PharmaPay::confirm_line))
        }),
        Route::post("/api/bank-statements/{id}/lines/{lineId}/match", needs_all(MATCH), matching, |call| {
            Box::pin(match_line(call))
        }),
        Route::post("/api/bank-statements/{id}/lines/{lineId}/unmatch", needs(Statements, Update), unmatch, |call| {
            Box::pin(act(call, PharmaPay::unmatch_line))
        }),
        Route::post("/api/bank-statements/{id}/lines/{lineId}/ignore", needs(Statements, Update), ignore, |call| {
            Box::pin(ignore_line(call))
        }),
        Route::post("/api/bank-statements/{id}/lines/{lineId}/record", needs_all(RECORD), recording, |call| {
            Box::pin(record(call))
        }),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("BankStatements");

/// The statement and the line a line action's path names.
fn line_of(call: &Call<'_, impl Store>) -> Result<(BankStatementId, BankLineId), ApiError> {
    Ok((BankStatementId(call.req.id("id")?), BankLineId(call.req.id("lineId")?)))
}

/// Uploads the body's statement: 201 with `Location`, or the replay of an earlier upload with
/// the same `Idempotency-Key` (D23, D46).
async fn upload<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let media_type = call.req.header("content-type").unwrap_or_default().to_owned();
    let file =
        ImportFile::from_upload(&media_type, std::mem::take(&mut call.req.body).to_vec()).ok_or(ApiError::NotAFile)?;
    let UploadParams { account, branch_id, options } = upload_params(&call.req.query)?;
    // The key's request is the file and how to read it.
    let mut fingerprinted = serde_json::to_vec(&call.req.query).unwrap_or_default();
    fingerprinted.extend_from_slice(&file.bytes);
    let key = idempotency_of(&call.req, &fingerprinted)?;
    let upload = StatementUpload { account, branch_id, file, options, idempotency: key.as_ref() };
    // D51: a few files are read and written at once; the rest wait their turn.
    let turn = call.app.uploads.take().await.ok_or(ApiError::UploadsBusy)?;
    let result = call.app.engine.upload_statement(principal, upload).await;
    drop(turn);
    let result = result?;
    let location = |statement: &BankStatement| statement.id.get();
    Ok(super::created(call.app, principal, key.as_ref(), result, "bank-statements", location, BankStatementDto::from)
        .await)
}

async fn list_lines<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let statement = BankStatementId(call.req.id("id")?);
    let query = LineQuery::from_params(&call.req.query)?;
    let page = call.app.engine.list_lines(principal, statement, &query).await?;
    Ok(ok(&PageDto::from_page(page, BankLineDto::from)))
}

/// A line action that takes nothing but the line: 200 with the line.
async fn act<S: Store>(
    call: Call<'_, S>,
    action: impl AsyncFnOnce(&PharmaPay<S>, &Principal, BankStatementId, BankLineId) -> Result<BankLine, Error>,
) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let (statement, line) = line_of(&call)?;
    let line = action(&call.app.engine, principal, statement, line).await?;
    Ok(ok(&BankLineDto::from(line)))
}

async fn match_line<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let (statement, line) = line_of(&call)?;
    let request = call.req.json::<MatchBody>()?.decode()?;
    let line = call.app.engine.match_line(principal, statement, line, request).await?;
    Ok(ok(&BankLineDto::from(line)))
}

async fn ignore_line<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let (statement, line) = line_of(&call)?;
    let reason = decode::reason(call.req.optional_json()?)?;
    let line = call.app.engine.ignore_line(principal, statement, line, reason).await?;
    Ok(ok(&BankLineDto::from(line)))
}

async fn record<S: Store>(mut call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let (statement, line) = line_of(&call)?;
    let key = idempotency_of(&call.req, &call.req.body)?;
    let recording = call.req.json::<RecordBody>()?.decode()?;
    let result = call.app.engine.record_line(principal, statement, line, recording, key.as_ref()).await?;
    Ok(super::answered(call.app, principal, key.as_ref(), result, BankLineDto::from).await)
}

/// A page of the payments of a statement's range that no line holds (D51).
async fn list_uncleared<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let statement = BankStatementId(call.req.id("id")?);
    let mut errors = FieldErrors::new();
    let page = PageRequest::from_params(&call.req.query, UNCLEARED_PAGE_SIZE, &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let found = call.app.engine.list_uncleared_payments(principal, statement, page).await?;
    Ok(ok(&PageDto::from_page(found, UnclearedPaymentDto::from)))
}

bodies! {
    /// A match by hand (D46).
    MatchBody => MatchRequest as "BankLineMatch":
        "The payment a line is matched to by hand (D46): exactly one of the two; otherwise 400 on `transactionId`. \
         Unknown fields are ignored." {
        transaction_id: Slot => optional_id("transactionId")
            as "An active payment; when it is part of a vendor payment, the line holds the whole vendor payment \
                (D31).",
        vendor_payment_id: Slot => optional_id("vendorPaymentId") as "A vendor payment with an active payment.",
    }

    /// A vendor payment recorded from a line (D46).
    RecordBody => LineRecording as "BankLineRecording":
        "A vendor payment (D31) to record from a line: its amount and day are the line's, its reference the line's \
         first candidate key. Unknown fields are ignored." {
        vendor_id: Slot => id("vendorId") as "The vendor paid: active, else 404.",
        allocations: Objects<AllocationBody> => optional_objects("allocations") as allocations(),
        transaction_type: Slot => optional_choice("transactionType", TransactionType::parse, TransactionType::expected())
            as record_type(),
    }
}

fn record_type() -> (Vec<&'static str>, String) {
    let (types, description) = transaction_type_input();
    (types, format!("{description} Absent or null: UPI when the narration names UPI, else NetBanking."))
}

/// An uploaded statement (D46), as the upload and the list answer it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BankStatementDto {
    id: i64,
    account: String,
    branch_id: i64,
    branch_code: String,
    #[serde(serialize_with = "optional_day")]
    from_date: Option<Date>,
    #[serde(serialize_with = "optional_day")]
    to_date: Option<Date>,
    line_count: u32,
    matched: u32,
    amount_differs: u32,
    suggested: u32,
    unmatched: u32,
    ignored: u32,
    duplicate_lines: u32,
    deposit_lines: u32,
    skipped_rows: u32,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<BankStatement> for BankStatementDto {
    fn from(statement: BankStatement) -> Self {
        let counts = statement.counts;
        Self {
            id: statement.id.get(),
            account: statement.account,
            branch_id: statement.branch_id.get(),
            branch_code: statement.branch_code,
            from_date: statement.from_date,
            to_date: statement.to_date,
            line_count: counts.total(),
            matched: counts.matched,
            amount_differs: counts.amount_differs,
            suggested: counts.suggested,
            unmatched: counts.unmatched,
            ignored: counts.ignored,
            duplicate_lines: statement.duplicate_lines,
            deposit_lines: statement.deposit_lines,
            skipped_rows: statement.skipped_rows,
            is_active: statement.is_active,
            created_at: statement.created_at,
        }
    }
}

/// A statement with the payments of its range no line holds (D46).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BankStatementDetailDto {
    #[serde(flatten)]
    statement: BankStatementDto,
    uncleared_count: u64,
    #[serde(serialize_with = "money")]
    uncleared_amount: Decimal,
}

impl From<StatementDetail> for BankStatementDetailDto {
    fn from(detail: StatementDetail) -> Self {
        Self {
            statement: detail.statement.into(),
            uncleared_count: detail.uncleared.count,
            uncleared_amount: detail.uncleared.amount,
        }
    }
}

/// The two ids of a payment: a payment on its own, or a vendor payment.
fn ids_of(payment: Option<Holder>) -> (Option<i64>, Option<i64>) {
    match payment {
        Some(Holder::Payment(id)) => (Some(TransactionId::get(id)), None),
        Some(Holder::VendorPayment(id)) => (None, Some(VendorPaymentId::get(id))),
        None => (None, None),
    }
}

/// A payment no line holds (D46).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnclearedPaymentDto {
    transaction_id: Option<i64>,
    vendor_payment_id: Option<i64>,
    #[serde(serialize_with = "instant")]
    date: Timestamp,
    #[serde(serialize_with = "amount")]
    amount: Amount,
    transaction_type: &'static str,
    reference: Option<String>,
}

impl From<UnclearedPayment> for UnclearedPaymentDto {
    fn from(payment: UnclearedPayment) -> Self {
        let (transaction_id, vendor_payment_id) = ids_of(Some(payment.payment));
        Self {
            transaction_id,
            vendor_payment_id,
            date: payment.date,
            amount: payment.amount,
            transaction_type: payment.transaction_type.name(),
            reference: payment.reference,
        }
    }
}

/// One kept line of a statement (D46).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BankLineDto {
    id: i64,
    line_number: u32,
    #[serde(serialize_with = "day")]
    date: Date,
    narration: Option<String>,
    reference: Option<String>,
    #[serde(serialize_with = "amount")]
    amount: Amount,
    status: &'static str,
    matched_by: Option<&'static str>,
    transaction_id: Option<i64>,
    vendor_payment_id: Option<i64>,
}

impl From<BankLine> for BankLineDto {
    fn from(line: BankLine) -> Self {
        let (transaction_id, vendor_payment_id) = ids_of(line.payment);
        Self {
            id: line.id.get(),
            line_number: line.line_number,
            date: line.date,
            narration: line.narration,
            reference: line.reference,
            amount: line.amount,
            status: line.status.name(),
            matched_by: line.matched_by.map(MatchedBy::name),
            transaction_id,
            vendor_payment_id,
        }
    }
}

fn nullable_day(description: &str) -> Json {
    schema::day().with("type", vec!["string", "null"]).with("description", description.to_owned())
}

describe! {
    BankStatementDto as "BankStatement": "An uploaded bank statement and how its lines stand (D46)." {
        id: schema::id("Bank statement id."),
        account: schema::text(ACCOUNT_MAX, "The account it is of, as the upload named it (`?account=`)."),
        branch_id: schema::id(
            "The branch whose account it is (D49): the head office's statements match every branch's payments, \
             another branch's only payments of its own invoices."
        ),
        branch_code: schema::text(BRANCH_CODE_MAX, "That branch's code."),
        from_date: nullable_day("The first kept line's day (`YYYY-MM-DD`); null when no line was kept."),
        to_date: nullable_day("The last kept line's day (`YYYY-MM-DD`); null when no line was kept."),
        line_count: schema::count("Lines kept: money out, not duplicates. The five counts below add up to it."),
        matched: schema::count("Lines matched to a payment of the same amount."),
        amount_differs: schema::count("Lines matched by reference to a payment of another amount."),
        suggested: schema::count("Lines with one payment of the same amount within three days, to confirm."),
        unmatched: schema::count("Lines no payment was found for."),
        ignored: schema::count("Lines set aside by hand."),
        duplicate_lines: schema::count(
            "Lines another active statement of the account already had (same day, amount, narration and \
             reference): not kept."
        ),
        deposit_lines: schema::count("Money-in lines: counted, not kept."),
        skipped_rows: schema::count("Non-empty rows after the header holding no date (balances, footers)."),
        is_active: schema::boolean("False once deleted."),
        created_at: schema::instant("When uploaded."),
    }
}

describe! {
    BankStatementDetailDto as "BankStatementWithUncleared":
        "BankStatement with how many payments of its range no line holds (D46, D51): active UPI and NetBanking \
         payments dated from three days before `fromDate` to `toDate` (business time zone) that no line of an \
         active statement holds, a vendor payment counting as one; `GET /api/bank-statements/{id}/uncleared-payments` \
         lists them." {
        statement: flatten::<BankStatementDto>(),
        uncleared_count: schema::count("How many payments of the range no line holds."),
        uncleared_amount: schema::money("What they add up to."),
    }
}

describe! {
    UnclearedPaymentDto as "UnclearedPayment":
        "A payment recorded but not seen on any active statement (D46): a payment on its own or a whole vendor \
         payment." {
        transaction_id: schema::nullable_id("The payment on its own; null for a vendor payment."),
        vendor_payment_id: schema::nullable_id("The vendor payment (D31); null for a payment on its own."),
        date: schema::instant("When paid."),
        amount: schema::amount("The amount paid (a vendor payment's whole amount)."),
        transaction_type: schema::one_of(&names(&TransactionType::ALL, TransactionType::name), "How paid."),
        reference: schema::nullable_text(64, "Its reference (D30), or null."),
    }
}

describe! {
    BankLineDto as "BankLine": "One kept line of a bank statement: money out (D46)." {
        id: schema::id("Line id."),
        line_number: schema::count("Its place among the statement's kept lines, from 1."),
        date: schema::day(),
        narration: schema::nullable_text(TEXT_MAX, "The bank's narration, or null."),
        reference: schema::nullable_text(TEXT_MAX, "The reference cell, or null."),
        amount: schema::amount("Money out."),
        status: schema::one_of(
            &names(&LineStatus::ALL, LineStatus::name),
            "Matched (a payment of the same amount), AmountDiffers (matched by reference, another amount), \
             Suggested (the one payment of the same amount within three days: to confirm), Unmatched, Ignored.",
        ),
        matched_by: schema::one_of(&names(&MatchedBy::ALL, MatchedBy::name), "How its payment was found; null when it holds none.")
            .with("type", vec!["string", "null"]),
        transaction_id: schema::nullable_id(
            "The payment on its own it holds, or null; null too for a caller without `Transaction:Read` (D51)."
        ),
        vendor_payment_id: schema::nullable_id(
            "The vendor payment it holds, or null; null too for a caller without `Transaction:Read` (D51)."
        ),
    }
}

impl Schema for PageDto<BankStatementDto> {
    const NAME: &'static str = "BankStatementPage";

    fn schema() -> Json {
        page_schema::<BankStatementDto>("A page of bank statements.")
    }
}

impl Schema for PageDto<BankLineDto> {
    const NAME: &'static str = "BankLinePage";

    fn schema() -> Json {
        page_schema::<BankLineDto>("A page of a bank statement's lines.")
    }
}

impl Schema for PageDto<UnclearedPaymentDto> {
    const NAME: &'static str = "UnclearedPaymentPage";

    fn schema() -> Json {
        page_schema::<UnclearedPaymentDto>("A page of the payments of a statement's range that no line holds (D51).")
    }
}

fn statement_id() -> Json {
    path_id("id", "Bank statement id.")
}

fn line_id() -> Json {
    path_id("lineId", "Line id: a line of this statement, else 404.")
}

fn list() -> Operation {
    TAG.operation(
        "listBankStatements",
        "List bank statements",
        ". Active statements, newest first; paginated (D8). The head office's statements are listed to callers of every \
         branch only (D49).",
    )
    .parameter(PAGE)
    .parameter(page_size(StatementQuery::PAGE_SIZE))
    .parameter(branch_filter("statements"))
        .ok("A page of bank statements.", schema_ref::<PageDto<BankStatementDto>>())
        .errors(&[400, 401, 403, 503])
}

fn column(name: &'static str, what: &str) -> Json {
    query(
        name,
        format!(
            "The header of the {what} column, matched ignoring case, spaces and punctuation; replaces the recognised \
             names. A header named for two columns is a 400."
        ),
        object! { "type": "string", "minLength": 1, "maxLength": ACCOUNT_MAX },
    )
}

fn upload_operation() -> Operation {
    TAG.operation(
        "uploadBankStatement",
        "Upload a bank statement",
        format!(
            ". Reads a statement as banks export it (D46) and matches its lines against the recorded payments in one \
             transaction. The header row is the first of the first {HEADER_ROWS} rows naming a date column and a \
             debit (or signed amount) column, matched ignoring case, spaces and punctuation: date `Date`, `Txn \
             Date`, `Transaction Date`, `Value Date`; narration `Narration`, `Description`, `Particulars`, \
             `Remarks`, `Transaction Remarks`; reference `Reference`, `Ref No`, `Chq/Ref No`, `Ref No/Cheque No`, \
             `Cheque Number`, `UTR`; debit `Debit`, `Withdrawal`, `Withdrawal Amt`, `Withdrawal Amount (INR)`, \
             `Debit Amount`; credit `Credit`, `Deposit`, `Deposit Amt`, `Deposit Amount (INR)`, `Credit Amount`; or \
             one signed `Amount` (negative is money out; a `Dr/Cr` column beside it says the direction); where a \
             file has several of one kind, the first of its list wins. Rows without a date are skipped; deposits \
             are counted and dropped; a line identical to one of another active statement of the same `account` is \
             a duplicate, not kept. Each kept line's candidate keys are its reference cell and every run of 12 to 22 \
             letters and digits in its narration holding at least 6 digits, keyed as payment references are (D30): \
             a payment holding one is `Matched` (same amount) or `AmountDiffers`; else the one payment other than \
             Cash of the same amount dated within three days is `Suggested`; else the line is `Unmatched`. A payment \
             is held by one line of the active statements at most. No date or debit column, or an unreadable file, \
             is a 400 on `file`; an amount that is no amount a 400 keyed `row<N>.amount`; more than {MAX_ROWS} rows \
             a 413. Answers 201 with `Location: /api/bank-statements/<id>`. Accepts an `Idempotency-Key` (D23)."
        ),
    )
    .parameter(query(
        "account",
        "The account the statement is of (required): 1 to 64 characters, trimmed; duplicates are looked for among \
         this account's statements.",
        object! { "type": "string", "minLength": 1, "maxLength": ACCOUNT_MAX },
    ))
    .parameter(query(
        "branchId",
        "The branch whose account the statement is of, an active one (else 400 on `branchId`, D49); omitted, the \
         head office. The head office's statements match every branch's payments; another branch's only payments \
         of its own invoices (a vendor payment when all of it is), and `record` from its lines pays only its bills.",
        positive_id(),
    ))
    .parameter(column("dateColumn", "date"))
    .parameter(column("narrationColumn", "narration"))
    .parameter(column("referenceColumn", "reference"))
    .parameter(column("debitColumn", "debit"))
    .parameter(column("amountColumn", "signed amount"))
    .parameter(query(
        "dateFormat",
        "How ambiguous numeric dates read: `DMY` (the default, `05/04/2026` is 5 April), `MDY` or `YMD`. Dates \
         like `05-04-26`, `05 Apr 2026`, `05-Apr-2026` and ISO dates are read too.",
        schema::choice(&DateOrder::NAMES),
    ))
    .parameter(IDEMPOTENCY_KEY)
    .file_body(file_body())
    .response(
        "201",
        created(
            "The statement was kept and matched.",
            schema_ref::<BankStatementDto>(),
            link_by_id("getBankStatement", "The statement with its uncleared payments."),
        ),
    )
    .errors(&[400, 401, 403, 409, 413, 415, 422, 503])
}

fn get() -> Operation {
    TAG.operation(
        "getBankStatement",
        "Get a bank statement",
        ". The statement with `unclearedCount` and `unclearedAmount` (D51); 404 when missing or deleted.",
    )
    .path_parameter(statement_id())
    .ok("The statement.", schema_ref::<BankStatementDetailDto>())
    .errors(&[400, 401, 403, 404, 503])
}

fn delete() -> Operation {
    TAG.operation(
        "deleteBankStatement",
        "Delete a bank statement",
        ". Soft-deletes it and frees the payments its lines held (D46). The optional body `{reason}` is kept in the \
         audit log (D16). 404 when missing or deleted.",
    )
    .path_parameter(statement_id())
    .optional_body::<ReasonBody>()
    .response("204", no_content("Deleted; no body."))
    .errors(&[400, 401, 403, 404, 413, 415, 503])
}

fn lines() -> Operation {
    TAG.operation(
        "listBankStatementLines",
        "List a bank statement's lines",
        ". Its kept lines by line number, paginated (D8); 404 when the statement is missing or deleted.",
    )
    .path_parameter(statement_id())
    .parameter(query(
        "status",
        "Only lines of this status, matched case-insensitively; anything else is a 400.",
        schema::choice(&names(&LineStatus::ALL, LineStatus::name)),
    ))
    .parameter(PAGE)
    .parameter(page_size(LineQuery::PAGE_SIZE))
    .ok("A page of lines.", schema_ref::<PageDto<BankLineDto>>())
    .errors(&[400, 401, 403, 404, 503])
}

fn uncleared() -> Operation {
    TAG.operation(
        "listUnclearedPayments",
        "List a bank statement's uncleared payments",
        " (D51: they show payments and their references). Active UPI and NetBanking payments dated from three days \
         before the statement's first line to its last (business time zone) that no line of an active statement \
         holds, a vendor payment as one item, paginated (D8): by date, then payments on their own by \
         `transactionId`, then vendor payments by `vendorPaymentId`. 404 when the statement is missing or deleted.",
    )
    .path_parameter(statement_id())
    .parameter(PAGE)
    .parameter(page_size(UNCLEARED_PAGE_SIZE))
    .ok("A page of uncleared payments.", schema_ref::<PageDto<UnclearedPaymentDto>>())
    .errors(&[400, 401, 403, 404, 503])
}

fn line_action(id: &'static str, summary: &'static str, description: &'static str, errors: &[u16]) -> Operation {
    TAG.operation(id, summary, description)
        .path_parameter(statement_id())
        .path_parameter(line_id())
        .ok("The line as it now stands.", schema_ref::<BankLineDto>())
        .errors(errors)
}

fn confirm() -> Operation {
    line_action(
        "confirmBankLine",
        "Confirm a suggested match",
        ". A `Suggested` line becomes `Matched` (D46); any other status is a 400. 404 for a statement missing or \
         deleted, or a line not of it.",
        &[400, 401, 403, 404, 503],
    )
}

fn matching() -> Operation {
    line_action(
        "matchBankLine",
        "Match a line by hand",
        ". The line holds the payment named (`matchedBy: Hand`): `Matched` when the amounts are equal, else \
         `AmountDiffers`; what it held before is freed. A payment another line of an active statement holds is a \
         409; a payment missing or deleted a 404 (D46).",
        &[400, 401, 403, 404, 409, 413, 415, 503],
    )
    .body::<MatchBody>()
}

fn unmatch() -> Operation {
    line_action(
        "unmatchBankLine",
        "Unmatch a line",
        ". The line holds no payment and is `Unmatched`, whatever it was (D46).",
        &[400, 401, 403, 404, 503],
    )
}

fn ignore() -> Operation {
    line_action(
        "ignoreBankLine",
        "Ignore a line",
        ". The line is `Ignored` (rent, salary: not a vendor payment) and holds no payment (D46); the optional body \
         `{reason}` is kept in the audit log.",
        &[400, 401, 403, 404, 413, 415, 503],
    )
    .optional_body::<ReasonBody>()
}

fn recording() -> Operation {
    line_action(
        "recordBankLine",
        "Record a vendor payment from a line",
        ". Records a vendor payment (D31) with the line's day and amount, its first candidate key as the reference \
         and the type asked for (else UPI when the narration names UPI, else NetBanking), split as `allocations` say \
         or over the vendor's invoices still owing, oldest due first; the line then holds it (`Matched`, \
         `matchedBy: Hand`). A line already holding a payment is a 400; allocations that do not fit a 400 naming the \
         field; a reference another payment holds a 409 (D30); an unknown or deleted vendor a 404. All in one \
         transaction. Accepts an `Idempotency-Key` (D23, D51): a retry answers the line as it stands.",
        &[400, 401, 403, 404, 409, 413, 415, 422, 503],
    )
    .parameter(IDEMPOTENCY_KEY)
    .body::<RecordBody>()
}
