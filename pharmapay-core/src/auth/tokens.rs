//! Signed tokens (spec, Authentication; D20, D39): HS256 JWTs carrying the spec's claims and
//! their issue second, checked against the engine's clock.

use std::fmt;

use jiff::{SignedDuration, Timestamp};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::access::user::User;
use crate::access::{PermissionSet, Principal};
use crate::error::Error;
use crate::ids::{RoleId, UserId};
use crate::sessions::rules;

/// Shortest signing secret accepted (spec, Authentication 4).
pub const MIN_SECRET_CHARS: usize = 32;

/// A secret whose `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// A fresh random secret of 64 hexadecimal characters (256 bits).
    ///
    /// # Panics
    /// When the operating system cannot provide random bytes, which leaves no safe way on.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
        Self(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The secret itself.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Why token settings were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenConfigError {
    /// The secret is shorter than [`MIN_SECRET_CHARS`].
    #[error("the JWT secret must be at least {MIN_SECRET_CHARS} characters long (it has {0})")]
    SecretTooShort(usize),
    /// The lifetime is not positive or is absurdly long.
    #[error("the token lifetime must be between 1 and 8760 hours")]
    Lifetime,
    /// Issuer or audience is empty.
    #[error("the JWT issuer and audience must not be empty")]
    EmptyName,
}

/// How tokens are signed and checked.
#[derive(Clone, Debug)]
pub struct TokenSettings {
    /// The HS256 key: at least 32 characters.
    pub secret: Secret,
    /// The `iss` claim written and required.
    pub issuer: String,
    /// The `aud` claim written and required.
    pub audience: String,
    /// How long a token is valid (24 hours by default).
    pub lifetime: SignedDuration,
}

impl TokenSettings {
    /// Settings with the defaults of D28: issuer and audience `pharmapay`, 24 hours.
    pub fn new(secret: Secret) -> Self {
        Self {
            secret,
            issuer: "pharmapay".into(),
            audience: "pharmapay".into(),
            lifetime: SignedDuration::from_hours(24),
        }
    }
}

/// The claims of a token, exactly as the spec lists them.
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    email: String,
    given_name: String,
    family_name: String,
    role_id: String,
    is_admin: String,
    perm: Vec<String>,
    /// The caller's branches (D49): `"*"` or the list of ids; absent in tokens issued before
    /// scopes were kept, which were all of every branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    branches: Option<serde_json::Value>,
    exp: u64,
    iat: u64,
    iss: String,
    aud: String,
}

/// A token and when it stops working.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IssuedToken {
    /// The signed JWT.
    pub token: String,
    /// Its `exp`, as an instant.
    pub expires_at: Timestamp,
}

/// A verified token: who it speaks for, and when it was issued.
#[derive(Clone, Debug)]
pub(crate) struct VerifiedToken {
    pub principal: Principal,
    /// The `iat` claim: whole seconds since the epoch.
    pub issued_at_second: i64,
}

/// How many verified tokens [`Tokens`] remembers; past it, it forgets them all and starts again.
const VERIFIED_TOKENS_KEPT: usize = 4_096;

/// Signs and verifies tokens.
pub(crate) struct Tokens {
    settings: TokenSettings,
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    /// Tokens whose signature and claims checked out, by their exact text. What a token's text
    /// says never changes, so a second request with it skips the signature and the JSON; what
    /// depends on the clock (expiry, D39's plausible times) is checked again every time, and
    /// the session check in the store (D20, D39) runs on every request whatever this holds.
    verified: std::sync::Mutex<std::collections::HashMap<Box<str>, VerifiedToken>>,
}

impl Tokens {
    pub(crate) fn new(settings: TokenSettings) -> Result<Self, TokenConfigError> {
        let secret_chars = settings.secret.expose().chars().count();
        if secret_chars < MIN_SECRET_CHARS {
            return Err(TokenConfigError::SecretTooShort(secret_chars));
        }
        let lifetime_ok =
            settings.lifetime >= SignedDuration::from_secs(1) && settings.lifetime <= SignedDuration::from_hours(8760);
        if !lifetime_ok {
            return Err(TokenConfigError::Lifetime);
        }
        if settings.issuer.trim().is_empty() || settings.audience.trim().is_empty() {
            return Err(TokenConfigError::EmptyName);
        }
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[settings.issuer.as_str()]);
        validation.set_audience(&[settings.audience.as_str()]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "aud"]);
        // Expiry is checked against the engine's clock in `verify`, with no leeway.
        validation.validate_exp = false;
        validation.leeway = 0;
        let key = settings.secret.expose().as_bytes();
        Ok(Self {
            encoding: EncodingKey::from_secret(key),
            decoding: DecodingKey::from_secret(key),
            validation,
            settings,
            verified: std::sync::Mutex::default(),
        })
    }

    /// Signs a token for `user` with `iat` = `issued_at` (Unix seconds), as the store's
    /// transaction chose it with [`crate::sessions::rules::issue`], expiring one lifetime later.
    pub(crate) fn issue(
        &self,
        user: &User,
        is_admin: bool,
        perm: Vec<String>,
        issued_at: i64,
    ) -> Result<IssuedToken, Error> {
        let exp = issued_at.saturating_add(self.settings.lifetime.as_secs());
        let claims = Claims {
            sub: user.id.to_string(),
            email: user.email.clone(),
            given_name: user.first_name.clone(),
            family_name: user.last_name.clone(),
            role_id: user.role_id.to_string(),
            is_admin: if is_admin { "true" } else { "false" }.into(),
            // Spec, Authentication 6: an admin token carries the single entry `*:Create`.
            perm: if is_admin { vec!["*:Create".into()] } else { perm },
            branches: Some(user.branch_ids.claim()),
            exp: u64::try_from(exp).unwrap_or(0),
            iat: u64::try_from(issued_at).unwrap_or(0),
            iss: self.settings.issuer.clone(),
            aud: self.settings.audience.clone(),
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|error| Error::Store(crate::store::StoreError::backend(error)))?;
        let expires_at = Timestamp::from_second(exp).unwrap_or(Timestamp::MAX);
        Ok(IssuedToken { token, expires_at })
    }

    /// Checks signature, algorithm, issuer, audience, claim types and expiry at `now`.
    pub(crate) fn verify(&self, token: &str, now: Timestamp) -> Result<VerifiedToken, Error> {
        if token.len() > 8 * 1024 {
            return Err(Error::Unauthenticated);
        }
        let remembered = self.verified.lock().ok().and_then(|verified| verified.get(token).cloned());
        let verified = match remembered {
            Some(verified) => verified,
            None => {
                let verified = self.decode(token)?;
                if let Ok(mut kept) = self.verified.lock() {
                    if kept.len() >= VERIFIED_TOKENS_KEPT {
                        kept.clear();
                    }
                    kept.insert(token.into(), verified.clone());
                }
                verified
            }
        };
        let exp = verified.principal.expires_at.as_second();
        if exp <= now.as_second() {
            return Err(Error::Unauthenticated);
        }
        // D39: a token cannot claim a longer life than tokens are given now, nor an issue time
        // ahead of the clock; lowering the lifetime therefore shortens older tokens too.
        if !rules::times_are_plausible(verified.issued_at_second, exp, self.settings.lifetime.as_secs(), now) {
            return Err(Error::Unauthenticated);
        }
        Ok(verified)
    }

    /// What a token's text says, once its signature, algorithm, issuer, audience and claim
    /// types check out; nothing here depends on the clock.
    fn decode(&self, token: &str) -> Result<VerifiedToken, Error> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|_| Error::Unauthenticated)?;
        let claims = data.claims;
        let exp = i64::try_from(claims.exp).map_err(|_| Error::Unauthenticated)?;
        let iat = i64::try_from(claims.iat).map_err(|_| Error::Unauthenticated)?;
        let user_id = claims.sub.parse::<i64>().map_err(|_| Error::Unauthenticated)?;
        let role_id = claims.role_id.parse::<i64>().map_err(|_| Error::Unauthenticated)?;
        let is_admin = match claims.is_admin.as_str() {
            "true" => true,
            "false" => false,
            _ => return Err(Error::Unauthenticated),
        };
        let principal = Principal {
            user_id: UserId(user_id),
            email: claims.email,
            first_name: claims.given_name,
            last_name: claims.family_name,
            role_id: RoleId(role_id),
            is_admin,
            permissions: PermissionSet::from_names(claims.perm.iter().map(String::as_str)),
            scope: crate::branches::Scope::from_claim(claims.branches.as_ref()).ok_or(Error::Unauthenticated)?,
            expires_at: Timestamp::from_second(exp).map_err(|_| Error::Unauthenticated)?,
        };
        Ok(VerifiedToken { principal, issued_at_second: iat })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> TokenSettings {
        TokenSettings::new(Secret::new("0123456789abcdef0123456789abcdef"))
    }

    fn user() -> User {
        User {
            id: UserId(3),
            first_name: "Asha".into(),
            last_name: "Rao".into(),
            email: "asha@example.com".into(),
            role_id: RoleId(2),
            branch_ids: crate::branches::Scope::All,
            is_active: true,
            created_at: Timestamp::UNIX_EPOCH,
        }
    }

    fn now() -> Timestamp {
        "2024-05-10T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn short_secrets_are_refused() {
        let result = Tokens::new(TokenSettings::new(Secret::new("too short")));
        assert!(matches!(result, Err(TokenConfigError::SecretTooShort(9))));
    }

    #[test]
    fn a_token_round_trips_into_a_principal() {
        let tokens = Tokens::new(settings()).unwrap();
        let issued = tokens.issue(&user(), false, vec!["Vendor:Read".into()], now().as_second()).unwrap();
        assert_eq!(issued.expires_at, "2024-05-11T12:00:00Z".parse().unwrap());
        let verified = tokens.verify(&issued.token, now()).unwrap();
        assert_eq!(verified.principal.user_id, UserId(3));
        assert_eq!(verified.principal.role_id, RoleId(2));
        assert!(!verified.principal.is_admin);
        assert_eq!(verified.issued_at_second, now().as_second());
        assert_eq!(verified.principal.permissions.iter().map(|a| a.to_string()).collect::<Vec<_>>(), ["Vendor:Read"]);
    }

    #[test]
    fn expired_tokens_are_refused_at_the_second_of_expiry() {
        let tokens = Tokens::new(settings()).unwrap();
        let issued = tokens.issue(&user(), false, vec![], now().as_second()).unwrap();
        let just_before = issued.expires_at - SignedDuration::from_secs(1);
        assert!(tokens.verify(&issued.token, just_before).is_ok());
        assert!(matches!(tokens.verify(&issued.token, issued.expires_at), Err(Error::Unauthenticated)));
    }

    #[test]
    fn a_remembered_token_is_still_checked_against_the_clock_and_its_exact_text() {
        let tokens = Tokens::new(settings()).unwrap();
        let issued = tokens.issue(&user(), false, vec!["Vendor:Read".into()], now().as_second()).unwrap();
        let first = tokens.verify(&issued.token, now()).unwrap();
        let again = tokens.verify(&issued.token, now()).expect("the remembered token");
        assert_eq!(
            (again.principal.user_id, again.issued_at_second),
            (first.principal.user_id, first.issued_at_second)
        );
        // One character of the signature changed: a different text, checked in full.
        let mut forged = issued.token.clone();
        let last = forged.pop().unwrap();
        forged.push(if last == 'A' { 'B' } else { 'A' });
        assert!(matches!(tokens.verify(&forged, now()), Err(Error::Unauthenticated)));
        assert!(matches!(tokens.verify(&issued.token, issued.expires_at), Err(Error::Unauthenticated)));
        // D39: a lifetime lowered since the token was remembered still shortens it.
        let mut shorter = settings();
        shorter.lifetime = SignedDuration::from_hours(1);
        let shorter = Tokens::new(shorter).unwrap();
        assert!(shorter.verify(&issued.token, now()).is_err());
        for n in 0..=VERIFIED_TOKENS_KEPT {
            let someone = User { id: UserId(100 + n as i64), ..user() };
            let token = tokens.issue(&someone, false, vec![], now().as_second()).unwrap();
            assert!(tokens.verify(&token.token, now()).is_ok());
        }
        let kept = tokens.verified.lock().unwrap().len();
        assert!((1..=VERIFIED_TOKENS_KEPT).contains(&kept), "the memory is bounded: {kept}");
    }

    #[test]
    fn tokens_from_another_secret_issuer_or_audience_are_refused() {
        let tokens = Tokens::new(settings()).unwrap();
        let mut other = settings();
        other.secret = Secret::new("another-secret-another-secret-xx");
        let forged = Tokens::new(other).unwrap().issue(&user(), true, vec![], now().as_second()).unwrap();
        assert!(tokens.verify(&forged.token, now()).is_err());
        for (issuer, audience) in [("someone-else", "pharmapay"), ("pharmapay", "someone-else")] {
            let mut other = settings();
            other.issuer = issuer.into();
            other.audience = audience.into();
            let token = Tokens::new(other).unwrap().issue(&user(), true, vec![], now().as_second()).unwrap();
            assert!(tokens.verify(&token.token, now()).is_err(), "iss {issuer} aud {audience}");
        }
    }

    #[test]
    fn a_token_carries_the_issue_second_it_was_given() {
        let tokens = Tokens::new(settings()).unwrap();
        let issued = tokens.issue(&user(), false, vec![], now().as_second() + 1).unwrap();
        let verified = tokens.verify(&issued.token, now()).unwrap();
        assert_eq!(verified.issued_at_second, now().as_second() + 1);
        let payload = decode_payload(&issued.token);
        assert_eq!(payload["iat"], serde_json::json!(now().as_second() + 1));
        assert_eq!(payload["exp"], serde_json::json!(now().as_second() + 1 + 24 * 3600));
    }

    #[test]
    fn lowering_the_lifetime_shortens_tokens_already_issued() {
        let long_lived = Tokens::new(settings()).unwrap().issue(&user(), false, vec![], now().as_second()).unwrap();
        let mut shorter = settings();
        shorter.lifetime = SignedDuration::from_hours(1);
        let tokens = Tokens::new(shorter).unwrap();
        assert!(matches!(tokens.verify(&long_lived.token, now()), Err(Error::Unauthenticated)));
    }

    #[test]
    fn tokens_dated_more_than_a_minute_ahead_are_refused() {
        let tokens = Tokens::new(settings()).unwrap();
        let ahead = tokens.issue(&user(), false, vec![], now().as_second() + 61).unwrap();
        assert!(matches!(tokens.verify(&ahead.token, now()), Err(Error::Unauthenticated)));
        let slightly_ahead = tokens.issue(&user(), false, vec![], now().as_second() + 60).unwrap();
        assert!(tokens.verify(&slightly_ahead.token, now()).is_ok());
    }

    #[test]
    fn tokens_without_an_issue_time_are_refused() {
        let tokens = Tokens::new(settings()).unwrap();
        let claims = serde_json::json!({
            "sub": "3", "email": "asha@example.com", "given_name": "Asha", "family_name": "Rao",
            "role_id": "2", "is_admin": "false", "perm": [], "exp": now().as_second() + 3600,
            "iss": "pharmapay", "aud": "pharmapay",
        });
        let key = EncodingKey::from_secret(settings().secret.expose().as_bytes());
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &key).unwrap();
        assert!(matches!(tokens.verify(&token, now()), Err(Error::Unauthenticated)));
    }

    /// The claims as written, read without checking the signature.
    fn decode_payload(token: &str) -> serde_json::Value {
        jsonwebtoken::dangerous::insecure_decode_claims(token).unwrap()
    }

    #[test]
    fn admin_tokens_carry_only_the_wildcard_entry() {
        let tokens = Tokens::new(settings()).unwrap();
        let issued = tokens.issue(&user(), true, vec!["Vendor:Read".into()], now().as_second()).unwrap();
        let payload = issued.token.split('.').nth(1).unwrap();
        let verified = tokens.verify(&issued.token, now()).unwrap();
        assert!(verified.principal.is_admin);
        assert!(verified.principal.permissions.iter().next().is_none());
        assert!(!payload.is_empty());
    }

    #[test]
    fn secrets_never_print() {
        assert_eq!(format!("{:?}", Secret::new("hunter2")), "[redacted]");
        assert_eq!(Secret::generate().expose().len(), 64);
    }
}
