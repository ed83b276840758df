//! A scripted OpenAI Responses API for real Codex 0.171.0 (and the
//! codex-acp 2.6.0 that runs it; docs/codex.md §6): `POST /v1/responses`,
//! streamed as named SSE events (`response.created`, `response.in_progress`,
//! `response.output_item.added`, then `response.content_part.added`,
//! `response.output_text.delta`…, `response.output_text.done`,
//! `response.content_part.done` for text or
//! `response.function_call_arguments.delta` ×2 and `….done` for a call,
//! `response.output_item.done`, `response.completed`) when the request asks
//! for `stream`, as one `response` object otherwise. Every request is
//! recorded. That is all Codex called with a custom `model_provider`
//! (`wire_api = "responses"`): no `/models`, no websocket.
//!
//! Codex's main requests offer its tools (`exec_command`, `write_stdin`,
//! …). Others are side requests answered [`SIDE_REPLY`] (as JSON filling
//! `text.format.schema` when one is asked for): the conversation title
//! (model `gpt-5.6-luna`, no tools, "Your task is to generate a very short
//! title…") and, in codex-acp's default "Auto review" mode, the approval
//! reviewer ("The following is the Codex agent history…", with tools).
//!
//! The main script reads the input from the end: a `function_call_output`
//! means "after the tool" ("Tool finished: <the command's output, or the
//! error>"); else the prompt is the last `input_text` of the last user
//! message that is not a `<…>` context block. [`TOOL_TRIGGER`] calls
//! `exec_command` with [`TOOL_COMMAND`] and `sandbox_permissions:
//! "require_escalated"`, so Codex asks whatever its sandbox mode (and the
//! command runs outside the sandbox, which needs no bubblewrap);
//! [`QUIET_TRIGGER`] the same call without the escalation.
//!
//! It never answers 5xx (Codex retries those): anything it cannot handle
//! gets a 4xx in the API's error format.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use super::responses_stream::{events, item, response};
use super::sse;
use super::{
    fill, reply_words, words, Recorder, Reply, Request, Served, AFTER_TOOL, SIDE_REPLY,
    TOOL_COMMAND, TOOL_DESCRIPTION, TOOL_TRIGGER,
};

/// The model the tests configure (`model = "mock-model"`); Codex warns that
/// it has no metadata for it and carries on.
pub(crate) const MODEL: &str = "mock-model";
/// Asking for this makes the mock call `exec_command` with [`TOOL_COMMAND`]
/// without asking for escalation: Codex then runs it in its sandbox, or
/// outside it with `--dangerously-bypass-approvals-and-sandbox` (an
/// escalation request is refused when the approval policy is `never`).
pub(crate) const QUIET_TRIGGER: &str = "please run touch quietly";
/// How the approval reviewer's request starts (codex-acp "Auto review").
const REVIEWER: &str = "The following is the Codex agent history";

/// The text of the last `input_text` of the last user message whose text
/// is not a `<…>` block Codex adds (environment, turn_aborted), or "".
fn last_prompt(input: &[Value]) -> String {
    input
        .iter()
        .rev()
        .filter(|i| i["type"] == "message" && i["role"] == "user")
        .find_map(|m| {
            m["content"]
                .as_array()?
                .iter()
                .filter(|c| c["type"] == "input_text")
                .filter_map(|c| c["text"].as_str())
                .rfind(|t| !t.trim_start().starts_with('<'))
                .map(|t| t.trim().to_string())
        })
        .unwrap_or_default()
}

/// Whether `body` is a request of Codex's main loop: it offers
/// `exec_command` and is not the approval reviewer's.
pub(crate) fn is_main(body: &Value) -> bool {
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let input = body["input"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    tools.iter().any(|t| t["name"] == "exec_command") && !last_prompt(input).starts_with(REVIEWER)
}

/// What the command's output says, in a line: the text after `Output:` in
/// an `exec_command` result ("(no output)" when empty), or the first line
/// of anything else (an error).
fn output_line(output: &Value) -> String {
    let text = match output {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.to_string(),
    };
    match text.split_once("Output:\n") {
        Some((_, out)) => out.lines().next().unwrap_or("(no output)").to_string(),
        None => text.lines().next().unwrap_or_default().to_string(),
    }
}

/// The script (see the module documentation).
pub(crate) fn script(body: &Value) -> Reply {
    if !is_main(body) {
        let schema = &body["text"]["format"]["schema"];
        let text = if schema.is_object() {
            fill(schema).to_string()
        } else {
            SIDE_REPLY.to_string()
        };
        return Reply::Text(vec![text]);
    }
    let input = body["input"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if let Some(last) = input.last().filter(|i| is_tool_output(i)) {
        let line = output_line(&last["output"]);
        let line = if line.is_empty() {
            "(no output)".to_string()
        } else {
            line
        };
        return Reply::Text(words(&format!("{AFTER_TOOL} {line}")));
    }
    let prompt = last_prompt(input).to_lowercase();
    if prompt.contains(TOOL_TRIGGER) {
        let mut arguments = json!({"cmd": TOOL_COMMAND});
        if !prompt.contains(QUIET_TRIGGER) {
            arguments["sandbox_permissions"] = json!("require_escalated");
            arguments["justification"] = json!(TOOL_DESCRIPTION);
        }
        return Reply::Tool {
            name: "exec_command".into(),
            input: arguments,
        };
    }
    let prompt = last_prompt(input);
    Reply::Text(reply_words(&prompt))
}

/// Whether an input item is a tool's output (the model is asked to go on
/// after a call, not about a prompt).
fn is_tool_output(item: &Value) -> bool {
    matches!(
        item["type"].as_str(),
        Some("function_call_output" | "custom_tool_call_output")
    )
}

/// How many of the main `requests` ask the model about exactly `prompt`:
/// its last input is not a tool's output and its prompt (as the script
/// reads it) is `prompt`.
pub(crate) fn times_asked(requests: &[Value], prompt: &str) -> usize {
    requests
        .iter()
        .filter(|b| {
            let input = b["input"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            !input.last().is_some_and(is_tool_output) && last_prompt(input) == prompt
        })
        .count()
}

/// Writes `<codex_home>/config.toml` for a Codex run offline against the
/// mock at `base_url`: it as a custom model provider speaking the
/// Responses API, its key from `MOCK_API_KEY`, no update check, no
/// analytics (docs/codex.md §2).
pub(crate) fn write_config(codex_home: &std::path::Path, base_url: &str) {
    std::fs::create_dir_all(codex_home).unwrap();
    let toml = format!(
        "model = \"{MODEL}\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n\
         [model_providers.mock]\nname = \"Mock\"\nbase_url = \"{base_url}\"\n\
         wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n\n[analytics]\nenabled = false\n"
    );
    std::fs::write(codex_home.join("config.toml"), toml).unwrap();
}

/// A running mock; stops when dropped.
pub(crate) struct MockResponses {
    /// What a Codex `model_providers.<id>.base_url` should be:
    /// `http://127.0.0.1:PORT/v1` (Codex appends `/responses`).
    pub base_url: String,
    served: Served,
}

impl MockResponses {
    /// The environment that points Codex at this mock: `home` as HOME,
    /// `home/.codex` as CODEX_HOME (with [`write_config`] written there).
    pub(crate) fn env(&self, home: &std::path::Path) -> Vec<(String, String)> {
        let codex_home = home.join(".codex");
        write_config(&codex_home, &self.base_url);
        [
            ("HOME", home.to_string_lossy().into_owned()),
            ("CODEX_HOME", codex_home.to_string_lossy().into_owned()),
            ("MOCK_API_KEY", "mock-key".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Binds 127.0.0.1:0 and serves in the background.
    pub(crate) async fn start() -> Self {
        let app = Router::new()
            .route("/v1/responses", post(responses))
            .fallback(not_found);
        let served = Served::start(app).await;
        Self {
            base_url: format!("{}/v1", served.origin),
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
            .summary(|body| script(body).describe("function_call"))
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "invalid_request_error",
        "param": null, "code": null}});
    (status, axum::Json(body)).into_response()
}

async fn not_found(State(rec): State<Recorder>, method: Method, uri: Uri, body: Bytes) -> Response {
    let _ = rec.record(&method, &uri, &body);
    error(
        StatusCode::NOT_FOUND,
        "the mock serves POST /v1/responses only",
    )
}

async fn responses(State(rec): State<Recorder>, method: Method, uri: Uri, body: Bytes) -> Response {
    let (n, parsed) = rec.record(&method, &uri, &body);
    let Ok(body) = parsed else {
        return error(StatusCode::BAD_REQUEST, "the body is not JSON");
    };
    let reply = script(&body);
    let model = body["model"].as_str().unwrap_or(MODEL);
    if body["stream"] == true {
        sse::response(events(n, model, &reply))
    } else {
        axum::Json(response(
            n,
            model,
            "completed",
            vec![item(n, &reply, "completed")],
        ))
        .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A main request as Codex 0.171.0 sends it (trimmed).
    fn main_request(input: Value) -> Value {
        json!({"model": MODEL, "stream": true, "input": input,
            "tools": [{"type": "function", "name": "exec_command"}, {"type": "function", "name": "write_stdin"}]})
    }

    fn user(text: &str) -> Value {
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    }

    #[test]
    fn the_script_reads_the_input_from_the_end() {
        let env = user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>");
        assert_eq!(
            script(&main_request(json!([env, user("hello there")]))).text(),
            "Mock reply to: hello there"
        );
        match script(&main_request(json!([user("Please run touch")]))) {
            Reply::Tool { name, input } => {
                assert_eq!(name, "exec_command");
                assert_eq!(input["cmd"], TOOL_COMMAND);
                assert_eq!(input["sandbox_permissions"], "require_escalated");
            }
            other => panic!("expected a call, got {other:?}"),
        }
        match script(&main_request(json!([user(QUIET_TRIGGER)]))) {
            Reply::Tool { input, .. } => {
                assert_eq!(input, json!({"cmd": TOOL_COMMAND}));
            }
            other => panic!("expected a call, got {other:?}"),
        }
        let ran = json!({"type": "function_call_output", "call_id": "call_mock_2",
            "output": "Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n"});
        assert_eq!(
            script(&main_request(json!([user("please run touch"), ran]))).text(),
            "Tool finished: (no output)"
        );
        let denied = json!({"type": "function_call_output", "call_id": "call_mock_3",
            "output": "exec_command failed: CreateProcess { message: \"Rejected\" }"});
        assert_eq!(
            script(&main_request(json!([denied]))).text(),
            "Tool finished: exec_command failed: CreateProcess { message: \"Rejected\" }"
        );
    }

    #[test]
    fn side_requests_get_the_side_reply() {
        let title = json!({"model": "gpt-5.6-luna", "stream": true, "tools": [],
            "input": [user("Your task is to generate a very short title… please run touch")],
            "text": {"format": {"type": "json_schema", "schema": {"type": "object",
                "properties": {"title": {"type": "string"}}}}}});
        assert_eq!(script(&title).text(), r#"{"title":"(mock side reply)"}"#);
        let mut reviewer =
            main_request(json!([user(&format!("{REVIEWER} whose request action…"))]));
        assert!(!is_main(&reviewer));
        reviewer["text"] = json!(null);
        assert_eq!(script(&reviewer).text(), SIDE_REPLY);
    }

    #[tokio::test]
    async fn it_streams_answers_and_records() {
        let mock = MockResponses::start().await;
        let http = reqwest::Client::new();
        let url = format!("{}/responses", mock.base_url);
        let stream = http
            .post(&url)
            .json(&main_request(json!([user("please run touch")])))
            .send()
            .await
            .unwrap();
        assert_eq!(stream.headers()["content-type"], "text/event-stream");
        let events = sse::parse(&stream.text().await.unwrap());
        let names: Vec<&str> = events.iter().map(|e| e.name.as_deref().unwrap()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.data["type"], e.name.as_deref().unwrap());
            assert_eq!(e.data["sequence_number"], i);
        }
        let args: String = events[3..5]
            .iter()
            .map(|e| e.data["delta"].as_str().unwrap())
            .collect();
        assert_eq!(args, events[5].data["arguments"].as_str().unwrap());
        assert_eq!(
            events[6].data["item"]["call_id"],
            events[7].data["response"]["output"][0]["call_id"]
        );

        let text_events = sse::parse(
            &http
                .post(&url)
                .json(&main_request(json!([user("hi you")])))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
        );
        let deltas: String = text_events
            .iter()
            .filter(|e| e.name.as_deref() == Some("response.output_text.delta"))
            .map(|e| e.data["delta"].as_str().unwrap())
            .collect();
        assert_eq!(deltas, "Mock reply to: hi you");

        let mut whole = main_request(json!([user("hi")]));
        whole["stream"] = json!(false);
        let answer: Value = http
            .post(&url)
            .json(&whole)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            answer["output"][0]["content"][0]["text"],
            "Mock reply to: hi"
        );
        let missing = http
            .get(format!("{}/models", mock.base_url))
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
        let bad = http.post(&url).body("{").send().await.unwrap();
        assert_eq!(bad.status(), 400);
        assert_eq!(mock.all_requests().len(), 5);
        assert_eq!(mock.requests().len(), 3);
        assert!(
            mock.summary().contains("function_call exec_command"),
            "{}",
            mock.summary()
        );
    }
}
