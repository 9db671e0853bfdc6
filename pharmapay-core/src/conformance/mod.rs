//! The behavioural suite every [`Store`] must pass, written once and run against each backend.
//!
//! Each case drives a [`PharmaPay`] engine over a fresh store and checks what the API promises:
//! computed figures, filters and sorts, uniqueness, soft deletes and restores, access rules,
//! idempotency and the audit log, plus races that must end in exactly one winner. A backend's
//! tests run the whole suite with one macro call:
//!
//! ```text
//! async fn fresh_store() -> (MyStore, impl Sized) { (MyStore::new(), ()) }
//! pharmapay_core::store_conformance_tests!(fresh_store);
//! ```
//!
//! The function returns the store and a guard kept alive until the case ends (a temporary
//! file or database to drop). The store must also implement
//! [`BulkLoadStore`](crate::store::BulkLoadStore), which the case of imports drives directly.
//! [`cases`] holds the cases, one file per family; [`model`] applies random operation sequences
//! for property tests, which `ops` generates.

pub mod cases;
mod credited;
pub mod hostile;
pub mod model;
mod ops;
mod reconciled;

use std::cmp::Ordering;

use jiff::{SignedDuration, Timestamp};

use crate::access::policy::NewPolicy;
use crate::access::user::NewUser;
use crate::access::{Access, PHARMACIST_ROLE_ID, Principal};
use crate::auth::{PasswordOptions, Secret};
use crate::clock::ManualClock;
use crate::engine::{EngineOptions, PharmaPay, Session};
use crate::events::{Announced, Render};
use crate::idempotency::Created;
use crate::ids::{InvoiceId, PolicyId, VendorId};
use crate::invoices::{Invoice, InvoiceSortKey, NewInvoice};
use crate::money::Amount;
use crate::paging::{Sort, SortKey};
use crate::seed::permission_id;
use crate::sessions::{AdminAccount, Onboarding, PharmacyDetails};
use crate::store::Store;
use crate::text::Password;
use crate::transactions::{NewTransaction, Transaction, TransactionType};
use crate::vendors::{NewVendor, Vendor, VendorType};

/// The instant every case starts at: 2024-05-10 10:00 UTC.
pub fn start_time() -> Timestamp {
    "2024-05-10T10:00:00Z".parse().expect("a valid timestamp")
}

/// A timestamp from RFC 3339 text.
///
/// # Panics
/// On text that is not a timestamp; test data only.
pub fn ts(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|_| panic!("test timestamp {text:?} must parse"))
}

/// An amount from text.
///
/// # Panics
/// On text that is not a positive amount; test data only.
pub fn amount(text: &str) -> Amount {
    Amount::parse(text).unwrap_or_else(|error| panic!("test amount {text:?}: {error}"))
}

/// A decimal from text.
///
/// # Panics
/// On text that is not a decimal; test data only.
pub fn dec(text: &str) -> rust_decimal::Decimal {
    rust_decimal::Decimal::from_str_exact(text).unwrap_or_else(|error| panic!("test decimal {text:?}: {error}"))
}

/// Engine options for tests: a fixed secret and cheap Argon2 parameters, so suites that create
/// many users stay fast. The production defaults are tested in `auth`.
pub fn test_options() -> EngineOptions {
    EngineOptions {
        jwt_secret: Some(Secret::new("conformance-secret-conformance-secret")),
        passwords: PasswordOptions {
            params: argon2::Params::new(1024, 1, 1, None).expect("valid Argon2 parameters"),
            max_concurrent: 4,
        },
        events: Some(std::sync::Arc::new(Facts)),
        ..EngineOptions::default()
    }
}

/// Renders an event's record as a few of its facts (D47): what the cases of events check. The
/// server renders records with its API's answers, which its own tests compare with reads.
#[derive(Debug)]
pub struct Facts;

impl Render for Facts {
    fn render(&self, record: Announced<'_>) -> String {
        let facts = match record {
            Announced::Vendor(vendor) => serde_json::json!({
                "id": vendor.id.get(), "name": vendor.name, "isActive": vendor.is_active,
                "licenseStatus": vendor.license_status.name(),
            }),
            Announced::Invoice(detail) => serde_json::json!({
                "id": detail.invoice.id.get(), "status": detail.invoice.status.name(),
                "pending": detail.invoice.pending_amount().to_string(), "vendor": detail.vendor.name,
            }),
            Announced::Transaction(payment) => serde_json::json!({
                "id": payment.id.get(), "amount": payment.amount.get().to_string(), "isActive": payment.is_active,
            }),
            Announced::VendorPayment(payment) => serde_json::json!({
                "id": payment.id.get(), "parts": payment.transactions.len(),
            }),
            Announced::VendorCredit(credit) => serde_json::json!({
                "id": credit.id.get(), "status": credit.status().name(), "applications": credit.applications.len(),
            }),
            Announced::BankStatement(statement) => serde_json::json!({
                "id": statement.id.get(), "ignored": statement.counts.ignored, "isActive": statement.is_active,
            }),
        };
        facts.to_string()
    }
}

/// The onboarding every case starts from: pharmacy "Apollo Pharmacy", admin admin@example.com.
pub fn onboarding() -> Onboarding {
    Onboarding {
        pharmacy: PharmacyDetails {
            name: "Apollo Pharmacy".into(),
            address: Some("12 MG Road".into()),
            phone: None,
            email: None,
            drug_license_number1: Some("DL-001".into()),
        },
        admin: AdminAccount {
            first_name: "Asha".into(),
            last_name: "Rao".into(),
            email: "admin@example.com".into(),
            password: Password::parse("admin-password").expect("a valid password"),
        },
    }
}

/// An onboarded engine with a moveable clock and a signed-in admin.
pub struct Fixture<S> {
    /// The engine.
    pub engine: PharmaPay<S>,
    /// Its clock.
    pub clock: ManualClock,
    /// The admin's session.
    pub admin_session: Session,
    /// The admin, as a verified caller.
    pub admin: Principal,
}

/// An engine over `store`, not yet onboarded, at [`start_time`].
///
/// # Panics
/// When the engine cannot open; a conformance failure.
pub async fn engine<S: Store>(store: S) -> (PharmaPay<S>, ManualClock) {
    let clock = ManualClock::new(start_time());
    let engine = PharmaPay::open(store, clock.clone(), test_options()).await.expect("the engine opens");
    (engine, clock)
}

/// Every invoice sort key, in the order the API names them.
pub fn invoice_sort_keys() -> impl Iterator<Item = InvoiceSortKey> {
    InvoiceSortKey::NAMES.iter().map(|(_, key)| *key)
}

/// How `sort` orders two invoices of a list (D8): by its key, text without regard to case, then
/// by id, all in its direction.
pub fn invoice_order(sort: Sort<InvoiceSortKey>, x: &Invoice, y: &Invoice) -> Ordering {
    let ordering = match sort.key {
        InvoiceSortKey::InvoiceDate => x.invoice_date.cmp(&y.invoice_date),
        InvoiceSortKey::DueDate => x.due_date.cmp(&y.due_date),
        InvoiceSortKey::Amount => x.amount.cmp(&y.amount),
        InvoiceSortKey::PendingAmount => x.pending_amount().cmp(&y.pending_amount()),
        InvoiceSortKey::PaidAmount => x.paid_amount.cmp(&y.paid_amount),
        InvoiceSortKey::InvoiceNumber => x.invoice_number.to_lowercase().cmp(&y.invoice_number.to_lowercase()),
        InvoiceSortKey::VendorName => x.vendor_name.to_lowercase().cmp(&y.vendor_name.to_lowercase()),
    };
    sort.dir.apply(ordering.then(x.id.cmp(&y.id)))
}

/// Unwraps a create that was not replayed.
///
/// # Panics
/// When it was replayed.
pub fn created<T: std::fmt::Debug>(created: Created<T>) -> T {
    match created {
        Created::New(value) => value,
        Created::Replayed(replay) => panic!("expected a new record, got a replay: {replay:?}"),
    }
}

impl<S: Store> Fixture<S> {
    /// Onboards a fresh store and signs the admin in.
    ///
    /// # Panics
    /// When onboarding fails; a conformance failure.
    pub async fn new(store: S) -> Self {
        let (engine, clock) = engine(store).await;
        let admin_session = engine.complete_onboarding(onboarding()).await.expect("onboarding succeeds");
        let admin = engine.authenticate(&admin_session.token.token).await.expect("the onboarding token works");
        Self { engine, clock, admin_session, admin }
    }

    /// Moves the clock.
    pub fn advance(&self, by: SignedDuration) {
        self.clock.advance(by);
    }

    /// Creates a vendor of type Wholesaler.
    ///
    /// # Panics
    /// On failure.
    pub async fn vendor(&self, name: &str) -> Vendor {
        created(
            self.engine
                .create_vendor(&self.admin, NewVendor::new(name, VendorType::Wholesaler), None)
                .await
                .expect("vendor created"),
        )
    }

    /// An invoice input dated at the clock's day, due `due_days` later (may be negative, making
    /// the invoice date earlier instead).
    pub fn new_invoice(&self, vendor: VendorId, number: &str, total: &str, due: &str) -> NewInvoice {
        let due_date = ts(due);
        let invoice_date = due_date.min(self.clock_now());
        NewInvoice {
            vendor_id: vendor,
            branch_id: None,
            invoice_number: number.into(),
            amount: amount(total),
            invoice_date,
            due_date,
            description: None,
        }
    }

    fn clock_now(&self) -> Timestamp {
        self.engine.now()
    }

    /// Creates an invoice due at `due` (RFC 3339).
    ///
    /// # Panics
    /// On failure.
    pub async fn invoice(&self, vendor: VendorId, number: &str, total: &str, due: &str) -> Invoice {
        let input = self.new_invoice(vendor, number, total, due);
        created(self.engine.create_invoice(&self.admin, input, None).await.expect("invoice created"))
    }

    /// A payment input dated now.
    pub fn new_payment(&self, invoice: InvoiceId, paid: &str) -> NewTransaction {
        NewTransaction {
            invoice_id: invoice,
            amount: amount(paid),
            transaction_date: self.clock_now(),
            transaction_type: TransactionType::Upi,
            reference: None,
            description: None,
        }
    }

    /// Records a payment dated now.
    ///
    /// # Panics
    /// On failure.
    pub async fn pay(&self, invoice: InvoiceId, paid: &str) -> Transaction {
        let input = self.new_payment(invoice, paid);
        created(self.engine.create_transaction(&self.admin, input, None).await.expect("payment recorded"))
    }

    /// Creates a user with `role` and signs them in.
    ///
    /// # Panics
    /// On failure.
    pub async fn user_with_role(&self, email: &str, role: crate::ids::RoleId) -> (Session, Principal) {
        let user = NewUser {
            first_name: "Ravi".into(),
            last_name: "Kumar".into(),
            email: email.into(),
            password: Password::parse("user-password").expect("a valid password"),
            role_id: role,
            branch_ids: None,
        };
        created(self.engine.create_user(&self.admin, user, None).await.expect("user created"));
        let session = self.engine.login(email, "user-password").await.expect("the new user signs in");
        let principal = self.engine.authenticate(&session.token.token).await.expect("the new token works");
        (session, principal)
    }

    /// Creates a policy holding exactly the permissions `codes` name (`Vendor:Read` ...).
    ///
    /// # Panics
    /// When a code names no permission, or on failure.
    pub async fn policy_of(&self, name: &str, codes: &[&str]) -> PolicyId {
        let permission_ids = codes
            .iter()
            .map(|code| permission_id(Access::parse(code).unwrap_or_else(|| panic!("{code} is a permission"))))
            .collect();
        let policy = NewPolicy { name: name.into(), description: String::new(), permission_ids };
        created(self.engine.create_policy(&self.admin, policy, None).await.expect("policy created")).id
    }

    /// Creates a user whose role holds exactly the permissions `codes` name, and signs them in.
    ///
    /// # Panics
    /// When a code names no permission, or on failure.
    pub async fn user_with(&self, email: &str, codes: &[&str]) -> (Session, Principal) {
        let role = crate::access::role::NewRole { name: format!("Role of {email}"), description: String::new() };
        let role = created(self.engine.create_role(&self.admin, role, None).await.expect("role created"));
        let policy = self.policy_of(&format!("Policy of {email}"), codes).await;
        self.engine.attach_role_policy(&self.admin, role.id, policy).await.expect("policy attached");
        self.user_with_role(email, role.id).await
    }

    /// Creates a pharmacist (role 2) and signs them in.
    ///
    /// # Panics
    /// On failure.
    pub async fn pharmacist(&self, email: &str) -> (Session, Principal) {
        self.user_with_role(email, PHARMACIST_ROLE_ID).await
    }
}

/// Generates one `#[tokio::test]` per conformance case for the store made by `$fresh`, an async
/// function returning `(store, guard)`. With `optional`, `$fresh` returns
/// `Option<(store, guard)>` and a case returns at once on `None` (a backend that is not
/// configured on this machine, which `$fresh` reports).
#[macro_export]
macro_rules! store_conformance_tests {
    (optional $fresh:path) => {
        $crate::store_conformance_tests!(@list optional $fresh);
    };
    ($fresh:path) => {
        $crate::store_conformance_tests!(@list required $fresh);
    };
    (@list $mode:ident $fresh:path) => {
        $crate::store_conformance_tests!(@cases $mode $fresh;
            onboarding_creates_the_pharmacy_and_the_first_admin_once,
            concurrent_onboarding_makes_exactly_one_admin,
            the_head_office_is_there_from_the_first_start,
            branches_are_created_read_updated_deleted_and_restored,
            branch_codes_are_unique_among_active_branches,
            concurrent_branch_codes_have_one_winner,
            branch_fields_are_checked_and_the_list_is_ordered,
            branch_permissions_follow_the_seeded_policy,
            invoices_belong_to_a_branch_and_move_with_their_payments,
            imported_invoices_name_their_branch,
            credits_are_set_against_their_own_branch,
            statements_match_the_payments_of_their_branch,
            user_scopes_are_kept_bounded_and_revoked_when_narrowed,
            a_store_user_sees_and_writes_only_their_branches_invoices,
            a_store_user_sees_and_records_only_their_branches_payments,
            a_store_user_sees_and_changes_only_their_branches_credits,
            login_issues_a_token_with_the_spec_claims,
            login_refuses_wrong_unknown_and_inactive_alike,
            control_characters_never_reach_the_store,
            login_is_throttled_after_five_failures_until_the_window_passes,
            parallel_failed_logins_never_pass_the_limit,
            tokens_stop_working_after_delete_or_password_change,
            permissions_resolve_from_role_and_user_policies,
            permission_checks_answer_forbidden,
            vendors_are_created_read_updated_deleted_and_restored,
            own_pharmacy_vendor_is_protected,
            vendor_totals_follow_active_invoices_and_payments,
            vendor_list_filters_sorts_and_pages,
            invoices_enforce_active_vendors_and_unique_numbers,
            invoice_status_follows_the_table_and_the_clock,
            invoice_list_filters_by_every_parameter,
            invoice_list_sorts_by_every_key_with_id_tie_breaks,
            payments_keep_paid_and_pending_exact,
            payment_updates_move_amounts_between_invoices,
            payment_rules_refuse_future_dates_and_inactive_invoices,
            transaction_list_filters_and_sorts,
            users_are_managed_with_unique_emails,
            the_last_admin_and_oneself_cannot_be_removed,
            roles_are_managed_and_system_roles_protected,
            policies_are_managed_with_unique_active_names,
            settings_update_only_values_and_time_zones_must_exist,
            business_time_zone_moves_today,
            payment_references_stop_double_payments,
            vendor_payments_split_over_invoices_and_never_overpay,
            concurrent_vendor_payments_never_overpay,
            concurrent_payments_with_one_reference_have_one_winner,
            due_soon_payables_and_overpaid_invoices,
            gstins_are_kept_upper_cased_and_unique_among_active_vendors,
            licence_status_filters_and_alerts_follow_today,
            expired_licences_block_invoices_only_under_block,
            aging_buckets_what_was_owed_on_the_day,
            vendor_statements_open_run_and_close,
            aging_and_statements_page_over_their_whole_answer,
            todays_aging_pages_are_the_whole_aging_cut,
            todays_aging_page_with_many_future_invoices_is_the_whole_cut,
            time_zone_changes_refile_payments_by_business_day,
            dashboard_figures_follow_d12,
            audit_log_records_writes_with_reasons,
            idempotent_creates_replay_and_refuse_clashes,
            parallel_idempotent_retries_create_one_record,
            concurrent_payments_sum_exactly,
            mixed_payments_on_one_vendor_all_succeed_and_sum_exactly,
            writes_whose_callers_go_away_leave_every_answer_true,
            concurrent_invoice_numbers_have_one_winner,
            profile_and_password_change_follow_d24,
            token_secret_is_kept_in_the_store,
            exports_read_in_id_batches_with_the_list_filters,
            imports_keep_paid_totals_and_unique_numbers,
            paid_totals_stay_within_the_largest_amount,
            aggregates_stay_exact_beyond_sixty_four_bits,
            users_are_given_no_role_beyond_their_creator,
            policies_give_no_permission_beyond_their_author,
            reductions_revoke_older_tokens_at_once,
            demotions_racing_sign_ins_leave_no_stale_admin_token,
            throttled_sign_ins_write_nothing_and_right_passwords_pass,
            wrong_current_passwords_count_as_failed_sign_ins,
            changing_the_email_does_not_start_the_guesses_again,
            credits_are_claimed_decided_replaced_deleted_and_restored,
            credit_list_filters_and_orders,
            credit_permissions_follow_the_seeded_policy,
            credits_set_against_bills_lower_what_is_owed_everywhere,
            concurrent_applications_never_apply_more_than_accepted,
            a_credit_applied_without_an_amount_takes_what_is_owed,
            imported_credits_count_as_written_ones,
            invoice_files_import_all_or_nothing,
            every_row_error_is_reported_at_once,
            vendor_files_and_reports_import_back,
            templates_and_workbooks_import,
            imports_are_idempotent_and_race_safely,
            racing_vendor_imports_create_each_vendor_once,
            statements_match_lines_and_every_action_keeps_the_counts,
            concurrent_uploads_match_a_payment_once,
            bad_statements_are_refused_and_statements_are_for_admins,
            statements_show_payments_to_their_readers_and_deletes_free_lines,
            writes_announce_their_records_and_refusals_nothing,
            concurrent_writes_announce_once_each_in_increasing_ids,
            the_feed_and_webhooks_show_only_what_the_caller_may_read,
            deliveries_are_queued_once_and_claimed_by_one_server_at_a_time,
            a_webhook_with_a_backlog_leaves_the_claim_to_others,
        );
    };
    (@cases required $fresh:path; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let (store, _guard) = $fresh().await;
                $crate::conformance::cases::$case(store).await;
            }
        )*
    };
    (@cases optional $fresh:path; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some((store, _guard)) = $fresh().await else { return };
                $crate::conformance::cases::$case(store).await;
            }
        )*
    };
}
