//! A scripted Gemini API (`generativelanguage`, v1beta) for real Gemini CLI
//! 0.61.0 (docs/gemini-cli.md §6): `POST /v1beta/models/{model}:generateContent`
//! (one JSON answer), `…:streamGenerateContent?alt=sse` (the same answer in
//! `data:` events, one word per event, `finishReason` and `usageMetadata`
//! on the last) and `…:countTokens`. Every request is recorded.
//!
//! What Gemini CLI sends (seen with the exploration mock): before each
//! prompt its router asks `gemini-3.5-flash-lite` (`generateContent`, no
//! tools, `responseJsonSchema` {complexity_reasoning, complexity_score});
//! then the main model (`streamGenerateContent`, with `tools`); at startup a
//! summary of the previous session (`generateContent`, no tools, no
//! schema). A request without `tools` is a side request: it gets
//! [`SIDE_REPLY`] (as JSON filling the schema when one is asked for).
//!
//! The main script reads the last `user` content: a `functionResponse` part
//! means "after the tool" ("Tool finished: <its output or error>"); else the
//! prompt is its last text part (the first prompt shares its content with
//! a `<session_context>` part). [`TOOL_TRIGGER`] calls `run_shell_command`
//! with [`TOOL_COMMAND`], [`WRITE_TRIGGER`] `write_file` (an edit dialog),
//! anything else is answered "Mock reply to: <prompt>".
//!
//! It never answers 5xx (Gemini CLI retries those with backoff): anything
//! it cannot handle gets a 4xx in the API's error format.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use super::sse::{self, Event};
use super::{
    fill, reply_words, words, Recorder, Reply, Request, Served, AFTER_TOOL, SIDE_REPLY,
    TOOL_COMMAND, TOOL_DESCRIPTION, TOOL_TRIGGER,
};

/// Asking for this makes the mock call `write_file` for [`WRITE_FILE`].
pub(crate) const WRITE_TRIGGER: &str = "please write notes";
/// The file the `write_file` call writes, relative to the workspace.
pub(crate) const WRITE_FILE: &str = "notes.txt";
/// What it writes there.
pub(crate) const WRITE_CONTENT: &str = "hello\n";
/// The model version the mock reports.
pub(crate) const MODEL_VERSION: &str = "gemini-mock";

/// Whether `body` is a request of the agent's main loop: one that offers
/// tools.
pub(crate) fn is_main(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// The script (see the module documentation).
pub(crate) fn script(body: &Value) -> Reply {
    if !is_main(body) {
        let config = &body["generationConfig"];
        let schema = [&config["responseJsonSchema"], &config["responseSchema"]]
            .into_iter()
            .find(|s| s.is_object());
        let text = schema.map_or_else(|| SIDE_REPLY.to_string(), |s| fill(s).to_string());
        return Reply::Text(vec![text]);
    }
    let parts = last_user_parts(body);
    if let Some(result) = parts.iter().find_map(|p| p.get("functionResponse")) {
        let response = &result["response"];
        let text = response["output"]
            .as_str()
            .or(response["error"].as_str())
            .map_or_else(|| response.to_string(), str::to_string);
        let line = text
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with('<'))
            .unwrap_or_default();
        return Reply::Text(words(&format!("{AFTER_TOOL} {line}")));
    }
    let prompt = prompt_of(body).unwrap_or_default();
    let lower = prompt.to_lowercase();
    if lower.contains(TOOL_TRIGGER) {
        return Reply::Tool {
            name: "run_shell_command".into(),
            input: json!({"command": TOOL_COMMAND, "description": TOOL_DESCRIPTION}),
        };
    }
    if lower.contains(WRITE_TRIGGER) {
        return Reply::Tool {
            name: "write_file".into(),
            input: json!({"file_path": WRITE_FILE, "content": WRITE_CONTENT}),
        };
    }
    Reply::Text(reply_words(&prompt))
}

/// The parts of a request's last `user` content.
fn last_user_parts(body: &Value) -> Vec<Value> {
    body["contents"]
        .as_array()
        .and_then(|c| c.iter().rev().find(|c| c["role"] == "user"))
        .and_then(|c| c["parts"].as_array())
        .cloned()
        .unwrap_or_default()
}

/// The prompt a main request asks about: the last text part of its last
/// `user` content; `None` when that content answers a function call.
pub(crate) fn prompt_of(body: &Value) -> Option<String> {
    let parts = last_user_parts(body);
    if parts.iter().any(|p| p.get("functionResponse").is_some()) {
        return None;
    }
    let text = parts.iter().filter_map(|p| p["text"].as_str()).next_back();
    Some(text.unwrap_or_default().trim().to_string())
}

/// How many of the main `requests` ask the model about exactly `prompt`
/// (a prompt typed twice, or folded into another, counts other than 1).
pub(crate) fn times_asked(requests: &[Value], prompt: &str) -> usize {
    requests
        .iter()
        .filter(|b| prompt_of(b).as_deref() == Some(prompt))
        .count()
}

/// Writes `<home>/.gemini/settings.json` for a Gemini CLI run offline
/// against this mock: the API key as the auth type (no dialog), no update
/// check or notice, no usage statistics or telemetry (docs/gemini-cli.md
/// §2).
pub(crate) fn write_settings(home: &std::path::Path) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// A running mock; stops when dropped.
pub(crate) struct MockGemini {
    /// What `GOOGLE_GEMINI_BASE_URL` should be: `http://127.0.0.1:PORT`
    /// (Gemini CLI appends `/v1beta/models/…`).
    pub base_url: String,
    served: Served,
}

impl MockGemini {
    /// The environment that points Gemini CLI at this mock, with `home`
    /// as its HOME (see [`write_settings`]).
    pub(crate) fn env(&self, home: &std::path::Path) -> Vec<(String, String)> {
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("GOOGLE_GEMINI_BASE_URL", self.base_url.clone()),
            ("GEMINI_API_KEY", "mock-key".into()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Binds 127.0.0.1:0 and serves in the background.
    pub(crate) async fn start() -> Self {
        let app = Router::new()
            .route("/v1beta/models/{*call}", post(call))
            .fallback(not_found);
        let served = Served::start(app).await;
        Self {
            base_url: served.origin.clone(),
            served,
        }
    }

    /// Every request so far, in order (any path).
    pub(crate) fn all_requests(&self) -> Vec<Request> {
        self.served.all()
    }

    /// The bodies of the main-loop requests, in order.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.served.bodies(is_main)
    }

    /// One line per request (what was answered), for failure reports.
    pub(crate) fn summary(&self) -> String {
        self.served
            .summary(|body| script(body).describe("functionCall"))
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"code": status.as_u16(), "message": message,
        "status": status.canonical_reason().unwrap_or("ERROR").to_uppercase().replace(' ', "_")}});
    (status, axum::Json(body)).into_response()
}

async fn not_found(State(rec): State<Recorder>, method: Method, uri: Uri, body: Bytes) -> Response {
    let _ = rec.record(&method, &uri, &body);
    error(
        StatusCode::NOT_FOUND,
        "the mock serves POST /v1beta/models/{model}:generateContent, :streamGenerateContent and :countTokens",
    )
}

/// `POST /v1beta/models/{model}:{method}`.
async fn call(
    State(rec): State<Recorder>,
    Path(call): Path<String>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let (n, parsed) = rec.record(&method, &uri, &body);
    let Ok(body) = parsed else {
        return error(StatusCode::BAD_REQUEST, "the body is not JSON");
    };
    match call.rsplit_once(':').map(|(_, m)| m) {
        Some("generateContent") => axum::Json(answer(n, &script(&body))).into_response(),
        Some("streamGenerateContent") => sse::response(events(n, &script(&body))),
        Some("countTokens") => {
            axum::Json(json!({"totalTokens": body.to_string().len() / 4})).into_response()
        }
        _ => error(StatusCode::NOT_FOUND, &format!("no such method: {call}")),
    }
}

fn usage() -> Value {
    json!({"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15})
}

/// One `GenerateContentResponse` carrying `parts`; the last of a stream
/// (or a whole answer) has `finishReason` and `usageMetadata`.
fn chunk(n: usize, parts: Value, last: bool) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut out = json!({"modelVersion": MODEL_VERSION, "responseId": format!("mock-{n}")});
    if last {
        candidate["finishReason"] = json!("STOP");
        out["usageMetadata"] = usage();
    }
    out["candidates"] = json!([candidate]);
    out
}

fn call_part(name: &str, args: &Value) -> Value {
    json!({"functionCall": {"name": name, "args": args}})
}

/// The `data:` events of a streamed reply (a function call is sent
/// whole, as Gemini does).
fn events(n: usize, reply: &Reply) -> Vec<Event> {
    match reply {
        Reply::Text(pieces) => pieces
            .iter()
            .enumerate()
            .map(|(i, p)| Event::data(chunk(n, json!([{"text": p}]), i + 1 == pieces.len())))
            .collect(),
        Reply::Tool { name, input } => {
            vec![Event::data(chunk(n, json!([call_part(name, input)]), true))]
        }
    }
}

/// A whole (non-streamed) answer.
fn answer(n: usize, reply: &Reply) -> Value {
    let part = match reply {
        Reply::Text(pieces) => json!({"text": pieces.concat()}),
        Reply::Tool { name, input } => call_part(name, input),
    };
    chunk(n, json!([part]), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A main request as Gemini CLI 0.61.0 sends it (trimmed).
    fn main_request(parts: Value) -> Value {
        json!({"contents": [{"role": "user", "parts": parts}],
            "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}]})
    }

    #[test]
    fn the_script_follows_the_last_user_content() {
        let first = main_request(json!([
            {"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"},
            {"text": "hello there"}]));
        assert_eq!(script(&first).text(), "Mock reply to: hello there");
        assert_eq!(
            script(&main_request(json!([{"text": "Please run touch now"}]))),
            Reply::Tool {
                name: "run_shell_command".into(),
                input: json!({"command": TOOL_COMMAND, "description": TOOL_DESCRIPTION}),
            }
        );
        assert!(matches!(
            script(&main_request(json!([{"text": "please write notes"}]))),
            Reply::Tool { name, .. } if name == "write_file"
        ));
        let ran = main_request(json!([{"functionResponse": {"name": "run_shell_command",
            "response": {"output": "<untrusted_context>\nOutput: (empty)\nProcess Group PGID: 7\n</untrusted_context>"}}}]));
        assert_eq!(script(&ran).text(), "Tool finished: Output: (empty)");
        let denied = main_request(json!([{"functionResponse": {"name": "run_shell_command",
            "response": {"error": "Tool execution blocked: Denied from the browser"}}}]));
        assert_eq!(
            script(&denied).text(),
            "Tool finished: Tool execution blocked: Denied from the browser"
        );
    }

    #[test]
    fn side_requests_get_the_side_reply() {
        let router = json!({"contents": [{"role": "user", "parts": [{"text": "please run touch"}]}],
            "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
                "type": "OBJECT", "properties": {"complexity_reasoning": {"type": "STRING"},
                "complexity_score": {"type": "INTEGER"}}}}});
        let answer: Value = serde_json::from_str(&script(&router).text()).unwrap();
        assert_eq!(answer["complexity_score"], 1);
        let summary = json!({"contents": [{"role": "user", "parts": [{"text": "Summarize…"}]}]});
        assert_eq!(script(&summary).text(), SIDE_REPLY);
    }

    #[tokio::test]
    async fn it_streams_answers_and_records() {
        let mock = MockGemini::start().await;
        let http = reqwest::Client::new();
        let url = |m: &str| format!("{}/v1beta/models/gemini-x:{m}", mock.base_url);
        let stream = http
            .post(url("streamGenerateContent?alt=sse"))
            .json(&main_request(json!([{"text": "hi you"}])))
            .send()
            .await
            .unwrap();
        assert_eq!(stream.headers()["content-type"], "text/event-stream");
        let events = sse::parse(&stream.text().await.unwrap());
        let pieces: Vec<&str> = events
            .iter()
            .map(|e| {
                e.data["candidates"][0]["content"]["parts"][0]["text"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(pieces.concat(), "Mock reply to: hi you");
        assert!(events.iter().all(|e| e.name.is_none()));
        let last = &events.last().unwrap().data;
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
        assert!(events[0].data["candidates"][0]
            .get("finishReason")
            .is_none());

        let call: Value = http
            .post(url("generateContent"))
            .json(&main_request(json!([{"text": "please run touch"}])))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let part = &call["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!(part["args"]["command"], TOOL_COMMAND);

        let missing = http
            .post(format!("{}/v1/other", mock.base_url))
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
        let bad = http
            .post(url("generateContent"))
            .body("{")
            .send()
            .await
            .unwrap();
        assert_eq!(bad.status(), 400);
        assert_eq!(mock.all_requests().len(), 4);
        assert_eq!(mock.requests().len(), 2);
        assert!(
            mock.summary().contains("functionCall run_shell_command"),
            "{}",
            mock.summary()
        );
    }
}
