//! API tests: real servers on 127.0.0.1:0, real HTTP requests. One binary, one helpers module.

mod helpers;

mod access;
mod auth;
mod bank_statements;
mod branches;
mod catalogue;
mod concurrency;
mod conditions;
mod credits;
mod dashboard;
mod errors;
mod events;
mod faults;
mod idempotency;
mod imports;
mod invoices;
mod onboarding;
mod openapi;
mod people;
mod permission_first;
mod reconciliation;
mod reports;
mod server;
mod transactions;
mod vendor_payments;
mod vendors;
mod walkthrough;
mod webhooks;
