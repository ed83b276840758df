//! Gemini CLI's hook payloads, normalised into the stream-json events the
//! chat view renders (docs/gemini-cli.md §4.3 has every payload).
//!
//! | hook | events |
//! |---|---|
//! | SessionStart | `system/session_start` (session id, source, transcript) |
//! | BeforeAgent | `user` with the prompt (typed in the terminal or not) |
//! | AfterModel | `stream_event` text deltas, one per streamed chunk; the chunk with a `finishReason` ends the message (`assistant` + `message_stop`) |
//! | BeforeTool | `assistant` with a `tool_use` (Gemini gives no call id: duet numbers them) |
//! | AfterTool | `user` with the `tool_result` of the oldest unfinished call of that tool |
//! | AfterAgent | `result` (the turn is over) |
//! | SessionEnd | `system/session_end` (once: Gemini fires it three times) |
//! | Notification | `system/notification` (a ToolPermission one opens the approval: `mod.rs`) |
//!
//! Pure state: the channel feeds it payloads and emits what it returns.

use std::collections::VecDeque;

use duet_protocol::build::{self, message};
use duet_protocol::sidecar::{Envelope, Extra, SidecarEvent};
use serde_json::{json, Value};

use crate::session::channel::piped::tool_call;

/// A tool call announced by BeforeTool and not finished yet.
#[derive(Debug, Clone)]
pub(super) struct ToolCall {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) input: Value,
}

/// Calls remembered at most (a turn that never finishes its calls must not
/// grow this for ever).
const OPEN_CALLS: usize = 64;

/// See the module docs.
#[derive(Default)]
pub(crate) struct Normalizer {
    session_id: Option<String>,
    /// The reply being streamed (text deltas, then one message).
    text: tool_call::Normalizer,
    calls: u64,
    /// Calls announced by BeforeTool, oldest first.
    open: VecDeque<ToolCall>,
    ended: bool,
}

fn str_of<'a>(payload: &'a Value, key: &str) -> Option<&'a str> {
    payload.get(key).and_then(Value::as_str)
}

impl Normalizer {
    /// The events one hook call stands for.
    pub(crate) fn events(&mut self, event: &str, payload: &Value) -> Vec<SidecarEvent> {
        if let Some(id) = str_of(payload, "session_id") {
            self.session_id = Some(id.to_string());
        }
        let sid = self.session_id.clone();
        let envelope = || Envelope::session(sid.as_deref());
        match event {
            "SessionStart" => vec![build::session_start(
                envelope(),
                json!({
                    "session_id": sid,
                    "cwd": str_of(payload, "cwd"),
                    "source": str_of(payload, "source"),
                    "agent": "gemini-cli",
                    "transcript_path": str_of(payload, "transcript_path"),
                }),
            )],
            "BeforeAgent" => {
                let mut out = self.end_message();
                let prompt = str_of(payload, "prompt").unwrap_or_default();
                out.push(build::user_text(envelope(), prompt));
                out
            }
            "AfterModel" => self.after_model(&payload["llm_response"]),
            "BeforeTool" => {
                let mut out = self.end_message();
                let Some(name) = str_of(payload, "tool_name") else {
                    return out;
                };
                self.calls += 1;
                let call = ToolCall {
                    id: format!("gemini-tool-{}", self.calls),
                    name: name.to_string(),
                    input: payload.get("tool_input").cloned().unwrap_or(json!({})),
                };
                if self.open.len() == OPEN_CALLS {
                    self.open.pop_front();
                }
                let message_id = format!("tool-{}", call.id);
                let mut m = message(
                    "assistant",
                    vec![build::tool_use_block(
                        &call.id,
                        &call.name,
                        call.input.clone(),
                    )],
                );
                m.id = Some(message_id.clone());
                self.open.push_back(call);
                out.push(build::assistant(envelope().with_uuid(Some(&message_id)), m));
                out
            }
            "AfterTool" => {
                let name = str_of(payload, "tool_name").unwrap_or_default();
                let Some(call) = self.finish(name, payload.get("tool_input")) else {
                    return Vec::new();
                };
                let response = &payload["tool_response"];
                let error = response.get("error").filter(|e| !e.is_null());
                let content = match error {
                    Some(Value::String(e)) => e.clone(),
                    Some(e) => e.to_string(),
                    None => text_of(&response["llmContent"]),
                };
                vec![build::user(
                    envelope(),
                    vec![build::tool_result_block(
                        &call.id,
                        Some(error.is_some()),
                        Value::String(content),
                    )],
                )]
            }
            "AfterAgent" => {
                let mut out = self.end_message();
                out.push(build::result(
                    envelope(),
                    "success",
                    false,
                    None,
                    Extra::new(),
                ));
                out
            }
            "SessionEnd" if !self.ended => {
                self.ended = true;
                vec![build::system(
                    "session_end",
                    envelope(),
                    Some(json!({"session_id": sid, "reason": payload.get("reason")})),
                )]
            }
            "Notification" => vec![build::system(
                "notification",
                envelope(),
                Some(json!({
                    "message": payload.get("message"),
                    "notification_type": payload.get("notification_type"),
                })),
            )],
            _ => Vec::new(),
        }
    }

    /// The newest call not finished yet: the one a permission dialog asks
    /// about (Notification comes right after its BeforeTool).
    pub(super) fn last_open(&self) -> Option<&ToolCall> {
        self.open.back()
    }

    /// Forgets the call `id` (it was cancelled: no AfterTool will come).
    pub(super) fn drop_call(&mut self, id: &str) {
        self.open.retain(|c| c.id != id);
    }

    /// The turn ended without AfterAgent (cancelled): a reply being
    /// streamed is complete as it is.
    pub(super) fn interrupted(&mut self) -> Vec<SidecarEvent> {
        self.open.clear();
        self.end_message()
    }

    /// Takes the oldest open call of tool `name` (with that input, when
    /// one has it).
    fn finish(&mut self, name: &str, input: Option<&Value>) -> Option<ToolCall> {
        let at = self
            .open
            .iter()
            .position(|c| c.name == name && Some(&c.input) == input)
            .or_else(|| self.open.iter().position(|c| c.name == name))?;
        self.open.remove(at)
    }

    fn after_model(&mut self, response: &Value) -> Vec<SidecarEvent> {
        let mut out = self
            .text
            .text(response["text"].as_str().unwrap_or_default());
        let finished = response["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["finishReason"].is_string());
        if finished {
            out.extend(self.end_message());
        }
        out
    }

    /// Ends the reply being streamed, if any.
    fn end_message(&mut self) -> Vec<SidecarEvent> {
        let mut out = Vec::new();
        self.text.flush(&mut out);
        out
    }
}

/// What the model got of a tool's result, as text for the tool card
/// (`llmContent` is a string, or parts with text).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real hook calls of a scripted Gemini CLI 0.61.0 session.
    fn fixture() -> Vec<(String, Value)> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gemini-0.61.0/hooks.jsonl"
        );
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| !v["hook"].as_str().unwrap().starts_with('_'))
            .map(|v| {
                (
                    v["hook"].as_str().unwrap().to_string(),
                    v["payload"].clone(),
                )
            })
            .collect()
    }

    #[test]
    fn a_real_session_becomes_a_well_formed_stream() {
        let mut n = Normalizer::default();
        let events: Vec<Value> = fixture()
            .iter()
            .flat_map(|(hook, payload)| n.events(hook, payload))
            .map(|e| e.to_value())
            .collect();
        for e in &events {
            SidecarEvent::from_line(&e.to_string()).unwrap();
        }
        assert_eq!(events[0]["subtype"], "session_start");
        assert_eq!(
            events[0]["data"]["session_id"],
            "11111111-2222-4333-8444-555555555555"
        );
        assert_eq!(events[1]["message"]["content"][0]["text"], "hello there");
        let replies: Vec<&str> = events
            .iter()
            .filter(|e| e["type"] == "assistant" && e["message"]["content"][0]["type"] == "text")
            .map(|e| e["message"]["content"][0]["text"].as_str().unwrap())
            .collect();
        assert_eq!(replies[0], "Mock reply to: hello there ");
        // The function call's empty chunk made no message of its own.
        assert!(replies.iter().all(|r| !r.is_empty()), "{replies:?}");
        // The approved call's result is bound to its tool_use.
        let tool_use = events
            .iter()
            .find(|e| e["message"]["content"][0]["type"] == "tool_use")
            .unwrap();
        let id = &tool_use["message"]["content"][0]["id"];
        assert_eq!(
            tool_use["message"]["content"][0]["input"]["command"],
            "touch made_by_tool.txt"
        );
        let result = events
            .iter()
            .find(|e| e["message"]["content"][0]["type"] == "tool_result")
            .unwrap();
        assert_eq!(&result["message"]["content"][0]["tool_use_id"], id);
        assert!(result["message"]["content"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Output: (empty)"));
        // Three SessionEnd hooks, one session_end.
        let ends = events
            .iter()
            .filter(|e| e["subtype"] == "session_end")
            .count();
        assert_eq!(ends, 1);
        // The cancelled call (no AfterTool) stays open for the channel to
        // close; every other call was finished.
        assert_eq!(
            events.iter().filter(|e| e["type"] == "result").count(),
            fixture().iter().filter(|(h, _)| h == "AfterAgent").count()
        );
    }

    #[test]
    fn a_blocked_tool_is_an_error_result() {
        let mut n = Normalizer::default();
        let input = json!({"command": "touch x"});
        n.events(
            "BeforeTool",
            &json!({"tool_name": "run_shell_command", "tool_input": input}),
        );
        let out = n.events(
            "AfterTool",
            &json!({"tool_name": "run_shell_command", "tool_input": input,
                    "tool_response": {"llmContent": "x", "error": "Tool execution blocked: no"}}),
        );
        let out = out[0].to_value();
        let block = &out["message"]["content"][0];
        assert_eq!(block["is_error"], true);
        assert_eq!(block["content"], "Tool execution blocked: no");
        assert_eq!(block["tool_use_id"], "gemini-tool-1");
        assert!(n.last_open().is_none());
    }
}
