//! What the Codex app server tells duet about the session's thread: the
//! TUI's thread starting, turns, items (normalised by `events.rs`),
//! approvals resolved by either client, warnings; and its requests: an
//! approval becomes the chat's, anything else is left to the TUI.

use std::sync::Arc;

use duet_protocol::build;
use serde_json::{json, Value};

use super::client::{Inner, Pending};
use super::decisions::{self, Subject};
use crate::session::channel::offering;
use crate::session::channel::piped::writer::decision_record;
use crate::session::WarningCode;
use crate::sync::lock;

impl Inner {
    pub(super) fn on_notification(self: &Arc<Self>, method: &str, params: &Value) {
        if method == "thread/started" {
            let thread = &params["thread"];
            let ours = thread["environments"]
                .as_array()
                .is_some_and(|e| !e.is_empty())
                && thread["ephemeral"] != true;
            let first = {
                let mut st = lock(&self.state);
                let first = ours && st.thread.is_none();
                if first {
                    st.thread = thread["id"].as_str().map(String::from);
                    st.started = true;
                }
                first
            };
            if first {
                self.session_start(thread, "startup");
            }
            return;
        }
        if matches!(method, "warning" | "configWarning" | "error") {
            let message = params["message"]
                .as_str()
                .or(params["summary"].as_str())
                .or(params["error"]["message"].as_str())
                .map_or_else(|| params.to_string(), String::from);
            self.conversation
                .warn(WarningCode::AgentWarning, message, None);
            return;
        }
        let mut st = lock(&self.state);
        let Some(thread) = st.thread.clone() else {
            return;
        };
        if params["threadId"] != thread.as_str() {
            return;
        }
        let mut events = Vec::new();
        match method {
            "thread/status/changed" => {
                let active = params["status"]["type"] == "active";
                if active && !st.subscribed && !st.subscribing {
                    drop(st);
                    self.subscribe(&thread, 0);
                    return;
                }
            }
            "turn/started" => {
                st.turn = params["turn"]["id"].as_str().map(String::from);
            }
            "serverRequest/resolved" => {
                let request_id = request_id(&params["requestId"]);
                if let Some(allowed) = st.answered.remove(&request_id) {
                    events.push(decision_record(request_id, allowed));
                } else if let Some(p) = st.pending.remove(&request_id) {
                    // Answered in the terminal: the item tells how.
                    if let Some(item) = p.item {
                        st.terminal.insert(item, request_id);
                    }
                }
            }
            "item/completed" => {
                let item = &params["item"];
                if let Some(request_id) = item["id"].as_str().and_then(|i| st.terminal.remove(i)) {
                    if item["status"] == "declined" {
                        events.push(decision_record(request_id, false));
                    }
                }
            }
            "turn/completed" => {
                st.turn = None;
                // Approvals the terminal ended by interrupting the turn.
                for (_, request_id) in st.terminal.drain() {
                    events.push(decision_record(request_id, false));
                }
                st.pending.clear();
            }
            _ => {}
        }
        events.extend(st.normalizer.events(method, params));
        let next = if method == "turn/completed" {
            st.queued.pop_front()
        } else {
            None
        };
        drop(st);
        self.conversation.emit_all(&events);
        if let Some(text) = next {
            let _ = self.prompt(text);
        }
    }

    /// A request of the app server's: an approval becomes the chat's;
    /// anything else is the TUI's to answer.
    pub(super) fn on_request(&self, method: &str, id: Value, params: &Value) {
        let Some(subject) = Subject::of(method) else {
            return;
        };
        let request_id = request_id(&id);
        let available = decisions::available(params);
        let options = decisions::options(subject, &available);
        let item = params["itemId"].as_str().map(String::from);
        let (name, input) = match subject {
            Subject::Command => (
                "exec_command",
                json!({"command": params["command"], "cwd": params["cwd"], "reason": params["reason"]}),
            ),
            Subject::FileChange => (
                "apply_patch",
                json!({"reason": params["reason"], "grantRoot": params["grantRoot"]}),
            ),
        };
        let events = {
            let mut st = lock(&self.state);
            st.pending.insert(
                request_id.clone(),
                Pending {
                    id,
                    decisions: available,
                    item: item.clone(),
                },
            );
            st.normalizer.flush()
        };
        self.conversation.emit_all(&events);
        self.conversation.emit(&build::can_use_tool(
            &request_id,
            build::tool_request(name, item.as_deref(), input, offering(&options)),
        ));
    }
}

/// duet's id of an app server request.
pub(super) fn request_id(id: &Value) -> String {
    format!("codex-{}", id.to_string().trim_matches('"'))
}
