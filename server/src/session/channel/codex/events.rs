//! Codex's app-server notifications for the session's thread, normalised
//! into the stream-json events the chat renders (docs/codex.md §7):
//!
//! | notification | events |
//! |---|---|
//! | `item/completed` `userMessage` | `user` (typed in the TUI or sent by duet: the agent's own record) |
//! | `item/agentMessage/delta` | `stream_event` text deltas |
//! | `item/completed` `agentMessage` | the message whole (`assistant` + `message_stop`): its text is the item's, so deltas missed before duet subscribed are not lost |
//! | `item/completed` `reasoning` | a `thinking` block, when it has text |
//! | `item/started` `commandExecution`, `fileChange`, other tools | `assistant` `tool_use` (the item id is the call id) |
//! | `item/completed` of a tool | `user` `tool_result` (an error unless it completed) |
//! | `turn/completed` | `result` (`interrupted` when it was) |
//!
//! The same item is never told twice (an item seen live and again in
//! `thread/resume`'s turns). Pure: notifications in, events out.

use std::collections::{HashSet, VecDeque};

use duet_protocol::build::{self, message};
use duet_protocol::sidecar::{Envelope, Extra, KnownEvent, SidecarEvent};
use serde_json::{json, Value};

use crate::session::channel::piped::tool_call;

/// Item ids remembered (to tell each once).
const SEEN: usize = 256;

/// See the module docs.
#[derive(Default)]
pub(crate) struct Normalizer {
    text: tool_call::Normalizer,
    /// The agent message being streamed.
    streaming: Option<String>,
    seen: HashSet<String>,
    order: VecDeque<String>,
}

impl Normalizer {
    /// The events of one notification (`method`, `params`) of the thread.
    pub(crate) fn events(&mut self, method: &str, params: &Value) -> Vec<SidecarEvent> {
        match method {
            "item/agentMessage/delta" => {
                self.streaming = params["itemId"].as_str().map(str::to_string);
                self.text.text(params["delta"].as_str().unwrap_or_default())
            }
            "item/started" => self.started(&params["item"]),
            "item/completed" => self.completed(&params["item"]),
            "turn/completed" => {
                let mut out = self.flush();
                let status = params["turn"]["status"].as_str().unwrap_or("completed");
                let error = &params["turn"]["error"];
                out.push(match status {
                    "interrupted" => build::interrupted(),
                    "failed" => build::failed(
                        &error["message"]
                            .as_str()
                            .map_or_else(|| error.to_string(), String::from),
                    ),
                    _ => build::result(Envelope::none(), "success", false, None, Extra::new()),
                });
                out
            }
            _ => Vec::new(),
        }
    }

    /// The events of the items of a turn already under way when duet
    /// subscribed (`thread/resume`'s `turns`): what it missed of them.
    pub(crate) fn catch_up(&mut self, turn: &Value) -> Vec<SidecarEvent> {
        let mut out = Vec::new();
        for item in turn["items"].as_array().into_iter().flatten() {
            out.extend(self.started(item));
            if item.get("completedAtMs").is_some_and(|c| !c.is_null())
                || item["type"] == "userMessage"
            {
                out.extend(self.completed(item));
            }
        }
        out
    }

    /// A message being streamed is complete as it is.
    pub(crate) fn flush(&mut self) -> Vec<SidecarEvent> {
        let mut out = Vec::new();
        self.text.flush(&mut out);
        self.streaming = None;
        out
    }

    /// Whether `id` is news (and remembers it).
    fn first(&mut self, kind: &str, id: &str) -> bool {
        let key = format!("{kind}:{id}");
        if !self.seen.insert(key.clone()) {
            return false;
        }
        if self.order.len() == SEEN {
            if let Some(old) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        self.order.push_back(key);
        true
    }

    fn started(&mut self, item: &Value) -> Vec<SidecarEvent> {
        let id = item["id"].as_str().unwrap_or_default();
        let Some((name, input)) = tool(item) else {
            return Vec::new();
        };
        if !self.first("started", id) {
            return Vec::new();
        }
        let mut out = self.flush();
        out.push(build::assistant(
            Envelope::none(),
            message("assistant", vec![build::tool_use_block(id, &name, input)]),
        ));
        out
    }

    fn completed(&mut self, item: &Value) -> Vec<SidecarEvent> {
        let id = item["id"].as_str().unwrap_or_default();
        if !self.first("completed", id) {
            return Vec::new();
        }
        match item["type"].as_str() {
            Some("userMessage") => {
                let mut out = self.flush();
                let text: Vec<&str> = item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                out.push(build::user_text(Envelope::none(), &text.join("\n")));
                out
            }
            Some("agentMessage") => {
                let text = item["text"].as_str().unwrap_or_default();
                let streamed = self.streaming.as_deref() == Some(id);
                let mut out = Vec::new();
                if streamed {
                    // The deltas made the stream; the item says what it
                    // came to.
                    let mut rest = Vec::new();
                    self.text.flush(&mut rest);
                    self.streaming = None;
                    for e in rest {
                        if matches!(e, SidecarEvent::Known(KnownEvent::Assistant(_))) {
                            out.push(reply(text));
                        } else {
                            out.push(e);
                        }
                    }
                } else {
                    out.extend(self.flush());
                    out.push(reply(text));
                }
                out
            }
            Some("reasoning") => {
                let text: Vec<&str> = item["summary"]
                    .as_array()
                    .into_iter()
                    .chain(item["content"].as_array())
                    .flatten()
                    .filter_map(|t| t.as_str().or_else(|| t["text"].as_str()))
                    .collect();
                if text.is_empty() {
                    return Vec::new();
                }
                vec![build::assistant(
                    Envelope::none(),
                    message("assistant", vec![build::thinking_block(&text.join("\n"))]),
                )]
            }
            _ if tool(item).is_some() => {
                let status = item["status"].as_str().unwrap_or_default();
                let output = item["aggregatedOutput"]
                    .as_str()
                    .or_else(|| item["result"].as_str())
                    .filter(|o| !o.is_empty());
                let content = match (output, status) {
                    (Some(o), _) => o.to_string(),
                    (None, "declined") => "declined".into(),
                    (None, _) => "(no output)".into(),
                };
                let failed =
                    status != "completed" || item["exitCode"].as_i64().is_some_and(|c| c != 0);
                vec![build::user(
                    Envelope::none(),
                    vec![build::tool_result_block(
                        id,
                        Some(failed),
                        Value::String(content),
                    )],
                )]
            }
            _ => Vec::new(),
        }
    }
}

/// A whole reply of `text`.
fn reply(text: &str) -> SidecarEvent {
    build::assistant(
        Envelope::none(),
        message("assistant", vec![build::text_block(text)]),
    )
}

/// The tool an item stands for, as a name and an input, if it is one.
pub(super) fn tool(item: &Value) -> Option<(String, Value)> {
    match item["type"].as_str()? {
        "commandExecution" => Some((
            "exec_command".into(),
            json!({"command": item["command"], "cwd": item["cwd"]}),
        )),
        "fileChange" => Some(("apply_patch".into(), json!({"changes": item["changes"]}))),
        "mcpToolCall" => Some((
            format!(
                "{}.{}",
                item["server"].as_str().unwrap_or("mcp"),
                item["tool"].as_str().unwrap_or("tool")
            ),
            item["arguments"].clone(),
        )),
        "webSearch" => Some(("web_search".into(), json!({"query": item["query"]}))),
        "userMessage" | "agentMessage" | "reasoning" | "plan" | "contextCompaction" => None,
        other => Some((other.to_string(), item.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every notification of the app-server capture's TUI thread.
    fn fixture() -> Vec<(String, Value)> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/codex-0.171.0/app-server.jsonl"
        );
        let lines: Vec<Value> = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["msg"].clone())
            .collect();
        let thread = lines
            .iter()
            .find(|m| m["method"] == "thread/started")
            .map(|m| m["params"]["thread"]["id"].clone())
            .unwrap();
        lines
            .into_iter()
            .filter(|m| m["params"]["threadId"] == thread && m.get("id").is_none())
            .map(|m| {
                (
                    m["method"].as_str().unwrap().to_string(),
                    m["params"].clone(),
                )
            })
            .collect()
    }

    #[test]
    fn a_real_thread_becomes_a_well_formed_stream() {
        let mut n = Normalizer::default();
        let events: Vec<Value> = fixture()
            .iter()
            .flat_map(|(m, p)| n.events(m, p))
            .map(|e| e.to_value())
            .collect();
        for e in &events {
            SidecarEvent::from_line(&e.to_string()).unwrap();
        }
        let said = |kind: &str| -> Vec<String> {
            events
                .iter()
                .filter(|e| e["type"] == kind)
                .filter_map(|e| e["message"]["content"][0]["text"].as_str())
                .map(String::from)
                .collect()
        };
        assert_eq!(said("user")[0], "hello there");
        assert!(said("user").contains(&"sent from duet".to_string()));
        assert_eq!(said("assistant")[0], "Mock reply to: hello there");
        // Each message streamed before it was whole.
        assert!(events
            .iter()
            .any(|e| e["event"]["delta"]["text"] == "hello "));
        let call = events
            .iter()
            .find(|e| e["message"]["content"][0]["type"] == "tool_use")
            .unwrap();
        assert_eq!(call["message"]["content"][0]["id"], "call_mock_3");
        assert_eq!(call["message"]["content"][0]["name"], "exec_command");
        let result = events
            .iter()
            .find(|e| e["message"]["content"][0]["type"] == "tool_result")
            .unwrap();
        assert_eq!(
            result["message"]["content"][0]["tool_use_id"],
            "call_mock_3"
        );
        assert_eq!(result["message"]["content"][0]["is_error"], false);
        let ends: Vec<&str> = events
            .iter()
            .filter(|e| e["type"] == "result")
            .map(|e| e["subtype"].as_str().unwrap())
            .collect();
        assert_eq!(ends.last(), Some(&"interrupted"));
    }

    /// Subscribed mid-turn: what `thread/resume` returns of the turn fills
    /// in the prompt, and the live item is not told again.
    #[test]
    fn a_turn_joined_late_is_caught_up_once() {
        let mut n = Normalizer::default();
        let user = json!({"type": "userMessage", "id": "u1", "content": [{"type": "text", "text": "typed first"}]});
        let turn = json!({"id": "t1", "items": [user], "status": "inProgress"});
        let caught = n.catch_up(&turn);
        assert_eq!(caught.len(), 1);
        assert_eq!(
            caught[0].to_value()["message"]["content"][0]["text"],
            "typed first"
        );
        assert!(n
            .events("item/completed", &json!({"item": user}))
            .is_empty());
        // A reply whose deltas came before duet listened: the whole of it.
        let reply = json!({"type": "agentMessage", "id": "m1", "text": "the whole reply"});
        let out = n.events("item/completed", &json!({"item": reply}));
        assert_eq!(
            out[0].to_value()["message"]["content"][0]["text"],
            "the whole reply"
        );
    }
}
