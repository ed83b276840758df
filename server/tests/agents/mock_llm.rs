//! A scripted OpenAI-compatible chat-completions server for real Qwen Code
//! (the contract is in docs/qwen-code.md §2): `POST /v1/chat/completions`,
//! always answered as an SSE stream, the reply chosen from the request's
//! last message. Every request body is recorded.
//!
//! It never answers 5xx: Qwen retries those for ~107 s before it shows an
//! error, which would turn a mock bug into a test timeout instead of a clear
//! failure. Anything it cannot handle gets a 4xx, which Qwen reports at once
//! as an `[API Error: …]` assistant message.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// The model name the mock reports (and Qwen is configured with).
pub const MODEL: &str = "mock-model";
/// Asking for this makes the mock call `run_shell_command` with [`TOOL_COMMAND`].
pub const TOOL_TRIGGER: &str = "please run touch";
/// A command that is not read-only, so Qwen asks for approval before running it.
pub const TOOL_COMMAND: &str = "touch made_by_tool.txt";
/// A prompt containing this gets a long reply (a few seconds of streaming),
/// so that a test can act while a turn runs.
pub const SLOW_TRIGGER: &str = "slow story";
/// Words of filler a slow reply streams after naming its prompt.
const SLOW_WORDS: usize = 150;
/// How a reply to a tool result starts.
pub const AFTER_TOOL: &str = "Tool finished:";
/// Pause between streamed chunks: long enough that each chunk is its own
/// network read (real streaming), short enough to keep turns well under 1 s.
const CHUNK_DELAY: Duration = Duration::from_millis(15);

/// The text reply to any other prompt (it names the prompt, so a test can
/// tell which submit a reply answers).
pub fn reply_to(prompt: &str) -> String {
    format!("Mock reply to: {prompt}")
}

/// What the mock answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Text, one SSE chunk per element.
    Text(Vec<String>),
    /// One tool call, its arguments streamed in two pieces.
    Tool { name: String, arguments: Value },
}

/// The script: decided on the last message, as Qwen sends a denied tool's
/// result only with the *next* prompt (so then the last message is the
/// prompt, not the tool result).
pub fn script(body: &Value) -> Reply {
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
            arguments: json!({"command": TOOL_COMMAND, "description": "Create a file"}),
        };
    }
    let mut reply = words(&reply_to(prompt.trim()));
    if prompt.contains(SLOW_TRIGGER) {
        reply.extend(std::iter::repeat_n(" and so on".to_string(), SLOW_WORDS));
    }
    Reply::Text(reply)
}

/// The prompt in a user message's content: its last text part that is not
/// context Qwen adds. Qwen 0.24 sends ~9 KB of `<system-reminder>` parts
/// before the prompt in the same message (docs/qwen-code.md §8.6).
pub fn prompt_of(content: &Value) -> String {
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
pub fn times_asked(requests: &[Value], prompt: &str) -> usize {
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

/// The text of a message's content: a string, or an array of text parts.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// Splits text into word chunks that keep their trailing space.
fn words(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_string).collect()
}

#[derive(Default)]
struct Shared {
    requests: Mutex<Vec<Value>>,
    counter: Mutex<u64>,
}

/// A running mock on 127.0.0.1 (random port); stops when dropped.
pub struct MockLlm {
    /// What `OPENAI_BASE_URL` should be: `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl MockLlm {
    /// Binds 127.0.0.1:0 and serves in the background.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .fallback(not_found)
            // Qwen's first request alone is ~90 KB (system prompt + 15 tool
            // schemas) and grows with the conversation.
            .layer(DefaultBodyLimit::max(16 << 20))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            base_url: format!("http://{addr}/v1"),
            shared,
            task,
        }
    }

    /// Every request body received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// One line per request (its last message, shortened), for failure reports.
    pub fn summary(&self) -> String {
        self.requests()
            .iter()
            .enumerate()
            .map(|(i, body)| {
                let last = body["messages"]
                    .as_array()
                    .and_then(|m| m.last())
                    .cloned()
                    .unwrap_or(Value::Null);
                let text = match last["role"].as_str() {
                    Some("user") => prompt_of(&last["content"]),
                    _ => text_of(&last["content"]),
                };
                let text: String = text.chars().take(100).collect();
                format!("  #{}: last {} {text:?}", i + 1, last["role"])
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"error": {"message": "the mock only serves POST /v1/chat/completions"}})),
    )
        .into_response()
}

async fn chat(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": {"message": "the body is not JSON"}})),
        )
            .into_response();
    };
    let reply = script(&body);
    let stream = body["stream"] == true;
    let n = {
        let mut c = shared.counter.lock().unwrap_or_else(|e| e.into_inner());
        *c += 1;
        *c
    };
    shared
        .requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(body);
    if !stream {
        return axum::Json(completion(n, &reply)).into_response();
    }
    let (tx, rx) = mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        for chunk in sse_chunks(n, &reply) {
            let event = format!("data: {chunk}\n\n");
            if tx.send(Bytes::from(event)).await.is_err() {
                return; // Qwen cancelled the request.
            }
            tokio::time::sleep(CHUNK_DELAY).await;
        }
        let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
    });
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok::<_, Infallible>(chunk), rx))
    }));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap()
}

fn chunk(n: u64, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": format!("chatcmpl-mock-{n}"),
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

/// The SSE `data:` payloads of a streamed reply (without `[DONE]`).
fn sse_chunks(n: u64, reply: &Reply) -> Vec<Value> {
    let mut out = Vec::new();
    match reply {
        Reply::Text(pieces) => {
            out.push(chunk(n, json!({"role": "assistant", "content": ""}), None));
            for piece in pieces {
                out.push(chunk(n, json!({"content": piece}), None));
            }
            out.push(chunk(n, json!({}), Some("stop")));
        }
        Reply::Tool { name, arguments } => {
            let id = format!("call_mock_{n}");
            let args = arguments.to_string();
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
    out.push(json!({
        "id": format!("chatcmpl-mock-{n}"),
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }));
    out
}

/// A non-streamed answer, should a client ever ask for one.
fn completion(n: u64, reply: &Reply) -> Value {
    let (message, finish) = match reply {
        Reply::Text(pieces) => (
            json!({"role": "assistant", "content": pieces.concat()}),
            "stop",
        ),
        Reply::Tool { name, arguments } => (
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("call_mock_{n}"), "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}}]}),
            "tool_calls",
        ),
    };
    json!({
        "id": format!("chatcmpl-mock-{n}"),
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}
