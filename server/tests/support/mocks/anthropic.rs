//! A scripted Anthropic Messages API for real Claude Code 2.1.330 (the
//! contract is in docs/claude-code.md §6): `POST /v1/messages`, streamed as
//! SSE (`message_start`, `content_block_start`, `content_block_delta`…,
//! `content_block_stop`, `message_delta`, `message_stop`) when the request
//! asks for `stream` and as one JSON message otherwise;
//! `POST /v1/messages/count_tokens`. Every request is recorded.
//!
//! Claude Code sends `POST /v1/messages?beta=true` with the header
//! `anthropic-beta: claude-code-20250219,…`. With
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` it makes no request at
//! startup and exactly one streamed request per model call of a turn (a
//! prompt, then one more after each tool result); nothing else was seen.
//! Without that variable it also sends `HEAD /api/hello` at startup (a
//! connectivity check, answered 200 here) and, after each of the first
//! prompts, a streamed title request to the haiku model with no tools and
//! `output_config.format` a JSON schema `{"title": string}`. Anything that is
//! not a main request (no `stream`, or no `Bash` among its `tools`) gets
//! [`SIDE_REPLY`] (as JSON filling the schema's string properties when a
//! JSON schema is asked for), which a test cannot mistake for a scripted
//! reply. `count_tokens` was never called; it is served anyway.
//!
//! The reply is chosen from the last `user` message (the last message may
//! have the role `system`: Claude Code appends its environment there). Its
//! content blocks are read from the end: a `tool_result` first means "after
//! the tool", a text block that is not a `<system-reminder>` is the prompt.
//! A prompt typed after a rejected tool shares its message with that
//! rejection's `tool_result` and text, so reading from the end matters.
//!
//! It never answers 5xx: Claude Code retries those with backoff (up to
//! `CLAUDE_CODE_MAX_RETRIES`) before it shows an error, which would turn a
//! mock bug into a test timeout instead of a clear failure. Anything it
//! cannot handle gets a 4xx in the API's error format, which Claude Code
//! shows at once.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use super::sse::{self, Event};
use super::{
    fill, reply_to, text_of, words, Recorder, Reply, Request, Served, AFTER_TOOL, SIDE_REPLY,
    TOOL_COMMAND, TOOL_DESCRIPTION, TOOL_TRIGGER,
};

/// Asking for this makes the mock call `Bash` with [`OUTPUT_COMMAND`].
pub(crate) const OUTPUT_TRIGGER: &str = "please run and print";
/// A command with output (which a client shows) that also creates the
/// file [`TOOL_COMMAND`] creates.
pub(crate) const OUTPUT_COMMAND: &str = "echo printed-by-the-tool; touch made_by_tool.txt";
/// What [`OUTPUT_COMMAND`] prints.
pub(crate) const OUTPUT_TEXT: &str = "printed-by-the-tool";

/// Whether `body` is a request of Claude Code's main loop: streamed, with
/// its tools (a side request, such as a title, has neither).
pub(crate) fn is_main(body: &Value) -> bool {
    body["stream"] == true
        && body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == "Bash"))
}

/// The script (see the module documentation).
pub(crate) fn script(body: &Value) -> Reply {
    if !is_main(body) {
        let format = &body["output_config"]["format"];
        let text = if format["type"] == "json_schema" {
            fill(&format["schema"]).to_string()
        } else {
            SIDE_REPLY.to_string()
        };
        return Reply::Text(vec![text]);
    }
    let Some(last) = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
    else {
        return Reply::Text(words("The request had no user message."));
    };
    let blocks = match &last["content"] {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    };
    let mut prompt = String::new();
    for block in blocks.iter().rev() {
        if block["type"] == "tool_result" {
            let result = text_of(&block["content"]);
            let first_line = result.lines().next().unwrap_or_default();
            return Reply::Text(words(&format!("{AFTER_TOOL} {first_line}")));
        }
        if block["type"] == "text" {
            let text = block["text"].as_str().unwrap_or_default();
            if !text.trim_start().starts_with("<system-reminder>") {
                prompt = text.trim().to_string();
                break;
            }
        }
    }
    if prompt.to_lowercase().contains(OUTPUT_TRIGGER) {
        return Reply::Tool {
            name: "Bash".into(),
            input: json!({"command": OUTPUT_COMMAND, "description": TOOL_DESCRIPTION}),
        };
    }
    if prompt.to_lowercase().contains(TOOL_TRIGGER) {
        return Reply::Tool {
            name: "Bash".into(),
            input: json!({"command": TOOL_COMMAND, "description": TOOL_DESCRIPTION}),
        };
    }
    Reply::Text(words(&reply_to(&prompt)))
}

/// A running mock on 127.0.0.1 (random port); stops when dropped.
pub(crate) struct MockAnthropic {
    /// What `ANTHROPIC_BASE_URL` should be: `http://127.0.0.1:PORT` (Claude
    /// Code appends `/v1/messages`).
    pub base_url: String,
    served: Served,
}

impl MockAnthropic {
    /// Binds 127.0.0.1:0 and serves in the background.
    pub(crate) async fn start() -> Self {
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .route("/v1/messages/count_tokens", post(count_tokens))
            // The connectivity check (HEAD; axum answers HEAD from GET).
            .route("/api/hello", get(hello))
            .fallback(not_found);
        let served = Served::start(app).await;
        Self {
            base_url: served.origin.clone(),
            served,
        }
    }

    /// Every request received so far, in order (any path).
    pub(crate) fn all_requests(&self) -> Vec<Request> {
        self.served.all()
    }

    /// The bodies of the main-loop `POST /v1/messages` requests, in order.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.all_requests()
            .into_iter()
            .filter(|r| r.uri.starts_with("/v1/messages") && !r.uri.contains("count_tokens"))
            .map(|r| r.body)
            .filter(is_main)
            .collect()
    }

    /// One line per request (what was answered), for failure reports.
    pub(crate) fn summary(&self) -> String {
        self.served.summary(|body| {
            if body["messages"].is_null() {
                return String::new();
            }
            script(body).describe("tool_use")
        })
    }
}

fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    (
        status,
        axum::Json(json!({"type": "error", "error": {"type": kind, "message": message}})),
    )
        .into_response()
}

async fn not_found(State(rec): State<Recorder>, method: Method, uri: Uri, body: Bytes) -> Response {
    let _ = rec.record(&method, &uri, &body);
    error(
        StatusCode::NOT_FOUND,
        "not_found_error",
        "the mock serves POST /v1/messages, POST /v1/messages/count_tokens and /api/hello",
    )
}

async fn hello(State(rec): State<Recorder>, method: Method, uri: Uri) -> Response {
    let _ = rec.record(&method, &uri, &Bytes::new());
    axum::Json(json!({"message": "hello"})).into_response()
}

async fn count_tokens(
    State(rec): State<Recorder>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let (_, parsed) = rec.record(&method, &uri, &body);
    let tokens = parsed.unwrap_or(Value::Null).to_string().len() / 4;
    axum::Json(json!({"input_tokens": tokens})).into_response()
}

async fn messages(State(rec): State<Recorder>, method: Method, uri: Uri, body: Bytes) -> Response {
    let (n, parsed) = rec.record(&method, &uri, &body);
    let Ok(body) = parsed else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "the body is not JSON",
        );
    };
    let reply = script(&body);
    let model = body["model"].as_str().unwrap_or("claude-mock");
    if body["stream"] == true {
        sse::response(sse_events(n, model, &reply))
    } else {
        axum::Json(message(n, model, &reply)).into_response()
    }
}

fn usage(output_tokens: u64) -> Value {
    json!({
        "input_tokens": 10,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    })
}

fn stop_reason(reply: &Reply) -> &'static str {
    match reply {
        Reply::Text(_) => "end_turn",
        Reply::Tool { .. } => "tool_use",
    }
}

/// The events of a streamed reply, each named by its `type`.
fn sse_events(n: usize, model: &str, reply: &Reply) -> Vec<Event> {
    let mut out = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{n}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": usage(1)}}),
    )];
    match reply {
        Reply::Text(pieces) => {
            out.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}}),
            ));
            for piece in pieces {
                out.push((
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
        }
        Reply::Tool { name, input } => {
            out.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "tool_use", "id": format!("toolu_mock_{n}"),
                        "name": name, "input": {}}}),
            ));
            let input = input.to_string();
            let (head, tail) = input.split_at(input.len() / 2);
            for part in [head, tail] {
                out.push((
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": part}}),
                ));
            }
        }
    }
    out.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    out.push((
        "message_delta",
        json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
    ));
    out.push(("message_stop", json!({"type": "message_stop"})));
    out.into_iter()
        .map(|(name, data)| Event::named(name, data))
        .collect()
}

/// A non-streamed answer (side requests, should Claude Code make one).
fn message(n: usize, model: &str, reply: &Reply) -> Value {
    let content = match reply {
        Reply::Text(pieces) => json!([{"type": "text", "text": pieces.concat()}]),
        Reply::Tool { name, input } => json!([{
            "type": "tool_use", "id": format!("toolu_mock_{n}"), "name": name, "input": input}]),
    };
    json!({
        "id": format!("msg_mock_{n}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(reply),
        "stop_sequence": null,
        "usage": usage(5),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::fetch;

    /// A main-loop request as Claude Code 2.1.330 sends it (trimmed): the
    /// last message has the role `system`, the prompt follows a reminder.
    fn main_request(user_content: Value) -> Value {
        json!({
            "model": "claude-opus-5-5",
            "stream": true,
            "tools": [{"name": "Agent"}, {"name": "Bash"}, {"name": "Write"}],
            "messages": [
                {"role": "user", "content": user_content},
                {"role": "system", "content": "# Environment\nYou have been invoked…"},
            ],
        })
    }

    #[test]
    fn the_script_reads_the_last_user_message_from_the_end() {
        let prompt = main_request(json!([
            {"type": "text", "text": "<system-reminder>\nAttribution…</system-reminder>"},
            {"type": "text", "text": "hello there"},
        ]));
        assert_eq!(script(&prompt).text(), "Mock reply to: hello there");

        let tool = main_request(json!("Please run touch now"));
        assert_eq!(
            script(&tool),
            Reply::Tool {
                name: "Bash".into(),
                input: json!({"command": TOOL_COMMAND, "description": TOOL_DESCRIPTION}),
            }
        );

        let output = main_request(json!("Please run and print"));
        match script(&output) {
            Reply::Tool { input, .. } => {
                assert_eq!(input["command"], OUTPUT_COMMAND);
                assert!(OUTPUT_COMMAND.starts_with(&format!("echo {OUTPUT_TEXT};")));
            }
            other => panic!("expected a tool call, got {other:?}"),
        }

        let result = main_request(
            json!([{"type": "tool_result", "tool_use_id": "toolu_mock_2",
            "content": "(Bash completed with no output)", "is_error": false}]),
        );
        assert_eq!(
            script(&result).text(),
            "Tool finished: (Bash completed with no output)"
        );

        // After a rejection in the terminal, the next prompt shares the
        // rejection's message.
        let after_reject = main_request(json!([
            {"type": "tool_result", "tool_use_id": "toolu_mock_8", "is_error": true,
             "content": "The user doesn't want to proceed with this tool use."},
            {"type": "text", "text": "[Request interrupted by user for tool use]\n"},
            {"type": "text", "text": "a new prompt"},
        ]));
        assert_eq!(script(&after_reject).text(), "Mock reply to: a new prompt");
    }

    #[test]
    fn side_requests_get_the_side_reply() {
        // The haiku title request: streamed, no tools, a JSON schema.
        let title = json!({
            "model": "claude-haiku-5-5", "stream": true, "tools": [],
            "messages": [{"role": "user", "content": "<session>\nplease run touch\n</session>"}],
            "output_config": {"format": {"type": "json_schema", "schema": {
                "type": "object", "properties": {"title": {"type": "string"}},
                "required": ["title"]}}},
        });
        assert_eq!(script(&title).text(), r#"{"title":"(mock side reply)"}"#);
        let plain = json!({"model": "x", "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(script(&plain).text(), SIDE_REPLY);
    }

    #[tokio::test]
    async fn it_streams_records_and_answers_the_other_endpoints() {
        let mock = MockAnthropic::start().await;
        let http = reqwest::Client::new();
        let body = http
            .post(format!("{}/v1/messages?beta=true", mock.base_url))
            .json(&main_request(json!("please run touch")))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let events: Vec<(String, Value)> = sse::parse(&body)
            .into_iter()
            .map(|e| (e.name.expect("a named event"), e.data))
            .collect();
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        for (name, data) in &events {
            assert_eq!(data["type"], name.as_str());
        }
        assert_eq!(events[1].1["content_block"]["name"], "Bash");
        let input: String = events[2..4]
            .iter()
            .map(|(_, d)| d["delta"]["partial_json"].as_str().unwrap())
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&input).unwrap()["command"],
            TOOL_COMMAND
        );
        assert_eq!(events[5].1["delta"]["stop_reason"], "tool_use");

        let message: Value = fetch::json(
            http.post(format!("{}/v1/messages", mock.base_url))
                .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
        assert_eq!(message["content"][0]["text"], SIDE_REPLY);

        let hello = http
            .head(format!("{}/api/hello", mock.base_url))
            .send()
            .await
            .unwrap();
        assert_eq!(hello.status(), 200);
        let tokens: Value = fetch::json(
            http.post(format!("{}/v1/messages/count_tokens", mock.base_url))
                .json(&json!({"messages": []})),
        )
        .await;
        assert!(tokens["input_tokens"].is_u64());
        let missing = http
            .post(format!("{}/v1/other", mock.base_url))
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);

        assert_eq!(mock.all_requests().len(), 5);
        assert_eq!(mock.requests().len(), 1);
        assert!(
            mock.summary().contains("tool_use Bash"),
            "{}",
            mock.summary()
        );
    }
}
