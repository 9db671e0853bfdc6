//! The conformance cases. Each takes a fresh store and panics, with a message naming the rule,
//! when the store or the engine over it breaks a promise of the spec or the decisions.
//!
//! # Layout
//! One file per family, as the contract, the engine and the stores are split: `sessions.rs`
//! (onboarding, sign-in, tokens), `ledger.rs` (vendors, invoices, payments), `access.rs`
//! (users, the profile, roles, policies), `grants.rs` (access that cannot be widened from
//! inside, reductions that take effect at once and throttling that costs an attacker: D38 to
//! D40), `payments.rs` (references, vendor payments, what falls due: D30 to D33),
//! `reconciliation.rs` (GSTINs, drug licences, aging and statements: D34 to D37) and
//! `reports.rs` (settings, dashboard, audit, exports, idempotency, imports), `credits.rs`
//! (vendor credits, D44), `imports.rs` (imported files, D45), `bank.rs` (bank statements, D46), `events.rs` (the event
//! feed, D47) and `webhooks.rs` (webhook deliveries, D47). Every case is
//! re-exported here, where [`crate::store_conformance_tests!`] finds it by name.
//! `support.rs` holds the helpers the cases share.

mod access;
mod bank;
mod credits;
mod events;
mod grants;
mod imports;
mod ledger;
mod payments;
mod reconciliation;
mod reports;
mod sessions;
mod support;
mod webhooks;

pub use access::{
    permission_checks_answer_forbidden, permissions_resolve_from_role_and_user_policies,
    policies_are_managed_with_unique_active_names, profile_and_password_change_follow_d24,
    roles_are_managed_and_system_roles_protected, the_last_admin_and_oneself_cannot_be_removed,
    users_are_managed_with_unique_emails,
};
pub use bank::{
    bad_statements_are_refused_and_statements_are_for_admins, concurrent_uploads_match_a_payment_once,
    statements_match_lines_and_every_action_keeps_the_counts,
    statements_show_payments_to_their_readers_and_deletes_free_lines,
};
pub use credits::{
    a_credit_applied_without_an_amount_takes_what_is_owed, concurrent_applications_never_apply_more_than_accepted,
    credit_list_filters_and_orders, credit_permissions_follow_the_seeded_policy,
    credits_are_claimed_decided_replaced_deleted_and_restored, credits_set_against_bills_lower_what_is_owed_everywhere,
    imported_credits_count_as_written_ones,
};
pub use events::{
    concurrent_writes_announce_once_each_in_increasing_ids, the_feed_and_webhooks_show_only_what_the_caller_may_read,
    writes_announce_their_records_and_refusals_nothing,
};
pub use grants::{
    changing_the_email_does_not_start_the_guesses_again, demotions_racing_sign_ins_leave_no_stale_admin_token,
    policies_give_no_permission_beyond_their_author, reductions_revoke_older_tokens_at_once,
    throttled_sign_ins_write_nothing_and_right_passwords_pass, users_are_given_no_role_beyond_their_creator,
    wrong_current_passwords_count_as_failed_sign_ins,
};
pub use imports::{
    every_row_error_is_reported_at_once, imports_are_idempotent_and_race_safely, invoice_files_import_all_or_nothing,
    racing_vendor_imports_create_each_vendor_once, templates_and_workbooks_import,
    vendor_files_and_reports_import_back,
};
pub use ledger::{
    concurrent_invoice_numbers_have_one_winner, concurrent_payments_sum_exactly,
    invoice_list_filters_by_every_parameter, invoice_list_sorts_by_every_key_with_id_tie_breaks,
    invoice_status_follows_the_table_and_the_clock, invoices_enforce_active_vendors_and_unique_numbers,
    own_pharmacy_vendor_is_protected, paid_totals_stay_within_the_largest_amount,
    payment_rules_refuse_future_dates_and_inactive_invoices, payment_updates_move_amounts_between_invoices,
    payments_keep_paid_and_pending_exact, transaction_list_filters_and_sorts, vendor_list_filters_sorts_and_pages,
    vendor_totals_follow_active_invoices_and_payments, vendors_are_created_read_updated_deleted_and_restored,
};
pub use payments::{
    concurrent_payments_with_one_reference_have_one_winner, concurrent_vendor_payments_never_overpay,
    due_soon_payables_and_overpaid_invoices, mixed_payments_on_one_vendor_all_succeed_and_sum_exactly,
    payment_references_stop_double_payments, vendor_payments_split_over_invoices_and_never_overpay,
    writes_whose_callers_go_away_leave_every_answer_true,
};
pub use reconciliation::{
    aging_and_statements_page_over_their_whole_answer, aging_buckets_what_was_owed_on_the_day,
    expired_licences_block_invoices_only_under_block, gstins_are_kept_upper_cased_and_unique_among_active_vendors,
    licence_status_filters_and_alerts_follow_today, todays_aging_page_with_many_future_invoices_is_the_whole_cut,
    todays_aging_pages_are_the_whole_aging_cut, vendor_statements_open_run_and_close,
};
pub use reports::{
    aggregates_stay_exact_beyond_sixty_four_bits, audit_log_records_writes_with_reasons,
    business_time_zone_moves_today, dashboard_figures_follow_d12, exports_read_in_id_batches_with_the_list_filters,
    idempotent_creates_replay_and_refuse_clashes, imports_keep_paid_totals_and_unique_numbers,
    parallel_idempotent_retries_create_one_record, settings_update_only_values_and_time_zones_must_exist,
    time_zone_changes_refile_payments_by_business_day,
};
pub use sessions::{
    concurrent_onboarding_makes_exactly_one_admin, control_characters_never_reach_the_store,
    login_is_throttled_after_five_failures_until_the_window_passes, login_issues_a_token_with_the_spec_claims,
    login_refuses_wrong_unknown_and_inactive_alike, onboarding_creates_the_pharmacy_and_the_first_admin_once,
    parallel_failed_logins_never_pass_the_limit, token_secret_is_kept_in_the_store,
    tokens_stop_working_after_delete_or_password_change,
};
pub use webhooks::{
    a_webhook_with_a_backlog_leaves_the_claim_to_others, deliveries_are_queued_once_and_claimed_by_one_server_at_a_time,
};

use support::*;
