//! Who sees which branches (D49): each user's scope, all branches or a list of them, and the
//! rules that keep anyone from giving a scope beyond their own (D38) or keeping a token after
//! theirs was narrowed (D39).

use crate::base::faults::{StoreError, StoreResult};
use crate::error::FieldErrors;
use crate::ids::BranchId;

pub use crate::base::permissions::ScopeNeed;

/// The branches a user sees and writes in: all of them, or a non-empty list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every branch (`branchIds: null`, the token claim `"*"`): admins always, and every user
    /// kept before branches existed.
    #[default]
    All,
    /// Only these, in id order, each once.
    Branches(Vec<BranchId>),
}

impl Scope {
    /// A scope of the branches listed, in id order.
    pub fn of(ids: impl IntoIterator<Item = BranchId>) -> Self {
        let mut ids: Vec<BranchId> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        Scope::Branches(ids)
    }

    /// Whether the scope holds `branch`.
    pub fn contains(&self, branch: BranchId) -> bool {
        match self {
            Scope::All => true,
            Scope::Branches(ids) => ids.binary_search(&branch).is_ok(),
        }
    }

    /// Whether this is every branch.
    pub fn is_all(&self) -> bool {
        matches!(self, Scope::All)
    }

    /// The branches listed; `None` for all.
    pub fn ids(&self) -> Option<&[BranchId]> {
        match self {
            Scope::All => None,
            Scope::Branches(ids) => Some(ids),
        }
    }

    /// The one branch listed, when the scope lists exactly one: where a create that names no
    /// branch goes (D49).
    pub fn only(&self) -> Option<BranchId> {
        match self.ids() {
            Some([only]) => Some(*only),
            _ => None,
        }
    }

    /// Whether every branch of `other` is in this scope.
    pub fn covers(&self, other: &Scope) -> bool {
        match (self, other) {
            (Scope::All, _) => true,
            (Scope::Branches(_), Scope::All) => false,
            (Scope::Branches(_), Scope::Branches(ids)) => ids.iter().all(|id| self.contains(*id)),
        }
    }

    /// What `other` holds beyond this scope: `None` when nothing.
    pub fn lacks(&self, other: &Scope) -> Option<BeyondScope> {
        match (self, other) {
            (Scope::All, _) => None,
            (Scope::Branches(_), Scope::All) => Some(BeyondScope::All),
            (Scope::Branches(_), Scope::Branches(ids)) => {
                let missing: Vec<BranchId> = ids.iter().copied().filter(|id| !self.contains(*id)).collect();
                (!missing.is_empty()).then_some(BeyondScope::Branches(missing))
            }
        }
    }

    /// The token claim `branches` (D49): `"*"` or the list of ids.
    pub fn claim(&self) -> serde_json::Value {
        match self {
            Scope::All => serde_json::Value::from("*"),
            Scope::Branches(ids) => ids.iter().map(|id| id.get()).collect(),
        }
    }

    /// Reads the token claim `branches`: `"*"` or a non-empty list of positive ids; a token
    /// issued before scopes were kept has none and is of a user with every branch.
    pub fn from_claim(claim: Option<&serde_json::Value>) -> Option<Self> {
        match claim {
            None => Some(Scope::All),
            Some(serde_json::Value::String(star)) if star == "*" => Some(Scope::All),
            Some(serde_json::Value::Array(items)) if !items.is_empty() => {
                let ids: Option<Vec<BranchId>> =
                    items.iter().map(|item| item.as_i64().filter(|id| *id >= 1).map(BranchId)).collect();
                ids.map(Scope::of)
            }
            Some(_) => None,
        }
    }

    /// The scope as `branchIds` shows it: `null` for all, else the list.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Scope::All => serde_json::Value::Null,
            Scope::Branches(ids) => ids.iter().map(|id| id.get()).collect(),
        }
    }
}

/// What a scope holds beyond another: every branch, or these branches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BeyondScope {
    /// The scope of all branches.
    All,
    /// These branches, in id order.
    Branches(Vec<BranchId>),
}

/// A branch a scope names, as the store found it under its lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchFacts {
    /// The branch.
    pub id: BranchId,
    /// Its code.
    pub code: String,
    /// Whether it is active.
    pub is_active: bool,
}

/// The codes of `missing`, as `facts` has them (the id itself for a branch it lacks).
fn need_of(missing: BeyondScope, facts: &[BranchFacts]) -> ScopeNeed {
    match missing {
        BeyondScope::All => ScopeNeed::All,
        BeyondScope::Branches(ids) => ScopeNeed::Codes(
            ids.iter()
                .map(|id| {
                    facts.iter().find(|fact| fact.id == *id).map_or_else(|| id.get().to_string(), |f| f.code.clone())
                })
                .collect(),
        ),
    }
}

/// Checks a `branchIds` list as a body gives it (D49): at least one id, each listed once.
///
/// # Errors
/// The message under `branchIds`.
pub fn check_listed(ids: &[BranchId]) -> Result<Scope, FieldErrors> {
    if ids.is_empty() {
        return Err(FieldErrors::single("branchIds", "must list at least one branch, or be null for every branch"));
    }
    for (index, id) in ids.iter().enumerate() {
        if ids[..index].contains(id) {
            return Err(FieldErrors::single("branchIds", format!("lists branch {} more than once", id.get())));
        }
    }
    Ok(Scope::of(ids.iter().copied()))
}

/// A user's scope as a write leaves it (D49), decided under the store's lock: `requested` is
/// what the body gives (`None`: unchanged, or on a create the caller's own scope, which the
/// engine filled in), `held` what the user holds now (`None` on a create), `admin` whether the
/// user's role is (or becomes) Admin, `caller` the scope of whoever writes, and `facts` the
/// branches the requested and held scopes name, as loaded and locked.
///
/// An Admin's scope is all branches: a list is a 400, and moving a user onto the Admin role
/// makes it all. Each listed branch must exist and be active, unless the user already holds it
/// (so a deleted branch may stay in a list). A caller whose scope is not all branches can give
/// no scope beyond their own, nor change a user whose scope reaches beyond theirs (D38): a 403
/// naming what is missing.
///
/// # Errors
/// `Invalid` on `branchIds`; `OutOfScope` naming what the caller lacks.
pub fn plan_scope(
    requested: Option<&Scope>,
    held: Option<&Scope>,
    admin: bool,
    caller: &Scope,
    facts: &[BranchFacts],
) -> StoreResult<Scope> {
    if let Some(held) = held {
        check_reach(caller, held, facts)?;
    }
    let scope = match (requested, admin) {
        (Some(Scope::Branches(_)), true) => {
            return Err(StoreError::Invalid(FieldErrors::single(
                "branchIds",
                "must be null for a user with the Admin role, who sees every branch",
            )));
        }
        (_, true) => Scope::All,
        (Some(requested), false) => requested.clone(),
        (None, false) => held.cloned().unwrap_or_default(),
    };
    if let Scope::Branches(ids) = &scope {
        for id in ids {
            let kept = held.is_some_and(|held| held.ids().is_some_and(|ids| ids.contains(id)));
            let usable = facts.iter().any(|fact| fact.id == *id && fact.is_active);
            if !kept && !usable {
                let message = format!("names branch {}, which is not an active branch", id.get());
                return Err(StoreError::Invalid(FieldErrors::single("branchIds", message)));
            }
        }
    }
    if let Some(missing) = caller.lacks(&scope) {
        return Err(StoreError::OutOfScope(need_of(missing, facts)));
    }
    Ok(scope)
}

/// A caller may change, delete or restore a user only when the user's scope is within theirs
/// (D38 extended by D49); admins (a scope of all branches) are not limited.
///
/// # Errors
/// `OutOfScope` naming what the user holds beyond the caller.
pub fn check_reach(caller: &Scope, user: &Scope, facts: &[BranchFacts]) -> StoreResult<()> {
    match caller.lacks(user) {
        None => Ok(()),
        Some(missing) => Err(StoreError::OutOfScope(need_of(missing, facts))),
    }
}

/// Whether a change from `before` to `after` narrows a scope (D39 extended by D49): a branch
/// taken out of the list, or all branches becoming a list. Narrowing revokes the user's older
/// tokens; widening takes effect at the next sign-in.
pub fn narrows(before: &Scope, after: &Scope) -> bool {
    !after.covers(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(list: &[(i64, &str, bool)]) -> Vec<BranchFacts> {
        list.iter()
            .map(|(id, code, active)| BranchFacts { id: BranchId(*id), code: (*code).into(), is_active: *active })
            .collect()
    }

    fn ids(list: &[i64]) -> Scope {
        Scope::of(list.iter().copied().map(BranchId))
    }

    fn invalid(result: StoreResult<Scope>) -> bool {
        matches!(result, Err(StoreError::Invalid(errors)) if errors.contains("branchIds"))
    }

    #[test]
    fn scopes_contain_cover_and_name_their_claim() {
        let some = ids(&[5, 2]);
        assert_eq!(some.ids(), Some(&[BranchId(2), BranchId(5)][..]));
        assert!(some.contains(BranchId(5)) && !some.contains(BranchId(3)));
        assert!(Scope::All.covers(&some) && !some.covers(&Scope::All) && some.covers(&ids(&[2])));
        assert_eq!(some.claim(), serde_json::json!([2, 5]));
        assert_eq!(Scope::All.claim(), serde_json::json!("*"));
        assert_eq!(Scope::from_claim(Some(&serde_json::json!([5, 2]))), Some(some.clone()));
        assert_eq!(Scope::from_claim(None), Some(Scope::All), "a token from before scopes");
        for bad in [serde_json::json!([]), serde_json::json!(["2"]), serde_json::json!([0]), serde_json::json!("all")] {
            assert_eq!(Scope::from_claim(Some(&bad)), None, "{bad}");
        }
        assert_eq!((ids(&[4]).only(), some.only(), Scope::All.only()), (Some(BranchId(4)), None, None));
        assert_eq!(Scope::All.json(), serde_json::Value::Null);
    }

    #[test]
    fn a_list_names_each_branch_once() {
        assert!(check_listed(&[]).is_err());
        assert!(check_listed(&[BranchId(2), BranchId(2)]).is_err());
        assert_eq!(check_listed(&[BranchId(3), BranchId(2)]).unwrap(), ids(&[2, 3]));
    }

    #[test]
    fn admins_see_every_branch() {
        let known = facts(&[(2, "AND", true)]);
        assert!(invalid(plan_scope(Some(&ids(&[2])), None, true, &Scope::All, &known)));
        assert_eq!(plan_scope(None, Some(&ids(&[2])), true, &Scope::All, &known).unwrap(), Scope::All, "promoted");
        assert_eq!(plan_scope(Some(&Scope::All), None, true, &Scope::All, &known).unwrap(), Scope::All);
    }

    #[test]
    fn listed_branches_are_active_unless_already_held() {
        let known = facts(&[(2, "AND", true), (3, "OLD", false)]);
        assert!(invalid(plan_scope(Some(&ids(&[3])), None, false, &Scope::All, &known)), "deleted");
        assert!(invalid(plan_scope(Some(&ids(&[9])), None, false, &Scope::All, &known)), "no branch");
        let kept = plan_scope(Some(&ids(&[2, 3])), Some(&ids(&[3])), false, &Scope::All, &known).unwrap();
        assert_eq!(kept, ids(&[2, 3]), "a deleted branch already held may stay");
        assert_eq!(plan_scope(None, Some(&ids(&[3])), false, &Scope::All, &known).unwrap(), ids(&[3]), "unchanged");
    }

    #[test]
    fn nobody_gives_or_changes_a_scope_beyond_their_own() {
        let known = facts(&[(2, "AND", true), (4, "BAN", true), (5, "PUN", true)]);
        let caller = ids(&[2, 4]);
        let all = plan_scope(Some(&Scope::All), None, false, &caller, &known);
        assert!(matches!(all, Err(StoreError::OutOfScope(ScopeNeed::All))), "{all:?}");
        let wider = plan_scope(Some(&ids(&[2, 5])), None, false, &caller, &known);
        assert!(
            matches!(&wider, Err(StoreError::OutOfScope(ScopeNeed::Codes(codes))) if codes == &["PUN"]),
            "{wider:?}"
        );
        assert_eq!(plan_scope(Some(&ids(&[4])), None, false, &caller, &known).unwrap(), ids(&[4]));
        let reach = plan_scope(Some(&ids(&[4])), Some(&ids(&[4, 5])), false, &caller, &known);
        assert!(
            matches!(&reach, Err(StoreError::OutOfScope(ScopeNeed::Codes(codes))) if codes == &["PUN"]),
            "{reach:?}"
        );
        let everyone = check_reach(&caller, &Scope::All, &known);
        assert!(matches!(everyone, Err(StoreError::OutOfScope(ScopeNeed::All))));
        assert_eq!(ScopeNeed::Codes(vec!["AND".into(), "PUN".into()]).to_string(), "the branches AND, PUN");
        assert_eq!(ScopeNeed::All.to_string(), "all branches");
    }

    #[test]
    fn narrowing_is_taking_a_branch_away() {
        assert!(narrows(&Scope::All, &ids(&[2])));
        assert!(narrows(&ids(&[2, 3]), &ids(&[2])));
        assert!(narrows(&ids(&[2]), &ids(&[3])));
        assert!(!narrows(&ids(&[2]), &ids(&[2, 3])));
        assert!(!narrows(&ids(&[2]), &Scope::All));
        assert!(!narrows(&ids(&[2]), &ids(&[2])));
    }
}
