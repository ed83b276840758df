//! Mock model APIs for the real agents the tests drive: each binds
//! 127.0.0.1:0, records every request, and answers from a script keyed on
//! the last prompt ("Mock reply to: …", a tool call for "please run touch",
//! "Tool finished: …" after a tool result). `chat_completions` serves the
//! OpenAI chat-completions API (Qwen Code), `anthropic` the Anthropic
//! Messages API (Claude Code and its ACP adapter), `gemini` the Gemini API
//! (Gemini CLI), `openai_responses` the OpenAI Responses API (Codex). What
//! they share lives here (the script's words, the request log, the server)
//! and in `sse` (the stream framing), so each mock only says what is
//! particular to its API.
//!
//! Include from a test binary with
//! `#[path = "support/mocks/mod.rs"] mod mocks;`.

#![allow(dead_code)]

pub(crate) mod anthropic;
pub(crate) mod chat_completions;
pub(crate) mod gemini;
pub(crate) mod openai_responses;
mod responses_stream;
pub(crate) mod sse;

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::Router;
use serde_json::{json, Value};

/// The answer to a request that is not the agent's main loop (a title, a
/// router's or a reviewer's question), so that a test cannot mistake it for
/// a scripted reply.
pub(crate) const SIDE_REPLY: &str = "(mock side reply)";
/// Asking for this makes a mock call the agent's shell tool with
/// [`TOOL_COMMAND`].
pub(crate) const TOOL_TRIGGER: &str = "please run touch";
/// A command that changes the workspace, so an agent asks before it runs.
pub(crate) const TOOL_COMMAND: &str = "touch made_by_tool.txt";
/// The file [`TOOL_COMMAND`] makes.
pub(crate) const TOOL_FILE: &str = "made_by_tool.txt";
/// Why the mock wants to run [`TOOL_COMMAND`] (shown in approval dialogs).
pub(crate) const TOOL_DESCRIPTION: &str = "Create a file";
/// A prompt containing this gets a long reply (a few seconds of streaming),
/// so that a test can act while a turn runs.
pub(crate) const SLOW_TRIGGER: &str = "slow story";
/// Words of a slow reply after it names its prompt. Each is different:
/// Gemini CLI stops a stream that repeats itself ("A potential loop was
/// detected").
const SLOW_WORDS: usize = 150;
/// How a reply to a tool result starts.
pub(crate) const AFTER_TOOL: &str = "Tool finished:";

/// What a mock answers, whatever its API: how each API streams or encodes
/// it is the mock's own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// Text, one streamed piece per element.
    Text(Vec<String>),
    /// One call of the agent's tool `name` with `input`.
    Tool { name: String, input: Value },
}

impl Reply {
    /// How a failure report shows it, `call` being the API's word for a
    /// tool call.
    pub(crate) fn describe(&self, call: &str) -> String {
        match self {
            Reply::Text(pieces) => describe_text(pieces),
            Reply::Tool { name, .. } => format!("{call} {name}"),
        }
    }

    /// The text of a text reply, whole (for the mocks' own tests).
    pub(crate) fn text(self) -> String {
        match self {
            Reply::Text(pieces) => pieces.concat(),
            other => panic!("expected text, got {other:?}"),
        }
    }
}

/// The text reply to any other prompt (it names the prompt, so a test can
/// tell which prompt a reply answers).
pub(crate) fn reply_to(prompt: &str) -> String {
    format!("Mock reply to: {prompt}")
}

/// The words of the reply to `prompt`, each keeping its trailing space
/// (one streamed piece each); a [`SLOW_TRIGGER`] prompt gets many more.
pub(crate) fn reply_words(prompt: &str) -> Vec<String> {
    let mut out = words(&reply_to(prompt));
    if prompt.contains(SLOW_TRIGGER) {
        out.extend((1..=SLOW_WORDS).map(|i| format!(" word{i}")));
    }
    out
}

/// The text of a message's content: a string, or an array of text parts
/// (the chat-completions and Messages APIs both allow either).
pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// Splits text into word pieces that keep their trailing space.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_string).collect()
}

/// A JSON value that fits `schema` (a JSON schema; Gemini writes its types
/// in capitals): strings are [`SIDE_REPLY`], numbers 1, booleans false, an
/// enum its first value, objects every property. What a side request asking
/// for structured output gets.
pub(crate) fn fill(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds.iter().find(|k| *k != "null").cloned(),
        other => Some(other.clone()),
    };
    match kind
        .as_ref()
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("object") => Value::Object(
            schema["properties"]
                .as_object()
                .map(|props| props.iter().map(|(k, p)| (k.clone(), fill(p))).collect())
                .unwrap_or_default(),
        ),
        Some("array") => json!([]),
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(false),
        Some("null") => Value::Null,
        _ => json!(SIDE_REPLY),
    }
}

/// One recorded request.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub method: String,
    /// Path and query, e.g. `/v1/responses`.
    pub uri: String,
    /// The body as JSON (`Null` when empty or not JSON).
    pub body: Value,
}

/// Every request a mock received, in order, shared with its handlers.
#[derive(Clone, Default)]
pub(crate) struct Recorder(Arc<Mutex<Vec<Request>>>);

impl Recorder {
    /// Records a request whose body is `body` (kept as JSON, `Null` when it
    /// is not JSON); returns its 1-based number (which makes ids unique per
    /// mock) and the body parsed, or why it is not JSON.
    pub(crate) fn record(
        &self,
        method: &Method,
        uri: &Uri,
        body: &Bytes,
    ) -> (usize, Result<Value, serde_json::Error>) {
        let parsed = serde_json::from_slice::<Value>(body);
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        all.push(Request {
            method: method.to_string(),
            uri: uri.to_string(),
            body: parsed.as_ref().cloned().unwrap_or(Value::Null),
        });
        (all.len(), parsed)
    }

    /// Every request so far, in order.
    pub(crate) fn all(&self) -> Vec<Request> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A mock serving on 127.0.0.1 (random port) in the background, with its
/// request log; stops when dropped.
pub(crate) struct Served {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    recorder: Recorder,
    task: tokio::task::JoinHandle<()>,
}

impl Served {
    /// Binds 127.0.0.1:0 and serves `app`, whose handlers get the request
    /// log as their state. Bodies up to 32 MiB: an agent's first request is
    /// 30 to 100 KB (system prompt, tool schemas) and grows with the
    /// conversation.
    pub(crate) async fn start(app: Router<Recorder>) -> Self {
        let recorder = Recorder::default();
        let app = app
            .layer(DefaultBodyLimit::max(32 << 20))
            .with_state(recorder.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            origin: format!("http://{addr}"),
            recorder,
            task,
        }
    }

    /// Every request so far, in order (any path).
    pub(crate) fn all(&self) -> Vec<Request> {
        self.recorder.all()
    }

    /// The bodies of the requests `keep` accepts, in order.
    pub(crate) fn bodies(&self, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
        self.all()
            .into_iter()
            .map(|r| r.body)
            .filter(|b| keep(b))
            .collect()
    }

    /// One line per request (`describe` says what was answered), for
    /// failure reports.
    pub(crate) fn summary(&self, describe: impl Fn(&Value) -> String) -> String {
        self.all()
            .iter()
            .enumerate()
            .map(|(i, r)| format!("  #{}: {} {} {}", i + 1, r.method, r.uri, describe(&r.body)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How a summary line shows a text reply: its first 80 characters.
pub(crate) fn describe_text(pieces: &[String]) -> String {
    format!(
        "text {:?}",
        pieces.concat().chars().take(80).collect::<String>()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_answers_a_schema_in_either_spelling() {
        // Gemini CLI's router asks for this (types in capitals).
        let router = json!({"type": "OBJECT", "properties": {
            "complexity_reasoning": {"type": "STRING"},
            "complexity_score": {"type": "INTEGER"}}});
        assert_eq!(
            fill(&router),
            json!({"complexity_reasoning": SIDE_REPLY, "complexity_score": 1})
        );
        let nested = json!({"type": "object", "properties": {
            "risk": {"type": "string", "enum": ["low", "high"]},
            "ok": {"type": ["boolean", "null"]},
            "list": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(
            fill(&nested),
            json!({"risk": "low", "ok": false, "list": []})
        );
    }

    #[test]
    fn a_slow_reply_never_repeats_a_piece() {
        let pieces = reply_words("tell me a slow story");
        assert!(pieces.len() > SLOW_WORDS);
        let distinct: std::collections::HashSet<_> = pieces.iter().collect();
        assert_eq!(distinct.len(), pieces.len());
        assert_eq!(reply_words("hi there").concat(), "Mock reply to: hi there");
    }
}
