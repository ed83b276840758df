//! Session directories an earlier run of duet left behind (a restart, a
//! crash): programs still running are ended, sessions within their
//! retention are listed again as ended, and older ones are deleted.

use std::sync::Arc;
use std::time::Duration;

use tracing::{info, warn};

use duet_protocol::ids::SessionId;
use duet_protocol::rest::ExitInfo;

use super::Registry;
use crate::session::record::Record;
use crate::session::Session;
use crate::state_dir;

impl Registry {
    /// Session directories left by an earlier run of duet (a restart, a
    /// crash) are no session of this one, and nothing else would ever
    /// delete them: each is deleted once its retention time, counted from
    /// its last change, is over. Only directories duet made (with the
    /// marker) are touched. Must run inside a tokio runtime.
    pub(super) fn sweep_leftovers(self: &Arc<Self>) {
        let Ok(entries) = std::fs::read_dir(&self.opts.state_dir) else {
            return;
        };
        let (mut now, mut later, mut recovered, mut ended) = (0, 0, 0, 0);
        for entry in entries.flatten() {
            let path = entry.path();
            let is_session = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.parse::<SessionId>().is_ok());
            if !is_session || !state_dir::is_session_dir(&path) {
                continue;
            }
            let left = self
                .opts
                .retain
                .checked_sub(last_change(&path).elapsed().unwrap_or_default())
                .filter(|left| !left.is_zero());
            // A program an earlier duet left running (it was killed, or
            // crashed) has nobody to end it but us.
            let record = Record::load(&path);
            let mut killed = false;
            if let Some(r) = record
                .as_ref()
                .filter(|r| r.exit.is_none() && r.program_alive())
            {
                end_leftover(r, self.opts.limits.kill_grace);
                killed = true;
                ended += 1;
            }
            let Some(left) = left else {
                now += 1;
                remove_leftover(&path);
                continue;
            };
            // Its transcript stays listed and readable until its retention
            // is over, as if this duet had run it.
            if let Some(record) = record {
                let id = record.id;
                // No end recorded: the earlier duet went away first (the
                // program died with it, or we just ended it).
                let exit = record.exit.clone().unwrap_or(ExitInfo {
                    code: None,
                    signal: killed.then(|| "SIGTERM".to_string()),
                    success: false,
                    server_stopped: true,
                    ended_by: None,
                });
                let can_resume = self
                    .profiles
                    .get(Some(&record.profile))
                    .is_some_and(|p| p.can_resume());
                let observe = self.opts.observe.session(id, &record.profile, &path);
                match Session::recovered(
                    record,
                    path.clone(),
                    self.opts.limits,
                    can_resume,
                    exit,
                    observe,
                ) {
                    Ok(session) => {
                        recovered += 1;
                        let mut table = self.table();
                        table.sessions.insert(id, session);
                        let reaper = self.reap_after(id, left);
                        table.reapers.insert(id, reaper);
                        continue;
                    }
                    Err(e) => warn!(%id, ?e, "recovering a session from an earlier run"),
                }
            }
            later += 1;
            tokio::spawn(async move {
                tokio::time::sleep(left).await;
                remove_leftover(&path);
            });
        }
        self.link_resumptions();
        if now + later + recovered + ended > 0 {
            info!(
                deleted = now,
                deleted_later = later,
                recovered,
                programs_ended = ended,
                "session directories from an earlier run"
            );
        }
    }
}

impl Registry {
    /// Each recovered session that another one resumed leads to it again
    /// (the latest, when it was resumed more than once), as before the
    /// restart.
    fn link_resumptions(&self) {
        let mut sessions = self.all();
        sessions.sort_by_key(|s| s.created_at);
        for s in &sessions {
            let parent = s
                .resumed_from()
                .and_then(|p| sessions.iter().find(|x| x.id == p));
            if let Some(parent) = parent {
                parent.set_resumed_by(s.id);
            }
        }
    }
}

/// When anything in a session directory last changed (the events file
/// grows for as long as the program talks).
fn last_change(dir: &std::path::Path) -> std::time::SystemTime {
    ["events.jsonl", "input.jsonl", "audit.jsonl", "."]
        .iter()
        .filter_map(|f| {
            std::fs::metadata(dir.join(f))
                .and_then(|m| m.modified())
                .ok()
        })
        .max()
        .unwrap_or(std::time::SystemTime::UNIX_EPOCH)
}

/// Ends the process group of a program an earlier duet started: SIGTERM,
/// then SIGKILL after `grace` if it is still the same process.
fn end_leftover(record: &Record, grace: Duration) {
    use nix::sys::signal::{killpg, Signal};
    let pid = nix::unistd::Pid::from_raw(record.pid as i32);
    info!(pid = record.pid, id = %record.id, "ending a program an earlier duet left running");
    let _ = killpg(pid, Signal::SIGTERM);
    let record = record.clone();
    tokio::spawn(async move {
        tokio::time::sleep(grace).await;
        if record.program_alive() {
            let _ = killpg(pid, Signal::SIGKILL);
        }
    });
}

fn remove_leftover(path: &std::path::Path) {
    if let Err(e) = std::fs::remove_dir_all(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            warn!(path = %path.display(), ?e, "removing a session directory from an earlier run");
        }
    }
}
