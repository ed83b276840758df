//! ACP `session/update` notifications normalised into the chat's events:
//! message chunks stream as text deltas and end as one `assistant`
//! message; thought chunks become one `thinking` block; `tool_call` an
//! `assistant` `tool_use` (its input the call's `rawInput`), and a
//! `tool_call_update` that completes or fails it a `user` `tool_result`;
//! replayed user chunks (`session/load`) a `user` message; a `plan`, and
//! every other kind, a `system` event carrying the update as sent.
//!
//! Pure: updates in, events out.

use std::collections::VecDeque;

use duet_protocol::build;
use duet_protocol::sidecar::{Envelope, SidecarEvent};
use serde_json::{json, Value};

use crate::session::channel::piped::tool_call;

/// See the module docs.
#[derive(Default)]
pub(crate) struct Updates {
    text: tool_call::Normalizer,
    thought: Option<String>,
    user: Option<String>,
    /// Tool names by `toolCallId`, newest last: a permission request's
    /// `toolCall` may lack the `_meta` that names the tool
    /// (claude-agent-acp), while its `tool_call` update had it.
    names: VecDeque<(String, String)>,
}

/// Tool names remembered for permission requests that come later.
const KNOWN_NAMES: usize = 64;

impl Updates {
    /// Ends the agent's open message, if any.
    fn flush_text(&mut self, out: &mut Vec<SidecarEvent>) {
        self.text.flush(out);
    }

    /// The chat's events for one `update` (the `params.update` object).
    pub(crate) fn events(&mut self, update: &Value) -> Vec<SidecarEvent> {
        let mut out = Vec::new();
        let kind = update["sessionUpdate"].as_str().unwrap_or_default();
        if kind != "agent_thought_chunk" {
            self.flush_thought(&mut out);
        }
        if kind != "user_message_chunk" {
            self.flush_user(&mut out);
        }
        match kind {
            "agent_message_chunk" => {
                out.extend(self.text.text(&chunk_text(&update["content"])));
            }
            "agent_thought_chunk" => {
                self.flush_text(&mut out);
                self.thought
                    .get_or_insert_with(String::new)
                    .push_str(&chunk_text(&update["content"]));
            }
            "user_message_chunk" => {
                self.flush_text(&mut out);
                self.user
                    .get_or_insert_with(String::new)
                    .push_str(&chunk_text(&update["content"]));
            }
            "tool_call" => {
                self.flush_text(&mut out);
                let id = update["toolCallId"].as_str().unwrap_or_default();
                let name = tool_name(update)
                    .or(update["kind"].as_str())
                    .unwrap_or("tool");
                if self.names.len() == KNOWN_NAMES {
                    self.names.pop_front();
                }
                self.names.push_back((id.to_string(), name.to_string()));
                let mut input = update["rawInput"].clone();
                if input.is_null() {
                    input = json!({});
                }
                if let (Some(m), Some(title)) = (input.as_object_mut(), update["title"].as_str()) {
                    m.entry("title").or_insert_with(|| json!(title));
                }
                out.push(build::assistant(
                    Envelope::none(),
                    build::message("assistant", vec![build::tool_use_block(id, name, input)]),
                ));
                out.extend(finished(update));
            }
            "tool_call_update" => {
                self.flush_text(&mut out);
                let done = finished(update);
                if done.is_empty() {
                    out.push(system(kind, update));
                }
                out.extend(done);
            }
            _ => {
                // Commands, modes, plans, usage: news beside the reply,
                // not its end. Qwen sends its command list mid-reply, which
                // cut one reply in two.
                out.push(system(kind, update));
            }
        }
        out
    }

    /// The turn ended: whatever is open is complete.
    pub(crate) fn flush(&mut self) -> Vec<SidecarEvent> {
        let mut out = Vec::new();
        self.flush_thought(&mut out);
        self.flush_user(&mut out);
        self.flush_text(&mut out);
        out
    }

    fn flush_thought(&mut self, out: &mut Vec<SidecarEvent>) {
        if let Some(thinking) = self.thought.take() {
            out.push(build::assistant(
                Envelope::none(),
                build::message("assistant", vec![build::thinking_block(&thinking)]),
            ));
        }
    }

    fn flush_user(&mut self, out: &mut Vec<SidecarEvent>) {
        if let Some(text) = self.user.take() {
            out.push(build::user_text(Envelope::none(), &text));
        }
    }
}

impl Updates {
    /// The name a `tool_call` update gave the call `id`, if it was seen.
    pub(crate) fn known_name(&self, id: &str) -> Option<&str> {
        self.names
            .iter()
            .rev()
            .find(|(i, _)| i == id)
            .map(|(_, n)| n.as_str())
    }
}

/// The name of the tool a `tool_call` (or a permission request's
/// `toolCall`) runs: ACP has only a `title` (Claude's adapter: "Terminal",
/// then the command), so the agent's own name is taken from `_meta` where
/// agents put it: `toolName` (Qwen Code), or one level down under a vendor
/// key (`claudeCode.toolName`, claude-agent-acp).
pub(crate) fn tool_name(call: &Value) -> Option<&str> {
    meta_name(call).or(call["title"].as_str())
}

/// The tool's own name from `_meta` only (see [`tool_name`]).
pub(crate) fn meta_name(call: &Value) -> Option<&str> {
    let meta = &call["_meta"];
    meta["toolName"].as_str().or_else(|| {
        meta.as_object()?
            .values()
            .find_map(|v| v["toolName"].as_str())
    })
}

/// A `system` event for an update the chat has no rendering of.
fn system(kind: &str, update: &Value) -> SidecarEvent {
    build::system_with(
        &format!("acp_{kind}"),
        build::extra([("update", update.clone())]),
    )
}

/// The `tool_result` of a completed or failed tool call.
fn finished(update: &Value) -> Vec<SidecarEvent> {
    let status = update["status"].as_str().unwrap_or_default();
    if status != "completed" && status != "failed" {
        return Vec::new();
    }
    let content: Vec<String> = update["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| match c["type"].as_str() {
            Some("content") => chunk_text(&c["content"]),
            Some("diff") => format!("edited {}", c["path"].as_str().unwrap_or("a file")),
            Some("terminal") => format!("terminal {}", c["terminalId"]),
            _ => c.to_string(),
        })
        .collect();
    vec![build::user(
        Envelope::none(),
        vec![build::tool_result_block(
            update["toolCallId"].as_str().unwrap_or_default(),
            Some(status == "failed"),
            json!(content.join("\n")),
        )],
    )]
}

/// The text of an ACP content block (other kinds by their type).
fn chunk_text(content: &Value) -> String {
    match content["type"].as_str() {
        Some("text") => content["text"].as_str().unwrap_or_default().to_string(),
        Some(other) => format!("[{other}]"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(events: Vec<SidecarEvent>) -> Vec<Value> {
        events.iter().map(SidecarEvent::to_value).collect()
    }

    #[test]
    fn news_mid_reply_does_not_cut_the_reply() {
        let mut u = Updates::default();
        let mut out = Vec::new();
        for update in [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello "}}),
            json!({"sessionUpdate": "available_commands_update", "availableCommands": []}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "there"}}),
        ] {
            out.extend(values(u.events(&update)));
        }
        out.extend(values(u.flush()));
        let replies: Vec<&Value> = out.iter().filter(|e| e["type"] == "assistant").collect();
        assert_eq!(replies.len(), 1, "{out:?}");
        assert_eq!(replies[0]["message"]["content"][0]["text"], "hello there");
    }

    /// Qwen Code 0.24.4's updates for a tool turn (shortened).
    #[test]
    fn chunks_tools_and_unknown_kinds() {
        let mut u = Updates::default();
        let updates = [
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Sure, "}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "running it."}}),
            json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "status": "pending", "title": "Shell", "kind": "execute", "rawInput": {"command": "touch x"}, "_meta": {"toolName": "run_shell_command"}}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "Exit Code: 0"}}]}),
            json!({"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "high", "status": "pending"}]}),
            json!({"sessionUpdate": "available_commands_update", "availableCommands": []}),
        ];
        let mut out: Vec<Value> = updates.iter().flat_map(|x| values(u.events(x))).collect();
        out.extend(values(u.flush()));
        let summary: Vec<String> = out
            .iter()
            .map(|e| {
                let b = &e["message"]["content"][0];
                match e["type"].as_str().unwrap() {
                    "stream_event" => format!("stream:{}", e["event"]["type"].as_str().unwrap()),
                    "system" => e["subtype"].as_str().unwrap().to_string(),
                    t => format!("{t}:{}", b["type"].as_str().unwrap()),
                }
            })
            .collect();
        assert_eq!(
            summary,
            [
                "assistant:thinking",
                "stream:message_start",
                "stream:content_block_start",
                "stream:content_block_delta",
                "stream:content_block_delta",
                "stream:content_block_stop",
                "assistant:text",
                "stream:message_stop",
                "assistant:tool_use",
                "acp_tool_call_update",
                "user:tool_result",
                "acp_plan",
                "acp_available_commands_update",
            ]
        );
        assert_eq!(out[6]["message"]["content"][0]["text"], "Sure, running it.");
        assert_eq!(out[8]["message"]["content"][0]["name"], "run_shell_command");
        assert_eq!(
            out[8]["message"]["content"][0]["input"]["command"],
            "touch x"
        );
        assert_eq!(out[10]["message"]["content"][0]["content"], "Exit Code: 0");
    }

    /// claude-agent-acp 0.101.0 names the tool under `_meta.claudeCode`.
    #[test]
    fn the_tool_name_comes_from_the_agents_meta() {
        let claude = json!({"toolCallId": "t", "title": "Terminal", "kind": "execute",
            "_meta": {"claudeCode": {"toolName": "Bash"}}});
        assert_eq!(tool_name(&claude), Some("Bash"));
        let qwen = json!({"title": "Shell", "_meta": {"toolName": "run_shell_command"}});
        assert_eq!(tool_name(&qwen), Some("run_shell_command"));
        assert_eq!(tool_name(&json!({"title": "Read"})), Some("Read"));
        assert_eq!(tool_name(&json!({"kind": "read"})), None);
    }
}
