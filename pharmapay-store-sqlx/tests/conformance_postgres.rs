//! The core's store conformance suite over PostgreSQL, each case in a fresh database.
//!
//! `pharmapay_core::store_conformance_tests!` cannot skip a case, and these must pass without
//! a server (printing that they skip) when `PHARMAPAY_TEST_POSTGRES_URL` is unset. So the cases
//! are listed here, and `every_core_case_is_listed` fails as soon as the core's list and this
//! one differ.

mod common;

macro_rules! postgres_conformance_tests {
    ($($case:ident),* $(,)?) => {
        /// The cases run here, in the core's order.
        const CASES: &[&str] = &[$(stringify!($case)),*];

        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some((store, _database)) = common::fresh_postgres().await else { return };
                pharmapay_core::conformance::cases::$case(store).await;
            }
        )*
    };
}

postgres_conformance_tests!(
    onboarding_creates_the_pharmacy_and_the_first_admin_once,
    concurrent_onboarding_makes_exactly_one_admin,
    login_issues_a_token_with_the_spec_claims,
    login_refuses_wrong_unknown_and_inactive_alike,
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
    dashboard_figures_follow_d12,
    audit_log_records_writes_with_reasons,
    idempotent_creates_replay_and_refuse_clashes,
    parallel_idempotent_retries_create_one_record,
    concurrent_payments_sum_exactly,
    concurrent_invoice_numbers_have_one_winner,
    profile_and_password_change_follow_d24,
    token_secret_is_kept_in_the_store,
    exports_read_in_id_batches_with_the_list_filters,
    imports_keep_paid_totals_and_unique_numbers,
    paid_totals_stay_within_the_largest_amount,
    aggregates_stay_exact_beyond_sixty_four_bits,
);

#[test]
fn every_core_case_is_listed() {
    let source = include_str!("../../pharmapay-core/src/conformance/mod.rs");
    let start = source.find("@cases $fresh;").expect("the core macro lists its cases after `@cases $fresh;`");
    let list = &source[start + "@cases $fresh;".len()..];
    let list = &list[..list.find(");").expect("the case list ends with `);`")];
    let core_cases: Vec<&str> = list.split(',').map(str::trim).filter(|name| !name.is_empty()).collect();
    assert_eq!(core_cases, CASES, "the PostgreSQL case list must match the core's store_conformance_tests!");
}
