//! All sessions of a server: creation within limits, lookup, ending, the
//! reaping of ended sessions after their retention time, and shutdown.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::Context;
use axum::http::StatusCode;
use duet_protocol::ids::SessionId;
use duet_protocol::rest::{CreateSession, SessionInfo};
use duet_protocol::ws::ErrorCode;
use tracing::{info, warn};

use crate::config::Profiles;
use crate::error::AppError;
use crate::session::channel::watcher::Watcher;
use crate::session::{Session, SessionLimits, SessionOptions};

/// Limits and places that apply to every session.
#[derive(Debug, Clone)]
pub(crate) struct RegistryOptions {
    pub state_dir: PathBuf,
    /// Sessions whose program still runs.
    pub max_sessions: usize,
    /// How long an ended session's transcript stays available.
    pub retain: Duration,
    pub limits: SessionLimits,
}

/// See the module docs.
pub(crate) struct Registry {
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    profiles: Profiles,
    opts: RegistryOptions,
    watcher: Arc<Watcher>,
}

impl Registry {
    /// A registry that starts sessions from `profiles`.
    pub(crate) fn new(profiles: Profiles, opts: RegistryOptions) -> anyhow::Result<Arc<Self>> {
        create_private_dir(&opts.state_dir).with_context(|| {
            format!("creating the state directory {}", opts.state_dir.display())
        })?;
        let registry = Arc::new(Self {
            sessions: Mutex::new(HashMap::new()),
            profiles,
            opts,
            watcher: Arc::new(Watcher::new()?),
        });
        registry.sweep_leftovers();
        Ok(registry)
    }

    /// Session directories left by an earlier run of duet (a restart, a
    /// crash) are no session of this one, and nothing else would ever
    /// delete them: each is deleted once its retention time, counted from
    /// its last change, is over. Must run inside a tokio runtime.
    fn sweep_leftovers(&self) {
        let Ok(entries) = std::fs::read_dir(&self.opts.state_dir) else {
            return;
        };
        let (mut now, mut later) = (0, 0);
        for entry in entries.flatten() {
            let path = entry.path();
            let is_session = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.parse::<SessionId>().is_ok());
            if !is_session || !path.is_dir() {
                continue;
            }
            let age = last_change(&path).elapsed().unwrap_or_default();
            match self.opts.retain.checked_sub(age) {
                Some(left) if !left.is_zero() => {
                    later += 1;
                    tokio::spawn(async move {
                        tokio::time::sleep(left).await;
                        remove_leftover(&path);
                    });
                }
                _ => {
                    now += 1;
                    remove_leftover(&path);
                }
            }
        }
        if now + later > 0 {
            info!(
                deleted = now,
                deleted_later = later,
                "session directories from an earlier run"
            );
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<SessionId, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The profiles on offer.
    pub(crate) fn profiles(&self) -> &Profiles {
        &self.profiles
    }

    /// Starts a session.
    pub(crate) fn create(self: &Arc<Self>, req: CreateSession) -> Result<Arc<Session>, AppError> {
        let profile = self.profiles.get(req.profile.as_deref()).ok_or_else(|| {
            AppError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::UnknownProfile,
                format!(
                    "no profile {:?}; see GET /api/profiles",
                    req.profile.unwrap_or_default()
                ),
            )
        })?;
        let cols = req.cols.unwrap_or(120).clamp(2, 1000);
        let rows = req.rows.unwrap_or(36).clamp(1, 500);
        // Check and reserve under one lock so concurrent creates cannot
        // overshoot the limit.
        let id = SessionId::new();
        let dir = self.opts.state_dir.join(id.to_string());
        {
            let map = self.map();
            let running = map.values().filter(|s| !s.is_exited()).count();
            if running >= self.opts.max_sessions {
                return Err(AppError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    ErrorCode::LimitReached,
                    format!(
                        "{running} sessions are running, the limit is {} (--max-sessions)",
                        self.opts.max_sessions
                    ),
                ));
            }
        }
        create_private_dir(&dir).map_err(|e| {
            AppError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                format!("creating the session directory: {e}"),
            )
        })?;
        let session = Session::start(SessionOptions {
            id,
            profile: profile.clone(),
            dir: dir.clone(),
            cols,
            rows,
            limits: self.opts.limits,
            watcher: self.watcher.clone(),
        })
        .map_err(|e| {
            let _ = std::fs::remove_dir_all(&dir);
            AppError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                format!("starting profile {:?}: {e:#}", profile.name),
            )
        })?;
        self.map().insert(id, session.clone());
        let registry = self.clone();
        let reaped = session.clone();
        tokio::spawn(async move {
            reaped.wait_exited().await;
            tokio::time::sleep(registry.opts.retain).await;
            registry.remove(reaped.id);
        });
        Ok(session)
    }

    /// The session `id`, running or retained.
    pub(crate) fn get(&self, id: SessionId) -> Option<Arc<Session>> {
        self.map().get(&id).cloned()
    }

    /// All sessions, oldest first.
    pub(crate) fn list(&self) -> Vec<SessionInfo> {
        let sessions: Vec<Arc<Session>> = self.map().values().cloned().collect();
        let mut infos: Vec<SessionInfo> = sessions.iter().map(|s| s.info()).collect();
        infos.sort_by_key(|i| (i.created_at, i.id));
        infos
    }

    /// Forgets a session and deletes its directory (the transcript).
    pub(crate) fn remove(&self, id: SessionId) {
        let Some(session) = self.map().remove(&id) else {
            return;
        };
        session.terminate();
        if let Err(e) = std::fs::remove_dir_all(&session.dir) {
            warn!(%id, ?e, "removing the session directory");
        }
        info!(%id, "session removed");
    }

    /// Ends every program and waits (bounded) for them to exit.
    pub(crate) async fn shutdown(&self) {
        let sessions: Vec<Arc<Session>> = self.map().values().cloned().collect();
        for s in &sessions {
            s.terminate();
        }
        let grace = self.opts.limits.kill_grace + Duration::from_secs(2);
        let all = futures_util::future::join_all(sessions.iter().map(|s| s.wait_exited()));
        if tokio::time::timeout(grace, all).await.is_err() {
            warn!("some programs did not exit in time");
        }
    }
}

/// When anything in a session directory last changed (the events file
/// grows for as long as the program talks).
fn last_change(dir: &std::path::Path) -> std::time::SystemTime {
    ["events.jsonl", "input.jsonl", "."]
        .iter()
        .filter_map(|f| {
            std::fs::metadata(dir.join(f))
                .and_then(|m| m.modified())
                .ok()
        })
        .max()
        .unwrap_or(std::time::SystemTime::UNIX_EPOCH)
}

fn remove_leftover(path: &std::path::Path) {
    if let Err(e) = std::fs::remove_dir_all(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            warn!(path = %path.display(), ?e, "removing a session directory from an earlier run");
        }
    }
}

/// Creates a directory only its owner can enter (and any missing parents).
pub(crate) fn create_private_dir(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)?;
    // `mode` is filtered by the umask and ignored for existing directories.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}
