//! What a request's fields got wrong, and the kinds of record an answer can name.
//!
//! [`FieldErrors`] carries messages keyed by field path, [`Entity`] names a kind of record in
//! 404s and conflicts, and [`RuleBroken`] a rule that refused a well-formed request (400).

use std::collections::BTreeMap;
use std::fmt;

/// The kinds of record the engine manages, used to say which one was not found or clashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entity {
    /// A vendor.
    Vendor,
    /// An invoice.
    Invoice,
    /// A payment transaction.
    Transaction,
    /// A user account.
    User,
    /// A role.
    Role,
    /// A permission.
    Permission,
    /// A policy.
    Policy,
    /// An application setting.
    Setting,
    /// An audit-log entry.
    AuditEntry,
    /// A vendor payment over several invoices (D31).
    VendorPayment,
    /// A vendor credit (D44).
    VendorCredit,
    /// One application of a vendor credit to an invoice (D44).
    CreditApplication,
    /// An uploaded bank statement (D46).
    BankStatement,
    /// One line of a bank statement (D46).
    BankLine,
    /// A webhook (D47).
    Webhook,
    /// One event's delivery to a webhook (D47).
    WebhookDelivery,
    /// A branch of the chain (D49).
    Branch,
}

impl Entity {
    /// The entity's name as the API and the audit log write it.
    pub fn name(self) -> &'static str {
        match self {
            Entity::Vendor => "Vendor",
            Entity::Invoice => "Invoice",
            Entity::Transaction => "Transaction",
            Entity::User => "User",
            Entity::Role => "Role",
            Entity::Permission => "Permission",
            Entity::Policy => "Policy",
            Entity::Setting => "Setting",
            Entity::AuditEntry => "AuditEntry",
            Entity::VendorPayment => "VendorPayment",
            Entity::VendorCredit => "VendorCredit",
            Entity::CreditApplication => "CreditApplication",
            Entity::BankStatement => "BankStatement",
            Entity::BankLine => "BankLine",
            Entity::Webhook => "Webhook",
            Entity::WebhookDelivery => "WebhookDelivery",
            Entity::Branch => "Branch",
        }
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Validation messages keyed by field path.
///
/// Paths are camelCase and dotted as the API spells them (`adminUser.password`, `amount`);
/// query parameters appear under their own names (`pageSize`). D6.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldErrors {
    fields: BTreeMap<String, Vec<String>>,
}

impl FieldErrors {
    /// An empty set of errors.
    pub fn new() -> Self {
        Self::default()
    }

    /// A set holding one message for one field.
    pub fn single(field: impl Into<String>, message: impl Into<String>) -> Self {
        let mut errors = Self::new();
        errors.add(field, message);
        errors
    }

    /// Records one more message for `field`.
    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.fields.entry(field.into()).or_default().push(message.into());
    }

    /// Keeps the value of `result`, or records its error under `field` and returns `None`.
    pub fn check<T, E: fmt::Display>(&mut self, field: &str, result: std::result::Result<T, E>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.add(field, error.to_string());
                None
            }
        }
    }

    /// Moves every message of `other` in, under the same paths.
    pub fn merge(&mut self, other: FieldErrors) {
        for (field, messages) in other.fields {
            self.fields.entry(field).or_default().extend(messages);
        }
    }

    /// Moves every message of `other` in, prefixing its paths with `prefix.`.
    pub fn merge_prefixed(&mut self, prefix: &str, other: FieldErrors) {
        for (field, messages) in other.fields {
            let path = format!("{prefix}.{field}");
            self.fields.entry(path).or_default().extend(messages);
        }
    }

    /// True when no message was recorded.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// True when `field` has at least one message.
    pub fn contains(&self, field: &str) -> bool {
        self.fields.contains_key(field)
    }

    /// The messages by field path, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.fields.iter().map(|(field, messages)| (field.as_str(), messages.as_slice()))
    }
}

impl fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (field, messages) in &self.fields {
            for message in messages {
                if !first {
                    f.write_str("; ")?;
                }
                first = false;
                write!(f, "{field}: {message}")?;
            }
        }
        Ok(())
    }
}

/// A business rule that refused an otherwise well-formed request (answered as 400).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleBroken {
    /// Onboarding was already completed.
    AlreadyOnboarded,
    /// System roles cannot be deleted.
    SystemRoleDelete,
    /// System roles cannot be renamed.
    SystemRoleRename,
    /// The OwnPharmacy vendor cannot be deleted (D14).
    OwnPharmacyDelete,
    /// A vendor cannot be changed to or from OwnPharmacy (D14).
    OwnPharmacyType,
    /// A user cannot delete their own account (D18).
    DeleteSelf,
    /// The last active admin cannot be deleted or moved off the Admin role (D18).
    LastAdmin,
    /// A record cannot be restored while its parent is inactive (D15).
    ParentInactive(Entity),
    /// The current password given for a password change was wrong (D24).
    WrongCurrentPassword,
    /// A payment would bring its invoice's paid total above the largest amount (D1).
    PaidTotalTooLarge,
    /// Only a `Suggested` bank line can be confirmed (D46).
    LineNotSuggested,
    /// A payment is recorded only from a bank line that holds none (D46).
    LineHoldsPayment,
    /// The head office cannot be deleted (D49).
    HeadOfficeDelete,
}

impl RuleBroken {
    /// A sentence a person can read.
    pub fn message(self) -> String {
        match self {
            RuleBroken::AlreadyOnboarded => "Setup has already been completed.".into(),
            RuleBroken::SystemRoleDelete => "System roles cannot be deleted.".into(),
            RuleBroken::SystemRoleRename => "System roles cannot be renamed.".into(),
            RuleBroken::OwnPharmacyDelete => "The pharmacy's own vendor record cannot be deleted.".into(),
            RuleBroken::OwnPharmacyType => "A vendor cannot be changed to or from OwnPharmacy.".into(),
            RuleBroken::DeleteSelf => "You cannot delete your own account.".into(),
            RuleBroken::LastAdmin => "The last active admin cannot be deleted or moved off the Admin role.".into(),
            RuleBroken::ParentInactive(parent) => {
                format!("The record cannot be restored while its {} is inactive.", parent.name().to_lowercase())
            }
            RuleBroken::WrongCurrentPassword => "The current password is not correct.".into(),
            RuleBroken::PaidTotalTooLarge => {
                "The invoice's paid total would exceed 999999999999.9999, the largest amount.".into()
            }
            RuleBroken::LineNotSuggested => "Only a line whose status is Suggested can be confirmed.".into(),
            RuleBroken::LineHoldsPayment => {
                "The line is already matched to a payment; unmatch it before recording one from it.".into()
            }
            RuleBroken::HeadOfficeDelete => "The head office cannot be deleted.".into(),
        }
    }
}
