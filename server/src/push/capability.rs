//! The secrets behind a notification's Allow and Deny: one per approval
//! and device, made when the push goes out, good for one answer to that
//! approval as that device's principal, for a few minutes. Only each
//! secret's SHA-256 is kept, every entry is compared in constant time, the
//! table is bounded (the oldest goes first), and an approval decided
//! anywhere takes its secrets with it. `POST /api/push/decide`
//! (`api/push.rs`) is the one thing a secret opens.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use duet_protocol::ids::SessionId;

use crate::clock::now_ms;
use crate::secret::{constant_time_eq, random_token, sha256};
use crate::sync::lock;

/// Secrets alive at once: a notification per approval and device; more
/// push out the oldest (whose approval most likely is decided).
pub(crate) const MAX_CAPABILITIES: usize = 4096;

/// What a secret allows: one answer to one approval, as one principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    pub(crate) session: SessionId,
    pub(crate) request_id: String,
    /// The device's principal (`owner`, a token's name, `share:<id>`).
    pub(crate) principal: String,
    /// The approval's notification tag: how a decision revokes them all.
    pub(crate) tag: String,
}

struct Entry {
    hash: [u8; 32],
    grant: Grant,
    expires_at: u64,
}

/// Why a secret opens nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("this answer is not valid: it was used already, its approval was decided, or it never was one")]
    Unknown,
    #[error("this answer expired: open duet to decide")]
    Expired,
}

/// See the module docs.
pub(crate) struct Capabilities {
    entries: Mutex<VecDeque<Entry>>,
    lifetime: Duration,
}

impl Capabilities {
    /// Secrets that live `lifetime`.
    pub(crate) fn new(lifetime: Duration) -> Self {
        Self {
            entries: Mutex::new(VecDeque::new()),
            lifetime,
        }
    }

    /// A new secret for `grant`, and when it expires (Unix ms).
    pub(crate) fn mint(&self, grant: Grant) -> anyhow::Result<(String, u64)> {
        let secret = random_token()?;
        let now = now_ms();
        let expires_at = now + self.lifetime.as_millis() as u64;
        let mut entries = lock(&self.entries);
        entries.retain(|e| e.expires_at > now);
        if entries.len() >= MAX_CAPABILITIES {
            entries.pop_front();
        }
        entries.push_back(Entry {
            hash: sha256(secret.as_bytes()),
            grant,
            expires_at,
        });
        Ok((secret, expires_at))
    }

    /// Spends `secret`: its grant, once. Every entry is compared (in
    /// constant time each), so the time taken says nothing of a match.
    pub(crate) fn redeem(&self, secret: &str) -> Result<Grant, Refused> {
        let hash = sha256(secret.as_bytes());
        let mut entries = lock(&self.entries);
        let mut found = None;
        for (i, e) in entries.iter().enumerate() {
            if constant_time_eq(&e.hash, &hash) {
                found = Some(i);
            }
        }
        let entry = found
            .and_then(|i| entries.remove(i))
            .ok_or(Refused::Unknown)?;
        if entry.expires_at <= now_ms() {
            return Err(Refused::Expired);
        }
        Ok(entry.grant)
    }

    /// The approval with notification `tag` was decided or withdrawn:
    /// its secrets open nothing any more.
    pub(crate) fn revoke(&self, tag: &str) {
        lock(&self.entries).retain(|e| e.grant.tag != tag);
    }

    /// Secrets alive (tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.entries).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(tag: &str) -> Grant {
        Grant {
            session: SessionId::new(),
            request_id: "r1".into(),
            principal: "owner".into(),
            tag: tag.into(),
        }
    }

    #[test]
    fn one_use_one_approval_a_few_minutes() {
        let caps = Capabilities::new(Duration::from_secs(600));
        let (a, expires) = caps.mint(grant("t1")).unwrap();
        let (b, _) = caps.mint(grant("t1")).unwrap();
        let (c, _) = caps.mint(grant("t2")).unwrap();
        assert!(expires > now_ms());
        assert_eq!(caps.redeem(&a).unwrap().tag, "t1");
        assert_eq!(caps.redeem(&a), Err(Refused::Unknown), "twice");
        assert_eq!(caps.redeem("nonsense"), Err(Refused::Unknown));
        // Decided elsewhere: the approval's other secrets go with it.
        caps.revoke("t1");
        assert_eq!(caps.redeem(&b), Err(Refused::Unknown));
        assert_eq!(caps.redeem(&c).unwrap().tag, "t2");
        let stale = Capabilities::new(Duration::ZERO);
        let (d, _) = stale.mint(grant("t3")).unwrap();
        assert_eq!(stale.redeem(&d), Err(Refused::Expired));
        assert_eq!(stale.redeem(&d), Err(Refused::Unknown));
    }

    #[test]
    fn the_table_is_bounded_oldest_first() {
        let caps = Capabilities::new(Duration::from_secs(600));
        let (first, _) = caps.mint(grant("first")).unwrap();
        for i in 0..MAX_CAPABILITIES {
            caps.mint(grant(&format!("t{i}"))).unwrap();
        }
        assert_eq!(caps.len(), MAX_CAPABILITIES);
        assert_eq!(caps.redeem(&first), Err(Refused::Unknown));
    }
}
