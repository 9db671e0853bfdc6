//! The operations of a resource whose records the shared handlers of [`crate::routes::Call`]
//! list, create, read, replace, delete and restore, written once: each one's id, summary,
//! parameters, answers and errors follow from the record's name, so a resource states only its
//! texts and what it adds.

use std::borrow::Cow;

use super::components::IDEMPOTENCY_KEY;
use super::operation::{
    Operation, created, get_link, id_links, json_response, no_content, page_size, path_id, restore_link,
};
use super::{Json, PAGE, Schema, schema, schema_ref};
use crate::decode::ReasonBody;

/// A resource whose records are kept by the shared handlers: vendors, invoices, transactions,
/// users, roles and policies.
///
/// Where a resource's texts follow the shared wording (vendors, invoices, transactions), its
/// operations take a note that the wording carries; the others take their whole description,
/// which follows the guard's sentence.
pub struct Crud {
    /// The collection's path, such as `/api/vendors`.
    pub base: &'static str,
    /// The operations' tag, which also names the collection in the list's id: `Vendors`.
    pub tag: &'static str,
    /// A record, in words: `vendor`.
    pub singular: &'static str,
    /// What must be active for a restore, if anything: `vendor` for an invoice.
    pub restore_parent: Option<&'static str>,
}

impl Crud {
    /// The record's name in operation ids, each word capitalized: `Vendor`, `VendorCredit`.
    fn name(&self) -> String {
        self.singular.split(' ').map(capitalized).collect()
    }

    /// An operation of the resource's own `id` under its tag.
    pub fn operation(
        &self,
        id: &'static str,
        summary: &'static str,
        description: impl Into<Cow<'static, str>>,
    ) -> Operation {
        Operation::new(id, self.tag, summary, description)
    }

    /// The `{id}` path parameter.
    pub fn id(&self) -> Json {
        path_id("id", &format!("{} id.", self.name()))
    }

    /// `GET base` answering every record as an array of `D`, which `ok` describes.
    pub fn list<D: Schema>(&self, description: &'static str, ok: &'static str) -> Operation {
        self.list_operation(description).ok(ok, schema::array(schema_ref::<D>())).errors(&[401, 403, 503])
    }

    /// `GET base` answering a page `P` (D8) of `default_size` records unless asked otherwise;
    /// the resource adds its filters and sort.
    pub fn page<P: Schema>(&self, description: &'static str, default_size: u32) -> Operation {
        let ok = format!("A page of {}.", self.tag.to_lowercase());
        self.list_operation(description)
            .ok(ok, schema_ref::<P>())
            .parameter(PAGE)
            .parameter(page_size(default_size))
            .errors(&[400, 401, 403, 503])
    }

    fn list_operation(&self, description: &'static str) -> Operation {
        let tag = self.tag;
        Operation::new(format!("list{tag}"), tag, format!("List {}", tag.to_lowercase()), description)
    }

    /// `POST base`, answering `D` from the body `B`; `note` comes before the idempotency
    /// sentence.
    pub fn create<B: Schema, D: Schema>(&self, note: &str) -> Operation {
        let base = self.base;
        self.create_described::<B, D>(format!(
            ". Answers 201 with `Location: {base}/<id>` (D9). {note}Accepts an `Idempotency-Key` (D23)."
        ))
    }

    /// `POST base`, answering `D` from the body `B`; `lead` comes before the sentences on the 201
    /// and the idempotency key.
    pub fn create_after<B: Schema, D: Schema>(&self, lead: &str) -> Operation {
        let base = self.base;
        self.create_described::<B, D>(format!(
            "{lead} Answers 201 with `Location: {base}/<id>` (D9). Accepts an `Idempotency-Key` (D23)."
        ))
    }

    fn create_described<B: Schema, D: Schema>(&self, description: String) -> Operation {
        let (name, singular) = (self.name(), self.singular);
        Operation::new(format!("create{name}"), self.tag, format!("Create a {singular}"), description)
            .parameter(IDEMPOTENCY_KEY)
            .body::<B>()
            .response("201", created(&format!("The {singular} was created."), schema_ref::<D>(), id_links(&name)))
            .errors(&[400, 401, 403, 409, 413, 415, 422, 503])
    }

    /// `GET base/{id}`, answering `D`.
    pub fn get<D: Schema>(&self, note: &str) -> Operation {
        self.get_described::<D>(with_note(". 404 when missing or soft-deleted.", note))
    }

    /// `GET base/{id}`, answering `D`, in the resource's own words.
    pub fn get_described<D: Schema>(&self, description: impl Into<Cow<'static, str>>) -> Operation {
        let (name, singular) = (self.name(), self.singular);
        Operation::new(format!("get{name}"), self.tag, format!("Get a {singular}"), description)
            .path_parameter(self.id())
            .ok(format!("The {singular}."), schema_ref::<D>())
            .errors(&[400, 401, 403, 404, 503])
    }

    /// `PUT base/{id}` from the body `B`, answering `D`.
    pub fn update<B: Schema, D: Schema>(&self, note: &str) -> Operation {
        self.update_described::<B, D>(with_note(
            ". Full replacement: the body is the create body, all fields as on create (D14). 404 when missing or \
             soft-deleted.",
            note,
        ))
    }

    /// `PUT base/{id}` from the body `B`, answering `D`, in the resource's own words.
    pub fn update_described<B: Schema, D: Schema>(&self, description: impl Into<Cow<'static, str>>) -> Operation {
        let (name, singular) = (self.name(), self.singular);
        Operation::new(format!("update{name}"), self.tag, format!("Replace a {singular}"), description)
            .path_parameter(self.id())
            .body::<B>()
            .ok(format!("The updated {singular}."), schema_ref::<D>())
            .errors(&[400, 401, 403, 404, 409, 413, 415, 503])
    }

    /// `DELETE base/{id}` with an optional reason.
    pub fn delete(&self, note: &str) -> Operation {
        self.delete_described(with_note(
            ". Soft delete: the record gets `isActive = false`. The optional body `{reason}` is kept in the audit log \
             (D16, D22).",
            note,
        ))
    }

    /// `DELETE base/{id}` with an optional reason, in the resource's own words.
    pub fn delete_described(&self, description: impl Into<Cow<'static, str>>) -> Operation {
        let (name, singular) = (self.name(), self.singular);
        Operation::new(format!("delete{name}"), self.tag, format!("Delete a {singular}"), description)
            .path_parameter(self.id())
            .optional_body::<ReasonBody>()
            .response("204", no_content("Deleted; no body.").with("links", restore_link(&name)))
            .errors(&[400, 401, 403, 404, 413, 415, 503])
    }

    /// `POST base/{id}/restore`, answering `D`; 409 when the record's unique value is taken.
    pub fn restore<D: Schema>(&self) -> Operation {
        let singular = self.singular;
        let mut description = format!(
            ". Turns a soft-deleted {singular} active again (D15). 404 when missing or already active. 409 when its \
             unique value is now taken by an active record."
        );
        if let Some(parent) = self.restore_parent {
            description.push_str(&format!(" 400 while its {parent} is inactive."));
        }
        self.restore_described::<D>(description).errors(&[409])
    }

    /// `POST base/{id}/restore`, answering `D`, in the resource's own words; a resource whose
    /// restore can meet a taken value adds the 409.
    pub fn restore_described<D: Schema>(&self, description: impl Into<Cow<'static, str>>) -> Operation {
        let (name, singular) = (self.name(), self.singular);
        let ok = json_response(format!("The restored {singular}."), schema_ref::<D>()).with("links", get_link(&name));
        Operation::new(format!("restore{name}"), self.tag, format!("Restore a deleted {singular}"), description)
            .path_parameter(self.id())
            .response("200", ok)
            .errors(&[400, 401, 403, 404, 503])
    }
}

/// A change to the links between a record and records of another kind (D19): a user's or a
/// role's policies, a policy's permissions.
#[derive(Clone, Copy, Debug)]
pub enum Link {
    /// `POST`: attach a policy.
    Attach,
    /// `DELETE`: detach a policy.
    Detach,
    /// `POST`: add a permission.
    Add,
    /// `DELETE`: remove a permission.
    Remove,
}

impl Link {
    /// The verb, the preposition before the record and the answer's description.
    fn words(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Link::Attach => ("Attach", "to", "Attached; no body."),
            Link::Detach => ("Detach", "from", "Detached; no body."),
            Link::Add => ("Add", "to", "Added; no body."),
            Link::Remove => ("Remove", "from", "Removed; no body."),
        }
    }
}

impl Crud {
    /// `base/{id}/.../{other_id}`: `link` between the record and the one the path parameter
    /// `other_id` (`policyId`) names; 204.
    pub fn link(&self, link: Link, other_id: &'static str, description: &'static str) -> Operation {
        let (verb, preposition, done) = link.words();
        let other = other_id.trim_end_matches("Id");
        let other_name = capitalized(other);
        let (name, singular) = (self.name(), self.singular);
        let id = format!("{}{name}{other_name}", verb.to_lowercase());
        Operation::new(id, self.tag, format!("{verb} a {other} {preposition} a {singular}"), description)
            .path_parameter(self.id())
            .path_parameter(path_id(other_id, &format!("{other_name} id.")))
            .response("204", no_content(done))
            .errors(&[400, 401, 403, 404, 503])
    }
}

/// `word` with its first letter upper-cased: `Vendor`.
fn capitalized(word: &str) -> String {
    let mut capitalized = word.to_owned();
    capitalized[..1].make_ascii_uppercase();
    capitalized
}

/// `text` followed by `note`, if there is one.
fn with_note(text: &str, note: &str) -> String {
    if note.is_empty() { text.to_owned() } else { format!("{text} {note}") }
}
