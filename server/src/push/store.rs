//! The devices that receive pushes, kept in `<state-dir>/push-subscriptions.json`
//! (mode 0600; written to a temporary file and renamed, so a crash leaves the
//! old list or the new one, never half of one). Each belongs to the
//! principal that subscribed it (`owner`, a token name, `share:<id>`); a
//! share's devices hear only of its session.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use duet_protocol::ids::SessionId;
use duet_protocol::push::PushDevice;
use serde::{Deserialize, Serialize};

use crate::clock::now_ms;
use crate::sync::lock;

/// File name of the list in the state directory.
pub(crate) const STORE_FILE: &str = "push-subscriptions.json";
/// Devices per principal. A browser that subscribes anew (a new endpoint)
/// pushes out its principal's oldest device beyond this.
pub(crate) const MAX_PER_PRINCIPAL: usize = 10;
/// Devices in all: a bound on the file and on each fan-out.
pub(crate) const MAX_TOTAL: usize = 1000;

/// One device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Subscription {
    pub principal: String,
    /// For a share link's device: the only session it hears of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
    pub endpoint: String,
    /// base64url, as the browser gave them (checked on the way in).
    pub p256dh: String,
    pub auth: String,
    #[serde(default)]
    pub muted: BTreeSet<SessionId>,
    pub created_at: u64,
}

impl Subscription {
    /// What its owner sees of it.
    pub(crate) fn device(&self) -> PushDevice {
        PushDevice {
            endpoint: self.endpoint.clone(),
            muted: self.muted.iter().copied().collect(),
            created_at: self.created_at,
        }
    }

    /// Whether this device hears of session `id`.
    pub(crate) fn wants(&self, id: SessionId) -> bool {
        self.session.is_none_or(|s| s == id) && !self.muted.contains(&id)
    }
}

/// Why a change to the list was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("too many push subscriptions on this server (limit {MAX_TOTAL})")]
    Full,
    #[error("no such push subscription for you")]
    NotFound,
    #[error("saving {path}: {source}")]
    Save {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// See the module docs.
pub(crate) struct Store {
    path: PathBuf,
    subs: Mutex<Vec<Subscription>>,
}

impl Store {
    /// Loads the list from `state_dir` (empty if there is none yet). A
    /// damaged file is set aside (`.bad`) rather than blocking the start:
    /// its devices subscribe again when their pages next load.
    pub(crate) fn load(state_dir: &Path) -> Self {
        let path = state_dir.join(STORE_FILE);
        let subs = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<Vec<Subscription>>(&bytes) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(path = %path.display(), ?e, "push subscriptions unreadable; set aside as .bad");
                    let _ = std::fs::rename(&path, path.with_extension("json.bad"));
                    Vec::new()
                }
            },
            Err(_) => Vec::new(),
        };
        Self {
            path,
            subs: Mutex::new(subs),
        }
    }

    /// Every device (a copy: delivery works on it without the lock).
    pub(crate) fn all(&self) -> Vec<Subscription> {
        lock(&self.subs).clone()
    }

    /// `principal`'s devices.
    pub(crate) fn of(&self, principal: &str) -> Vec<PushDevice> {
        lock(&self.subs)
            .iter()
            .filter(|s| s.principal == principal)
            .map(Subscription::device)
            .collect()
    }

    /// Adds a device, or renews it (same endpoint: new keys, new owner,
    /// mutes kept if the owner is the same).
    pub(crate) fn upsert(&self, mut sub: Subscription) -> Result<PushDevice, StoreError> {
        let mut subs = lock(&self.subs);
        if let Some(old) = subs.iter().position(|s| s.endpoint == sub.endpoint) {
            let old = subs.remove(old);
            if old.principal == sub.principal {
                sub.muted = old.muted;
                sub.created_at = old.created_at;
            }
        } else if subs.len() >= MAX_TOTAL {
            return Err(StoreError::Full);
        }
        let mine: Vec<usize> = (0..subs.len())
            .filter(|&i| subs[i].principal == sub.principal)
            .collect();
        if mine.len() >= MAX_PER_PRINCIPAL {
            if let Some(&oldest) = mine.iter().min_by_key(|&&i| subs[i].created_at) {
                let gone = subs.remove(oldest);
                tracing::info!(principal = %gone.principal, "push: a device was replaced by a newer one (limit {MAX_PER_PRINCIPAL} per principal)");
            }
        }
        let device = sub.device();
        subs.push(sub);
        self.save(&subs)?;
        Ok(device)
    }

    /// Removes `principal`'s device at `endpoint`.
    pub(crate) fn remove(&self, principal: &str, endpoint: &str) -> Result<(), StoreError> {
        let mut subs = lock(&self.subs);
        let before = subs.len();
        subs.retain(|s| !(s.principal == principal && s.endpoint == endpoint));
        if subs.len() == before {
            return Err(StoreError::NotFound);
        }
        self.save(&subs)
    }

    /// Removes the device at `endpoint`, whoever's (the push service said
    /// it is gone). Whether there was one.
    pub(crate) fn prune(&self, endpoint: &str) -> bool {
        let mut subs = lock(&self.subs);
        let before = subs.len();
        subs.retain(|s| s.endpoint != endpoint);
        let pruned = subs.len() != before;
        if pruned {
            if let Err(e) = self.save(&subs) {
                tracing::warn!(?e, "push: saving after a prune");
            }
        }
        pruned
    }

    /// Mutes or unmutes session `session` on `principal`'s device.
    pub(crate) fn mute(
        &self,
        principal: &str,
        endpoint: &str,
        session: SessionId,
        muted: bool,
    ) -> Result<PushDevice, StoreError> {
        let mut subs = lock(&self.subs);
        let sub = subs
            .iter_mut()
            .find(|s| s.principal == principal && s.endpoint == endpoint)
            .ok_or(StoreError::NotFound)?;
        if muted {
            sub.muted.insert(session);
        } else {
            sub.muted.remove(&session);
        }
        let device = sub.device();
        self.save(&subs)?;
        Ok(device)
    }

    /// Writes the list. Under the lock on purpose: the file is small (a
    /// few hundred bytes a device) and changes when a person clicks, and
    /// writes must land in the order they were made.
    fn save(&self, subs: &[Subscription]) -> Result<(), StoreError> {
        let err = |source| StoreError::Save {
            path: self.path.clone(),
            source,
        };
        let tmp = self.path.with_extension("json.tmp");
        let json = serde_json::to_vec_pretty(subs).unwrap_or_default();
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(err)?;
        f.write_all(&json).map_err(err)?;
        f.sync_all().map_err(err)?;
        std::fs::rename(&tmp, &self.path).map_err(err)
    }
}

/// A new device of `principal`, now.
pub(crate) fn subscription(
    principal: &str,
    session: Option<SessionId>,
    endpoint: String,
    p256dh: String,
    auth: String,
) -> Subscription {
    Subscription {
        principal: principal.to_string(),
        session,
        endpoint,
        p256dh,
        auth,
        muted: BTreeSet::new(),
        created_at: now_ms(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(principal: &str, n: u64) -> Subscription {
        Subscription {
            created_at: n,
            ..subscription(
                principal,
                None,
                format!("https://p.example/{principal}/{n}"),
                "k".into(),
                "a".into(),
            )
        }
    }

    #[test]
    fn kept_across_loads_bounded_per_principal_and_muted_per_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::load(dir.path());
        for n in 0..(MAX_PER_PRINCIPAL as u64 + 2) {
            store.upsert(sub("owner", n)).unwrap();
        }
        store.upsert(sub("ci", 0)).unwrap();
        let owner = store.of("owner");
        assert_eq!(owner.len(), MAX_PER_PRINCIPAL);
        // The oldest went.
        assert!(owner.iter().all(|d| d.created_at >= 2));
        let s = SessionId::new();
        store.mute("owner", &owner[0].endpoint, s, true).unwrap();
        assert!(matches!(
            store.mute("ci", &owner[0].endpoint, s, true),
            Err(StoreError::NotFound)
        ));
        let again = Store::load(dir.path());
        assert_eq!(again.all(), store.all());
        assert!(!again
            .all()
            .iter()
            .find(|d| d.endpoint == owner[0].endpoint)
            .unwrap()
            .wants(s));
        assert!(again.prune(&owner[0].endpoint));
        assert!(!again.prune(&owner[0].endpoint));
        assert!(matches!(
            again.remove("owner", "https://nope"),
            Err(StoreError::NotFound)
        ));
        assert_eq!(
            Store::load(dir.path()).of("owner").len(),
            MAX_PER_PRINCIPAL - 1
        );
    }

    #[test]
    fn a_damaged_file_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(STORE_FILE), "{not json").unwrap();
        assert!(Store::load(dir.path()).all().is_empty());
        assert!(dir.path().join("push-subscriptions.json.bad").exists());
    }
}
