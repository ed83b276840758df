//! The live board: what every session is doing, for `GET
//! /api/sessions/watch`. One follower task per session (`track.rs`) turns
//! the session's own signals (control news, new events, terminal output,
//! its exit) into a last-activity time and a busy flag, and bumps one
//! generation counter; each watcher (`http.rs`) wakes on the counter and
//! sends the list again if what it may see changed.

mod track;

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use duet_protocol::board::{Board as BoardMessage, BoardEntry};
use duet_protocol::ids::SessionId;
use duet_protocol::rest::{ApprovalState, SessionStatus};
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::auth::Principal;
use crate::clock::now_ms;
use crate::registry::Registry;
use crate::session::Session;
use crate::sync::lock;

/// What the board knows of a session besides its [`Session::info`].
struct Track {
    /// Unix ms of the last sign of life.
    last_activity: u64,
    follower: AbortHandle,
}

/// See the module docs.
pub(crate) struct Board {
    registry: Arc<Registry>,
    /// Bumped on every change a watcher may show.
    generation: watch::Sender<u64>,
    tracks: Mutex<HashMap<SessionId, Track>>,
}

impl Board {
    /// A board over `registry`'s sessions, following them until `stop`
    /// turns true.
    pub(crate) fn start(registry: Arc<Registry>, mut stop: watch::Receiver<bool>) -> Arc<Self> {
        let board = Arc::new(Self {
            registry,
            generation: watch::channel(0).0,
            tracks: Mutex::default(),
        });
        let mut changes = board.registry.changes();
        let weak = Arc::downgrade(&board);
        board.reconcile(&weak);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    r = changes.changed() => if r.is_err() { break },
                    _ = stop.wait_for(|s| *s) => break,
                }
                let Some(board) = weak.upgrade() else { return };
                board.reconcile(&weak);
            }
            if let Some(board) = weak.upgrade() {
                for (_, t) in lock(&board.tracks).drain() {
                    t.follower.abort();
                }
            }
        });
        board
    }

    /// Follows new sessions, forgets removed ones, and tells watchers.
    fn reconcile(&self, weak: &Weak<Board>) {
        let sessions = self.registry.all();
        {
            let mut tracks = lock(&self.tracks);
            tracks.retain(|id, t| {
                let keep = sessions.iter().any(|s| s.id == *id);
                if !keep {
                    t.follower.abort();
                }
                keep
            });
            for s in sessions {
                if tracks.contains_key(&s.id) {
                    continue;
                }
                let info = s.info();
                let last_activity = info.ended_at.unwrap_or(info.created_at);
                let follower = tokio::spawn(track::follow(weak.clone(), s.clone()));
                tracks.insert(
                    s.id,
                    Track {
                        last_activity,
                        follower: follower.abort_handle(),
                    },
                );
            }
        }
        self.bump();
    }

    /// Something watchers show changed (a rename, say).
    pub(crate) fn bump(&self) {
        self.generation.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// Session `id` did something now.
    fn touch(&self, id: SessionId) {
        let now = now_ms();
        if let Some(t) = lock(&self.tracks).get_mut(&id) {
            t.last_activity = t.last_activity.max(now);
        }
        self.bump();
    }

    /// Changes whenever the board may look different.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// The board as `who` may see it, what needs attention first.
    pub(crate) fn snapshot(&self, who: &Principal) -> BoardMessage {
        let sessions: Vec<Arc<Session>> = self
            .registry
            .all()
            .into_iter()
            .filter(|s| who.sees(s.id))
            .collect();
        let mut entries: Vec<BoardEntry> = sessions
            .iter()
            .map(|s| {
                let session = s.info();
                let pending = s
                    .approvals()
                    .into_iter()
                    .filter(|a| a.state == ApprovalState::Pending)
                    .collect();
                let last_activity = lock(&self.tracks)
                    .get(&s.id)
                    .map(|t| t.last_activity)
                    .unwrap_or(session.ended_at.unwrap_or(session.created_at));
                let running = session.status == SessionStatus::Running;
                BoardEntry {
                    busy_since: s.conversation.busy_since().filter(|_| running),
                    session,
                    last_activity,
                    pending,
                }
            })
            .collect();
        sort_by_attention(&mut entries);
        BoardMessage { sessions: entries }
    }
}

/// What needs its user first: sessions with approvals waiting, then
/// running ones, then ended ones; newest first within each (a stable order,
/// so rows do not jump about with every burst of output).
fn sort_by_attention(entries: &mut [BoardEntry]) {
    entries.sort_by_key(|e| {
        let rank = if !e.pending.is_empty() || e.session.pending_approvals > 0 {
            0
        } else if e.session.status == SessionStatus::Running {
            1
        } else {
            2
        };
        (rank, Reverse(e.session.created_at), e.session.id)
    });
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use duet_protocol::rest::{ChannelInfo, SessionInfo};

    /// A board entry for tests (also `push::triggers`').
    pub(crate) fn entry(created_at: u64, status: SessionStatus, pending: u32) -> BoardEntry {
        BoardEntry {
            session: SessionInfo {
                id: SessionId::new(),
                name: None,
                profile: "demo".into(),
                status,
                created_at,
                ended_at: None,
                exit: None,
                pid: None,
                cols: 80,
                rows: 24,
                last_seq: 0,
                pending_approvals: pending,
                clients: 0,
                connected: vec![],
                work_dir: None,
                title: None,
                channel: ChannelInfo {
                    kind: "none".into(),
                    events: false,
                    submit: false,
                    approve: false,
                },
                agent_session_id: None,
                resumed_from: None,
                resumed_by: None,
                prompt_name: None,
                resumable: false,
                usage: None,
                budget: None,
            },
            last_activity: created_at,
            pending: vec![],
            busy_since: None,
        }
    }

    #[test]
    fn approvals_first_then_running_then_ended_newest_first_within() {
        let mut e = vec![
            entry(1, SessionStatus::Exited, 0),
            entry(2, SessionStatus::Running, 0),
            entry(3, SessionStatus::Running, 0),
            entry(4, SessionStatus::Exited, 0),
            entry(5, SessionStatus::Running, 1),
            entry(0, SessionStatus::Running, 2),
        ];
        sort_by_attention(&mut e);
        let order: Vec<u64> = e.iter().map(|e| e.session.created_at).collect();
        assert_eq!(order, vec![5, 0, 3, 2, 4, 1]);
    }
}
