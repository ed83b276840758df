//! Claude Code's side channel: its hooks, passed per session with
//! `--settings`. Each hook runs `duet hook --socket <session>/hook.sock
//! <Event>` (this same binary, `hook.rs`), which hands the payload to this
//! channel over a Unix socket and prints what the channel answers. duet
//! normalises the payloads (`hooks.rs`) into the events the chat renders,
//! writes them to its own events file, and keeps every payload verbatim in
//! `hooks.jsonl` beside it.
//!
//! Prompts go in as the user would type them: one bracketed paste and
//! Enter into the PTY, only while Claude is idle (a paste while its
//! permission dialog is open would answer the dialog). Approvals race
//! Claude's own dialog, which stays on screen while the PermissionRequest
//! hook waits: a browser decision is the hook's answer; a "Yes" in the
//! terminal shows as the tool's PostToolUse; a "No" or Esc in the terminal
//! kills the waiting hook, which duet sees as its connection closing.
//! (docs/claude-code.md §5 has the observations behind each rule.)

mod dialog;
pub(crate) mod hooks;
mod modes;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use bytes::Bytes;
use duet_protocol::build;
use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};
use duet_protocol::sidecar::CanUseTool;
use duet_protocol::sidecar::{ControlRequestBody, KnownEvent, SidecarEvent};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tracing::{warn, Instrument};

use super::conversation::Sink;
use super::screen_modes::ScreenModes;
use super::{hook_socket, option, Channel, ChannelError, Setup, Started, Tasks};
use crate::session::terminal::output::Output;
use crate::session::terminal::Terminal;
use crate::sync::lock;
use hooks::Normalizer;

/// Every hook event duet registers; PermissionRequest waits for an answer.
pub(crate) const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "MessageDisplay",
    "Notification",
    "Stop",
    "SessionEnd",
];

/// The `--settings` JSON that routes every hook to `socket` through `duet`.
pub(crate) fn settings_json(duet: &Path, socket: &Path) -> String {
    let mut hooks = serde_json::Map::new();
    for event in HOOK_EVENTS {
        let command = hook_socket::command(duet, socket, event);
        let mut hook = json!({"type": "command", "command": command});
        if *event == "PermissionRequest" {
            // Claude kills a hook at its timeout (and keeps its dialog);
            // an approval may wait for its user for a long time.
            hook["timeout"] = json!(86400);
        }
        hooks.insert(event.to_string(), json!([{ "hooks": [hook] }]));
    }
    json!({ "hooks": hooks }).to_string()
}

/// A PermissionRequest hook waiting for its answer.
struct Waiting {
    answer: oneshot::Sender<String>,
    tool_use_id: Option<String>,
    suggestions: Value,
}

struct Inner {
    conversation: Sink,
    normalizer: Mutex<Normalizer>,
    waiting: Mutex<HashMap<String, Waiting>>,
    raw: Mutex<Option<std::fs::File>>,
}

/// See the module docs.
pub(crate) struct ClaudeHooks {
    inner: Arc<Inner>,
    keys: mpsc::Sender<Bytes>,
    server: Mutex<Option<JoinHandle<()>>>,
    /// The permission mode on Claude's footer (see `modes.rs`).
    modes: Arc<ScreenModes>,
    /// Claude's screen, where its dialog shows choices its hooks do not
    /// carry (`dialog.rs`).
    screen: Arc<Output>,
    /// Ends the hook server (and the mode's tasks) if the channel goes
    /// without finishing.
    tasks: Tasks,
    socket: PathBuf,
}

/// Listens for the hooks of the session's Claude, then starts it on a PTY
/// with `{claude_settings}` routing every hook here.
pub(super) fn start(setup: &Setup<'_>) -> Result<Started> {
    let socket = setup.files.dir.join("hook.sock");
    let settings = settings_json(setup.profile.duet_exe(), &socket);
    let spawn = setup.spawn_with(|p| p.claude_settings = &settings);
    let channel = ClaudeHooks::start(
        socket,
        &setup.files.dir.join("hooks.jsonl"),
        setup.terminal.clone(),
        setup.sink(),
    )?;
    Started::on_pty(spawn, Some(channel))
}

impl ClaudeHooks {
    /// Listens on `socket` for the hooks of the session's Claude, and types
    /// prompts into `terminal`. Must run inside a tokio runtime.
    pub(crate) fn start(
        socket: PathBuf,
        raw_log: &Path,
        terminal: Arc<Terminal>,
        conversation: Sink,
    ) -> Result<Arc<Self>> {
        let listener = hook_socket::bind(&socket)?;
        let raw = hook_socket::raw_log(raw_log)?;
        let screen = terminal.output.clone();
        let modes = ScreenModes::new(
            terminal.output.clone(),
            conversation.clone(),
            modes::READING,
        );
        let inner = Arc::new(Inner {
            conversation,
            normalizer: Mutex::new(Normalizer::default()),
            waiting: Mutex::new(HashMap::new()),
            raw: Mutex::new(Some(raw)),
        });
        let server = tokio::spawn(serve(listener, inner.clone()).in_current_span());
        // Prompts are typed in order, from one task: a paste must not be
        // split by another.
        let (keys, mut typed) = mpsc::channel::<Bytes>(64);
        tokio::spawn(
            async move {
                while let Some(bytes) = typed.recv().await {
                    if let Err(e) = terminal.write(bytes).await {
                        warn!(?e, "typing a prompt into Claude's terminal");
                    }
                }
            }
            .in_current_span(),
        );
        let tasks = Tasks::default();
        tasks.add(&server);
        tasks.spawn(modes.clone().follow().in_current_span());
        Ok(Arc::new(Self {
            inner,
            keys,
            server: Mutex::new(Some(server)),
            modes,
            screen,
            tasks,
            socket,
        }))
    }
}

impl Channel for ClaudeHooks {
    fn deliver(&self, text: &str) -> Result<(), ChannelError> {
        // Bracketed paste keeps newlines in the prompt; Enter submits it.
        let mut keys = Vec::with_capacity(text.len() + 13);
        keys.extend_from_slice(b"\x1b[200~");
        keys.extend_from_slice(text.replace('\x1b', "").as_bytes());
        keys.extend_from_slice(b"\x1b[201~\r");
        self.keys
            .try_send(Bytes::from(keys))
            .map_err(|_| ChannelError::Refused("too many prompts are being typed".into()))
    }

    fn decide(&self, request_id: &str, option: &ApprovalOption) -> Result<(), ChannelError> {
        self.decide_because(request_id, option, "Denied from the browser")
    }

    fn decide_because(
        &self,
        request_id: &str,
        option: &ApprovalOption,
        why: &str,
    ) -> Result<(), ChannelError> {
        let waiting = lock(&self.inner.waiting)
            .remove(request_id)
            .ok_or(ChannelError::Closed)?;
        let decision = dialog::switch_decision(option).unwrap_or_else(|| match option.kind {
            ApprovalOptionKind::AllowOnce => json!({"behavior": "allow"}),
            ApprovalOptionKind::AllowAlways => {
                // Like the terminal's "always allow": the grants Claude
                // suggests, but not a switch of the whole session's mode.
                let grants: Vec<Value> = waiting
                    .suggestions
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|s| s["type"] != "setMode")
                    .cloned()
                    .collect();
                json!({"behavior": "allow", "updatedPermissions": grants})
            }
            // As the terminal's "No": the turn ends.
            ApprovalOptionKind::RejectOnce | ApprovalOptionKind::RejectAlways => json!({
                "behavior": "deny",
                "message": why,
                "interrupt": true,
            }),
        });
        let stdout = json!({
            "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
        })
        .to_string();
        waiting
            .answer
            .send(stdout)
            .map_err(|_| ChannelError::Closed)
    }

    fn options(&self, request: &CanUseTool) -> Vec<ApprovalOption> {
        let suggestions = request.extra.get("permission_suggestions");
        let mut options = vec![option("allow", "Yes", ApprovalOptionKind::AllowOnce)];
        if let Some(label) = suggestions.and_then(always_label) {
            options.push(option(
                "allow_always",
                &label,
                ApprovalOptionKind::AllowAlways,
            ));
        }
        options.push(option("deny", "No", ApprovalOptionKind::RejectOnce));
        options
    }

    fn asked(&self, request_id: &str) {
        let offer = dialog::offer(
            self.screen.clone(),
            self.inner.conversation.clone(),
            request_id.to_string(),
        );
        self.tasks.spawn(offer.in_current_span());
    }

    fn set_mode(&self, mode: &str) -> Result<(), ChannelError> {
        self.modes.check(mode).map_err(ChannelError::Invalid)?;
        // Shift+Tab in a permission dialog is the dialog's, not the mode's.
        if self
            .inner
            .conversation
            .get()
            .is_some_and(|c| c.pending() > 0)
        {
            return Err(ChannelError::Refused(
                "the agent is asking for an approval; answer it first".into(),
            ));
        }
        let cycle = modes::cycle(self.modes.clone(), self.keys.clone(), mode.to_string());
        self.tasks.spawn(cycle.in_current_span());
        Ok(())
    }

    fn interrupted(&self) {
        // Claude writes nothing when a turn is interrupted (no Stop): the
        // turn is over as far as anyone can tell.
        self.inner.conversation.emit(&build::interrupted());
    }

    fn finish(&self) -> BoxFuture<'static, ()> {
        let server = lock(&self.server).take();
        let socket = self.socket.clone();
        let inner = self.inner.clone();
        Box::pin(async move {
            if let Some(server) = server {
                server.abort();
            }
            let _ = std::fs::remove_file(&socket);
            lock(&inner.waiting).clear();
            lock(&inner.raw).take();
        })
    }
}

/// The label of "always allow" for Claude's `permission_suggestions`, in
/// the words of its own dialog's second choice when the grant is a
/// directory ("Yes, and always allow access to DIR from this project":
/// the terminal's choice grants what the browser's does, the suggestions
/// other than the mode switch, docs/claude-code.md §5); `None` when there
/// is nothing to grant but a mode switch.
fn always_label(suggestions: &Value) -> Option<String> {
    let grants: Vec<&Value> = suggestions
        .as_array()?
        .iter()
        .filter(|s| s["type"] != "setMode")
        .collect();
    let dirs: Vec<&str> = grants
        .iter()
        .filter(|s| s["type"] == "addDirectories")
        .flat_map(|s| s["directories"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    match (grants.is_empty(), dirs.is_empty()) {
        (true, _) => None,
        (false, false) if dirs.len() == grants.len() => Some(format!(
            "Yes, and always allow access to {} from this project",
            dirs.join(", ")
        )),
        _ => Some("Yes, and don't ask again for this in this session".into()),
    }
}

/// Serves the session's hook calls (see [`hook_socket::serve`]); a
/// PermissionRequest is left waiting on a task of its own.
async fn serve(listener: UnixListener, inner: Arc<Inner>) {
    hook_socket::serve(listener, &inner.raw, |call| handle(call, &inner)).await;
}

async fn handle(call: hook_socket::Call, inner: &Arc<Inner>) -> Result<()> {
    let hook_socket::Call {
        event,
        payload,
        mut stream,
    } = call;
    // Claude's own word for its mode, with (nearly) every hook.
    if let Some(mode) = payload["permission_mode"].as_str() {
        modes::from_hook(&inner.conversation, mode);
    }
    if event == "PermissionRequest" {
        let request_id = uuid::Uuid::new_v4().to_string();
        let request = lock(&inner.normalizer).permission_request(&request_id, &payload);
        let (answer, answered) = oneshot::channel();
        lock(&inner.waiting).insert(
            request_id.clone(),
            Waiting {
                answer,
                tool_use_id: tool_use_id(&request),
                suggestions: payload["permission_suggestions"].clone(),
            },
        );
        inner.conversation.emit(&request);
        tokio::spawn(
            wait_for_answer(stream, answered, inner.clone(), request_id).in_current_span(),
        );
        return Ok(());
    }
    if matches!(event.as_str(), "PostToolUse" | "PostToolUseFailure") {
        // A "Yes" in the terminal: the waiting hook's answer no longer
        // matters (Claude ignores it); the tool result settles the approval.
        let id = payload["tool_use_id"].as_str();
        lock(&inner.waiting).retain(|_, w| w.tool_use_id.as_deref() != id || id.is_none());
    }
    let events = lock(&inner.normalizer).events(&event, &payload);
    for e in &events {
        inner.conversation.emit(e);
    }
    hook_socket::answer(&mut stream, "").await?;
    Ok(())
}

/// The tool call a `can_use_tool` request is about.
fn tool_use_id(request: &SidecarEvent) -> Option<String> {
    match request {
        SidecarEvent::Known(KnownEvent::ControlRequest(r)) => match &r.request {
            ControlRequestBody::CanUseTool(t) => t.tool_use_id.clone(),
            ControlRequestBody::Other(_) => None,
        },
        _ => None,
    }
}

/// Holds a PermissionRequest hook until a client answers (then the answer
/// is its output), or until it dies: Claude kills it when the user answers
/// "No" (or Esc) in the terminal.
async fn wait_for_answer(
    mut stream: UnixStream,
    answer: oneshot::Receiver<String>,
    inner: Arc<Inner>,
    request_id: String,
) {
    let (mut read, mut write) = stream.split();
    let mut probe = [0u8; 1];
    tokio::select! {
        decided = answer => {
            let Ok(stdout) = decided else {
                // Settled without an answer (the terminal's "Yes").
                return;
            };
            let allowed = stdout.contains("\"allow\"");
            let mut reply = json!({"stdout": stdout}).to_string();
            reply.push('\n');
            if write.write_all(reply.as_bytes()).await.is_ok() {
                inner
                    .conversation
                    .emit(&build::control_allowed(&request_id, allowed));
            }
        }
        _ = read.read(&mut probe) => {
            // The hook is gone while its request was pending.
            if lock(&inner.waiting).remove(&request_id).is_some() {
                inner
                    .conversation
                    .emit(&build::control_allowed(&request_id, false));
                inner.conversation.emit(&build::interrupted());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::always_label;
    use serde_json::json;

    /// Claude's own words where duet knows them (its dialog in the
    /// fixture's screen-permission-dialog.txt, for the suggestions of that
    /// PermissionRequest), duet's otherwise, none for a mode switch alone.
    #[test]
    fn always_allow_says_what_claudes_dialog_says() {
        let dir = json!([
            {"type": "addDirectories", "directories": ["/tmp/claude-fixture/ws"], "destination": "session"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        ]);
        let label = always_label(&dir).unwrap();
        assert_eq!(
            label,
            "Yes, and always allow access to /tmp/claude-fixture/ws from this project"
        );
        let screen =
            include_str!("../../../../tests/fixtures/claude-2.1.330/screen-permission-dialog.txt");
        assert!(screen.contains(&format!("2. {label}")), "{screen}");
        let rule = json!([{"type": "addRules", "rules": [{"toolName": "Bash"}]}]);
        assert_eq!(
            always_label(&rule).as_deref(),
            Some("Yes, and don't ask again for this in this session")
        );
        let mode = json!([{"type": "setMode", "mode": "acceptEdits"}]);
        assert_eq!(always_label(&mode), None);
        assert_eq!(always_label(&json!(null)), None);
    }
}
