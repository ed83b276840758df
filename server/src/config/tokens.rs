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
    pub name: String,
    pub role: duet_protocol::rest::Role,
    pub sha256: String,
}

/// A checked `[[token]]`.
#[derive(Debug, Clone)]
pub struct NamedToken {
    pub name: String,
    pub role: duet_protocol::rest::Role,
    pub sha256: [u8; 32],
}

impl ConfigFile {
    /// The checked `[[token]]`s: names unique, `owner` reserved for the
    /// main token, hashes 64 hex digits.
    pub fn named_tokens(&self) -> Result<Vec<NamedToken>> {
        let mut out: Vec<NamedToken> = Vec::new();
        for t in &self.tokens {
            if t.name.is_empty()
                || t.name == "owner"
                || t.name.starts_with("share:")
                || !t
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                bail!(
                    "token name {:?} must be non-empty, not \"owner\", and use only letters, digits, '-', '_' and '.'",
                    t.name
                );
            }
            if out.iter().any(|o| o.name == t.name) {
                bail!("token {:?} is defined twice", t.name);
            }
            let Some(sha256) = crate::auth::parse_sha256_hex(&t.sha256) else {
                bail!(
                    "token {:?}: sha256 must be the 64 hex digits of the token's SHA-256 (`duet token` prints it)",
                    t.name
                );
            };
            out.push(NamedToken {
                name: t.name.clone(),
                role: t.role,
                sha256,
            });
        }
        Ok(out)
    }
}

/// A new random token for `[[token]]` `name` with `role`: the token (to
/// hand out once) and the config snippet (with its hash only).
pub fn mint_token(name: &str, role: duet_protocol::rest::Role) -> Result<(String, String)> {
    let token = crate::auth::random_token()?;
    let hash = crate::auth::hex(&crate::auth::sha256(token.as_bytes()));
    let snippet = format!(
        "[[token]]\nname = {}\nrole = \"{}\"\nsha256 = \"{hash}\"\n",
        toml::Value::String(name.to_string()),
        role.as_str()
    );
    Ok((token, snippet))
}
