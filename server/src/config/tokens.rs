//! Named tokens in the config file (`[[token]]`): their checks, and minting
//! a new one for `duet token`.

use anyhow::{bail, Result};
use serde::Deserialize;

use super::ConfigFile;

/// One `[[token]]`: a name, a role and the SHA-256 (hex) of the token. The
/// token itself is never written to the config (an unknown field such as
/// `token = "..."` is an error).
///
/// ```toml
/// [[token]]
/// name = "ci"
/// role = "driver"
/// sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    /// The principal's name: who is connected, in the audit trail and on
    /// approvals (not `owner`, which is the main token's).
    pub name: String,
    /// What the token may do.
    pub role: duet_protocol::rest::Role,
    /// The token's SHA-256, 64 hex digits (`duet token` prints it): the
    /// token itself is never stored.
    pub sha256: String,
}

/// A checked `[[token]]`.
#[derive(Debug, Clone)]
pub struct NamedToken {
    /// The principal's name, unique among the tokens.
    pub name: String,
    /// What the token may do.
    pub role: duet_protocol::rest::Role,
    /// The token's SHA-256, which a presented token's hash is compared
    /// with in constant time.
    pub sha256: [u8; 32],
}

impl ConfigFile {
    /// The checked `[[token]]`s: names unique, `owner` reserved for the
    /// main token, hashes 64 hex digits and unique.
    pub fn named_tokens(&self) -> Result<Vec<NamedToken>> {
        let mut out: Vec<NamedToken> = Vec::new();
        for t in &self.tokens {
            check_name(&t.name)?;
            if out.iter().any(|o| o.name == t.name) {
                bail!("token {:?} is defined twice", t.name);
            }
            let Some(sha256) = crate::secret::parse_sha256_hex(&t.sha256) else {
                bail!(
                    "token {:?}: sha256 must be the 64 hex digits of the token's SHA-256 (`duet token` prints it)",
                    t.name
                );
            };
            // One token, two entries: which role it gets would depend on
            // their order, and an operator who adds a lesser entry for a
            // token and forgets the old one could still be granting owner.
            if let Some(o) = out.iter().find(|o| o.sha256 == sha256) {
                bail!(
                    "tokens {:?} and {:?} have the same sha256: one token can have one role; remove one of them",
                    o.name,
                    t.name
                );
            }
            out.push(NamedToken {
                name: t.name.clone(),
                role: t.role,
                sha256,
            });
        }
        Ok(out)
    }
}

/// A name `[[token]]` may have: it shows in audit lines and in who is
/// connected, next to `owner` and `share:<id>`.
fn check_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name == "owner"
        || name.starts_with("share:")
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        bail!(
            "token name {name:?} must be non-empty, not \"owner\", and use only letters, digits, '-', '_' and '.'"
        );
    }
    Ok(())
}

/// A new random token for `[[token]]` `name` with `role`: the token (to
/// hand out once) and the config snippet (with its hash only). A name the
/// config would refuse is refused here, before a token is handed out.
pub fn mint_token(name: &str, role: duet_protocol::rest::Role) -> Result<(String, String)> {
    check_name(name)?;
    let token = crate::secret::random_token()?;
    let hash = crate::secret::hex(&crate::secret::sha256(token.as_bytes()));
    let snippet = format!(
        "[[token]]\nname = {}\nrole = \"{}\"\nsha256 = \"{hash}\"\n",
        toml::Value::String(name.to_string()),
        role.as_str()
    );
    Ok((token, snippet))
}

#[cfg(test)]
mod tests {
    use super::*;
    use duet_protocol::rest::Role;

    fn config(entries: &[(&str, &str, &str)]) -> ConfigFile {
        let text: String = entries
            .iter()
            .map(|(name, role, sha)| {
                format!("[[token]]\nname = \"{name}\"\nrole = \"{role}\"\nsha256 = \"{sha}\"\n")
            })
            .collect();
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn one_token_cannot_have_two_roles() {
        let a = "a".repeat(64);
        let b = "b".repeat(64);
        for order in [
            [("y", "owner", a.as_str()), ("x", "viewer", a.as_str())],
            [("x", "viewer", a.as_str()), ("y", "owner", a.as_str())],
        ] {
            let err = config(&order).named_tokens().unwrap_err().to_string();
            assert!(err.contains("same sha256"), "{err}");
        }
        let ok = config(&[("x", "viewer", &a), ("y", "owner", &b)]);
        assert_eq!(ok.named_tokens().unwrap().len(), 2);
    }

    #[test]
    fn a_name_the_config_refuses_is_not_minted() {
        for bad in ["", "owner", "my bot", "a\"b", "share:x"] {
            assert!(mint_token(bad, Role::Viewer).is_err(), "{bad:?}");
        }
        let (token, snippet) = mint_token("ci-1.bot_2", Role::Driver).unwrap();
        let file: ConfigFile = toml::from_str(&snippet).unwrap();
        let named = file.named_tokens().unwrap();
        assert_eq!(named[0].sha256, crate::secret::sha256(token.as_bytes()));
    }
}
