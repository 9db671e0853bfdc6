//! The conformance cases. Each takes a fresh store and panics, with a message naming the rule,
//! when the store or the engine over it breaks a promise of the spec or the decisions.
//!
//! # Layout
//! One file per family, named as the family is in core and in each store: `sessions.rs`
//! (onboarding, sign-in, tokens, throttling: D20, D21, D39, D40), `vendors.rs` (vendors, GSTINs,
//! licences: D11, D14, D36, D37), `invoices.rs` (invoices, their statuses, what falls due: D4,
//! D5, D10, D32, D33), `transactions.rs` (payments, their paid totals and references: D1,
//! D10, D30), `vendor_payments.rs` (one payment over several invoices, D31), `credits.rs`
//! (vendor credits, D44), `access.rs` (users, the profile, roles, policies, grants that cannot
//! be widened and reductions that take effect at once: D18, D19, D24, D38, D39),
//! `idempotency.rs` (idempotent creates, D23), `reports.rs` (settings, dashboard, audit,
//! exports, bulk loads, the aging and statements: D3, D12, D22, D26, D34, D35, D43),
//! `imports.rs` (imported files, D45), `bank.rs` (bank statements, D46), `branches.rs` (the chain's branches, D49), `events.rs` (the event
//! feed, D47) and `webhooks.rs` (webhook deliveries, D47). Every case is re-exported here, where
//! [`crate::store_conformance_tests!`] finds it by name. `support.rs` holds the helpers the
//! cases share.

mod access;
mod bank;
mod branches;
mod credits;
mod events;
mod idempotency;
mod imports;
mod invoices;
mod reports;
mod sessions;
mod support;
mod transactions;
mod vendor_payments;
mod vendors;
mod webhooks;

pub use access::{
    demotions_racing_sign_ins_leave_no_stale_admin_token, permission_checks_answer_forbidden,
    permissions_resolve_from_role_and_user_policies, policies_are_managed_with_unique_active_names,
    policies_give_no_permission_beyond_their_author, profile_and_password_change_follow_d24,
    reductions_revoke_older_tokens_at_once, roles_are_managed_and_system_roles_protected,
    the_last_admin_and_oneself_cannot_be_removed, user_scopes_are_kept_bounded_and_revoked_when_narrowed,
    users_are_given_no_role_beyond_their_creator, users_are_managed_with_unique_emails,
};
pub use bank::{
    bad_statements_are_refused_and_statements_are_for_admins, concurrent_uploads_match_a_payment_once,
    statements_match_lines_and_every_action_keeps_the_counts, statements_match_the_payments_of_their_branch,
    statements_show_payments_to_their_readers_and_deletes_free_lines,
};
pub use branches::{
    a_store_user_sees_and_changes_only_their_branches_credits,
    a_store_user_sees_and_records_only_their_branches_payments,
    a_store_user_sees_and_writes_only_their_branches_invoices, branch_codes_are_unique_among_active_branches,
    branch_fields_are_checked_and_the_list_is_ordered, branch_permissions_follow_the_seeded_policy,
    branches_are_created_read_updated_deleted_and_restored, concurrent_branch_codes_have_one_winner,
    credits_are_set_against_their_own_branch, imported_invoices_name_their_branch,
    invoices_belong_to_a_branch_and_move_with_their_payments, the_head_office_is_there_from_the_first_start,
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
pub use idempotency::{idempotent_creates_replay_and_refuse_clashes, parallel_idempotent_retries_create_one_record};
pub use imports::{
    every_row_error_is_reported_at_once, imports_are_idempotent_and_race_safely, invoice_files_import_all_or_nothing,
    racing_vendor_imports_create_each_vendor_once, templates_and_workbooks_import,
    vendor_files_and_reports_import_back,
};
pub use invoices::{
    concurrent_invoice_numbers_have_one_winner, due_soon_payables_and_overpaid_invoices,
    expired_licences_block_invoices_only_under_block, invoice_list_filters_by_every_parameter,
    invoice_list_sorts_by_every_key_with_id_tie_breaks, invoice_status_follows_the_table_and_the_clock,
    invoices_enforce_active_vendors_and_unique_numbers,
};
pub use reports::{
    aggregates_stay_exact_beyond_sixty_four_bits, aging_and_statements_page_over_their_whole_answer,
    aging_buckets_what_was_owed_on_the_day, audit_log_records_writes_with_reasons, business_time_zone_moves_today,
    dashboard_figures_follow_d12, exports_read_in_id_batches_with_the_list_filters,
    imports_keep_paid_totals_and_unique_numbers, settings_update_only_values_and_time_zones_must_exist,
    time_zone_changes_refile_payments_by_business_day, todays_aging_page_with_many_future_invoices_is_the_whole_cut,
    todays_aging_pages_are_the_whole_aging_cut, vendor_statements_open_run_and_close,
};
pub use sessions::{
    changing_the_email_does_not_start_the_guesses_again, concurrent_onboarding_makes_exactly_one_admin,
    control_characters_never_reach_the_store, login_is_throttled_after_five_failures_until_the_window_passes,
    login_issues_a_token_with_the_spec_claims, login_refuses_wrong_unknown_and_inactive_alike,
    onboarding_creates_the_pharmacy_and_the_first_admin_once, parallel_failed_logins_never_pass_the_limit,
    throttled_sign_ins_write_nothing_and_right_passwords_pass, token_secret_is_kept_in_the_store,
    tokens_stop_working_after_delete_or_password_change, wrong_current_passwords_count_as_failed_sign_ins,
};
pub use transactions::{
    concurrent_payments_sum_exactly, concurrent_payments_with_one_reference_have_one_winner,
    paid_totals_stay_within_the_largest_amount, payment_references_stop_double_payments,
    payment_rules_refuse_future_dates_and_inactive_invoices, payment_updates_move_amounts_between_invoices,
    payments_keep_paid_and_pending_exact, transaction_list_filters_and_sorts,
    writes_whose_callers_go_away_leave_every_answer_true,
};
pub use vendor_payments::{
    concurrent_vendor_payments_never_overpay, mixed_payments_on_one_vendor_all_succeed_and_sum_exactly,
    vendor_payments_split_over_invoices_and_never_overpay,
};
pub use vendors::{
    gstins_are_kept_upper_cased_and_unique_among_active_vendors, licence_status_filters_and_alerts_follow_today,
    own_pharmacy_vendor_is_protected, vendor_list_filters_sorts_and_pages,
    vendor_totals_follow_active_invoices_and_payments, vendors_are_created_read_updated_deleted_and_restored,
};
pub use webhooks::{
    a_webhook_with_a_backlog_leaves_the_claim_to_others, deliveries_are_queued_once_and_claimed_by_one_server_at_a_time,
};

use support::*;
