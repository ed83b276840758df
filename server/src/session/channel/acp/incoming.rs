//! What an ACP agent sends duet: its notifications, its answers to
//! duet's calls, and its requests (permissions, files, terminals).

use std::path::PathBuf;

use duet_protocol::build;
use duet_protocol::rest::{AgentMode, AgentModes};
use duet_protocol::sidecar::{Envelope, SidecarEvent};
use serde_json::{json, Value};

use super::jsonrpc::{reply, request, INVALID_PARAMS, METHOD_NOT_FOUND};
use super::{fs, quirks, updates, Call, Inner, Out};
use crate::session::WarningCode;
use crate::sync::lock;

impl Inner {
    /// One message of the agent's.
    pub(super) async fn on_message(&self, msg: Value) {
        let method = msg["method"].as_str();
        match (method, msg.get("id")) {
            (Some(method), Some(id)) => self.on_request(method, id.clone(), &msg["params"]).await,
            (Some("session/update"), None) => self.on_update(&msg["params"]["update"]),
            (Some(method), None) => self.shared.emit(&build::system_with(
                "acp_notification",
                build::extra([("method", json!(method)), ("params", msg["params"].clone())]),
            )),
            (None, Some(id)) => self.on_response(id, &msg),
            (None, None) => {}
        }
    }

    /// One `session/update`.
    fn on_update(&self, update: &Value) {
        let mut st = lock(&self.state);
        // `session/load` replays the whole conversation as updates, before
        // it answers (or after: Gemini CLI); the chat already shows it from
        // the session's history (`session/history.rs`).
        let loading = st.calls.values().any(|c| matches!(c, Call::LoadSession(_)));
        if loading || (st.replaying && quirks::is_history(update)) {
            return;
        }
        if let Some(warning) = st.quirks.warning(update) {
            drop(st);
            self.shared
                .conversation
                .warn(WarningCode::AgentWarning, warning, None);
            return;
        }
        if let Some(mode) = quirks::mode_notice(update, &st.modes) {
            let changed = st.modes["currentModeId"] != mode.as_str();
            st.modes["currentModeId"] = json!(mode);
            drop(st);
            self.shared.conversation.set_current_mode(&mode);
            if changed {
                self.shared.emit(&mode_update(&mode));
            }
            return;
        }
        let mode = (update["sessionUpdate"] == "current_mode_update")
            .then(|| update["currentModeId"].as_str())
            .flatten();
        if let Some(mode) = mode {
            st.modes["currentModeId"] = json!(mode);
        }
        let events = st.updates.events(update);
        drop(st);
        if let Some(mode) = mode {
            self.shared.conversation.set_current_mode(mode);
        }
        self.emit_all(events);
    }

    /// The answer to one of duet's calls.
    fn on_response(&self, id: &Value, msg: &Value) {
        let Some(call) = id
            .as_u64()
            .and_then(|id| lock(&self.state).calls.remove(&id))
        else {
            return;
        };
        let result = &msg["result"];
        let error = msg.get("error").filter(|e| !e.is_null());
        match call {
            Call::Initialize => {
                if let Some(e) = error {
                    self.shared.conversation.warn(
                        WarningCode::NoHandshake,
                        format!("the agent refused initialize: {e}"),
                        None,
                    );
                    return;
                }
                {
                    let mut st = lock(&self.state);
                    st.agent = result.clone();
                    st.quirks = quirks::Quirks::of(result);
                }
                let can_load = result["agentCapabilities"]["loadSession"] == true;
                let cwd = self.work_dir.to_string_lossy().into_owned();
                let line = match &self.load {
                    Some(sid) if can_load => {
                        let id = self.call(Call::LoadSession(sid.clone()));
                        request(
                            id,
                            "session/load",
                            json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
                        )
                    }
                    load => {
                        if load.is_some() {
                            self.shared.conversation.warn(
                                WarningCode::NoResume,
                                "the agent cannot load sessions (no loadSession); this is a new conversation".into(),
                                None,
                            );
                        }
                        let id = self.call(Call::NewSession);
                        request(id, "session/new", json!({"cwd": cwd, "mcpServers": []}))
                    }
                };
                let _ = self.send(Out::Line(line));
            }
            Call::NewSession | Call::LoadSession(_) => {
                if let Some(e) = error {
                    self.shared.conversation.warn(
                        WarningCode::NoHandshake,
                        format!("the agent did not start a session: {e}"),
                        None,
                    );
                    return;
                }
                let (sid, loaded) = match call {
                    Call::LoadSession(sid) => (Some(sid), true),
                    _ => (result["sessionId"].as_str().map(str::to_string), false),
                };
                let (agent, events) = {
                    let mut st = lock(&self.state);
                    st.session_id = sid.clone();
                    st.modes = result["modes"].clone();
                    st.models = result["models"].clone();
                    st.replaying = loaded;
                    (st.agent.clone(), st.updates.flush())
                };
                self.emit_all(events);
                if let Some(modes) = modes_of(&result["modes"]) {
                    self.shared.conversation.set_modes(modes);
                }
                self.shared.start(
                    sid.as_deref(),
                    json!({
                        "protocol": "acp",
                        "protocol_version": agent["protocolVersion"],
                        "agent": agent["agentInfo"],
                        "capabilities": agent["agentCapabilities"],
                        "modes": result["modes"],
                        "models": result["models"],
                        "config_options": result["configOptions"],
                    }),
                );
            }
            Call::SetMode(mode) => match error {
                Some(e) => self.shared.conversation.warn(
                    WarningCode::SetModeFailed,
                    format!("the agent did not switch to mode {mode:?}: {e}"),
                    None,
                ),
                // Shown as the agent's own news of a mode change would be
                // (unless the agent told it already: `quirks.rs`).
                None => {
                    let changed = {
                        let mut st = lock(&self.state);
                        let changed = st.modes["currentModeId"] != mode.as_str();
                        st.modes["currentModeId"] = json!(mode);
                        changed
                    };
                    self.shared.conversation.set_current_mode(&mode);
                    if changed {
                        self.shared.emit(&mode_update(&mode));
                    }
                }
            },
            Call::SetModel(model) => match error {
                Some(e) => self.shared.conversation.warn(
                    WarningCode::SetModelFailed,
                    format!("the agent did not switch to model {model:?}: {e}"),
                    None,
                ),
                None => {
                    lock(&self.state).models["currentModelId"] = json!(model);
                    self.shared.emit(&build::system_with(
                        "acp_current_model_update",
                        build::extra([("update", json!({"currentModelId": model}))]),
                    ));
                }
            },
            Call::Prompt => {
                let events = lock(&self.state).updates.flush();
                self.emit_all(events);
                let event = match error {
                    Some(e) => build::failed(e["message"].as_str().unwrap_or("the prompt failed")),
                    None => {
                        let reason = result["stopReason"].as_str().unwrap_or("end_turn");
                        let mut extra = build::extra([("stop_reason", json!(reason))]);
                        // The turn's tokens, where the agent counts them
                        // (`inputTokens`, `outputTokens`, ...: usage.rs).
                        if result["usage"].is_object() {
                            extra.insert("usage".into(), result["usage"].clone());
                        }
                        build::result(
                            Envelope::none(),
                            if reason == "end_turn" {
                                "success"
                            } else {
                                reason
                            },
                            !matches!(reason, "end_turn" | "max_tokens" | "max_turn_requests"),
                            None,
                            extra,
                        )
                    }
                };
                self.shared.emit(&event);
            }
        }
    }

    /// A request of the agent's.
    async fn on_request(&self, method: &str, id: Value, params: &Value) {
        let answer = match method {
            "session/request_permission" => {
                self.permission(id, params);
                return;
            }
            "fs/read_text_file" => {
                let root = self.work_dir.clone();
                let path = PathBuf::from(params["path"].as_str().unwrap_or_default());
                let (line, limit) = (params["line"].as_u64(), params["limit"].as_u64());
                let read = if lock(&self.state).quirks.missing_file_is_empty {
                    fs::read_or_empty
                } else {
                    fs::read
                };
                tokio::task::spawn_blocking(move || read(&root, &path, line, limit))
                    .await
                    .unwrap_or_else(|e| Err(e.to_string()))
                    .map(|content| json!({"content": content}))
                    .map_err(|m| (INVALID_PARAMS, m))
            }
            "fs/write_text_file" => {
                let root = self.work_dir.clone();
                let path = PathBuf::from(params["path"].as_str().unwrap_or_default());
                let content = params["content"].as_str().unwrap_or_default().to_string();
                tokio::task::spawn_blocking(move || fs::write(&root, &path, &content))
                    .await
                    .unwrap_or_else(|e| Err(e.to_string()))
                    // The schema's WriteTextFileResponse is an object.
                    .map(|()| json!({}))
                    .map_err(|m| (INVALID_PARAMS, m))
            }
            "terminal/create" => self
                .terminals
                .create(params)
                .map_err(|m| (INVALID_PARAMS, m)),
            "terminal/output" => self
                .terminals
                .output(params)
                .map_err(|m| (INVALID_PARAMS, m)),
            "terminal/kill" => self.terminals.kill(params).map_err(|m| (INVALID_PARAMS, m)),
            "terminal/release" => self
                .terminals
                .release(params)
                .map_err(|m| (INVALID_PARAMS, m)),
            "terminal/wait_for_exit" => {
                // Answered when the command ends; the reader goes on.
                let terminals = self.terminals.clone();
                let out = self.out.clone();
                let params = params.clone();
                tokio::spawn(async move {
                    let answer = terminals.wait_for_exit(params).await;
                    let line = reply(&id, answer.map_err(|m| (INVALID_PARAMS, m)));
                    let _ = out.send(Out::Line(line)).await;
                });
                return;
            }
            other => Err((
                METHOD_NOT_FOUND,
                format!("Method not found: duet does not implement {other}"),
            )),
        };
        let _ = self.send(Out::Line(reply(&id, answer)));
    }

    /// `session/request_permission` as an approval with the agent's
    /// options.
    fn permission(&self, id: Value, params: &Value) {
        let request_id = format!("acp-{}", id.to_string().trim_matches('"'));
        let call = &params["toolCall"];
        let (events, known) = {
            let mut st = lock(&self.state);
            st.permissions.insert(request_id.clone(), id);
            let known = call["toolCallId"]
                .as_str()
                .and_then(|t| st.updates.known_name(t))
                .map(str::to_string);
            (st.updates.flush(), known)
        };
        self.emit_all(events);
        let mut input = call["rawInput"].clone();
        if !input.is_object() {
            input = json!({});
        }
        if let (Some(m), Some(title)) = (input.as_object_mut(), call["title"].as_str()) {
            m.entry("title").or_insert_with(|| json!(title));
        }
        let tool = updates::meta_name(call)
            .or(known.as_deref())
            .or(call["title"].as_str())
            .unwrap_or("tool");
        self.shared.emit(&build::can_use_tool(
            &request_id,
            build::tool_request(
                tool,
                call["toolCallId"].as_str(),
                input,
                build::extra([("acp_options", params["options"].clone())]),
            ),
        ));
    }
}

/// The modes of a `session/new` answer's `modes` (`availableModes[]` with
/// `id` and `name`, `currentModeId`), if it offers any.
fn modes_of(modes: &Value) -> Option<AgentModes> {
    let available: Vec<AgentMode> = modes["availableModes"]
        .as_array()?
        .iter()
        .filter_map(|m| {
            let id = m["id"].as_str()?;
            Some(AgentMode {
                id: id.to_string(),
                name: m["name"].as_str().unwrap_or(id).to_string(),
            })
        })
        .collect();
    (!available.is_empty()).then(|| AgentModes {
        current: modes["currentModeId"].as_str().map(str::to_string),
        available,
    })
}

/// The event of a mode change, as the agent's own `current_mode_update`
/// would show.
fn mode_update(mode: &str) -> SidecarEvent {
    build::system_with(
        "acp_current_mode_update",
        build::extra([(
            "update",
            json!({"sessionUpdate": "current_mode_update", "currentModeId": mode}),
        )]),
    )
}
