//! Claude Code's hook payloads, normalised into the stream-json events the
//! chat view renders (see docs/claude-code.md §3.3 for every payload).
//!
//! | hook | events |
//! |---|---|
//! | SessionStart | `system/session_start` (handshake: session id, model, source) |
//! | UserPromptSubmit | `user` with the prompt |
//! | MessageDisplay | `stream_event` message/text deltas; on `final`, `assistant` + `message_stop` |
//! | PreToolUse | `assistant` with the `tool_use` block |
//! | PermissionRequest | `control_request/can_use_tool` (its `tool_use_id` is the PreToolUse's) |
//! | PostToolUse(Failure) | `user` with the `tool_result` |
//! | Stop | `result` (the turn is over) |
//! | SessionEnd | `system/session_end` |
//! | Notification | `system/notification` |
//!
//! Pure state: the channel feeds it payloads and emits what it returns.

use std::collections::HashMap;

use duet_protocol::build::{self, message};
use duet_protocol::sidecar::{Envelope, Extra, KnownStreamEvent, SidecarEvent};
use serde_json::{json, Value};

/// A tool call announced by PreToolUse, waiting for its PermissionRequest.
struct ToolCall {
    id: String,
    input: Value,
}

/// See the module docs.
#[derive(Default)]
pub(crate) struct Normalizer {
    session_id: Option<String>,
    /// The last PreToolUse per tool name: PermissionRequest carries no
    /// `tool_use_id`, and comes right after the PreToolUse it belongs to.
    last_tool: HashMap<String, ToolCall>,
    /// Text shown so far per assistant message (`MessageDisplay`).
    text: HashMap<String, String>,
}

fn str_of<'a>(payload: &'a Value, key: &str) -> Option<&'a str> {
    payload.get(key).and_then(Value::as_str)
}

/// A payload field that the event's model types as a string: the string,
/// or null for anything else (found by fuzzing: a `Stop` whose
/// `last_assistant_message` was not a string made a `result` that did not
/// parse as one, so the turn never ended).
fn string_field(payload: &Value, key: &str) -> Value {
    str_of(payload, key).map_or(Value::Null, Value::from)
}

/// The handshake-like `data` of a system event, from payload fields.
fn data(fields: &[(&str, Value)]) -> Value {
    Value::Object(
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

impl Normalizer {
    /// The events one hook call stands for. `PermissionRequest` is handled
    /// by [`Normalizer::permission_request`].
    pub(crate) fn events(&mut self, event: &str, payload: &Value) -> Vec<SidecarEvent> {
        if let Some(id) = str_of(payload, "session_id") {
            self.session_id = Some(id.to_string());
        }
        let sid = self.session_id.clone();
        let envelope = || Envelope::session(sid.as_deref());
        let field = |key: &str| payload.get(key).cloned().unwrap_or(Value::Null);
        match event {
            "SessionStart" => vec![build::session_start(
                envelope(),
                data(&[
                    ("session_id", json!(sid)),
                    ("cwd", string_field(payload, "cwd")),
                    ("model", field("model")),
                    ("source", field("source")),
                    ("agent", json!("claude-code")),
                    ("transcript_path", field("transcript_path")),
                ]),
            )],
            "UserPromptSubmit" => {
                let prompt = str_of(payload, "prompt").unwrap_or_default();
                vec![build::user_text(
                    envelope().with_uuid(str_of(payload, "prompt_id")),
                    prompt,
                )]
            }
            "MessageDisplay" => self.message_display(payload),
            "PreToolUse" => {
                let (Some(name), Some(id)) =
                    (str_of(payload, "tool_name"), str_of(payload, "tool_use_id"))
                else {
                    return Vec::new();
                };
                let input = field("tool_input");
                self.last_tool.insert(
                    name.to_string(),
                    ToolCall {
                        id: id.to_string(),
                        input: input.clone(),
                    },
                );
                let message_id = format!("tool-{id}");
                let mut m = message("assistant", vec![build::tool_use_block(id, name, input)]);
                m.id = Some(message_id.clone());
                vec![build::assistant(envelope().with_uuid(Some(&message_id)), m)]
            }
            "PostToolUse" | "PostToolUseFailure" => {
                let Some(id) = str_of(payload, "tool_use_id") else {
                    return Vec::new();
                };
                let failed = event == "PostToolUseFailure";
                let content = tool_result_text(
                    payload
                        .get("tool_response")
                        .or_else(|| payload.get("error"))
                        .unwrap_or(&Value::Null),
                );
                vec![build::user(
                    envelope(),
                    vec![build::tool_result_block(
                        id,
                        Some(failed),
                        Value::String(content),
                    )],
                )]
            }
            "Stop" => vec![build::result(
                envelope(),
                "success",
                false,
                str_of(payload, "last_assistant_message"),
                Extra::new(),
            )],
            "SessionEnd" => vec![build::system(
                "session_end",
                envelope(),
                Some(data(&[
                    ("session_id", json!(sid)),
                    ("reason", field("reason")),
                ])),
            )],
            "Notification" => vec![build::system(
                "notification",
                envelope(),
                Some(data(&[
                    ("message", field("message")),
                    ("notification_type", field("notification_type")),
                ])),
            )],
            _ => Vec::new(),
        }
    }

    /// The `control_request` for a PermissionRequest, as `request_id`.
    pub(crate) fn permission_request(&mut self, request_id: &str, payload: &Value) -> SidecarEvent {
        let name = str_of(payload, "tool_name").unwrap_or("tool");
        let input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
        let tool_use_id = self
            .last_tool
            .get(name)
            .filter(|t| t.input == input)
            .map(|t| t.id.clone());
        let mut extra = Extra::new();
        extra.insert(
            "permission_suggestions".into(),
            payload
                .get("permission_suggestions")
                .cloned()
                .unwrap_or(Value::Null),
        );
        build::can_use_tool(
            request_id,
            build::tool_request(name, tool_use_id.as_deref(), input, extra),
        )
    }

    fn message_display(&mut self, payload: &Value) -> Vec<SidecarEvent> {
        let Some(id) = str_of(payload, "message_id") else {
            return Vec::new();
        };
        let delta = str_of(payload, "delta").unwrap_or_default();
        let last = payload
            .get("final")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let sid = self.session_id.clone();
        let stream =
            |event: KnownStreamEvent| build::stream(Envelope::session(sid.as_deref()), event);
        let mut out = Vec::new();
        if !self.text.contains_key(id) {
            self.text.insert(id.to_string(), String::new());
            out.push(stream(KnownStreamEvent::MessageStart {
                message: json!({"id": id, "role": "assistant"}),
                extra: Extra::new(),
            }));
            out.push(stream(build::block_start(0, build::text_block(""))));
        }
        if !delta.is_empty() {
            if let Some(text) = self.text.get_mut(id) {
                text.push_str(delta);
            }
            out.push(stream(build::text_delta(0, delta)));
        }
        if last {
            let text = self.text.remove(id).unwrap_or_default();
            out.push(stream(build::block_stop(0)));
            let mut m = message("assistant", vec![build::text_block(&text)]);
            m.id = Some(id.to_string());
            out.push(build::assistant(
                Envelope::session(sid.as_deref()).with_uuid(Some(id)),
                m,
            ));
            out.push(stream(KnownStreamEvent::MessageStop {
                extra: Extra::new(),
            }));
        }
        out
    }
}

/// What the model sees of a tool's result, as text for the tool card.
fn tool_result_text(response: &Value) -> String {
    match response {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            let out = o.get("stdout").and_then(Value::as_str).unwrap_or_default();
            let err = o.get("stderr").and_then(Value::as_str).unwrap_or_default();
            match (out.is_empty(), err.is_empty()) {
                (true, true) if o.contains_key("stdout") => "(no output)".into(),
                (true, true) => response.to_string(),
                (false, true) => out.into(),
                (true, false) => err.into(),
                (false, false) => format!("{out}\n{err}"),
            }
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real hook calls of a scripted Claude Code 2.1.330 session.
    fn fixture() -> Vec<(String, Value)> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/claude-2.1.330/hooks.jsonl"
        );
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
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
        let mut events = Vec::new();
        for (hook, payload) in fixture() {
            if hook == "PermissionRequest" {
                events.push(n.permission_request("r1", &payload).to_value());
            } else {
                events.extend(n.events(&hook, &payload).iter().map(SidecarEvent::to_value));
            }
        }
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types[0], "system");
        assert_eq!(
            events[0]["data"]["session_id"],
            "11111111-2222-4333-8444-555555555555"
        );
        assert_eq!(events[1]["message"]["content"][0]["text"], "hello there");
        // Every event parses as a known sidecar event or passes through.
        for e in &events {
            duet_protocol::sidecar::SidecarEvent::from_line(&e.to_string()).unwrap();
        }
        let reply = events
            .iter()
            .find(|e| e["type"] == "assistant" && e["message"]["content"][0]["type"] == "text")
            .unwrap();
        assert_eq!(
            reply["message"]["content"][0]["text"],
            "Mock reply to: hello there"
        );
        // The permission request is bound to the PreToolUse before it.
        let req = events
            .iter()
            .find(|e| e["type"] == "control_request")
            .unwrap();
        let tool_use = events
            .iter()
            .find(|e| e["type"] == "assistant" && e["message"]["content"][0]["type"] == "tool_use")
            .unwrap();
        assert_eq!(
            req["request"]["tool_use_id"],
            tool_use["message"]["content"][0]["id"]
        );
        assert_eq!(req["request"]["input"]["command"], "touch made_by_tool.txt");
        assert!(types.contains(&"result"));
        assert_eq!(events.last().unwrap()["subtype"], "session_end");
    }

    #[test]
    fn tool_results_read_as_text() {
        assert_eq!(
            tool_result_text(&json!({"stdout": "", "stderr": ""})),
            "(no output)"
        );
        assert_eq!(
            tool_result_text(&json!({"stdout": "a", "stderr": "b"})),
            "a\nb"
        );
        assert_eq!(tool_result_text(&json!("Error: no")), "Error: no");
    }
}
