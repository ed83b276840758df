//! A scripted OpenAI-compatible chat-completions API for real Qwen Code
//! (the contract is in docs/qwen-code.md §2): `POST /v1/chat/completions`,
//! answered as an SSE stream (`data:` chunks, then `data: [DONE]`) when the
//! request asks for `stream` and as one JSON completion otherwise, the
//! reply chosen from the request's last message. Every request is recorded.
//!
//! It never answers 5xx: Qwen retries those for ~107 s before it shows an
//! error, which would turn a mock bug into a test timeout instead of a clear
//! failure. Anything it cannot handle gets a 4xx, which Qwen reports at once
//! as an `[API Error: …]` assistant message.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use super::sse::{self, Event};
use super::{
    describe_text, reply_words, text_of, words, Recorder, Reply, Served, AFTER_TOOL, TOOL_COMMAND,
    TOOL_DESCRIPTION, TOOL_TRIGGER,
};

/// The model name the mock reports (and Qwen is configured with).
pub(crate) const MODEL: &str = "mock-model";
/// How an OpenAI stream ends, after its last chunk.
const DONE: &str = "data: [DONE]\n\n";

/// The script: decided on the last message, as Qwen sends a denied tool's
/// result only with the *next* prompt (so then the last message is the
/// prompt, not the tool result).
pub(crate) fn script(body: &Value) -> Reply {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let Some(last) = messages.last() else {
        return Reply::Text(words("The request had no messages."));
    };
    if last["role"] == "tool" {
        let result = text_of(&last["content"]);
        let first_line = result.lines().next().unwrap_or_default();
        return Reply::Text(words(&format!("{AFTER_TOOL} {first_line}")));
    }
    let prompt = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| prompt_of(&m["content"]))
        .unwrap_or_default();
    if prompt.to_lowercase().contains(TOOL_TRIGGER) {
        return Reply::Tool {
            name: "run_shell_command".into(),
            input: json!({"command": TOOL_COMMAND, "description": TOOL_DESCRIPTION}),
        };
    }
    Reply::Text(reply_words(prompt.trim()))
}

/// The prompt in a user message's content: its last text part that is not
/// context Qwen adds. Qwen 0.24 sends ~9 KB of `<system-reminder>` parts
/// before the prompt in the same message (docs/qwen-code.md §8.6).
pub(crate) fn prompt_of(content: &Value) -> String {
    match content {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .rfind(|t| !t.trim_start().starts_with("<system-reminder>"))
            .unwrap_or_default()
            .to_string(),
        other => text_of(other),
    }
}

/// How many of `requests` ask the model about `prompt`: their last message
/// is a user message whose prompt is exactly `prompt` (a prompt Qwen merged
/// with others or sent twice shows up as a count other than 1).
pub(crate) fn times_asked(requests: &[Value], prompt: &str) -> usize {
    requests
        .iter()
        .filter(|body| {
            body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .is_some_and(|m| m["role"] == "user" && prompt_of(&m["content"]).contains(prompt))
        })
        .count()
}

/// Whether `body` is a chat-completions request (it has messages).
fn is_chat(body: &Value) -> bool {
    body["messages"].is_array()
}

/// A running mock on 127.0.0.1 (random port); stops when dropped.
pub(crate) struct MockLlm {
    /// What `OPENAI_BASE_URL` should be: `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    served: Served,
}

impl MockLlm {
    /// Binds 127.0.0.1:0 and serves in the background.
    pub(crate) async fn start() -> Self {
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .fallback(not_found);
        let served = Served::start(app).await;
        Self {
            base_url: format!("{}/v1", served.origin),
            served,
        }
    }

    /// Every chat-completions request body received so far, in order.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.served.bodies(is_chat)
    }

    /// One line per request (its last message, shortened), for failure reports.
    pub(crate) fn summary(&self) -> String {
        self.served.summary(|body| {
            let last = body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .cloned()
                .unwrap_or(Value::Null);
            let text = match last["role"].as_str() {
                Some("user") => prompt_of(&last["content"]),
                _ => text_of(&last["content"]),
            };
            format!("last {} {}", last["role"], describe_text(&[text]))
        })
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"error": {"message": message}}))).into_response()
}

async fn not_found(State(rec): State<Recorder>, method: Method, uri: Uri, body: Bytes) -> Response {
    let _ = rec.record(&method, &uri, &body);
    error(
        StatusCode::NOT_FOUND,
        "the mock only serves POST /v1/chat/completions",
    )
}

async fn chat(State(rec): State<Recorder>, method: Method, uri: Uri, body: Bytes) -> Response {
    let (n, parsed) = rec.record(&method, &uri, &body);
    let Ok(body) = parsed else {
        return error(StatusCode::BAD_REQUEST, "the body is not JSON");
    };
    let reply = script(&body);
    if body["stream"] != true {
        return axum::Json(completion(n, &reply)).into_response();
    }
    let mut frames: Vec<String> = sse_chunks(n, &reply)
        .into_iter()
        .map(|chunk| Event::data(chunk).frame())
        .collect();
    frames.push(DONE.into());
    sse::frames(frames)
}

fn chunk(n: usize, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": format!("chatcmpl-mock-{n}"),
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

/// The SSE `data:` payloads of a streamed reply (without `[DONE]`).
fn sse_chunks(n: usize, reply: &Reply) -> Vec<Value> {
    let mut out = Vec::new();
    match reply {
        Reply::Text(pieces) => {
            out.push(chunk(n, json!({"role": "assistant", "content": ""}), None));
            for piece in pieces {
                out.push(chunk(n, json!({"content": piece}), None));
            }
            out.push(chunk(n, json!({}), Some("stop")));
        }
        Reply::Tool { name, input } => {
            let id = format!("call_mock_{n}");
            let args = input.to_string();
            let (head, tail) = args.split_at(args.len() / 2);
            out.push(chunk(
                n,
                json!({"role": "assistant", "content": null}),
                None,
            ));
            out.push(chunk(
                n,
                json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}}]}),
                None,
            ));
            for part in [head, tail] {
                out.push(chunk(
                    n,
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}),
                    None,
                ));
            }
            out.push(chunk(n, json!({}), Some("tool_calls")));
        }
    }
    let mut usage = chunk(n, json!({}), None);
    usage["choices"] = json!([]);
    usage["usage"] = usage_counts();
    out.push(usage);
    out
}

fn usage_counts() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
}

/// A non-streamed answer, should a client ever ask for one.
fn completion(n: usize, reply: &Reply) -> Value {
    let (message, finish) = match reply {
        Reply::Text(pieces) => (
            json!({"role": "assistant", "content": pieces.concat()}),
            "stop",
        ),
        Reply::Tool { name, input } => (
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("call_mock_{n}"), "type": "function",
                "function": {"name": name, "arguments": input.to_string()}}]}),
            "tool_calls",
        ),
    };
    let mut out = chunk(n, Value::Null, None);
    out["object"] = json!("chat.completion");
    out["choices"] = json!([{"index": 0, "message": message, "finish_reason": finish}]);
    out["usage"] = usage_counts();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mock speaks the contract Qwen relies on (docs/qwen-code.md §2):
    /// text and tool calls streamed as chunks, `[DONE]` last, 404 elsewhere.
    #[tokio::test]
    async fn it_streams_text_and_tool_calls() {
        let mock = MockLlm::start().await;
        let http = reqwest::Client::new();
        let ask = |text: &str| {
            json!({
                "model": MODEL,
                "stream": true,
                "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
            })
        };
        let sse = |body: String| -> Vec<Value> {
            assert!(body.ends_with(DONE), "{body}");
            body.split("\n\n")
                .filter_map(|e| e.strip_prefix("data: "))
                .filter(|d| *d != "[DONE]")
                .map(|d| serde_json::from_str(d).unwrap())
                .collect()
        };
        let resp = http
            .post(format!("{}/chat/completions", mock.base_url))
            .json(&ask("hi there"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        let chunks = sse(resp.text().await.unwrap());
        let text: String = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, super::super::reply_to("hi there"));
        assert!(chunks.len() > 4);
        assert!(chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "stop"));

        let body = http
            .post(format!("{}/chat/completions", mock.base_url))
            .json(&ask(TOOL_TRIGGER))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let chunks = sse(body);
        let args: String = chunks
            .iter()
            .filter_map(|c| {
                c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
            })
            .collect();
        let args: Value = serde_json::from_str(&args).unwrap();
        assert_eq!(args["command"], TOOL_COMMAND);
        assert!(chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls"));

        let missing = http
            .get(format!("{}/models", mock.base_url))
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
        assert_eq!(mock.requests().len(), 2);
    }
}
