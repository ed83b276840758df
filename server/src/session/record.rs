//! What a session directory says about its session (`session.json`), so
//! that a duet started again after a crash knows what ran there: it ends a
//! program an earlier duet left running, and lists the session, transcript
//! and all, until its retention is over.

use std::path::{Path, PathBuf};

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{ChannelInfo, ExitInfo};
use serde::{Deserialize, Serialize};

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
}

impl Record {
    /// Writes the record into `dir` (whole or not at all).
    pub(crate) fn save(&self, dir: &Path) -> std::io::Result<()> {
        let tmp = dir.join(".session.json.tmp");
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
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
