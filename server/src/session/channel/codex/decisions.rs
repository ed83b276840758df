//! An approval request of Codex's app server as the chat's choices, worded
//! as Codex's own dialog words them (its TUI shows the same request at the
//! same time; docs/codex.md §5.3), and a chosen one as the decision the
//! app server takes back.
//!
//! `availableDecisions` lists what the request allows: `"accept"`,
//! `"acceptForSession"`, `{"acceptWithExecpolicyAmendment": {…}}`,
//! `{"applyNetworkPolicyAmendment": {…}}`, `"decline"` (the turn goes on),
//! `"cancel"` (the turn ends). A request without the list (file changes)
//! allows accept, acceptForSession and cancel.
//!
//! Pure.

use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};
use serde_json::{json, Value};

use crate::session::channel::option;

/// What the request is about, for the wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Subject {
    Command,
    FileChange,
}

impl Subject {
    /// The subject of a server request `method`, if it is an approval.
    pub(super) fn of(method: &str) -> Option<Self> {
        match method {
            "item/commandExecution/requestApproval" | "execCommandApproval" => Some(Self::Command),
            "item/fileChange/requestApproval" | "applyPatchApproval" => Some(Self::FileChange),
            _ => None,
        }
    }
}

/// The decisions a request allows.
pub(super) fn available(params: &Value) -> Vec<Value> {
    match params["availableDecisions"].as_array() {
        Some(list) if !list.is_empty() => list.clone(),
        _ => vec![json!("accept"), json!("acceptForSession"), json!("cancel")],
    }
}

/// The choices for `decisions`, in their order; the id of each is its
/// index in `decisions` (the decision itself may be an object).
pub(super) fn options(subject: Subject, decisions: &[Value]) -> Vec<ApprovalOption> {
    decisions
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let (label, kind) = wording(subject, d)?;
            Some(option(&i.to_string(), &label, kind))
        })
        .collect()
}

/// The app server's answer for the option `id` (from [`options`]).
pub(super) fn answer(decisions: &[Value], id: &str) -> Option<Value> {
    let decision = decisions.get(id.parse::<usize>().ok()?)?;
    Some(json!({ "decision": decision }))
}

fn wording(subject: Subject, decision: &Value) -> Option<(String, ApprovalOptionKind)> {
    use ApprovalOptionKind::{AllowAlways, AllowOnce, RejectOnce};
    if let Some(name) = decision.as_str() {
        return Some(match name {
            "accept" => ("Yes, proceed".into(), AllowOnce),
            "acceptForSession" => (
                match subject {
                    Subject::Command => "Yes, and don't ask again for this command in this session",
                    Subject::FileChange => "Yes, and don't ask again for these files",
                }
                .into(),
                AllowAlways,
            ),
            "decline" => ("No, continue without running it".into(), RejectOnce),
            "cancel" => (
                "No, and tell Codex what to do differently".into(),
                RejectOnce,
            ),
            _ => return None,
        });
    }
    if let Some(amendment) = decision.get("acceptWithExecpolicyAmendment") {
        let prefix: Vec<&str> = amendment["execpolicy_amendment"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        return Some((
            format!(
                "Yes, and don't ask again for commands that start with `{}`",
                prefix.join(" ")
            ),
            AllowAlways,
        ));
    }
    let network = decision.get("applyNetworkPolicyAmendment")?;
    let rule = &network["network_policy_amendment"];
    Some(if rule["action"] == "deny" {
        ("No, and block this host in the future".into(), RejectOnce)
    } else {
        ("Yes, and allow this host in the future".into(), AllowAlways)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request of fixtures/codex-0.171.0/app-server.jsonl, worded as
    /// the TUI's dialog (screen-dialog.txt) words it.
    #[test]
    fn a_real_request_gets_the_dialogs_words() {
        let params = json!({"availableDecisions": [
            "accept",
            {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch", "made_by_tool.txt"]}},
            "cancel",
        ]});
        let decisions = available(&params);
        let offered = options(Subject::Command, &decisions);
        let labels: Vec<&str> = offered.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Yes, proceed",
                "Yes, and don't ask again for commands that start with `touch made_by_tool.txt`",
                "No, and tell Codex what to do differently",
            ]
        );
        assert_eq!(offered[2].kind, ApprovalOptionKind::RejectOnce);
        assert_eq!(answer(&decisions, "0"), Some(json!({"decision": "accept"})));
        assert_eq!(
            answer(&decisions, "1").unwrap()["decision"]["acceptWithExecpolicyAmendment"]
                ["execpolicy_amendment"][0],
            "touch"
        );
        assert_eq!(answer(&decisions, "7"), None);
        assert_eq!(answer(&decisions, "x"), None);
    }

    #[test]
    fn a_file_change_without_a_list_gets_the_usual_three() {
        let decisions = available(&json!({"itemId": "i"}));
        let offered = options(Subject::FileChange, &decisions);
        assert_eq!(offered.len(), 3);
        assert_eq!(offered[1].label, "Yes, and don't ask again for these files");
        assert_eq!(
            Subject::of("item/fileChange/requestApproval"),
            Some(Subject::FileChange)
        );
        assert_eq!(Subject::of("item/tool/requestUserInput"), None);
    }
}
