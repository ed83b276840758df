//! Approval outcomes that happen inside duet and leave no trace in the
//! events: a client's decision (which credential, which option).
//!
//! A duet started again over a session directory rebuilds the approvals
//! by replaying the events (`record.rs`). The program's `control_response`
//! looks the same however its answer reached it, so the replay alone puts
//! every decision down to the terminal, a client's too, and its name is
//! lost. So each such outcome is also written beside the events, in
//! `decisions.jsonl`, one JSON line per outcome and one `write` per line
//! (as `events.times`), and the replay applies it as soon as its request
//! comes by ([`Decisions::take`]): no event between a request and a
//! client's answer can have touched the request, or the answer would have
//! been refused as late. What the program reports after that is replayed
//! as it happened, so a terminal that answered first still wins.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use duet_protocol::rest::{ApprovalState, Decider};
use serde::{Deserialize, Serialize};
use tracing::warn;

/// The file name in the session directory.
pub(crate) const FILE: &str = "decisions.jsonl";

/// One outcome, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Decision {
    pub(crate) request_id: String,
    /// The request's event number: an agent may use a request id again.
    pub(crate) seq: u64,
    /// `allowed` or `denied`.
    pub(crate) state: ApprovalState,
    /// The credential that decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) by: Option<String>,
    /// The option it chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chosen: Option<String>,
    /// Who decided: a client when absent (what earlier versions wrote);
    /// also a notification's button or a policy (then `by` names the rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) decider: Option<Decider>,
    /// What the agent was told of a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

/// See the module docs.
#[derive(Default)]
pub(crate) struct Decisions {
    /// Where new outcomes are appended; `None` for a recovered session, or
    /// once a write failed (the session goes on; a restart would then put
    /// later decisions down to the terminal).
    file: Option<File>,
    /// Outcomes read back, by request id, until the replay takes them.
    known: HashMap<String, Decision>,
    /// False for a session whose duet kept no file (an earlier version):
    /// then who decided what the program reports is not known.
    kept: bool,
}

impl Decisions {
    /// Outcomes of a new session, written to `path` (created empty,
    /// owner-only).
    pub(crate) fn create(path: &Path) -> std::io::Result<Self> {
        let file = crate::state_dir::create_private(path)?;
        Ok(Self {
            file: Some(file),
            known: HashMap::new(),
            kept: true,
        })
    }

    /// The outcomes an earlier duet wrote at `path`. Unreadable lines (a
    /// torn last line after a crash) are skipped.
    pub(crate) fn load(path: &Path) -> Self {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Self::default();
        };
        let known = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Decision>(l).ok())
            .map(|d| (d.request_id.clone(), d))
            .collect();
        Self {
            file: None,
            known,
            kept: true,
        }
    }

    /// Writes `decision` down.
    pub(crate) fn write(&mut self, decision: &Decision) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let mut line = serde_json::to_vec(decision).unwrap_or_default();
        line.push(b'\n');
        if let Err(e) = file.write_all(&line) {
            warn!(
                ?e,
                "writing approval decisions; a restart will not know later ones"
            );
            self.file = None;
        }
    }

    /// The outcome on file for request `request_id`, event `seq`, once.
    pub(crate) fn take(&mut self, request_id: &str, seq: u64) -> Option<Decision> {
        if self.known.get(request_id)?.seq != seq {
            return None;
        }
        self.known.remove(request_id)
    }

    /// Whether the outcomes are known: false when a session was recorded
    /// without this file.
    pub(crate) fn kept(&self) -> bool {
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(id: &str, seq: u64, state: ApprovalState) -> Decision {
        Decision {
            request_id: id.into(),
            seq,
            state,
            by: Some("ci".into()),
            chosen: Some(
                if state == ApprovalState::Allowed {
                    "allow"
                } else {
                    "deny"
                }
                .into(),
            ),
            decider: None,
            reason: None,
        }
    }

    #[test]
    fn outcomes_are_written_and_read_back_once_for_their_request() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut d = Decisions::create(&path).unwrap();
        let allowed = decision("r1", 5, ApprovalState::Allowed);
        let denied = decision("r2", 9, ApprovalState::Denied);
        d.write(&allowed);
        d.write(&denied);
        // A torn last line (a crash mid-write) is skipped.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"request_id\":\"r3\"")
            .unwrap();
        let mut back = Decisions::load(&path);
        assert!(back.kept());
        // Another request that reuses the id is not this one.
        assert_eq!(back.take("r1", 6), None);
        assert_eq!(back.take("r1", 5), Some(allowed));
        assert_eq!(back.take("r1", 5), None);
        assert_eq!(back.take("r2", 9), Some(denied));
        assert_eq!(back.take("r3", 1), None);
        // Nothing is written for a recovered session.
        back.write(&decision("r4", 1, ApprovalState::Denied));
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);
        let none = Decisions::load(&dir.path().join("none"));
        assert!(!none.kept());
    }
}
