//! All sessions of a server: creation within limits, lookup, ending, the
//! reaping of ended sessions after their retention time, and shutdown.

mod leftovers;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::http::StatusCode;
use duet_protocol::ids::SessionId;
use duet_protocol::rest::{CreateSession, ResumeSession, SessionInfo};
use duet_protocol::ws::ErrorCode;
use tokio::task::AbortHandle;
use tracing::{info, warn};

use crate::config::{Launch, Profiles};
use crate::error::AppError;
use crate::session::{Misconfigured, Session, SessionLimits, SessionOptions, Watcher};
use crate::state_dir;

/// Limits and places that apply to every session.
#[derive(Clone)]
pub(crate) struct RegistryOptions {
    pub state_dir: PathBuf,
    /// Sessions whose program still runs.
    pub max_sessions: usize,
    /// How long an ended session's transcript stays available.
    pub retain: Duration,
    pub limits: SessionLimits,
    pub observe: Arc<crate::observe::Observer>,
}

/// The sessions, under one lock.
#[derive(Default)]
struct Table {
    sessions: HashMap<SessionId, Arc<Session>>,
    /// Each session's reaper, aborted when the session goes earlier.
    reapers: HashMap<SessionId, AbortHandle>,
    /// Sessions past the limit check and not yet in `sessions`: they count
    /// against the limit.
    starting: usize,
}

/// See the module docs.
pub(crate) struct Registry {
    table: Mutex<Table>,
    profiles: Profiles,
    opts: RegistryOptions,
    watcher: Arc<Watcher>,
    /// Bumped whenever a session is added or removed (the live board
    /// follows it).
    changes: tokio::sync::watch::Sender<u64>,
}

impl Registry {
    /// A registry that starts sessions from `profiles`.
    pub(crate) fn new(profiles: Profiles, opts: RegistryOptions) -> anyhow::Result<Arc<Self>> {
        state_dir::prepare(&opts.state_dir)?;
        let registry = Arc::new(Self {
            table: Mutex::new(Table::default()),
            profiles,
            opts,
            watcher: Arc::new(Watcher::new()?),
            changes: tokio::sync::watch::channel(0).0,
        });
        registry.sweep_leftovers();
        Ok(registry)
    }

    /// Removes session `id` after `after`; holds neither the session nor
    /// the registry meanwhile.
    fn reap_after(self: &Arc<Self>, id: SessionId, after: Duration) -> AbortHandle {
        let registry = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            if let Some(registry) = registry.upgrade() {
                registry.remove(id);
            }
        })
        .abort_handle()
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        crate::sync::lock(&self.table)
    }

    /// The profiles on offer.
    pub(crate) fn profiles(&self) -> &Profiles {
        &self.profiles
    }

    /// Starts a session.
    pub(crate) fn create(self: &Arc<Self>, req: CreateSession) -> Result<Arc<Session>, AppError> {
        self.start(req, None)
    }

    /// Starts a session that continues the ended session `id`'s
    /// conversation, with its profile and size, in its work dir.
    pub(crate) fn resume(
        self: &Arc<Self>,
        id: SessionId,
        size: ResumeSession,
    ) -> Result<Arc<Session>, AppError> {
        let old = self.get(id).ok_or_else(AppError::no_session)?;
        let not_resumable = |why: &str| {
            AppError::new(
                StatusCode::CONFLICT,
                ErrorCode::NotResumable,
                why.to_string(),
            )
        };
        if !old.is_exited() {
            return Err(not_resumable("the session is still running"));
        }
        let from = old.resume_from().ok_or_else(|| {
            not_resumable(
                "this session cannot be resumed: its profile has no resume_args, or the agent never said its conversation id",
            )
        })?;
        if self
            .table()
            .sessions
            .values()
            .any(|s| s.resumes(id) && !s.is_exited())
        {
            return Err(not_resumable(
                "a resumed copy of this session is already running",
            ));
        }
        // Checked and clamped by `start` as a create's size is.
        let (cols, rows) = old.size();
        // Where and how it ran, checked again (the directory may be gone).
        let req = CreateSession {
            profile: Some(old.profile.clone()),
            cols: Some(size.cols.unwrap_or(cols)),
            rows: Some(size.rows.unwrap_or(rows)),
            cwd: old
                .launch
                .cwd
                .as_ref()
                .map(|c| c.to_string_lossy().into_owned()),
            args: old.launch.args.clone(),
        };
        let new = self.start(req, Some(from))?;
        // The ended session leads to the one that goes on with it.
        old.set_resumed_by(new.id);
        self.changes.send_modify(|n| *n += 1);
        Ok(new)
    }

    fn start(
        self: &Arc<Self>,
        req: CreateSession,
        resume: Option<crate::session::ResumeFrom>,
    ) -> Result<Arc<Session>, AppError> {
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
        // As the WebSocket's `resize` does: a zero size is a client's bug,
        // not a size to clamp to (it made a 2-column terminal).
        if req.cols == Some(0) || req.rows == Some(0) {
            return Err(AppError::bad_request("cols and rows must be positive"));
        }
        let cols = req.cols.unwrap_or(120).clamp(2, 1000);
        let rows = req.rows.unwrap_or(36).clamp(1, 500);
        let launch = Launch::check(req.cwd.as_deref(), &req.args, profile, &self.opts.state_dir)?;
        // Check and reserve a slot under one lock, so concurrent creates
        // cannot overshoot the limit while each starts its program; the
        // slot is given back if the start fails.
        let id = SessionId::new();
        let slot = {
            let mut table = self.table();
            let running = table.sessions.values().filter(|s| !s.is_exited()).count();
            let busy = running + table.starting;
            if busy >= self.opts.max_sessions {
                return Err(AppError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    ErrorCode::LimitReached,
                    format!(
                        "{busy} sessions are running or starting, the limit is {} (--max-sessions)",
                        self.opts.max_sessions
                    ),
                ));
            }
            table.starting += 1;
            Slot { registry: self }
        };
        let dir =
            state_dir::create_session_dir(&self.opts.state_dir, &id.to_string()).map_err(|e| {
                AppError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::Internal,
                    format!("creating the session directory: {e}"),
                )
            })?;
        let session = Session::start(SessionOptions {
            id,
            profile: profile.launched(&launch),
            dir: dir.clone(),
            cols,
            rows,
            limits: self.opts.limits,
            watcher: self.watcher.clone(),
            resume,
            observe: self.opts.observe.session(id, &profile.name, &dir),
            launch,
        })
        .map_err(|e| {
            let _ = std::fs::remove_dir_all(&dir);
            // Still a 5xx: the request was fine, the server's profile is
            // not; the code tells the two apart.
            match e.downcast_ref::<Misconfigured>() {
                Some(why) => AppError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::ProfileMisconfigured,
                    format!("profile {:?} cannot start: {why}", profile.name),
                ),
                None => AppError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::Internal,
                    format!("starting profile {:?}: {e:#}", profile.name),
                ),
            }
        })?;
        {
            let mut table = self.table();
            table.sessions.insert(id, session.clone());
            // The reaper holds neither the session nor the registry while it
            // waits: a purged session is freed at once, not after `retain`.
            let mut exited = session.exited();
            let registry = Arc::downgrade(self);
            let retain = self.opts.retain;
            let reaper = tokio::spawn(async move {
                let _ = exited.wait_for(|e| *e).await;
                tokio::time::sleep(retain).await;
                if let Some(registry) = registry.upgrade() {
                    registry.remove(id);
                }
            });
            table.reapers.insert(id, reaper.abort_handle());
            slot.fill(table);
        }
        self.changes.send_modify(|n| *n += 1);
        Ok(session)
    }

    /// The session `id`, running or retained.
    pub(crate) fn get(&self, id: SessionId) -> Option<Arc<Session>> {
        self.table().sessions.get(&id).cloned()
    }

    /// All sessions, in no order.
    pub(crate) fn all(&self) -> Vec<Arc<Session>> {
        self.table().sessions.values().cloned().collect()
    }

    /// Changes when a session is added or removed.
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// All sessions, oldest first.
    pub(crate) fn list(&self) -> Vec<SessionInfo> {
        let sessions: Vec<Arc<Session>> = self.table().sessions.values().cloned().collect();
        let mut infos: Vec<SessionInfo> = sessions.iter().map(|s| s.info()).collect();
        infos.sort_by_key(|i| (i.created_at, i.id));
        infos
    }

    /// Forgets a session and deletes its directory (the transcript).
    pub(crate) fn remove(&self, id: SessionId) {
        let Some(session) = self.table().sessions.get(&id).cloned() else {
            return;
        };
        session.terminate();
        // The transcript goes first: once the session is unknown (404), its
        // files are gone too. A work dir that a resumed session runs in
        // stays, and goes with the last session that used it.
        let (work_users, parent_live) = {
            let table = self.table();
            let others = || table.sessions.values().filter(|s| s.id != id);
            (
                others().filter(|s| s.work_dir == session.work_dir).count(),
                others().any(|s| Some(s.dir.as_path()) == session.work_dir.parent()),
            )
        };
        let own_work = session.dir.join("work");
        let result = if work_users > 0 && session.work_dir == own_work {
            // The marker stays too: it is what lets the last user of the
            // work dir (or a later duet) delete this directory as duet's.
            remove_all_but(&session.dir, &["work", state_dir::MARKER])
        } else {
            if work_users == 0 && !parent_live && !session.work_dir.starts_with(&session.dir) {
                // An adopted work dir (of the session this one resumed),
                // under that session's directory, which goes with it.
                if let Some(parent) = session.work_dir.parent() {
                    if state_dir::is_session_dir(parent) {
                        let _ = std::fs::remove_dir_all(parent);
                    }
                }
            }
            std::fs::remove_dir_all(&session.dir)
        };
        if let Err(e) = result {
            if e.kind() != std::io::ErrorKind::NotFound {
                warn!(%id, ?e, "removing the session directory");
            }
        }
        let reaper = {
            let mut table = self.table();
            table.sessions.remove(&id);
            table.reapers.remove(&id)
        };
        session.mark_removed();
        self.changes.send_modify(|n| *n += 1);
        if let Some(reaper) = reaper {
            reaper.abort();
        }
        info!(%id, "session removed");
    }

    /// Ends every program and waits (bounded) for them to exit.
    pub(crate) async fn shutdown(&self) {
        let sessions: Vec<Arc<Session>> = self.table().sessions.values().cloned().collect();
        for s in &sessions {
            s.terminate_for_shutdown();
        }
        let grace = self.opts.limits.kill_grace + Duration::from_secs(2);
        let all = futures_util::future::join_all(sessions.iter().map(|s| s.wait_exited()));
        if tokio::time::timeout(grace, all).await.is_err() {
            warn!("some programs did not exit in time");
        }
    }
}

/// Deletes everything in `dir` but its entry `keep`.
fn remove_all_but(dir: &std::path::Path, keep: &[&str]) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if keep.iter().any(|k| entry.file_name() == *k) {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// A reserved place under `--max-sessions` while a session starts.
struct Slot<'a> {
    registry: &'a Registry,
}

impl Slot<'_> {
    /// The session is in the table (under the same lock): the slot has
    /// become a running session.
    fn fill(self, mut table: MutexGuard<'_, Table>) {
        table.starting -= 1;
        std::mem::forget(self);
    }
}

impl Drop for Slot<'_> {
    /// The start failed: give the slot back.
    fn drop(&mut self) {
        self.registry.table().starting -= 1;
    }
}
