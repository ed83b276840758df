//! Gemini CLI's TUI in the terminal, its chat built from its hooks
//! (`channel = "gemini"`; docs/gemini-cli.md, docs/agents.md). Each hook
//! runs `duet hook --socket <session>/hook.sock <Event>` (the session's
//! own Gemini home holds them: `home.rs`), which hands the payload to this
//! channel (`hook_socket.rs`); `hooks.rs` normalises them, every payload is
//! kept verbatim in `hooks.jsonl`.
//!
//! No Gemini hook can answer its approval dialog (Notification is told of
//! it, and cannot grant anything), so duet answers it as a person would,
//! from the terminal it holds: the dialog's choices are read from the
//! screen (`dialog.rs`) and offered to the browser with the agent's own
//! words; a browser's choice is the key the dialog takes for it, written
//! only while that dialog is on screen (`keys.rs`). Whoever answers first
//! wins, the terminal or a browser, and what happened is taken from the
//! agent, not from the key: an allowed call's AfterTool, or, for a "No"
//! (which fires no hook), the transcript's cancelled call (`transcript.rs`,
//! read when the screen changes).
//!
//! Prompts are typed as a bracketed paste, then Enter once the screen
//! shows the text (an Enter within 40 ms of a paste is a newline), then
//! Enter again if BeforeAgent does not show it taken (`keys.rs`).

mod dialog;
mod home;
pub(crate) mod hooks;
mod keys;
mod transcript;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use duet_protocol::build;
use duet_protocol::rest::ApprovalOption;
use duet_protocol::sidecar::CanUseTool;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::net::UnixListener;
use tokio::sync::{mpsc, watch};

use super::conversation::Sink;
use super::{
    hook_socket, offered, offering, screen_dialog, Channel, ChannelError, Setup, Started, Tasks,
};
use crate::config::SpawnOptions;
use crate::session::terminal::Terminal;
use crate::session::WarningCode;
use crate::sync::lock;
use hooks::{Normalizer, ToolCall};
use keys::Action;
use transcript::{News, Transcript};

/// How long the approval dialog may take to show once Notification said
/// it opens (a busy machine draws slowly).
const DIALOG_WAIT: Duration = Duration::from_secs(10);
/// After a screen change, the transcript is read again this much later:
/// Gemini may write it just after it draws.
const TRANSCRIPT_SETTLE: Duration = Duration::from_millis(500);

/// The approval dialog open in the terminal.
struct Dialog {
    request_id: String,
    tool: ToolCall,
    /// The `control_request` went out (once the screen showed the dialog).
    asked: bool,
}

struct State {
    normalizer: Normalizer,
    transcript: Option<Transcript>,
    dialog: Option<Dialog>,
    /// A prompt is being worked on (BeforeAgent, until AfterAgent or a
    /// cancel).
    busy: bool,
}

struct Inner {
    conversation: Sink,
    terminal: Arc<Terminal>,
    state: Mutex<State>,
    raw: Mutex<Option<std::fs::File>>,
    /// BeforeAgent hooks so far: typing waits for the next one.
    prompts: watch::Sender<u64>,
}

/// See the module docs.
pub(crate) struct GeminiHooks {
    inner: Arc<Inner>,
    actions: mpsc::Sender<Action>,
    tasks: Tasks,
    socket: PathBuf,
}

/// Makes the session's Gemini home (its hooks leading here), listens for
/// them, and starts Gemini on a PTY.
pub(super) fn start(setup: &Setup<'_>) -> Result<Started> {
    let socket = setup.files.dir.join("hook.sock");
    let mut spawn = setup.spawn();
    let user_home = user_home(&spawn)
        .context("Gemini CLI needs a home directory (HOME or GEMINI_CLI_HOME) for its settings")?;
    let duet = setup.profile.duet_exe();
    let home = home::prepare(&setup.files.dir.join("gemini-home"), &user_home, |event| {
        hook_socket::command(duet, &socket, event)
    })?;
    spawn.env.retain(|(k, _)| k != "GEMINI_CLI_HOME");
    spawn.env.push((
        "GEMINI_CLI_HOME".into(),
        home.to_string_lossy().into_owned(),
    ));
    let channel = GeminiHooks::start(
        socket,
        &setup.files.dir.join("hooks.jsonl"),
        setup.terminal.clone(),
        setup.sink(),
    )?;
    Started::on_pty(spawn, Some(channel))
}

/// The home whose `.gemini` holds the user's settings: the one the
/// profile gives Gemini, else duet's own.
fn user_home(spawn: &SpawnOptions) -> Option<PathBuf> {
    let from_profile = |name: &str| {
        spawn
            .env
            .iter()
            .rev()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let from_duet = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from_profile("GEMINI_CLI_HOME")
        .or_else(|| from_profile("HOME"))
        .or_else(|| from_duet("GEMINI_CLI_HOME"))
        .or_else(|| from_duet("HOME"))
}

impl GeminiHooks {
    /// Listens on `socket` for the hooks of the session's Gemini, and types
    /// into `terminal`. Must run inside a tokio runtime.
    fn start(
        socket: PathBuf,
        raw_log: &std::path::Path,
        terminal: Arc<Terminal>,
        conversation: Sink,
    ) -> Result<Arc<Self>> {
        let listener = hook_socket::bind(&socket)?;
        let raw = hook_socket::raw_log(raw_log)?;
        // The channel types and re-types prompts itself (`keys.rs`): the
        // conversation must never paste one twice.
        conversation.keeps_prompts();
        let inner = Arc::new(Inner {
            conversation,
            terminal,
            state: Mutex::new(State {
                normalizer: Normalizer::default(),
                transcript: None,
                dialog: None,
                busy: false,
            }),
            raw: Mutex::new(Some(raw)),
            prompts: watch::channel(0).0,
        });
        let tasks = Tasks::default();
        tasks.spawn(serve(listener, inner.clone()));
        tasks.spawn(watch_transcript(inner.clone()));
        let (actions, queue) = mpsc::channel(64);
        tasks.spawn(keys::run(inner.clone(), queue));
        Ok(Arc::new(Self {
            inner,
            actions,
            tasks,
            socket,
        }))
    }
}

impl Inner {
    /// Whether `request_id` is the dialog still open (not answered yet,
    /// as far as the agent has said).
    fn is_open(&self, request_id: &str) -> bool {
        lock(&self.state)
            .dialog
            .as_ref()
            .is_some_and(|d| d.request_id == request_id)
    }

    /// One hook call.
    fn on_hook(self: &Arc<Self>, event: &str, payload: &Value) {
        let mut st = lock(&self.state);
        match event {
            "SessionStart" => {
                if let Some(path) = payload["transcript_path"].as_str() {
                    st.transcript = Some(Transcript::follow(std::path::Path::new(path)));
                }
            }
            "BeforeAgent" => st.busy = true,
            "AfterTool" => {
                // Allowed, here or in the terminal: the result says so.
                let name = payload["tool_name"].as_str();
                if st
                    .dialog
                    .as_ref()
                    .is_some_and(|d| Some(d.tool.name.as_str()) == name)
                {
                    st.dialog = None;
                }
            }
            "AfterAgent" => {
                st.busy = false;
                st.dialog = None;
            }
            "Notification" if payload["notification_type"] == "ToolPermission" => {
                if let Some(tool) = st.normalizer.last_open().cloned() {
                    let request_id = uuid::Uuid::new_v4().to_string();
                    st.dialog = Some(Dialog {
                        request_id: request_id.clone(),
                        tool,
                        asked: false,
                    });
                    let details = payload["details"].clone();
                    tokio::spawn(self.clone().open_dialog(request_id, details));
                }
            }
            _ => {}
        }
        let events = st.normalizer.events(event, payload);
        drop(st);
        self.conversation.emit_all(&events);
        if event == "BeforeAgent" {
            self.prompts.send_modify(|n| *n += 1);
        }
    }

    /// Waits until the dialog is on screen, then asks the browser with its
    /// own choices (or, if it never shows, the ones every such dialog has).
    async fn open_dialog(self: Arc<Self>, request_id: String, details: Value) {
        let choices = screen_dialog::shown(&self.terminal.output, DIALOG_WAIT).await;
        let details_type = details["type"].as_str().unwrap_or_default();
        let options = dialog::options(choices.as_deref(), details_type);
        let request = {
            let mut st = lock(&self.state);
            let Some(d) = st.dialog.as_mut().filter(|d| d.request_id == request_id) else {
                // Answered in the terminal before it was fully drawn.
                return;
            };
            d.asked = true;
            let mut extra = offering(&options);
            extra.insert("details".into(), details);
            build::can_use_tool(
                &request_id,
                build::tool_request(&d.tool.name, Some(&d.tool.id), d.tool.input.clone(), extra),
            )
        };
        if choices.is_none() {
            self.conversation.warn(
                WarningCode::ApprovalUnseen,
                "Gemini's approval dialog did not show on the screen; the browser may not be able to answer it".into(),
                None,
            );
        }
        self.conversation.emit(&request);
    }

    /// What the transcript tells since it was last read.
    fn read_transcript(&self) {
        let mut st = lock(&self.state);
        let news = st
            .transcript
            .as_mut()
            .map(Transcript::read)
            .unwrap_or_default();
        let mut events = Vec::new();
        for n in news {
            match n {
                News::Cancelled { name, args } => {
                    let Some(d) = st
                        .dialog
                        .take_if(|d| d.tool.name == name && args_match(&d.tool.input, &args))
                    else {
                        continue;
                    };
                    st.normalizer.drop_call(&d.tool.id);
                    if d.asked {
                        // "No" in the terminal, or a browser's "No" taken.
                        events.push(build::control_allowed(&d.request_id, false));
                    }
                }
                News::TurnCancelled if st.busy => {
                    st.busy = false;
                    st.dialog = None;
                    events.extend(st.normalizer.interrupted());
                    events.push(build::interrupted());
                }
                News::TurnCancelled => {}
            }
        }
        drop(st);
        self.conversation.emit_all(&events);
    }
}

/// Whether a transcript call's `args` are the hook's `tool_input`.
fn args_match(input: &Value, args: &Value) -> bool {
    input == args || args.is_null()
}

impl Channel for GeminiHooks {
    fn deliver(&self, text: &str) -> Result<(), ChannelError> {
        self.actions
            .try_send(Action::Prompt(text.replace('\x1b', "")))
            .map_err(|_| ChannelError::Refused("too many prompts are being typed".into()))
    }

    fn decide(&self, request_id: &str, option: &ApprovalOption) -> Result<(), ChannelError> {
        if !self.inner.is_open(request_id) {
            return Err(ChannelError::Closed);
        }
        self.actions
            .try_send(Action::Answer {
                request_id: request_id.to_string(),
                label: option.label.clone(),
                reject: !option.kind.allows(),
            })
            .map_err(|_| ChannelError::Refused("too many keys are being typed".into()))
    }

    fn options(&self, request: &CanUseTool) -> Vec<ApprovalOption> {
        offered(request).unwrap_or_else(|| dialog::options(None, ""))
    }

    fn interrupted(&self) {
        // Esc (or Ctrl-C) in the terminal: Gemini ends the turn without a
        // hook; the transcript says so later, when it is read.
        let events = {
            let mut st = lock(&self.inner.state);
            if !st.busy {
                return;
            }
            st.busy = false;
            st.dialog = None;
            let mut events = st.normalizer.interrupted();
            events.push(build::interrupted());
            events
        };
        self.inner.conversation.emit_all(&events);
    }

    fn finish(&self) -> BoxFuture<'static, ()> {
        let socket = self.socket.clone();
        let inner = self.inner.clone();
        self.tasks.abort_all();
        Box::pin(async move {
            let _ = std::fs::remove_file(&socket);
            lock(&inner.raw).take();
            lock(&inner.state).dialog = None;
        })
    }
}

/// Serves the session's hook calls until the channel finishes (see
/// [`hook_socket::serve`]).
async fn serve(listener: UnixListener, inner: Arc<Inner>) {
    hook_socket::serve(listener, &inner.raw, |call| handle(call, &inner)).await;
}

async fn handle(mut call: hook_socket::Call, inner: &Arc<Inner>) -> Result<()> {
    inner.on_hook(&call.event, &call.payload);
    hook_socket::answer(&mut call.stream, "").await?;
    Ok(())
}

/// Reads the transcript whenever the screen changes (a cancel fires no
/// hook, but Gemini redraws), and once more a moment later.
async fn watch_transcript(inner: Arc<Inner>) {
    let mut changed = inner.terminal.output.subscribe_screen();
    let mut again: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            c = changed.changed() => {
                if c.is_err() {
                    return;
                }
                inner.read_transcript();
                again = Some(tokio::time::Instant::now() + TRANSCRIPT_SETTLE);
            }
            () = async {
                match again {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {
                again = None;
                inner.read_transcript();
            }
        }
    }
}
