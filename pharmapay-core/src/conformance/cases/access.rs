//! Conformance cases: users with unique emails (D4), the guard rails of D18, the caller's
//! profile and password (D24), permissions (D19), 403s, roles and policies with their system
//! roles and unique names, access that cannot be widened from inside (D38) and reductions that
//! take effect at once (D39).

use super::{access, missing, new_user, update};
use super::{field_error, params, vendor_query};
use crate::access::policy::NewPolicy;
use crate::access::role::NewRole;
use crate::access::user::{NewUser, PasswordChange, ProfileUpdate, UserUpdate};
use crate::access::{ADMIN_ROLE_ID, PHARMACIST_ROLE_ID, Requirement};
use crate::conformance::{Fixture, created};
use crate::error::{Entity, Error, RuleBroken};
use crate::ids::{PermissionId, PolicyId, RoleId, UserId, VendorId};
use crate::reports::audit::AuditQuery;
use crate::seed::permission_id;
use crate::store::{Store, UniqueKey};
use crate::text::Password;
use crate::vendors::{NewVendor, VendorType};
use std::sync::Arc;

/// Users: unique active emails, active roles, soft delete and restore (D4, D15, D17).
pub async fn users_are_managed_with_unique_emails<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let new_user = |email: &str, role: RoleId| NewUser {
        first_name: "Meera".into(),
        last_name: "Iyer".into(),
        email: email.into(),
        password: Password::parse("password-1").unwrap(),
        role_id: role,
        branch_ids: None,
    };
    let user = created(
        fx.engine.create_user(&fx.admin, new_user("meera@example.com", PHARMACIST_ROLE_ID), None).await.unwrap(),
    );
    assert_eq!(fx.engine.get_user(&fx.admin, user.id).await.unwrap(), user);
    assert_eq!(fx.engine.list_users(&fx.admin).await.unwrap().len(), 2);
    match fx.engine.create_user(&fx.admin, new_user(" MEERA@example.com", PHARMACIST_ROLE_ID), None).await {
        Err(Error::Conflict(UniqueKey::UserEmail)) => {}
        other => panic!("D5: duplicate email, got {other:?}"),
    }
    field_error(
        fx.engine.create_user(&fx.admin, new_user("x@example.com", RoleId(77)), None).await,
        "roleId",
        "missing role",
    );
    field_error(
        fx.engine.create_user(&fx.admin, new_user("not-email", PHARMACIST_ROLE_ID), None).await,
        "email",
        "D29 email shape",
    );
    let update = user_update("M", "I", "admin@example.com", PHARMACIST_ROLE_ID);
    assert!(matches!(
        fx.engine.update_user(&fx.admin, user.id, update).await,
        Err(Error::Conflict(UniqueKey::UserEmail))
    ));
    let update = user_update("Meera", "Nair", "meera.n@example.com", PHARMACIST_ROLE_ID);
    assert_eq!(fx.engine.update_user(&fx.admin, user.id, update).await.unwrap().last_name, "Nair");
    fx.engine.delete_user(&fx.admin, user.id, None).await.unwrap();
    assert!(matches!(fx.engine.get_user(&fx.admin, user.id).await, Err(Error::NotFound { entity: Entity::User })));
    assert_eq!(fx.engine.list_users(&fx.admin).await.unwrap().len(), 1, "lists show active users only");
    let again = created(
        fx.engine.create_user(&fx.admin, new_user("meera.n@example.com", PHARMACIST_ROLE_ID), None).await.unwrap(),
    );
    assert!(
        matches!(fx.engine.restore_user(&fx.admin, user.id).await, Err(Error::Conflict(UniqueKey::UserEmail))),
        "D15"
    );
    fx.engine.delete_user(&fx.admin, again.id, None).await.unwrap();
    assert!(fx.engine.restore_user(&fx.admin, user.id).await.unwrap().is_active);
    assert!(matches!(fx.engine.get_user(&fx.admin, UserId(999)).await, Err(Error::NotFound { .. })));
}

/// Nobody deletes themself; the last active admin stays (D18).
pub async fn the_last_admin_and_oneself_cannot_be_removed<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let me = fx.admin.user_id;
    assert!(matches!(fx.engine.delete_user(&fx.admin, me, None).await, Err(Error::Rule(RuleBroken::DeleteSelf))));
    let demote = user_update("Asha", "Rao", "admin@example.com", PHARMACIST_ROLE_ID);
    assert!(matches!(
        fx.engine.update_user(&fx.admin, me, demote.clone()).await,
        Err(Error::Rule(RuleBroken::LastAdmin))
    ));

    let managers = created(
        fx.engine
            .create_role(&fx.admin, NewRole { name: "User managers".into(), description: String::new() }, None)
            .await
            .unwrap(),
    );
    let manage = fx.policy_of("Manage users", &["User:Delete", "User:Update"]).await;
    fx.engine.attach_role_policy(&fx.admin, managers.id, manage).await.unwrap();
    let (_, manager) = fx.user_with_role("manager@example.com", managers.id).await;
    assert!(matches!(fx.engine.delete_user(&manager, me, None).await, Err(Error::Rule(RuleBroken::LastAdmin))));
    // A role the manager may give (D38: they hold all it grants), so the last-admin rule decides.
    let to_managers = UserUpdate { role_id: managers.id, ..demote.clone() };
    assert!(matches!(fx.engine.update_user(&manager, me, to_managers).await, Err(Error::Rule(RuleBroken::LastAdmin))));

    let (second, _) = fx.user_with_role("second-admin@example.com", ADMIN_ROLE_ID).await;
    fx.engine.update_user(&fx.admin, me, demote).await.expect("another admin remains");
    let demote_second = user_update("B", "C", "second-admin@example.com", managers.id);
    assert!(matches!(
        fx.engine.update_user(&manager, second.user.id, demote_second).await,
        Err(Error::Rule(RuleBroken::LastAdmin))
    ));
    assert!(matches!(
        fx.engine.delete_user(&manager, second.user.id, None).await,
        Err(Error::Rule(RuleBroken::LastAdmin))
    ));
}

/// Profile read and update, password change (D24).
pub async fn profile_and_password_change_follow_d24<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let profile = fx.engine.profile(&fx.admin).await.unwrap();
    assert_eq!((profile.role_name.as_str(), profile.is_admin), ("Admin", true));
    assert_eq!(profile.permissions, ["*:*"]);
    let (session, pharmacist) = fx.pharmacist("p@example.com").await;
    let theirs = fx.engine.profile(&pharmacist).await.unwrap();
    assert_eq!((theirs.user.id, theirs.role_name.as_str(), theirs.is_admin), (session.user.id, "Pharmacist", false));
    assert_eq!(theirs.permissions.len(), 15);
    assert_eq!(theirs.permissions[0], "Vendor:Read");

    let taken = ProfileUpdate { first_name: "P".into(), last_name: "Q".into(), email: "ADMIN@example.com".into() };
    assert!(matches!(fx.engine.update_profile(&pharmacist, taken).await, Err(Error::Conflict(UniqueKey::UserEmail))));
    let update =
        ProfileUpdate { first_name: "Priya".into(), last_name: "Shah".into(), email: "priya@example.com".into() };
    let updated = fx.engine.update_profile(&pharmacist, update).await.unwrap();
    assert_eq!((updated.user.first_name.as_str(), updated.user.email.as_str()), ("Priya", "priya@example.com"));
    assert_eq!(updated.user.role_id, PHARMACIST_ROLE_ID, "the role is not the user's to change");

    let wrong = PasswordChange {
        current_password: "nope-nope".into(),
        new_password: Password::parse("brand-new-pass").unwrap(),
    };
    assert!(matches!(
        fx.engine.change_password(&pharmacist, wrong).await,
        Err(Error::Rule(RuleBroken::WrongCurrentPassword))
    ));
    let right = PasswordChange {
        current_password: "user-password".into(),
        new_password: Password::parse("brand-new-pass").unwrap(),
    };
    let renewed = fx.engine.change_password(&pharmacist, right).await.unwrap();
    assert_eq!(renewed.user.email, "priya@example.com");
    assert!(matches!(fx.engine.login("priya@example.com", "user-password").await, Err(Error::InvalidCredentials)));
    fx.engine.login("priya@example.com", "brand-new-pass").await.expect("the new password works");
}

/// Permissions are the union of active role and user policies, deduplicated, by id (D19).
pub async fn permissions_resolve_from_role_and_user_policies<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (session, principal) = fx.pharmacist("p@example.com").await;
    let codes = |permissions: Vec<crate::access::Permission>| permissions.iter().map(|p| p.code()).collect::<Vec<_>>();
    assert_eq!(fx.engine.my_permissions(&principal).await.unwrap().len(), 15);

    let audit_policy = fx.policy_of("Auditors", &["AuditLog:Read", "Vendor:Read"]).await;
    fx.engine.attach_user_policy(&fx.admin, session.user.id, audit_policy).await.unwrap();
    fx.engine.attach_user_policy(&fx.admin, session.user.id, audit_policy).await.expect("attaching twice is harmless");
    let with_audit = codes(fx.engine.my_permissions(&principal).await.unwrap());
    assert_eq!(with_audit.len(), 16, "Vendor:Read is not repeated: {with_audit:?}");
    assert_eq!(with_audit[11], "AuditLog:Read", "ordered by id, before the credits' (D44)");
    let policies = fx.engine.list_user_policies(&principal, session.user.id).await.unwrap();
    assert_eq!(policies.iter().map(|p| p.id).collect::<Vec<_>>(), [audit_policy]);

    fx.engine.delete_policy(&fx.admin, audit_policy, None).await.unwrap();
    assert_eq!(fx.engine.my_permissions(&principal).await.unwrap().len(), 15, "inactive policies grant nothing");
    assert!(fx.engine.list_user_policies(&principal, session.user.id).await.unwrap().is_empty());

    let role = created(
        fx.engine
            .create_role(&fx.admin, NewRole { name: "Clerk".into(), description: "x".into() }, None)
            .await
            .unwrap(),
    );
    let clerk_policy = fx.policy_of("Clerk work", &["Invoice:Read"]).await;
    fx.engine.attach_role_policy(&fx.admin, role.id, clerk_policy).await.unwrap();
    let (_, clerk) = fx.user_with_role("clerk@example.com", role.id).await;
    assert_eq!(codes(fx.engine.my_permissions(&clerk).await.unwrap()), ["Invoice:Read"]);
    fx.engine.detach_role_policy(&fx.admin, role.id, clerk_policy).await.unwrap();
    assert!(fx.engine.my_permissions(&clerk).await.unwrap().is_empty(), "detached");
    fx.engine.attach_role_policy(&fx.admin, role.id, clerk_policy).await.unwrap();
    fx.engine.delete_role(&fx.admin, role.id, None).await.unwrap();
    assert!(fx.engine.my_permissions(&clerk).await.unwrap().is_empty(), "an inactive role grants nothing");
    assert_eq!(fx.engine.my_permissions(&fx.admin).await.unwrap()[0].collection, "*", "admins get the wildcard");
}

/// 403 names the missing permission; admins pass everything (spec, Authentication 6-9).
pub async fn permission_checks_answer_forbidden<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (_, pharmacist) = fx.pharmacist("p@example.com").await;
    let vendor = created(
        fx.engine.create_vendor(&pharmacist, NewVendor::new("Cipla", VendorType::Manufacturer), None).await.unwrap(),
    );
    let forbidden = |result: Result<(), Error>, needed: &str, label: &str| match result {
        Err(Error::Forbidden { required }) => assert_eq!(required.to_string(), needed, "{label}"),
        other => panic!("{label}: expected 403, got {other:?}"),
    };
    forbidden(fx.engine.delete_vendor(&pharmacist, vendor.id, None).await, "Vendor:Delete", "delete vendor");
    forbidden(fx.engine.list_permissions(&pharmacist).await.map(drop), "Permission:Read", "permissions");
    forbidden(fx.engine.update_setting(&pharmacist, "Currency", "$").await.map(drop), "Setting:Update", "settings");
    forbidden(
        fx.engine.list_audit(&pharmacist, &AuditQuery::from_params(&params(&[])).unwrap()).await.map(drop),
        "AuditLog:Read",
        "audit",
    );
    forbidden(fx.engine.delete_vendor(&pharmacist, VendorId(999), None).await, "Vendor:Delete", "403 comes before 404");
    match fx.engine.list_vendors(&pharmacist, &vendor_query(&[("isActive", "false")])).await {
        Err(Error::Forbidden { required: Requirement::Admin }) => {}
        other => panic!("listing deleted vendors needs an admin, got {other:?}"),
    }
    fx.engine.list_settings(&pharmacist).await.expect("pharmacists read settings");
    fx.engine.dashboard_summary(&pharmacist).await.expect("pharmacists read the dashboard");
    fx.engine.delete_vendor(&fx.admin, vendor.id, None).await.expect("admins bypass checks");
    fx.engine
        .list_vendors(&fx.admin, &vendor_query(&[("isActive", "false")]))
        .await
        .expect("admins list deleted vendors");
}

/// Roles: unique names, system roles protected, soft delete listed (spec; D4, D17).
pub async fn roles_are_managed_and_system_roles_protected<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let roles = fx.engine.list_roles(&fx.admin).await.unwrap();
    assert_eq!(
        roles.iter().map(|r| (r.name.as_str(), r.is_system)).collect::<Vec<_>>(),
        [("Admin", true), ("Pharmacist", true)]
    );
    let role = created(
        fx.engine
            .create_role(&fx.admin, NewRole { name: "Cashier".into(), description: "Takes payments".into() }, None)
            .await
            .unwrap(),
    );
    assert!(!role.is_system && role.is_active);
    match fx.engine.create_role(&fx.admin, NewRole { name: " cashier ".into(), description: String::new() }, None).await
    {
        Err(Error::Conflict(UniqueKey::RoleName)) => {}
        other => panic!("D4: role names are unique, got {other:?}"),
    }
    field_error(
        fx.engine.create_role(&fx.admin, NewRole { name: "".into(), description: String::new() }, None).await,
        "name",
        "blank role name",
    );
    let renamed = NewRole { name: "Owner".into(), description: "x".into() };
    assert!(matches!(
        fx.engine.update_role(&fx.admin, ADMIN_ROLE_ID, renamed).await,
        Err(Error::Rule(RuleBroken::SystemRoleRename))
    ));
    let described = fx
        .engine
        .update_role(&fx.admin, ADMIN_ROLE_ID, NewRole { name: "Admin".into(), description: "Everything".into() })
        .await
        .unwrap();
    assert_eq!(described.description, "Everything");
    assert!(matches!(
        fx.engine.delete_role(&fx.admin, PHARMACIST_ROLE_ID, None).await,
        Err(Error::Rule(RuleBroken::SystemRoleDelete))
    ));
    let updated = fx
        .engine
        .update_role(&fx.admin, role.id, NewRole { name: "Cashiers".into(), description: String::new() })
        .await
        .unwrap();
    assert_eq!(updated.name, "Cashiers");
    fx.engine.delete_role(&fx.admin, role.id, None).await.unwrap();
    assert!(
        matches!(fx.engine.get_role(&fx.admin, role.id).await, Err(Error::NotFound { entity: Entity::Role })),
        "D17"
    );
    let listed = fx.engine.list_roles(&fx.admin).await.unwrap();
    assert!(listed.iter().any(|r| r.id == role.id && !r.is_active), "roles list shows inactive ones");
    match fx.engine.create_role(&fx.admin, NewRole { name: "Cashiers".into(), description: String::new() }, None).await
    {
        Err(Error::Conflict(UniqueKey::RoleName)) => {}
        other => panic!("D4: names are unique among all roles, deleted too, got {other:?}"),
    }
    assert!(fx.engine.restore_role(&fx.admin, role.id).await.unwrap().is_active);
    assert!(matches!(
        fx.engine.attach_role_policy(&fx.admin, RoleId(99), PolicyId(1)).await,
        Err(Error::NotFound { entity: Entity::Role })
    ));
    assert!(matches!(
        fx.engine.attach_role_policy(&fx.admin, role.id, PolicyId(99)).await,
        Err(Error::NotFound { entity: Entity::Policy })
    ));
}

/// Policies: names unique among active ones, permissions managed (spec; D4, D15).
pub async fn policies_are_managed_with_unique_active_names<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let new_policy = |name: &str, ids: &[i64]| NewPolicy {
        name: name.into(),
        description: "d".into(),
        permission_ids: ids.iter().map(|id| PermissionId(*id)).collect(),
    };
    let policy = created(fx.engine.create_policy(&fx.admin, new_policy("Readers", &[5, 1, 1]), None).await.unwrap());
    assert_eq!(policy.permissions.iter().map(|p| p.code()).collect::<Vec<_>>(), ["Vendor:Read", "Invoice:Read"]);
    assert!(matches!(
        fx.engine.create_policy(&fx.admin, new_policy("READERS", &[]), None).await,
        Err(Error::Conflict(UniqueKey::PolicyName))
    ));
    field_error(
        fx.engine.create_policy(&fx.admin, new_policy("Bad", &[1, 999]), None).await,
        "permissionIds",
        "unknown permission",
    );
    fx.engine.add_policy_permission(&fx.admin, policy.id, PermissionId(9)).await.unwrap();
    fx.engine.add_policy_permission(&fx.admin, policy.id, PermissionId(9)).await.expect("adding twice is harmless");
    fx.engine.remove_policy_permission(&fx.admin, policy.id, PermissionId(1)).await.unwrap();
    let read = fx.engine.get_policy(&fx.admin, policy.id).await.unwrap();
    assert_eq!(read.permissions.iter().map(|p| p.id.get()).collect::<Vec<_>>(), [5, 9]);
    assert!(matches!(
        fx.engine.add_policy_permission(&fx.admin, policy.id, PermissionId(999)).await,
        Err(Error::NotFound { entity: Entity::Permission })
    ));
    let replaced = fx.engine.update_policy(&fx.admin, policy.id, new_policy("Readers 2", &[13])).await.unwrap();
    assert_eq!((replaced.name.as_str(), replaced.permissions.len()), ("Readers 2", 1));
    fx.engine.delete_policy(&fx.admin, policy.id, None).await.unwrap();
    assert!(matches!(
        fx.engine.get_policy(&fx.admin, policy.id).await,
        Err(Error::NotFound { entity: Entity::Policy })
    ));
    assert!(fx.engine.list_policies(&fx.admin).await.unwrap().iter().all(|p| p.id != policy.id), "D17: active only");
    created(
        fx.engine
            .create_policy(&fx.admin, new_policy("readers 2", &[]), None)
            .await
            .expect("a deleted policy frees its name"),
    );
    assert!(matches!(
        fx.engine.restore_policy(&fx.admin, policy.id).await,
        Err(Error::Conflict(UniqueKey::PolicyName))
    ));
    assert!(matches!(
        fx.engine.update_policy(&fx.admin, PolicyId(999), new_policy("x", &[])).await,
        Err(Error::NotFound { .. })
    ));
    let permissions = fx.engine.list_permissions(&fx.admin).await.unwrap();
    assert_eq!(permissions.len(), 45, "D27 seeds 29 permissions; D44, D46, D47 and D49 four more each");
}

/// A replacement of a user's names, email and role.
fn user_update(first_name: &str, last_name: &str, email: &str, role_id: RoleId) -> UserUpdate {
    UserUpdate {
        first_name: first_name.into(),
        last_name: last_name.into(),
        email: email.into(),
        role_id,
        branch_ids: None,
    }
}

/// Someone who may manage users gives no one the Admin role, nor a role holding what they lack
/// (D38); refusals write nothing and come after the usual 400 and 404.
pub async fn users_are_given_no_role_beyond_their_creator<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let hiring = fx.role_of("Hiring", &["User:Create", "User:Update", "Vendor:Read"]).await;
    let (_, hr) = fx.user_with_role("hr@example.com", hiring).await;
    let users_before = fx.engine.list_users(&fx.admin).await.unwrap().len();

    let to_admin = fx.engine.create_user(&hr, new_user("new-admin@example.com", ADMIN_ROLE_ID), None).await;
    assert_eq!(missing(to_admin, "a user created as admin"), "Admin");
    let to_pharmacist = fx.engine.create_user(&hr, new_user("p@example.com", PHARMACIST_ROLE_ID), None).await;
    let named = missing(to_pharmacist, "a user created with a role holding more");
    assert!(named.contains("Invoice:Read") && named.contains("Dashboard:Read"), "{named}");
    assert!(!named.contains("Vendor:Read"), "held permissions are not named: {named}");
    assert_eq!(fx.engine.list_users(&fx.admin).await.unwrap().len(), users_before, "a refusal writes nothing");

    assert!(
        matches!(
            fx.engine.create_user(&hr, new_user("x@example.com", RoleId(999)), None).await,
            Err(Error::Validation(_))
        ),
        "a missing role stays the usual 400"
    );
    let peer = created(fx.engine.create_user(&hr, new_user("peer@example.com", hiring), None).await.unwrap());

    let me = hr.user_id;
    assert_eq!(missing(fx.engine.update_user(&hr, me, update("hr@example.com", ADMIN_ROLE_ID)).await, "self"), "Admin");
    let renamed = fx.engine.update_user(&hr, peer.id, update("peer-renamed@example.com", hiring)).await;
    assert!(renamed.is_ok(), "an update that keeps the role is not judged: {renamed:?}");
    assert!(
        matches!(
            fx.engine.update_user(&hr, UserId(999), update("a@example.com", ADMIN_ROLE_ID)).await,
            Err(Error::NotFound { .. })
        ),
        "a missing user stays the usual 404"
    );

    // D38 comes before D18: moving the last admin to a role the caller lacks is a 403.
    let last_admin =
        fx.engine.update_user(&hr, fx.admin.user_id, update("admin@example.com", PHARMACIST_ROLE_ID)).await;
    assert!(!missing(last_admin, "the last admin moved").is_empty());

    // A restore gives the user's role back, so it is judged the same way.
    let pharmacist = created(
        fx.engine.create_user(&fx.admin, new_user("gone@example.com", PHARMACIST_ROLE_ID), None).await.unwrap(),
    );
    fx.engine.delete_user(&fx.admin, pharmacist.id, None).await.unwrap();
    assert!(!missing(fx.engine.restore_user(&hr, pharmacist.id).await, "a restore").is_empty());
    assert!(fx.engine.get_user(&fx.admin, pharmacist.id).await.is_err(), "still deleted");

    // D48: a restore also gives back the policies attached to the user directly. A user of the
    // caller's own role is refused when those hold what the caller lacks.
    let audited =
        created(fx.engine.create_user(&fx.admin, new_user("audited@example.com", hiring), None).await.unwrap());
    let auditing = fx.policy_of("Auditing", &["AuditLog:Read", "User:Delete"]).await;
    fx.engine.attach_user_policy(&fx.admin, audited.id, auditing).await.unwrap();
    fx.engine.delete_user(&fx.admin, audited.id, None).await.unwrap();
    let named = missing(fx.engine.restore_user(&hr, audited.id).await, "a restore with policies of the user's own");
    assert!(named.contains("AuditLog:Read") && named.contains("User:Delete"), "{named}");
    assert!(fx.engine.get_user(&fx.admin, audited.id).await.is_err(), "still deleted");
    fx.engine.delete_policy(&fx.admin, auditing, None).await.unwrap();
    fx.engine.restore_user(&hr, audited.id).await.expect("a deleted policy gives nothing: only the role is given back");

    // Admins are not limited.
    created(fx.engine.create_user(&fx.admin, new_user("second-admin@example.com", ADMIN_ROLE_ID), None).await.unwrap());
    fx.engine.restore_user(&fx.admin, pharmacist.id).await.expect("an admin restores anyone");
}

/// Policies are judged as they stand after the write, and attaching one gives what it holds
/// (D38).
pub async fn policies_give_no_permission_beyond_their_author<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let managers = fx
        .role_of("Access managers", &["Policy:Create", "Policy:Update", "Role:Update", "User:Update", "Vendor:Read"])
        .await;
    let (_, manager) = fx.user_with_role("pm@example.com", managers).await;
    let with = |codes: &[&str]| NewPolicy {
        name: "Buyers".into(),
        description: String::new(),
        permission_ids: codes.iter().map(|code| permission_id(access(code))).collect(),
    };

    let refused = fx.engine.create_policy(&manager, with(&["Vendor:Read", "Vendor:Delete"]), None).await;
    assert_eq!(missing(refused, "create"), "Vendor:Delete");
    let buyers = created(fx.engine.create_policy(&manager, with(&["Vendor:Read"]), None).await.unwrap()).id;
    let delete = permission_id(access("Vendor:Delete"));
    assert_eq!(missing(fx.engine.add_policy_permission(&manager, buyers, delete).await, "add"), "Vendor:Delete");
    assert_eq!(
        missing(fx.engine.update_policy(&manager, buyers, with(&["Vendor:Delete"])).await, "update"),
        "Vendor:Delete"
    );
    let kept = fx.engine.get_policy(&fx.admin, buyers).await.unwrap();
    assert_eq!(kept.permissions.iter().map(|p| p.code()).collect::<Vec<_>>(), ["Vendor:Read"], "nothing was written");

    // An admin widens the policy; from then on the manager may not touch it in any way that
    // leaves it holding what they lack, even by adding what they hold.
    fx.engine.add_policy_permission(&fx.admin, buyers, delete).await.unwrap();
    let read = permission_id(access("Vendor:Read"));
    assert_eq!(missing(fx.engine.add_policy_permission(&manager, buyers, read).await, "add after"), "Vendor:Delete");
    fx.engine.remove_policy_permission(&manager, buyers, delete).await.expect("removing takes nothing from the author");

    // Attaching gives what the policy holds.
    let wide = fx.policy_of("Wide", &["Vendor:Read", "User:Delete"]).await;
    assert_eq!(missing(fx.engine.attach_role_policy(&manager, managers, wide).await, "to a role"), "User:Delete");
    assert_eq!(
        missing(fx.engine.attach_user_policy(&manager, manager.user_id, wide).await, "to a user"),
        "User:Delete"
    );
    fx.engine.attach_user_policy(&manager, manager.user_id, buyers).await.expect("a policy within the author's own");
    assert!(
        matches!(
            fx.engine.attach_user_policy(&manager, manager.user_id, PolicyId(999)).await,
            Err(Error::NotFound { .. })
        ),
        "a missing policy stays the usual 404"
    );

    // Restoring a policy gives its permissions back to whoever holds it.
    fx.engine.delete_policy(&fx.admin, wide, None).await.unwrap();
    let restore_refused = fx.engine.restore_policy(&manager, wide).await;
    assert_eq!(missing(restore_refused, "restore"), "User:Delete");
    fx.engine.restore_policy(&fx.admin, wide).await.expect("admins are not limited");
}

/// Anything that may take access away revokes the affected users' older tokens at once, even
/// within the same second; grants wait for the next sign-in (D39).
pub async fn reductions_revoke_older_tokens_at_once<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let clerks = fx.role_of("Clerks", &["Vendor:Read", "Invoice:Read"]).await;
    let (_, _) = fx.user_with_role("clerk@example.com", clerks).await;
    let (bystander, _) = fx.user_with_role("bystander@example.com", PHARMACIST_ROLE_ID).await;
    let clerk = || fx.sign_in("clerk@example.com", "user-password");
    let role_policy =
        fx.engine.list_policies(&fx.admin).await.unwrap().into_iter().find(|p| p.name == "Clerks policy").unwrap();

    // The clock never moves in this case: every step happens in the same second.
    let (before, principal) = clerk().await;
    let clerk_id = principal.user_id;
    let extra = fx.policy_of("Extra", &["Dashboard:Read"]).await;
    fx.engine.attach_user_policy(&fx.admin, clerk_id, extra).await.unwrap();
    assert!(fx.token_works(&before).await, "a grant revokes nothing");
    assert!(!principal.permissions.contains(access("Dashboard:Read")), "grants show at the next sign-in");
    let (with_extra, principal) = clerk().await;
    assert!(principal.permissions.contains(access("Dashboard:Read")));
    assert!(fx.token_works(&before).await, "signing in again keeps older tokens");

    fx.engine.detach_user_policy(&fx.admin, clerk_id, extra).await.unwrap();
    assert!(!fx.token_works(&before).await && !fx.token_works(&with_extra).await, "a policy detached from the user");

    let (token, _) = clerk().await;
    fx.engine.detach_user_policy(&fx.admin, clerk_id, extra).await.unwrap();
    assert!(fx.token_works(&token).await, "detaching what is not attached takes nothing away");
    let invoice_read = permission_id(access("Invoice:Read"));
    fx.engine.remove_policy_permission(&fx.admin, role_policy.id, invoice_read).await.unwrap();
    assert!(!fx.token_works(&token).await, "a permission removed from their role's policy");

    let (token, _) = clerk().await;
    let keep_read = NewPolicy {
        name: "Clerks policy".into(),
        description: "more".into(),
        permission_ids: vec![permission_id(access("Vendor:Read")), invoice_read],
    };
    fx.engine.update_policy(&fx.admin, role_policy.id, keep_read).await.unwrap();
    assert!(fx.token_works(&token).await, "an update that only adds revokes nothing");
    let drop_invoice = NewPolicy {
        name: "Clerks policy".into(),
        description: String::new(),
        permission_ids: vec![permission_id(access("Vendor:Read"))],
    };
    fx.engine.update_policy(&fx.admin, role_policy.id, drop_invoice).await.unwrap();
    assert!(!fx.token_works(&token).await, "an update that removes a permission");

    let (token, _) = clerk().await;
    fx.engine.detach_role_policy(&fx.admin, clerks, role_policy.id).await.unwrap();
    assert!(!fx.token_works(&token).await, "a policy detached from their role");
    fx.engine.attach_role_policy(&fx.admin, clerks, role_policy.id).await.unwrap();

    let (token, _) = clerk().await;
    fx.engine.delete_policy(&fx.admin, role_policy.id, None).await.unwrap();
    assert!(!fx.token_works(&token).await, "a policy of theirs deleted");

    let (token, _) = clerk().await;
    fx.engine.update_user(&fx.admin, clerk_id, update("clerk@example.com", PHARMACIST_ROLE_ID)).await.unwrap();
    assert!(!fx.token_works(&token).await, "a change of their role");
    let (token, _) = clerk().await;
    fx.engine.update_user(&fx.admin, clerk_id, update("clerk@example.com", clerks)).await.unwrap();
    assert!(!fx.token_works(&token).await, "a second revocation in the same second still revokes");

    let (token, _) = clerk().await;
    fx.engine.delete_role(&fx.admin, clerks, None).await.unwrap();
    assert!(!fx.token_works(&token).await, "their role deleted");
    let (after, _) = clerk().await;
    assert!(fx.token_works(&after).await, "a token issued after every revocation works");

    assert!(fx.token_works(&bystander).await, "users who lost nothing keep their tokens");
    assert!(fx.token_works(&fx.admin_session).await);
}

/// Demotions racing sign-ins never leave a token valid that claims more than the user holds
/// (D39): whatever the order, a token issued before a demotion is revoked by it.
pub async fn demotions_racing_sign_ins_leave_no_stale_admin_token<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let (_, _) = fx.user_with_role("deputy@example.com", ADMIN_ROLE_ID).await;
    let (_, deputy) = fx.sign_in("deputy@example.com", "user-password").await;
    let extra = fx.policy_of("Deputy extras", &["AuditLog:Read"]).await;
    fx.engine.attach_user_policy(&fx.admin, deputy.user_id, extra).await.unwrap();

    let mut sign_ins = Vec::new();
    for _ in 0..8 {
        let fx = Arc::clone(&fx);
        sign_ins.push(tokio::spawn(async move { fx.engine.login("deputy@example.com", "user-password").await }));
    }
    let demote = {
        let fx = Arc::clone(&fx);
        let id = deputy.user_id;
        tokio::spawn(async move {
            fx.engine.update_user(&fx.admin, id, update("deputy@example.com", PHARMACIST_ROLE_ID)).await
        })
    };
    let detach = {
        let fx = Arc::clone(&fx);
        let id = deputy.user_id;
        tokio::spawn(async move { fx.engine.detach_user_policy(&fx.admin, id, extra).await })
    };
    demote.await.expect("no task panics").expect("the demotion succeeds");
    detach.await.expect("no task panics").expect("the detach succeeds");
    for task in sign_ins {
        let session = task.await.expect("no task panics").expect("every sign-in succeeds");
        if let Ok(principal) = fx.engine.authenticate(&session.token.token).await {
            assert!(!principal.is_admin, "a valid token must not claim the Admin role after the demotion");
            assert!(!principal.permissions.contains(access("AuditLog:Read")), "nor the detached policy");
        }
    }
    let (_, now) = fx.sign_in("deputy@example.com", "user-password").await;
    assert!(!now.is_admin && now.role_id == PHARMACIST_ROLE_ID);
}

/// The 403 of a scope beyond the caller's (D49): what it names.
fn beyond<T: std::fmt::Debug>(result: Result<T, Error>, label: &str) -> String {
    match result {
        Err(Error::Forbidden { required: Requirement::Scope(missing) }) => missing.to_string(),
        other => panic!("{label}: expected a 403 naming the branches missing, got {other:?}"),
    }
}

/// D49 with D38 and D39: each user's branches, kept and shown, carried in the token; admins
/// always all of them; nobody gives a scope beyond their own nor changes a user holding more;
/// narrowing a scope revokes the older tokens at once, widening waits for the next sign-in.
pub async fn user_scopes_are_kept_bounded_and_revoked_when_narrowed<S: Store>(store: S) {
    use crate::branches::{NewBranch, Scope};

    let fx = Fixture::new(store).await;
    let branch = |code: &'static str| {
        let engine = &fx.engine;
        let admin = &fx.admin;
        async move { created(engine.create_branch(admin, NewBranch::new(code, code), None).await.unwrap()).id }
    };
    let (andheri, bandra, pune, closed) =
        (branch("AND").await, branch("BAN").await, branch("PUN").await, branch("OLD").await);
    fx.engine.delete_branch(&fx.admin, closed, None).await.unwrap();
    let scope = |ids: &[crate::ids::BranchId]| Scope::of(ids.iter().copied());
    let with_scope =
        |email: &str, role: RoleId, branches: Option<Scope>| NewUser { branch_ids: branches, ..new_user(email, role) };

    // Kept and shown; the admin's default is every branch.
    let everywhere =
        created(fx.engine.create_user(&fx.admin, new_user("all@example.com", PHARMACIST_ROLE_ID), None).await.unwrap());
    assert_eq!(everywhere.branch_ids, Scope::All, "omitted: the caller's own scope");
    let hiring = fx.role_of("Store hiring", &["User:Create", "User:Update", "User:Delete", "Vendor:Read"]).await;
    let manager = fx
        .engine
        .create_user(&fx.admin, with_scope("mgr@example.com", hiring, Some(scope(&[andheri, bandra]))), None)
        .await;
    let manager = created(manager.unwrap());
    assert_eq!(manager.branch_ids, scope(&[andheri, bandra]));
    assert_eq!(fx.engine.get_user(&fx.admin, manager.id).await.unwrap().branch_ids, scope(&[andheri, bandra]));
    let refused = fx
        .engine
        .create_user(&fx.admin, with_scope("a@example.com", ADMIN_ROLE_ID, Some(scope(&[andheri]))), None)
        .await;
    field_error(refused, "branchIds", "an admin with a list");
    let refused =
        fx.engine.create_user(&fx.admin, with_scope("b@example.com", hiring, Some(scope(&[closed]))), None).await;
    field_error(refused, "branchIds", "a deleted branch");
    let refused = fx
        .engine
        .create_user(&fx.admin, with_scope("c@example.com", hiring, Some(scope(&[crate::ids::BranchId(999)]))), None)
        .await;
    field_error(refused, "branchIds", "no branch");

    // The token carries the scope.
    let (manager_session, as_manager) = fx.sign_in("mgr@example.com", "user-password").await;
    assert_eq!(as_manager.scope, scope(&[andheri, bandra]));
    assert_eq!(fx.engine.profile(&as_manager).await.unwrap().user.branch_ids, scope(&[andheri, bandra]));

    // D38 extended: nothing beyond the manager's own branches.
    let all = fx.engine.create_user(&as_manager, with_scope("d@example.com", hiring, Some(Scope::All)), None).await;
    assert_eq!(beyond(all, "all branches"), "all branches");
    let wider = fx
        .engine
        .create_user(&as_manager, with_scope("e@example.com", hiring, Some(scope(&[andheri, pune]))), None)
        .await;
    assert_eq!(beyond(wider, "another branch"), "the branches PUN");
    let clerk = fx.engine.create_user(&as_manager, new_user("clerk@example.com", hiring), None).await;
    let clerk = created(clerk.expect("a user of the manager's own branches"));
    assert_eq!(clerk.branch_ids, scope(&[andheri, bandra]), "omitted: the creator's branches");
    let upgrade = UserUpdate { branch_ids: Some(Scope::All), ..update("all@example.com", PHARMACIST_ROLE_ID) };
    assert_eq!(
        beyond(fx.engine.update_user(&as_manager, everywhere.id, upgrade).await, "a user of every branch"),
        "all branches"
    );
    let keep = update("all@example.com", PHARMACIST_ROLE_ID);
    assert_eq!(
        beyond(fx.engine.update_user(&as_manager, everywhere.id, keep).await, "reaching beyond"),
        "all branches"
    );
    assert_eq!(beyond(fx.engine.delete_user(&as_manager, everywhere.id, None).await, "delete"), "all branches");

    // D39 extended: narrowing revokes at once, widening waits for the next sign-in.
    let (clerk_session, _) = fx.sign_in("clerk@example.com", "user-password").await;
    let narrowed = UserUpdate { branch_ids: Some(scope(&[andheri])), ..update("clerk@example.com", hiring) };
    let narrowed = fx.engine.update_user(&as_manager, clerk.id, narrowed).await.expect("narrowed within the manager's");
    assert_eq!(narrowed.branch_ids, scope(&[andheri]));
    assert!(!fx.token_works(&clerk_session).await, "a narrowed scope's older tokens stop at once");
    let (clerk_session, as_clerk) = fx.sign_in("clerk@example.com", "user-password").await;
    assert_eq!(as_clerk.scope, scope(&[andheri]));
    let widened = UserUpdate { branch_ids: Some(scope(&[andheri, bandra])), ..update("clerk@example.com", hiring) };
    fx.engine.update_user(&as_manager, clerk.id, widened).await.expect("widened");
    assert!(fx.token_works(&clerk_session).await, "widening revokes nothing");
    let unchanged = fx.engine.update_user(&as_manager, clerk.id, update("clerk2@example.com", hiring)).await.unwrap();
    assert_eq!(unchanged.branch_ids, scope(&[andheri, bandra]), "omitted: unchanged");
    assert!(fx.token_works(&clerk_session).await, "an unchanged scope revokes nothing");

    // A deleted branch may stay in a list that holds it; deleting a branch revokes nothing.
    fx.engine.delete_branch(&fx.admin, bandra, None).await.unwrap();
    assert!(fx.token_works(&manager_session).await, "deleting a branch revokes nothing");
    let kept = fx.engine.update_user(&fx.admin, clerk.id, update("clerk2@example.com", hiring)).await;
    assert_eq!(kept.unwrap().branch_ids, scope(&[andheri, bandra]), "a deleted branch stays");

    // Moving a user onto the Admin role gives every branch.
    let promoted = fx.engine.update_user(&fx.admin, clerk.id, update("clerk2@example.com", ADMIN_ROLE_ID)).await;
    assert_eq!(promoted.unwrap().branch_ids, Scope::All);
    let listed = UserUpdate { branch_ids: Some(scope(&[andheri])), ..update("clerk2@example.com", ADMIN_ROLE_ID) };
    field_error(fx.engine.update_user(&fx.admin, clerk.id, listed).await, "branchIds", "an admin with a list");
}
