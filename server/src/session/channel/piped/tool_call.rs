//! Print-mode stream-json in the shape of seed 004 (a CLI run with
//! `--print --output-format stream-json`, one process per turn),
//! normalised into the vocabulary the chat renders:
//!
//! - `assistant` events there are *deltas* ("concatenate every
//!   `message.content[].text` in order"): each becomes a `stream_event`
//!   text delta, and the text so far one `assistant` message when a tool
//!   starts or the turn ends;
//! - `tool_call` `started` (`tool_call.readToolCall.args`,
//!   `writeToolCall.args`, or `function: {name, arguments}`) becomes an
//!   `assistant` `tool_use` block (its id the event's `call_id`), and
//!   `completed` (`…ToolCall.result.success` / `.error`) a `user`
//!   `tool_result`, so they show as tool cards;
//! - its own `user` echo of the prompt is dropped (duet records the prompt
//!   as it sends it); `system`, `result` and unknown kinds pass through.
//!
//! Pure: events in, events out.

use duet_protocol::build::{self, message};
use duet_protocol::sidecar::{Envelope, Extra, KnownStreamEvent, SidecarEvent};
use serde_json::{json, Map, Value};

/// See the module docs.
#[derive(Default)]
pub(crate) struct Normalizer {
    /// Text of the assistant message being streamed, if one is open.
    text: Option<String>,
}

impl Normalizer {
    /// The chat's events for one event of the agent's.
    pub(crate) fn events(&mut self, event: &Value) -> Vec<SidecarEvent> {
        let mut out = Vec::new();
        match event["type"].as_str() {
            Some("assistant") => {
                let delta: String = event["message"]["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                return self.text(&delta);
            }
            Some("tool_call") => {
                self.flush(&mut out);
                let id = event["call_id"].as_str().unwrap_or_default();
                let (name, call) = tool(&event["tool_call"]);
                match event["subtype"].as_str() {
                    Some("started") => out.push(build::assistant(
                        Envelope::none(),
                        message(
                            "assistant",
                            vec![build::tool_use_block(id, &name, input(&call))],
                        ),
                    )),
                    Some("completed") => {
                        let (content, is_error) = outcome(&call);
                        out.push(build::user(
                            Envelope::none(),
                            vec![build::tool_result_block(
                                id,
                                Some(is_error),
                                Value::String(content),
                            )],
                        ));
                    }
                    _ => out.push(as_is(event)),
                }
            }
            Some("user") => {
                // The prompt's echo; tool results come as `tool_call`.
                self.flush(&mut out);
            }
            Some("result") => {
                self.flush(&mut out);
                out.push(as_is(event));
            }
            _ => out.push(as_is(event)),
        }
        out
    }

    /// A piece of the reply's text (`delta`): the stream's events for it,
    /// opening the message when it is the first piece. Other agents'
    /// channels feed their text chunks here too.
    pub(crate) fn text(&mut self, delta: &str) -> Vec<SidecarEvent> {
        let mut out = Vec::new();
        if delta.is_empty() {
            return out;
        }
        if self.text.is_none() {
            self.text = Some(String::new());
            out.push(stream(KnownStreamEvent::MessageStart {
                message: json!({"role": "assistant", "content": []}),
                extra: Extra::new(),
            }));
            out.push(stream(build::block_start(0, build::text_block(""))));
        }
        if let Some(text) = self.text.as_mut() {
            text.push_str(delta);
        }
        out.push(stream(build::text_delta(0, delta)));
        out
    }

    /// Ends the open assistant message: its text as one event.
    pub(crate) fn flush(&mut self, out: &mut Vec<SidecarEvent>) {
        let Some(text) = self.text.take() else {
            return;
        };
        out.push(stream(build::block_stop(0)));
        out.push(build::assistant(
            Envelope::none(),
            message("assistant", vec![build::text_block(&text)]),
        ));
        out.push(stream(KnownStreamEvent::MessageStop {
            extra: Extra::new(),
        }));
    }
}

fn stream(event: KnownStreamEvent) -> SidecarEvent {
    build::stream(Envelope::none(), event)
}

/// An event of the agent's passed through as it wrote it (any object is a
/// sidecar event: unknown ones are kept verbatim).
fn as_is(event: &Value) -> SidecarEvent {
    serde_json::from_value(event.clone()).unwrap_or_else(|_| SidecarEvent::Unknown(Map::new()))
}

/// The tool's name and its object: `readToolCall` → `Read`,
/// `shellToolCall` → `Shell`, `function` → its `name`.
fn tool(tool_call: &Value) -> (String, Value) {
    let Some((key, call)) = tool_call.as_object().and_then(|m| m.iter().next()) else {
        return ("tool".into(), Value::Null);
    };
    if key == "function" {
        let name = call["name"].as_str().unwrap_or("function").to_string();
        return (name, call.clone());
    }
    let base = key.strip_suffix("ToolCall").unwrap_or(key);
    let mut name = base.to_string();
    if let Some(first) = name.get(..1) {
        name = first.to_uppercase() + &name[1..];
    }
    (name, call.clone())
}

/// A tool's input: `args`, or a function's `arguments` (a JSON string).
fn input(call: &Value) -> Value {
    if let Some(args) = call.get("args") {
        // A tool call id inside the arguments is bookkeeping, not input.
        let mut args = args.clone();
        if let Some(m) = args.as_object_mut() {
            m.remove("toolCallId");
        }
        return args;
    }
    match &call["arguments"] {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| json!({"arguments": s})),
        Value::Null => Value::Object(Map::new()),
        other => other.clone(),
    }
}

/// A completed tool's result text and whether it failed.
fn outcome(call: &Value) -> (String, bool) {
    let result = &call["result"];
    if let Some(err) = result.get("error") {
        let text = err["message"]
            .as_str()
            .or(err["error"].as_str())
            .or(err.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        return (text, true);
    }
    let success = result.get("success").unwrap_or(result);
    let text = match success {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => match other.get("content").and_then(Value::as_str) {
            Some(content) => content.to_string(),
            None => other.to_string(),
        },
    };
    (text, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example sequence of seed 004, in its documented shapes.
    #[test]
    fn deltas_and_tool_calls_become_messages_and_tool_cards() {
        let mut n = Normalizer::default();
        let lines = [
            json!({"type": "system", "subtype": "init", "session_id": "c1", "model": "m"}),
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "read it"}]}, "session_id": "c1"}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "I'll "}]}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "read it"}]}}),
            json!({"type": "tool_call", "subtype": "started", "call_id": "t1", "tool_call": {"readToolCall": {"args": {"path": "README.md"}}}}),
            json!({"type": "tool_call", "subtype": "completed", "call_id": "t1", "tool_call": {"readToolCall": {"args": {"path": "README.md"}, "result": {"success": {"content": "# Hi", "totalLines": 1}}}}}),
            json!({"type": "tool_call", "subtype": "started", "call_id": "t2", "tool_call": {"writeToolCall": {"args": {"path": "a.txt", "fileText": "x", "toolCallId": "t2"}}}}),
            json!({"type": "tool_call", "subtype": "completed", "call_id": "t2", "tool_call": {"writeToolCall": {"result": {"success": {"path": "/srv/project/a.txt", "linesCreated": 1, "fileSize": 1}}}}}),
            json!({"type": "tool_call", "subtype": "started", "call_id": "t3", "tool_call": {"function": {"name": "grep", "arguments": "{\"q\":\"x\"}"}}}),
            json!({"type": "tool_call", "subtype": "completed", "call_id": "t3", "tool_call": {"function": {"name": "grep", "result": {"error": {"message": "no such dir"}}}}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}}),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "I'll read itDone.", "session_id": "c1"}),
        ];
        let out: Vec<Value> = lines
            .iter()
            .flat_map(|l| n.events(l))
            .map(|e| e.to_value())
            .collect();
        let summary: Vec<String> = out
            .iter()
            .map(|e| match e["type"].as_str().unwrap() {
                "stream_event" => format!("stream:{}", e["event"]["type"].as_str().unwrap()),
                "assistant" => {
                    let b = &e["message"]["content"][0];
                    match b["type"].as_str().unwrap() {
                        "text" => format!("assistant:{}", b["text"].as_str().unwrap()),
                        _ => format!(
                            "tool_use:{}:{}:{}",
                            b["id"].as_str().unwrap(),
                            b["name"].as_str().unwrap(),
                            b["input"]
                        ),
                    }
                }
                "user" => {
                    let b = &e["message"]["content"][0];
                    format!(
                        "tool_result:{}:{}:{}",
                        b["tool_use_id"].as_str().unwrap(),
                        b["is_error"],
                        b["content"].as_str().unwrap()
                    )
                }
                other => other.to_string(),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "system",
                "stream:message_start",
                "stream:content_block_start",
                "stream:content_block_delta",
                "stream:content_block_delta",
                "stream:content_block_stop",
                "assistant:I'll read it",
                "stream:message_stop",
                r#"tool_use:t1:Read:{"path":"README.md"}"#,
                "tool_result:t1:false:# Hi",
                r#"tool_use:t2:Write:{"fileText":"x","path":"a.txt"}"#,
                r#"tool_result:t2:false:{"fileSize":1,"linesCreated":1,"path":"/srv/project/a.txt"}"#,
                r#"tool_use:t3:grep:{"q":"x"}"#,
                "tool_result:t3:true:no such dir",
                "stream:message_start",
                "stream:content_block_start",
                "stream:content_block_delta",
                "stream:content_block_stop",
                "assistant:Done.",
                "stream:message_stop",
                "result",
            ]
        );
    }
}
