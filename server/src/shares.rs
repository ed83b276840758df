//! Share links: a secret that grants one role on one session until it
//! expires or its owner revokes it. Only the SHA-256 of each secret is
//! kept; revoking closes the share's live WebSockets at once (each watches
//! its share's `revoked`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{Role, Share};
use tokio::sync::watch;

use crate::clock::now_ms;
use crate::secret::{constant_time_eq, random_token, sha256};
use crate::sync::lock;

/// The longest a share link may live: a forgotten link must not work forever.
pub(crate) const MAX_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// Live shares at once (all sessions together); a bound on the table.
pub(crate) const MAX_SHARES: usize = 256;

struct Entry {
    session: SessionId,
    role: Role,
    expires_at: u64,
    hash: [u8; 32],
    revoked: watch::Sender<bool>,
}

/// Who a share secret stands for.
#[derive(Debug, Clone)]
pub(crate) struct Grant {
    pub id: String,
    pub session: SessionId,
    pub role: Role,
    /// Unix time in milliseconds.
    pub expires_at: u64,
}

/// Every live share, by id.
#[derive(Default)]
pub(crate) struct Shares {
    entries: Mutex<HashMap<String, Entry>>,
}

/// Why a share was not created.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ShareError {
    #[error("an owner share is not allowed: share driver, approver or viewer")]
    Owner,
    #[error("expires_in must be between 1 and {} seconds (7 days)", MAX_LIFETIME.as_secs())]
    Lifetime,
    #[error("too many share links (limit {MAX_SHARES}); revoke some")]
    Full,
    #[error("reading OS randomness: {0}")]
    Random(String),
}

impl Shares {
    /// A new share of `session`; returns it (with its URL) and its secret.
    pub(crate) fn create(
        &self,
        session: SessionId,
        role: Role,
        expires_in: u64,
    ) -> Result<Share, ShareError> {
        if role == Role::Owner {
            return Err(ShareError::Owner);
        }
        if expires_in == 0 || expires_in > MAX_LIFETIME.as_secs() {
            return Err(ShareError::Lifetime);
        }
        let secret = random_token().map_err(|e| ShareError::Random(e.to_string()))?;
        let id = random_token().map_err(|e| ShareError::Random(e.to_string()))?[..12].to_string();
        let now = now_ms();
        let expires_at = now + expires_in * 1000;
        let mut entries = lock(&self.entries);
        entries.retain(|_, e| e.expires_at > now);
        if entries.len() >= MAX_SHARES {
            return Err(ShareError::Full);
        }
        entries.insert(
            id.clone(),
            Entry {
                session,
                role,
                expires_at,
                hash: sha256(secret.as_bytes()),
                revoked: watch::channel(false).0,
            },
        );
        Ok(Share {
            id,
            role,
            expires_at,
            url: Some(format!("/?share={secret}")),
        })
    }

    /// The live shares of `session` (without secrets), oldest expiry first.
    pub(crate) fn list(&self, session: SessionId) -> Vec<Share> {
        let now = now_ms();
        let mut out: Vec<Share> = lock(&self.entries)
            .iter()
            .filter(|(_, e)| e.session == session && e.expires_at > now)
            .map(|(id, e)| Share {
                id: id.clone(),
                role: e.role,
                expires_at: e.expires_at,
                url: None,
            })
            .collect();
        out.sort_by(|a, b| a.expires_at.cmp(&b.expires_at).then(a.id.cmp(&b.id)));
        out
    }

    /// Revokes share `id` of `session`: it stops working and its sockets
    /// close. Whether there was such a share.
    pub(crate) fn revoke(&self, session: SessionId, id: &str) -> bool {
        let mut entries = lock(&self.entries);
        match entries.get(id) {
            Some(e) if e.session == session => {
                if let Some(e) = entries.remove(id) {
                    e.revoked.send_replace(true);
                }
                true
            }
            _ => false,
        }
    }

    /// The live share whose secret hashes to `hash`. Every entry is
    /// compared, in constant time each.
    pub(crate) fn lookup(&self, hash: &[u8; 32]) -> Option<Grant> {
        let now = now_ms();
        let entries = lock(&self.entries);
        let mut found = None;
        for (id, e) in entries.iter() {
            if constant_time_eq(&e.hash, hash) && e.expires_at > now {
                found = Some(Grant {
                    id: id.clone(),
                    session: e.session,
                    role: e.role,
                    expires_at: e.expires_at,
                });
            }
        }
        found
    }

    /// Share `id`, while it is live.
    pub(crate) fn get(&self, id: &str) -> Option<Grant> {
        let now = now_ms();
        lock(&self.entries)
            .get(id)
            .filter(|e| e.expires_at > now)
            .map(|e| Grant {
                id: id.to_string(),
                session: e.session,
                role: e.role,
                expires_at: e.expires_at,
            })
    }

    /// Whether share `id` is live (neither revoked nor expired).
    pub(crate) fn live(&self, id: &str) -> bool {
        let now = now_ms();
        lock(&self.entries)
            .get(id)
            .is_some_and(|e| e.expires_at > now)
    }

    /// Turns true when share `id` is revoked (at once if it is gone).
    pub(crate) fn revoked(&self, id: &str) -> watch::Receiver<bool> {
        match lock(&self.entries).get(id) {
            Some(e) => e.revoked.subscribe(),
            None => watch::channel(true).1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_owner_and_revoke() {
        let shares = Shares::default();
        let s = SessionId(uuid::Uuid::new_v4());
        assert!(matches!(
            shares.create(s, Role::Owner, 60),
            Err(ShareError::Owner)
        ));
        assert!(shares.create(s, Role::Viewer, 0).is_err());
        assert!(shares
            .create(s, Role::Viewer, MAX_LIFETIME.as_secs() + 1)
            .is_err());
        let share = shares.create(s, Role::Viewer, 60).unwrap();
        let secret = share
            .url
            .unwrap()
            .strip_prefix("/?share=")
            .unwrap()
            .to_string();
        let grant = shares.lookup(&sha256(secret.as_bytes())).unwrap();
        assert_eq!((grant.session, grant.role), (s, Role::Viewer));
        assert!(shares.list(s)[0].url.is_none());
        let revoked = shares.revoked(&share.id);
        assert!(!shares.revoke(SessionId(uuid::Uuid::new_v4()), &share.id));
        assert!(shares.revoke(s, &share.id));
        assert!(*revoked.borrow());
        assert!(shares.lookup(&sha256(secret.as_bytes())).is_none());
    }
}
