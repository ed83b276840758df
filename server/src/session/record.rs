//! What a session directory says about its session (`session.json`), so
//! that a duet started again after a crash knows what ran there: it ends a
//! program an earlier duet left running, and lists the session, transcript
//! and all, until its retention is over.

use std::io::Write;
use std::path::{Path, PathBuf};

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{ChannelInfo, ExitInfo};
use serde::{Deserialize, Serialize};

use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::sync::{broadcast, watch};

use super::channel::log::EventLog;
use super::channel::{self, Conversation};
use super::process::Process;
use super::terminal::{self, Terminal};
use super::Launch;
use super::{Session, SessionLimits, State};
use crate::clock::now_ms;
use crate::sync::lock;

/// The file name in the session directory.
pub(crate) const FILE: &str = "session.json";

/// See the module docs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) id: SessionId,
    pub(crate) profile: String,
    pub(crate) created_at: u64,
    pub(crate) pid: u32,
    /// The program's start time (clock ticks after boot, from
    /// `/proc/PID/stat`): a pid alone may have been reused since.
    pub(crate) pid_start: Option<u64>,
    pub(crate) cols: u16,
    pub(crate) rows: u16,
    pub(crate) channel: ChannelInfo,
    pub(crate) work_dir: PathBuf,
    #[serde(default)]
    pub(crate) resumed_from: Option<SessionId>,
    #[serde(default)]
    pub(crate) agent_session_id: Option<String>,
    #[serde(default)]
    pub(crate) ended_at: Option<u64>,
    #[serde(default)]
    pub(crate) exit: Option<ExitInfo>,
    /// The owner's name for the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    /// The first prompt, shortened (what the session is called until it
    /// has a name); for a reader: a recovered session derives it again
    /// from its events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_name: Option<String>,
    /// Where and how the owner asked it to run.
    #[serde(default, skip_serializing_if = "is_default")]
    pub(crate) launch: Launch,
}

fn is_default(l: &Launch) -> bool {
    *l == Launch::default()
}

impl Record {
    /// Writes the record into `dir` (whole or not at all).
    pub(crate) fn save(&self, dir: &Path) -> std::io::Result<()> {
        let tmp = dir.join(".session.json.tmp");
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        // Private like every file of a session (it names the program, its
        // arguments and who started it), whatever the umask.
        let mut file = crate::state_dir::create_private(&tmp)?;
        file.write_all(&text)?;
        drop(file);
        std::fs::rename(&tmp, dir.join(FILE))
    }

    /// The record in `dir`, if there is a readable one.
    pub(crate) fn load(dir: &Path) -> Option<Record> {
        let text = std::fs::read(dir.join(FILE)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Whether the program this record names still runs (same pid, same
    /// start time).
    pub(crate) fn program_alive(&self) -> bool {
        match (self.pid_start, start_time(self.pid)) {
            (Some(recorded), Some(now)) => recorded == now,
            _ => false,
        }
    }
}

impl Session {
    /// A session an earlier duet ran in `dir` (see `record.rs`): ended,
    /// its transcript numbered as before and readable, resumable like any
    /// ended session. Its program, if it still ran, was ended already.
    pub(crate) fn recovered(
        record: Record,
        dir: PathBuf,
        limits: SessionLimits,
        can_resume: bool,
        exit: ExitInfo,
        observe: Arc<crate::observe::SessionObserver>,
    ) -> Result<Arc<Session>> {
        let span = tracing::info_span!("session", id = %record.id, profile = %record.profile);
        let terminal = Arc::new(Terminal::new(
            record.cols,
            record.rows,
            limits.output,
            None,
        )?);
        let cast = dir.join(super::RECORDING_FILE);
        match terminal::recording::replay_tail(
            &cast,
            &terminal.output,
            terminal::recording::REPLAY_TAIL,
        ) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(?e, "replaying the recording into the screen"),
        }
        terminal.abandon();
        let control = broadcast::channel(16).0;
        let events_path = dir.join("events.jsonl");
        let (held, unsent) = channel::held::HeldFile::open(&dir);
        let conversation = Arc::new(
            Conversation::new(
                Arc::new(
                    EventLog::new(events_path.clone(), limits.event_cache_bytes).with_times(
                        channel::times::EventTimes::load(&dir.join(channel::times::FILE)),
                    ),
                ),
                control.clone(),
                limits.max_held_submits,
                limits.max_submit_bytes,
            )
            // Who decided what, which the events alone do not tell.
            .with_decisions(channel::decisions::Decisions::load(
                &dir.join(channel::decisions::FILE),
            ))
            // Prompts still held when the earlier duet died: unsent now.
            .with_held(held, unsent),
        );
        let mut tail = channel::dual_output::tail::Tail::new(limits.max_sidecar_line);
        if let Ok(batch) = tail.read(&events_path) {
            channel::dual_output::ingest::batch(&conversation, batch, limits.max_sidecar_line);
        }
        if let Some(line) = tail.flush_partial() {
            channel::dual_output::ingest::line(&conversation, line, limits.max_sidecar_line);
        }
        conversation.close();
        let session = Arc::new(Session {
            id: record.id,
            profile: record.profile.clone(),
            created_at: record.created_at,
            dir,
            work_dir: record.work_dir.clone(),
            launch: record.launch.clone(),
            resumed_from: record.resumed_from,
            can_resume,
            limits,
            terminal,
            conversation,
            channel: None,
            channel_info: record.channel.clone(),
            control,
            state: Mutex::new(State {
                cols: record.cols,
                rows: record.rows,
                exit: Some(exit.clone()),
                ended_at: Some(record.ended_at.unwrap_or_else(now_ms)),
                name: record.name.clone(),
                resumed_by: None,
            }),
            exited: watch::channel(true).0,
            removed: watch::channel(false).0,
            process: Process::foreign(record.pid),
            clients: AtomicU32::new(0),
            connected: Mutex::new(Vec::new()),
            span,
            observe,
        });
        session.save_record();
        // The end and the outcomes the earlier duet did not live to write.
        session
            .observe
            .recovered(&session.dir, &exit, &session.approvals());
        Ok(session)
    }

    /// Names the session (`None` clears the name) and keeps the name in
    /// `session.json`, so that it outlives a restart of duet.
    pub(crate) fn set_name(&self, name: Option<String>) {
        lock(&self.state).name = name;
        self.save_record();
    }

    /// Writes `session.json` (see `record.rs`); a failure only costs the
    /// recovery after a crash, so it is logged, not returned.
    pub(crate) fn save_record(&self) {
        let (cols, rows, exit, ended_at, name) = {
            let st = lock(&self.state);
            (
                st.cols,
                st.rows,
                st.exit.clone(),
                st.ended_at,
                st.name.clone(),
            )
        };
        let record = Record {
            id: self.id,
            profile: self.profile.clone(),
            created_at: self.created_at,
            pid: self.process.pid(),
            pid_start: start_time(self.process.pid()),
            cols,
            rows,
            channel: self.channel_info.clone(),
            work_dir: self.work_dir.clone(),
            resumed_from: self.resumed_from,
            agent_session_id: self.conversation.agent_session_id(),
            ended_at,
            exit,
            name,
            prompt_name: self.conversation.prompt_name(),
            launch: self.launch.clone(),
        };
        if let Err(e) = record.save(&self.dir) {
            tracing::warn!(?e, "writing session.json");
        }
    }
}

/// A process's start time, from field 22 of `/proc/PID/stat`.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count
    // fields from after its closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_start_time_is_read_and_stays_put() {
        let me = std::process::id();
        let a = start_time(me).unwrap();
        assert_eq!(start_time(me), Some(a));
        assert_eq!(start_time(u32::MAX), None);
    }
}
