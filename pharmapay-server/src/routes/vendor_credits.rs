//! `/api/vendor-credits` (D44): what a pharmacy claims back from its distributors for stock
//! returned or rates disputed, the distributor's decision, their bodies, DTOs and operations.

use pharmapay_core::Action::{Read, Update};
use pharmapay_core::Collection::VendorCredit as Credits;
use pharmapay_core::branches::BRANCH_CODE_MAX;
use pharmapay_core::credits::CREDIT_NUMBER_MAX;
use pharmapay_core::credits::{
    CreditApplication, CreditDecision, CreditKind, CreditQuery, CreditStatus, NewCreditApplication, NewVendorCredit,
    VendorCredit,
};
use pharmapay_core::idempotency::IdempotencyRequest;
use pharmapay_core::ids::VendorCreditId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::text::{CODE_MAX, NAME_MAX, TEXT_MAX};
use pharmapay_core::{Amount, PharmaPay, Principal, Store};
use serde::Serialize;

use super::vendor_payments::{AllocationBody, allocations};
use super::{Call, Route, kept_routes};
use crate::decode::{Objects, Slot, bodies};
use crate::dto::{PageDto, amount, instant, money, optional_instant, optional_money, page_schema};
use crate::guard::needs;
use crate::http::Reply;
use crate::openapi::schema::{self, TRIM_NOTE, names};
use crate::openapi::{
    Crud, IDEMPOTENCY_KEY, Json, Operation, Schema, branch_filter, created, describe, flatten, link_by_id, no_content,
    object, path_id, query, query_date, query_id, schema_ref,
};
use crate::problem::ApiError;

/// The vendor credit routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    kept_routes! {
        "/api/vendor-credits" as "vendor-credits", Credits, reads: needs(Credits, Read),
            dto: VendorCreditDetailDto;
        list: |call| Box::pin(call.page(CreditQuery::from_params, PharmaPay::list_credits, VendorCreditDto::from));
        engine: create_credit, get_credit, update_credit, delete_credit, restore_credit;
        after: [
            Route::post("/api/vendor-credits/{id}/decision", needs(Credits, Update), decide, |call| {
                Box::pin(call.replace(PharmaPay::decide_credit, VendorCreditDetailDto::from))
            }),
            Route::post("/api/vendor-credits/{id}/applications", needs(Credits, Update), apply_operation, |call| {
                Box::pin(apply(call))
            }),
            Route::delete(
                "/api/vendor-credits/{id}/applications/{applicationId}",
                needs(Credits, Update),
                undo_operation,
                |call| Box::pin(call.link("applicationId", PharmaPay::undo_application)),
            ),
        ];
    }
}

const CRUD: Crud = Crud {
    base: "/api/vendor-credits",
    tag: "VendorCredits",
    singular: "vendor credit",
    restore_parent: Some("vendor"),
};

fn list() -> Operation {
    CRUD.page::<PageDto<VendorCreditDto>>(
        ". Paginated (D8), newest `claimDate` first, then id descending (D44); items carry no applications.",
        CreditQuery::PAGE_SIZE,
    )
    .parameter(query_id("vendorId", "Only this vendor's credits."))
    .parameter(branch_filter("credits"))
    .parameter(query(
        "status",
        "Only this computed status, matched case-insensitively; anything else is a 400. `Canceled` without `isActive` \
         lists the soft-deleted credits.",
        schema::choice(&names(&CreditStatus::ALL, CreditStatus::name)),
    ))
    .parameter(query(
        "kind",
        "Only this kind, matched case-insensitively; anything else is a 400.",
        schema::choice(&names(&CreditKind::ALL, CreditKind::name)),
    ))
    .parameter(query_date("fromDate", "Inclusive lower bound on claimDate."))
    .parameter(query_date("toDate", "Inclusive upper bound on claimDate; earlier than fromDate is a 400."))
    .parameter(query(
        "isActive",
        "`true` (the default): active credits; `false`: soft-deleted ones.",
        object! { "type": "boolean" },
    ))
    .parameter(query(
        "claimedBefore",
        "Only claims still undecided since before this day (`YYYY-MM-DD`, in the business time zone): the ones to \
         chase (D44).",
        schema::day(),
    ))
}

fn create() -> Operation {
    CRUD.create::<CreditBody, VendorCreditDetailDto>(
        "The vendor must be active, and `againstInvoiceId` one of its invoices (400). A number another active credit \
         of the vendor uses is a 409 (D5). ",
    )
}

fn get() -> Operation {
    CRUD.get::<VendorCreditDetailDto>("Carries its active applications, oldest first.")
}

fn update() -> Operation {
    CRUD.update::<CreditBody, VendorCreditDetailDto>(
        "The decision and applications stay. `claimedAmount` below `acceptedAmount`, or a new `vendorId` once \
         anything is applied, is a 400 on that field; a taken number is a 409 (D5).",
    )
}

fn delete() -> Operation {
    CRUD.delete("Its applications are deleted with it, in one transaction (D44).")
}

fn restore() -> Operation {
    CRUD.restore::<VendorCreditDetailDto>()
}

fn decide() -> Operation {
    CRUD.operation(
        "decideVendorCredit",
        "Record the distributor's decision",
        ". Records what the distributor accepted of the claim (D44): `acceptedAmount` from 0 (rejected) to \
         `claimedAmount`, and never below what is already applied; `decisionDate` from `claimDate` to today. A decided \
         credit may be decided again. Each breach is a 400 naming the field. 404 when missing or soft-deleted.",
    )
    .path_parameter(CRUD.id())
    .body::<DecisionBody>()
    .ok("The decided credit.", schema_ref::<VendorCreditDetailDto>())
    .errors(&[400, 401, 403, 404, 413, 415, 503])
}

fn apply_operation() -> Operation {
    CRUD.operation(
        "applyVendorCredit",
        "Set a credit against bills",
        ". Sets an accepted credit's available amount against the vendor's active invoices, checked in one \
         transaction with the writes as a vendor payment's allocations are (D31, D44): with `allocations`, each an \
         active invoice of the credit's vendor, listed once, at most what it still owes (`pendingAmount`), adding up to \
         at most `availableAmount` (and to `amount` when both are given); without them, `amount` (default: the smaller of \
         what is available and what the open invoices owe, D51) goes to the open invoices oldest due first. A credit \
         not accepted, an amount above what is available or what the open invoices owe, or no amount when either is \
         0, is a 400 on `amount`; `date` (default now) may not be before \
         `decisionDate` nor after today. Nothing is written on a refusal. Each invoice credited is one application; \
         answers 201 with the credit and its applications and `Location: /api/vendor-credits/<id>`. Accepts an \
         `Idempotency-Key` (D23).",
    )
    .path_parameter(CRUD.id())
    .parameter(IDEMPOTENCY_KEY)
    .body::<ApplicationBody>()
    .response(
        "201",
        created(
            "The credit was applied.",
            schema_ref::<VendorCreditDetailDto>(),
            link_by_id("getVendorCredit", "The credit with its applications."),
        ),
    )
    .errors(&[400, 401, 403, 404, 409, 413, 415, 422, 503])
}

fn undo_operation() -> Operation {
    CRUD.operation(
        "undoVendorCreditApplication",
        "Undo an application of a credit",
        ". The invoice owes the amount again and the credit has it available again (D44). 404 when the credit or the \
         application is missing or deleted, or the application is another credit's.",
    )
    .path_parameter(CRUD.id())
    .path_parameter(path_id("applicationId", "Application id."))
    .response("204", no_content("Undone; no body."))
    .errors(&[400, 401, 403, 404, 503])
}

/// Applies the credit the path names: the amounts and invoices are the body's (D44).
async fn apply<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let credit_id = VendorCreditId(call.req.id("id")?);
    let create = async move |engine: &PharmaPay<S>,
                             principal: &Principal,
                             application: NewCreditApplication,
                             idempotency: Option<&IdempotencyRequest>| {
        engine.apply_credit(principal, credit_id, application, idempotency).await
    };
    call.create("vendor-credits", create, |credit| credit.id.get(), VendorCreditDetailDto::from).await
}

bodies! {
    /// Setting a credit against bills (D44).
    ApplicationBody => NewCreditApplication as "VendorCreditApplicationInput":
        "Setting an accepted credit against the vendor's bills (D44). Unknown fields are ignored." {
        amount: Slot => optional_amount("amount")
            as "How much to apply: at most `availableAmount`. With `allocations`, it must equal their sum; without \
                either, the smaller of `availableAmount` and what the vendor's open invoices owe (D51).",
        date: Slot => optional_datetime("date")
            as "When applied: not before `decisionDate`, not after today in the business time zone (D2, D3); \
                absent, now.",
        allocations: Objects<AllocationBody> => optional_objects("allocations") as allocations(),
    }

    /// A credit's claim, on create and full replacement (D14, D44).
    CreditBody => NewVendorCredit as "VendorCreditInput":
        "A claim on a distributor (D44), on create and full replacement (D14). Unknown fields are ignored." {
        vendor_id: Slot => id("vendorId") as "An existing active vendor; otherwise 400.",
        branch_id: Slot => optional_id("branchId")
            as "The branch whose claim it is, an active one; otherwise 400 (D49). Omitted or null: on a create, the \
                head office; on a replacement, the credit's branch as it is. It is set against that branch's invoices \
                only; once applied it cannot move (400).",
        credit_number: Slot => string("creditNumber") as credit_number_input(),
        kind: Slot => choice("kind", CreditKind::parse, kind_names())
            as (names(&CreditKind::ALL, CreditKind::name), "Why claimed, matched case-insensitively.".to_owned()),
        claimed_amount: Slot => amount("claimedAmount") as "What is claimed.",
        claim_date: Slot => datetime("claimDate")
            as "When claimed; after today in the business time zone is a 400 (D2, D3).",
        against_invoice_id: Slot => optional_id("againstInvoiceId")
            as "The invoice the claim is about: one of the vendor's of the credit's branch, active or not (400 \
                otherwise, D49). Omitted or null: none.",
        description: Slot => optional_string("description") as schema::free_text("Free text."),
    }

    /// The distributor's decision on a claim (D44).
    DecisionBody => CreditDecision as "VendorCreditDecision":
        "The distributor's decision on a claim (D44). Unknown fields are ignored." {
        accepted_amount: Slot => money("acceptedAmount")
            as "What the distributor accepted: 0 rejects the claim; at most `claimedAmount`, and at least what is \
                already applied (400 on `acceptedAmount`).",
        decision_date: Slot => datetime("decisionDate")
            as "When decided: not before `claimDate`, not after today in the business time zone (400 on \
                `decisionDate`).",
        distributor_reference: Slot => optional_string("distributorReference")
            as schema::code("The distributor's credit note number or other reference, or null."),
    }
}

fn kind_names() -> &'static str {
    "must be one of ExpiryReturn, Breakage, RateDifference, Other"
}

/// `creditNumber` in a body: unique among the vendor's active credits (D44).
fn credit_number_input() -> Json {
    object! {
        "pattern": schema::line_pattern(CREDIT_NUMBER_MAX),
        "description": format!(
            "The credit note's or claim's number, unique among the vendor's active credits, compared \
             case-insensitively (D4, D44); a taken number is a 409 (D5). Not blank, at most {CREDIT_NUMBER_MAX} \
             characters. {TRIM_NOTE}."
        ),
    }
}

/// A vendor credit, as every route answers it (D44).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VendorCreditDto {
    id: i64,
    vendor_id: i64,
    vendor_name: String,
    branch_id: i64,
    branch_code: String,
    credit_number: String,
    kind: &'static str,
    against_invoice_id: Option<i64>,
    #[serde(serialize_with = "amount")]
    claimed_amount: Amount,
    #[serde(serialize_with = "instant")]
    claim_date: Timestamp,
    #[serde(serialize_with = "optional_money")]
    accepted_amount: Option<Decimal>,
    #[serde(serialize_with = "optional_instant")]
    decision_date: Option<Timestamp>,
    distributor_reference: Option<String>,
    #[serde(serialize_with = "money")]
    applied_amount: Decimal,
    #[serde(serialize_with = "money")]
    available_amount: Decimal,
    status: &'static str,
    description: Option<String>,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    #[serde(serialize_with = "instant")]
    updated_at: Timestamp,
}

impl From<VendorCredit> for VendorCreditDto {
    fn from(credit: VendorCredit) -> Self {
        Self {
            id: credit.id.get(),
            vendor_id: credit.vendor_id.get(),
            available_amount: credit.available_amount(),
            status: credit.status().name(),
            vendor_name: credit.vendor_name,
            branch_id: credit.branch_id.get(),
            branch_code: credit.branch_code,
            credit_number: credit.credit_number,
            kind: credit.kind.name(),
            against_invoice_id: credit.against_invoice_id.map(|id| id.get()),
            claimed_amount: credit.claimed_amount,
            claim_date: credit.claim_date,
            accepted_amount: credit.accepted_amount,
            decision_date: credit.decision_date,
            distributor_reference: credit.distributor_reference,
            applied_amount: credit.applied_amount,
            description: credit.description,
            is_active: credit.is_active,
            created_at: credit.created_at,
            updated_at: credit.updated_at,
        }
    }
}

/// A credit with its active applications, oldest first: the single read, the create and every
/// action answer it (D44).
#[derive(Serialize)]
pub struct VendorCreditDetailDto {
    #[serde(flatten)]
    credit: VendorCreditDto,
    applications: Vec<CreditApplicationDto>,
}

impl From<VendorCredit> for VendorCreditDetailDto {
    fn from(mut credit: VendorCredit) -> Self {
        let applications =
            std::mem::take(&mut credit.applications).into_iter().map(CreditApplicationDto::from).collect();
        Self { credit: credit.into(), applications }
    }
}

/// One active application of a credit to an invoice (D44).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditApplicationDto {
    id: i64,
    invoice_id: i64,
    invoice_number: String,
    #[serde(serialize_with = "amount")]
    amount: Amount,
    #[serde(serialize_with = "instant")]
    date: Timestamp,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<CreditApplication> for CreditApplicationDto {
    fn from(application: CreditApplication) -> Self {
        Self {
            id: application.id.get(),
            invoice_id: application.invoice_id.get(),
            invoice_number: application.invoice_number,
            amount: application.amount,
            date: application.date,
            created_at: application.created_at,
        }
    }
}

describe! {
    VendorCreditDto as "VendorCredit":
        "A vendor credit (D44), as lists answer it (without its applications)." {
        id: schema::id("Vendor credit id."),
        vendor_id: schema::id("The vendor claimed from."),
        vendor_name: schema::text(NAME_MAX, "That vendor's name."),
        branch_id: schema::id("The branch whose claim it is (D49)."),
        branch_code: schema::text(BRANCH_CODE_MAX, "That branch's code."),
        credit_number: schema::text(CREDIT_NUMBER_MAX, "The credit's number."),
        kind: schema::one_of(&names(&CreditKind::ALL, CreditKind::name), "Why claimed."),
        against_invoice_id: schema::nullable_id("The invoice the claim is about, or null."),
        claimed_amount: schema::amount("What is claimed."),
        claim_date: schema::instant("When claimed."),
        accepted_amount: schema::nullable_money("What the distributor accepted; null until decided."),
        decision_date: schema::nullable_instant("When decided; null until decided."),
        distributor_reference: schema::nullable_text(CODE_MAX, "The distributor's reference; null until given."),
        applied_amount: schema::money("The sum of its active applications."),
        available_amount: schema::money("`(acceptedAmount or 0) - appliedAmount`: what is left to set against bills."),
        status: schema::one_of(
            &names(&CreditStatus::ALL, CreditStatus::name),
            "Computed, first match wins: Canceled when soft-deleted, Claimed until decided, Rejected when nothing was \
             accepted, PartlyAccepted below the claim, else Accepted.",
        ),
        description: schema::nullable_text(TEXT_MAX, "Free text, or null."),
        is_active: schema::boolean("False once soft-deleted."),
        created_at: schema::instant("When recorded."),
        updated_at: schema::instant("When last changed."),
    }
}

describe! {
    VendorCreditDetailDto as "VendorCreditWithApplications":
        "VendorCreditDto with its active applications, as the single read, the create and every action answer it \
         (D44)." {
        credit: flatten::<VendorCreditDto>(),
        applications: schema::array(schema_ref::<CreditApplicationDto>())
            .with("description", "Its active applications, oldest first."),
    }
}

describe! {
    CreditApplicationDto as "CreditApplication": "One application of a credit to an invoice (D44)." {
        id: schema::id("Application id."),
        invoice_id: schema::id("The invoice credited."),
        invoice_number: schema::text(CODE_MAX, "Its number."),
        amount: schema::amount("How much of the credit it took."),
        date: schema::instant("When applied."),
        created_at: schema::instant("When recorded."),
    }
}

impl Schema for PageDto<VendorCreditDto> {
    const NAME: &'static str = "VendorCreditPage";

    fn schema() -> Json {
        page_schema::<VendorCreditDto>("A page of vendor credits (without their applications).")
    }
}
