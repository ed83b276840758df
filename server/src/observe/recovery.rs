//! The audit lines of a session rebuilt after a restart. A duet killed
//! while a program ran (SIGKILL, a crash, the machine) wrote no
//! `session_end` for it, nor the outcome of the approvals still open; the
//! duet started next shows that session as exited and those approvals as
//! abandoned, and writes what the trail lacks, marked `recovered: true`
//! so a reader can tell a line written at the time from one written at
//! the restart.
//!
//! What the trail lacks is read from the trail itself rather than guessed
//! from the session record: the program may have written events after
//! the old duet died (a `session_end` on its hangup), an outcome may have
//! been recorded while the record was not (or the other way round), and a
//! session kept through two restarts must not get its lines twice.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;

use duet_protocol::rest::{Approval, ApprovalState, Decider, ExitInfo};
use serde_json::{json, Value};

use super::record::{self, Record};
use super::{outcome_name, SessionObserver};

/// What a session's audit trail already says about its end.
#[derive(Debug, Default, PartialEq, Eq)]
struct Recorded {
    ended: bool,
    /// Approval requests with an outcome (allowed, denied, abandoned).
    resolved: HashSet<String>,
}

/// Reads the trail at `path` (none yet: nothing recorded). Only lines of
/// the two kinds that matter are parsed; a torn last line is skipped.
fn recorded(path: &Path) -> Recorded {
    let mut r = Recorded::default();
    let Ok(file) = std::fs::File::open(path) else {
        return r;
    };
    for line in BufReader::new(file).lines().map_while(Result::ok) {
        let approval = line.contains("\"kind\":\"approval\"");
        if !approval && !line.contains("\"kind\":\"session_end\"") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match (v["kind"].as_str(), v["outcome"].as_str()) {
            (Some("session_end"), _) => r.ended = true,
            (Some("approval"), Some("allowed" | "denied" | "abandoned")) => {
                if let Some(id) = v["request_id"].as_str() {
                    r.resolved.insert(id.to_string());
                }
            }
            _ => {}
        }
    }
    r
}

impl SessionObserver {
    /// The session was rebuilt from its directory `dir` after a restart,
    /// ended with `exit`, its approvals replayed as `approvals`: writes
    /// the outcomes and the end its trail does not have yet.
    pub(crate) fn recovered(&self, dir: &Path, exit: &ExitInfo, approvals: &[Approval]) {
        let before = recorded(&dir.join("audit.jsonl"));
        for a in approvals {
            if a.state == ApprovalState::Pending || before.resolved.contains(&a.request_id) {
                continue;
            }
            self.record(Record::Approval(record::Approval {
                request_id: &a.request_id,
                tool: Some(&a.tool_name),
                seq: Some(a.seq),
                option: json!(a.chosen),
                outcome: outcome_name(a.state),
                decided_by: a.decided_by.map(Decider::as_str),
                recovered: true,
                ..Default::default()
            }));
        }
        if !before.ended {
            self.record_both(Record::SessionEnd {
                exit,
                recovered: true,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trail_says_which_outcomes_and_end_it_has() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        assert_eq!(recorded(&path), Recorded::default());
        let lines = [
            json!({"kind": "approval_request", "request_id": "r1"}),
            json!({"kind": "approval", "request_id": "r1", "outcome": "refused"}),
            json!({"kind": "approval_request", "request_id": "r2"}),
            json!({"kind": "approval", "request_id": "r2", "outcome": "denied"}),
            json!({"kind": "submit", "text": "\"kind\":\"session_end\""}),
        ];
        let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let r = recorded_from(&path, &text);
        assert_eq!(r.resolved, HashSet::from(["r2".to_string()]));
        assert!(!r.ended, "a submit that quotes a kind is not the end");
        text.push_str("{\"kind\":\"session_end\",\"exit\":{}}\n{\"kind\":\"approval\",\"req");
        assert!(recorded_from(&path, &text).ended);
    }

    fn recorded_from(path: &Path, text: &str) -> Recorded {
        std::fs::write(path, text).unwrap();
        recorded(path)
    }
}
