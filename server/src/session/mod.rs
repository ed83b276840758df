//! One hosted program: its PTY, terminal output and screen, sidecar event log,
//! input file, and approvals, plus the threads and tasks that move data
//! between them. Clients attach through [`Session::attach`]; everything they
//! read is pulled with their own cursors, so no client can slow another down.

pub mod approvals;
pub mod events;
pub mod input;
pub mod output;
pub mod pty;
pub mod tail;
pub mod turn;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use bytes::Bytes;
use duet_protocol::command::InputCommand;
use duet_protocol::ids::SessionId;
use duet_protocol::rest::{Approval, ExitInfo, SessionInfo, SessionStatus};
use duet_protocol::sidecar::{
    Content, ContentBlock, ControlRequestBody, KnownBlock, KnownEvent, SidecarEvent,
};
use duet_protocol::ws::ErrorCode;
use serde::Deserialize;
use tokio::sync::{broadcast, watch, Notify};
use tracing::{debug, info, warn, Instrument};

use crate::config::ResolvedProfile;
use crate::watcher::Watcher;
use approvals::{Approvals, DecideError};
use events::EventLog;
use input::{Delivery, InputError, InputWriter};
use output::{Output, OutputLimits};
use tail::{Line, Tail};
use turn::{Signal, Turn};

/// How long a written submit may go without any reaction from the program
/// before duet stops holding later submits for it.
const SUBMIT_STUCK_AFTER: Duration = Duration::from_secs(15);

/// The most unread events-file bytes read on the runtime rather than on the
/// blocking pool.
const INLINE_READ_MAX: u64 = 64 << 10;

/// How long after `session_start` duet waits for a profile's `ready_text`
/// before it lets submits through anyway.
const READY_TEXT_TIMEOUT: Duration = Duration::from_secs(20);

/// Bounds on what one session holds.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    pub output: OutputLimits,
    /// Longest sidecar line relayed; longer ones are skipped with a warning.
    pub max_sidecar_line: usize,
    /// Bytes of recent events kept in memory (older ones are re-read from disk).
    pub event_cache_bytes: usize,
    /// Submits held while the program is not ready to read input.
    pub max_held_submits: usize,
    /// Longest submit text accepted.
    pub max_submit_bytes: usize,
    /// Clients attached at once.
    pub max_clients: u32,
    /// How long an ending program gets between SIGHUP/SIGTERM and SIGKILL.
    pub kill_grace: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            output: OutputLimits::default(),
            max_sidecar_line: 4 << 20,
            event_cache_bytes: 4 << 20,
            max_held_submits: 32,
            max_submit_bytes: 256 << 10,
            max_clients: 128,
            kill_grace: Duration::from_secs(3),
        }
    }
}

/// Everything needed to start a session.
pub struct SessionOptions {
    pub id: SessionId,
    pub profile: ResolvedProfile,
    /// The session's private directory (already created, mode 0700).
    pub dir: PathBuf,
    pub cols: u16,
    pub rows: u16,
    pub limits: SessionLimits,
    pub watcher: Arc<Watcher>,
}

/// Control-plane news for attached clients. Terminal bytes and events are not
/// sent this way: clients pull those with cursors.
#[derive(Debug, Clone)]
pub enum Control {
    Approval(Approval),
    Resize {
        cols: u16,
        rows: u16,
    },
    Warning {
        code: &'static str,
        message: String,
        seq: Option<u64>,
    },
    Exit(ExitInfo),
}

/// Why a session operation was refused; maps to an [`ErrorCode`].
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("the program has exited")]
    Ended,
    #[error(
        "this session's profile has no sidecar input file, so it cannot take submits or approvals"
    )]
    NoSidecar,
    #[error("submit text is {0} bytes; the limit is {1}")]
    TooLarge(usize, usize),
    #[error(transparent)]
    Decide(#[from] DecideError),
    #[error("too many clients on this session (limit {0})")]
    TooManyClients(u32),
    #[error("{0}")]
    Input(InputError),
}

impl SessionError {
    /// The wire error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            SessionError::Ended => ErrorCode::SessionEnded,
            SessionError::NoSidecar => ErrorCode::NoSidecar,
            SessionError::TooLarge(..) => ErrorCode::TooLarge,
            SessionError::Decide(DecideError::Unknown(_)) => ErrorCode::UnknownRequest,
            SessionError::Decide(DecideError::AlreadyResolved(..)) => ErrorCode::AlreadyResolved,
            SessionError::TooManyClients(_) => ErrorCode::LimitReached,
            SessionError::Input(InputError::QueueFull(_)) => ErrorCode::LimitReached,
            SessionError::Input(InputError::Closed) => ErrorCode::SessionEnded,
            SessionError::Input(InputError::Io(_)) => ErrorCode::Internal,
        }
    }
}

impl From<InputError> for SessionError {
    fn from(e: InputError) -> Self {
        match e {
            InputError::Closed => SessionError::Ended,
            other => SessionError::Input(other),
        }
    }
}

struct State {
    cols: u16,
    rows: u16,
    exit: Option<ExitInfo>,
    ended_at: Option<u64>,
    /// `session_start.data`, once seen.
    agent: Option<serde_json::Value>,
}

/// See the module docs.
pub struct Session {
    pub id: SessionId,
    pub profile: String,
    pub created_at: u64,
    pub dir: PathBuf,
    pub events_path: PathBuf,
    pub input_path: PathBuf,
    pub limits: SessionLimits,
    pub output: Arc<Output>,
    pub events: Arc<EventLog>,
    ready_text: Option<String>,
    input: Option<InputWriter>,
    approvals: Mutex<Approvals>,
    turn: Mutex<Turn>,
    control: broadcast::Sender<Control>,
    state: Mutex<State>,
    exited: watch::Sender<bool>,
    /// Until the program has exited and its output drained.
    pty: Mutex<Option<Arc<pty::Pty>>>,
    /// Also the process-group id: the program leads its own session.
    pid: u32,
    /// The program was waited for: its pid may belong to someone else now.
    reaped: AtomicBool,
    clients: AtomicU32,
    tail_wake: Arc<Notify>,
    watcher: Arc<Watcher>,
    span: tracing::Span,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Creates an empty file readable and writable by the owner only.
fn create_private_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map(drop)
}

impl Session {
    /// Starts the program and everything around it. Must run inside a tokio
    /// runtime.
    pub fn start(opts: SessionOptions) -> Result<Arc<Session>> {
        let span = tracing::info_span!("session", id = %opts.id, profile = %opts.profile.name);
        let _enter = span.enter();
        let events_path = opts.dir.join("events.jsonl");
        let input_path = opts.dir.join("input.jsonl");
        let work_dir = opts.dir.join("work");
        std::fs::create_dir_all(&work_dir).context("creating the session's work directory")?;
        create_private_file(&events_path).context("creating the events file")?;
        create_private_file(&input_path).context("creating the input file")?;

        let spawn = opts.profile.spawn_options(&crate::config::Placeholders {
            events_file: &events_path,
            input_file: &input_path,
            session_dir: &opts.dir,
            work_dir: &work_dir,
            session_id: opts.id,
            cols: opts.cols,
            rows: opts.rows,
        });
        // Everything that can fail comes before the program starts, so a
        // failed start never leaves a program running with no session.
        let input = if opts.profile.has_input {
            // Without an events file there is no turn state to wait for.
            Some(InputWriter::open(
                &input_path,
                !opts.profile.has_events,
                opts.limits.max_held_submits,
            )?)
        } else {
            None
        };
        let output = Arc::new(Output::new(opts.cols, opts.rows, opts.limits.output));
        let events = Arc::new(EventLog::new(
            events_path.clone(),
            opts.limits.event_cache_bytes,
        ));
        // The parser is CPU-bound; it gets a thread of its own rather than a
        // runtime worker the forwarding path needs. Closing the output ends it.
        spawn_thread("duet-screen", {
            let output = output.clone();
            move || output.run_parser()
        })?;
        let tail_wake = Arc::new(Notify::new());
        if opts.profile.has_events {
            if let Err(e) = opts
                .watcher
                .watch(&opts.dir, events_path.clone(), tail_wake.clone())
            {
                output.close();
                return Err(e).context("watching the events file");
            }
        }
        let spawned = match pty::spawn(&spawn) {
            Ok(s) => s,
            Err(e) => {
                output.close();
                opts.watcher.unwatch(&opts.dir, &events_path);
                return Err(e);
            }
        };
        info!(pid = spawned.pid, program = %spawn.program, "started");

        let session = Arc::new(Session {
            id: opts.id,
            profile: opts.profile.name.clone(),
            created_at: now_ms(),
            dir: opts.dir.clone(),
            events_path: events_path.clone(),
            input_path,
            limits: opts.limits,
            output: output.clone(),
            events,
            ready_text: opts.profile.ready_text.clone(),
            input,
            approvals: Mutex::new(Approvals::default()),
            turn: Mutex::new(Turn::default()),
            control: broadcast::channel(256).0,
            state: Mutex::new(State {
                cols: opts.cols,
                rows: opts.rows,
                exit: None,
                ended_at: None,
                agent: None,
            }),
            exited: watch::channel(false).0,
            pty: Mutex::new(Some(spawned.pty.clone())),
            pid: spawned.pid,
            reaped: AtomicBool::new(false),
            clients: AtomicU32::new(0),
            tail_wake,
            watcher: opts.watcher.clone(),
            span: span.clone(),
        });

        tokio::spawn(read_pty(spawned.pty, output.clone()).instrument(span.clone()));
        let tail = Tail::new(opts.limits.max_sidecar_line);
        tokio::spawn(
            session
                .clone()
                .lifecycle(tail, spawned.child)
                .instrument(span.clone()),
        );
        drop(_enter);
        Ok(session)
    }

    /// Follows the events file until the program exits, then records the exit.
    async fn lifecycle(self: Arc<Self>, mut tail: Tail, mut child: tokio::process::Child) {
        let mut watchdog = tokio::time::interval(SUBMIT_STUCK_AFTER / 3);
        let status = loop {
            tokio::select! {
                status = child.wait() => {
                    self.reaped.store(true, Ordering::Release);
                    break status;
                }
                _ = self.tail_wake.notified() => {
                    tail = self.clone().read_events(tail).await;
                }
                _ = watchdog.tick() => {
                    if let Some(input) = &self.input {
                        if let Ok(true) = input.release_if_stuck(SUBMIT_STUCK_AFTER) {
                            self.warn(
                                "submit_ignored",
                                format!("the program showed no sign of taking the last submit within {SUBMIT_STUCK_AFTER:?}; sending the next one"),
                                None,
                            );
                        }
                    }
                }
            }
        };
        let exit = match status {
            Ok(s) => pty::exit_info(s),
            Err(e) => {
                warn!(?e, "waiting for the program failed");
                ExitInfo {
                    code: None,
                    signal: None,
                    success: false,
                }
            }
        };
        // Anything the program left behind in its group goes with it.
        self.signal_group(nix::sys::signal::Signal::SIGHUP);
        // Let the last output drain; a leftover grandchild holding the PTY
        // open must not keep the session from ending.
        let mut head = self.output.subscribe();
        let _ = tokio::time::timeout(Duration::from_millis(500), async {
            while !self.output.is_closed() {
                if head.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
        // Whatever still holds the terminal (a job the shell put in a
        // group of its own) is hung up when the master closes.
        if let Some(pty) = lock(&self.pty).take() {
            pty.close();
        }
        let _ = self.clone().read_events(tail).await;
        self.watcher.unwatch(&self.dir, &self.events_path);
        if let Some(input) = &self.input {
            let dropped = input.close();
            if dropped > 0 {
                warn!(dropped, "program exited before reading held submits");
            }
        }
        let abandoned = lock(&self.approvals).abandon_pending();
        for a in abandoned {
            let _ = self.control.send(Control::Approval(a));
        }
        {
            let mut st = lock(&self.state);
            st.exit = Some(exit.clone());
            st.ended_at = Some(now_ms());
        }
        info!(code = ?exit.code, signal = ?exit.signal, "exited");
        let _ = self.control.send(Control::Exit(exit));
        self.exited.send_replace(true);
    }

    /// Reads whatever the events file gained and relays it.
    async fn read_events(self: Arc<Self>, mut tail: Tail) -> Tail {
        let path = self.events_path.clone();
        let small = tail.unread().is_some_and(|n| n <= INLINE_READ_MAX);
        // A few appended events are in the page cache and read in
        // microseconds: inline, that saves two thread handoffs per event.
        // Only a large backlog goes to the blocking pool.
        let read = move || {
            let batch = tail.read(&path);
            (tail, batch)
        };
        let (tail, batch) = if small {
            read()
        } else {
            match tokio::task::spawn_blocking(read).await {
                Ok(r) => r,
                Err(e) => {
                    warn!(?e, "events reader panicked");
                    return Tail::new(self.limits.max_sidecar_line);
                }
            }
        };
        match batch {
            Ok(batch) => {
                if batch.truncated {
                    self.events.file_truncated();
                    self.warn(
                        "events_file_truncated",
                        "the events file was truncated; reading it again from the start".into(),
                        None,
                    );
                }
                for line in batch.lines {
                    self.ingest(line);
                }
            }
            Err(e) => warn!(?e, "reading the events file"),
        }
        tail
    }

    fn warn(&self, code: &'static str, message: String, seq: Option<u64>) {
        debug!(code, %message, ?seq, "sidecar warning");
        let _ = self.control.send(Control::Warning { code, message, seq });
    }

    /// Validates one events-file line, gives it a seq, and updates the
    /// session's view of the program (handshake, approvals).
    fn ingest(self: &Arc<Self>, line: Line) {
        let (offset, text) = match line {
            Line::Text { offset, text } => (offset, text),
            Line::NotUtf8 { .. } => {
                let seq = self.events.skip_line();
                self.warn(
                    "invalid_line",
                    format!("events line {seq} is not UTF-8; skipped"),
                    Some(seq),
                );
                return;
            }
            Line::TooLong { len, .. } => {
                let seq = self.events.skip_line();
                self.warn(
                    "line_too_long",
                    format!(
                        "events line {seq} is {len} bytes, over the {} byte limit; skipped",
                        self.limits.max_sidecar_line
                    ),
                    Some(seq),
                );
                return;
            }
        };
        if text.trim().is_empty() {
            self.events.skip_line();
            return;
        }
        let peek = match peek(&text) {
            Ok(p) => p,
            Err(e) => {
                let seq = self.events.skip_line();
                self.warn(
                    "invalid_line",
                    format!("events line {seq} is not a JSON object ({e}); skipped"),
                    Some(seq),
                );
                return;
            }
        };
        let seq = self.events.push(offset, &text);
        match peek.kind.as_deref() {
            Some(
                "system" | "user" | "assistant" | "control_request" | "control_response" | "result",
            ) => {
                if let Ok(SidecarEvent::Known(ev)) = SidecarEvent::from_line(&text) {
                    self.on_event(seq, ev);
                }
            }
            Some("stream_event") => match peek.event.and_then(|e| e.kind).as_deref() {
                Some("message_start") => self.turn_signal(Signal::MessageStart),
                Some("message_stop") => self.turn_signal(Signal::MessageStop),
                _ => {}
            },
            _ => {}
        }
    }

    /// Opens the submit gate once the screen shows `text` (or after a
    /// timeout, with a warning): some programs announce `session_start`
    /// before they can take a prompt.
    async fn wait_ready_text(self: Arc<Self>, text: String) {
        let mut parsed = self.output.subscribe_screen();
        let found = tokio::time::timeout(READY_TEXT_TIMEOUT, async {
            loop {
                if self.output.screen_text().contains(&text) {
                    return;
                }
                if parsed.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        if found.is_err() {
            self.warn(
                "ready_timeout",
                format!("the screen did not show {text:?} within {READY_TEXT_TIMEOUT:?} of session_start; sending submits anyway"),
                None,
            );
        }
        if !self.is_exited() {
            self.turn_signal(Signal::SessionStart);
        }
    }

    /// The user interrupted (Escape): ends the turn as far as duet can tell.
    /// Qwen Code writes nothing when Escape dismisses an approval, so
    /// pending approvals are abandoned here rather than left pending
    /// forever, and the submit gate reopens. A program that does report the
    /// outcome corrects this through its `control_response`.
    pub async fn cancel(&self) -> Result<(), SessionError> {
        self.write_keys(Bytes::from_static(b"\x1b")).await
    }

    fn interrupted(&self) {
        let changed = lock(&self.approvals).abandon_pending();
        if changed.is_empty() {
            return;
        }
        for a in changed {
            let _ = self.control.send(Control::Approval(a));
        }
        self.turn_signal(Signal::Denied);
    }

    /// Updates the turn state and opens the submit gate when idle.
    fn turn_signal(&self, signal: Signal) {
        let idle = lock(&self.turn).on(signal);
        if let Some(input) = &self.input {
            match input.set_idle(idle) {
                Ok(0) => {}
                Ok(n) => info!(n, "delivered held submits"),
                Err(e) => warn!(?e, "writing held submits"),
            }
        }
    }

    fn on_event(self: &Arc<Self>, seq: u64, ev: KnownEvent) {
        let mut changed = Vec::new();
        match ev {
            KnownEvent::System(sys) if sys.subtype == "session_start" => {
                lock(&self.state).agent = sys.data.clone();
                match self.ready_text.clone() {
                    Some(text) => {
                        tokio::spawn(
                            self.clone()
                                .wait_ready_text(text)
                                .instrument(self.span.clone()),
                        );
                    }
                    None => self.turn_signal(Signal::SessionStart),
                }
            }
            KnownEvent::Assistant(msg) => {
                let tool_use = msg
                    .message
                    .content
                    .blocks()
                    .iter()
                    .any(|b| matches!(b, ContentBlock::Known(KnownBlock::ToolUse { .. })));
                self.turn_signal(Signal::Assistant { tool_use });
            }
            KnownEvent::System(sys) if sys.subtype == "session_end" => {
                changed = lock(&self.approvals).abandon_pending();
            }
            KnownEvent::ControlRequest(req) => {
                self.turn_signal(Signal::ControlRequest);
                if let ControlRequestBody::CanUseTool(tool) = &req.request {
                    let a = lock(&self.approvals).requested(&req.request_id, tool, seq);
                    changed.push(a);
                }
            }
            KnownEvent::ControlResponse(resp) => {
                changed.extend(lock(&self.approvals).responded(&resp.response));
            }
            KnownEvent::User(msg) => {
                let results: Vec<(String, bool)> = match &msg.message.content {
                    Content::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Known(KnownBlock::ToolResult {
                                tool_use_id,
                                is_error,
                                ..
                            }) => Some((tool_use_id.clone(), is_error.unwrap_or(false))),
                            _ => None,
                        })
                        .collect(),
                    Content::Text(_) => Vec::new(),
                };
                {
                    let mut approvals = lock(&self.approvals);
                    if results.is_empty() {
                        // A new prompt: the previous turn, and anything it
                        // was waiting for, is over.
                        changed = approvals.abandon_pending();
                    } else {
                        for (id, is_error) in results {
                            changed.extend(approvals.tool_finished(&id, is_error));
                        }
                    }
                }
                self.turn_signal(Signal::UserTurn);
            }
            KnownEvent::Result(_) => {
                changed = lock(&self.approvals).abandon_pending();
                self.turn_signal(Signal::Result);
            }
            _ => {}
        }
        for a in changed {
            let _ = self.control.send(Control::Approval(a));
        }
    }

    /// Sends keystrokes to the program.
    pub async fn write_keys(&self, bytes: Bytes) -> Result<(), SessionError> {
        if self.is_exited() {
            return Err(SessionError::Ended);
        }
        // A lone Escape or Ctrl-C is how a user dismisses an approval in
        // the terminal (see `cancel`).
        let interrupt = matches!(&bytes[..], b"\x1b" | b"\x03");
        // Written from the client's own task: one syscall when the PTY has
        // room, no thread hop.
        let pty = lock(&self.pty).clone().ok_or(SessionError::Ended)?;
        pty.write(bytes).await.map_err(|_| SessionError::Ended)?;
        if interrupt {
            self.interrupted();
        }
        Ok(())
    }

    /// Sends a prompt through the input file (held while the program is busy).
    pub fn submit(&self, text: String) -> Result<Delivery, SessionError> {
        if text.len() > self.limits.max_submit_bytes {
            return Err(SessionError::TooLarge(
                text.len(),
                self.limits.max_submit_bytes,
            ));
        }
        let input = self.input.as_ref().ok_or(SessionError::NoSidecar)?;
        if self.is_exited() {
            return Err(SessionError::Ended);
        }
        Ok(input.send(&InputCommand::Submit { text })?)
    }

    /// A client answers a pending approval; the first answer wins.
    pub fn approve(&self, request_id: &str, allowed: bool) -> Result<Approval, SessionError> {
        let input = self.input.as_ref().ok_or(SessionError::NoSidecar)?;
        let approval = lock(&self.approvals).decide(request_id, allowed)?;
        let cmd = InputCommand::ConfirmationResponse {
            request_id: request_id.to_string(),
            allowed,
        };
        if let Err(e) = input.send(&cmd) {
            lock(&self.approvals).undo_decision(request_id);
            return Err(e.into());
        }
        let _ = self.control.send(Control::Approval(approval.clone()));
        if !allowed {
            // Qwen Code does not call the model again after a denial; the
            // turn is over until the next prompt.
            self.turn_signal(Signal::Denied);
        }
        Ok(approval)
    }

    /// Resizes the PTY (clamped to sane bounds); tells clients if it changed.
    pub fn resize(&self, cols: u16, rows: u16) -> (u16, u16) {
        let cols = cols.clamp(2, 1000);
        let rows = rows.clamp(1, 500);
        {
            let mut st = lock(&self.state);
            if (st.cols, st.rows) == (cols, rows) || st.exit.is_some() {
                return (st.cols, st.rows);
            }
            st.cols = cols;
            st.rows = rows;
        }
        let pty = lock(&self.pty).clone();
        if let Some(Err(e)) = pty.map(|p| p.resize(cols, rows)) {
            warn!(?e, "resizing the PTY");
        }
        self.output.resize(cols, rows);
        let _ = self.control.send(Control::Resize { cols, rows });
        (cols, rows)
    }

    /// Ends the program: SIGTERM to its process group, SIGHUP a third of the
    /// grace period later, SIGKILL when the grace period is over.
    pub fn terminate(self: &Arc<Self>) {
        if self.is_exited() {
            return;
        }
        let _enter = self.span.enter();
        info!("terminating");
        // SIGTERM alone first: Qwen Code writes its session_end on SIGTERM
        // but not on SIGHUP, and a pending SIGHUP is delivered before a
        // pending SIGTERM. Interactive shells ignore SIGTERM, hence SIGHUP.
        self.signal_group(nix::sys::signal::Signal::SIGTERM);
        let session = self.clone();
        tokio::spawn(async move {
            let mut exited = session.exited.subscribe();
            let grace = session.limits.kill_grace;
            let hup_after = grace / 3;
            if tokio::time::timeout(hup_after, exited.wait_for(|e| *e))
                .await
                .is_ok()
            {
                return;
            }
            session.signal_group(nix::sys::signal::Signal::SIGHUP);
            if tokio::time::timeout(grace - hup_after, exited.wait_for(|e| *e))
                .await
                .is_err()
            {
                warn!(id = %session.id, "still running after {grace:?}; killing");
                session.signal_group(nix::sys::signal::Signal::SIGKILL);
            }
        });
    }

    fn signal_group(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.pid as i32);
        let sent = match nix::sys::signal::killpg(pid, signal) {
            // In the first moments the child is still `setsid`, before it
            // made the group: signal the process itself.
            Err(nix::errno::Errno::ESRCH) if !self.reaped.load(Ordering::Acquire) => {
                nix::sys::signal::kill(pid, signal)
            }
            r => r,
        };
        if let Err(e) = sent {
            if e != nix::errno::Errno::ESRCH {
                warn!(?e, ?signal, "signalling the process group");
            }
        }
    }

    /// Waits until the program has exited and its exit is recorded.
    pub async fn wait_exited(&self) {
        let mut rx = self.exited.subscribe();
        let _ = rx.wait_for(|e| *e).await;
    }

    /// Whether the program has exited.
    pub fn is_exited(&self) -> bool {
        *self.exited.borrow()
    }

    /// A receiver that turns true when the exit is recorded.
    pub fn exited(&self) -> watch::Receiver<bool> {
        self.exited.subscribe()
    }

    /// Subscribes to control news. Subscribe *before* reading the state you
    /// announce, so nothing falls between the two.
    pub fn subscribe(&self) -> broadcast::Receiver<Control> {
        self.control.subscribe()
    }

    /// Current approvals, oldest first.
    pub fn approvals(&self) -> Vec<Approval> {
        lock(&self.approvals).list()
    }

    /// Current size.
    pub fn size(&self) -> (u16, u16) {
        let st = lock(&self.state);
        (st.cols, st.rows)
    }

    /// The exit, once recorded.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        lock(&self.state).exit.clone()
    }

    /// The program's handshake data, once seen.
    pub fn agent(&self) -> Option<serde_json::Value> {
        lock(&self.state).agent.clone()
    }

    /// Whether the profile has an input file (submits and approvals).
    pub fn has_input(&self) -> bool {
        self.input.is_some()
    }

    /// The tracing span of this session, for per-connection child spans.
    pub fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Registers a client; the guard unregisters it when dropped.
    pub fn attach(self: &Arc<Self>) -> Result<ClientGuard, SessionError> {
        let max = self.limits.max_clients;
        self.clients
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .map_err(|_| SessionError::TooManyClients(max))?;
        Ok(ClientGuard {
            session: self.clone(),
        })
    }

    /// The REST view of this session.
    pub fn info(&self) -> SessionInfo {
        let st = lock(&self.state);
        SessionInfo {
            id: self.id,
            profile: self.profile.clone(),
            status: if st.exit.is_some() {
                SessionStatus::Exited
            } else {
                SessionStatus::Running
            },
            created_at: self.created_at,
            ended_at: st.ended_at,
            exit: st.exit.clone(),
            pid: Some(self.pid),
            cols: st.cols,
            rows: st.rows,
            last_seq: self.events.last_seq(),
            pending_approvals: lock(&self.approvals).pending() as u32,
            clients: self.clients.load(Ordering::Acquire),
            title: self.output.title(),
        }
    }
}

/// Membership of one client in a session's client count.
pub struct ClientGuard {
    session: Arc<Session>,
}

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.session.clients.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The few fields duet looks at in every event; parsing only these (and
/// skipping the rest) also validates that the line is one JSON value.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
    /// The inner event of a `stream_event`.
    #[serde(borrow, default)]
    event: Option<PeekInner<'a>>,
}

#[derive(Deserialize)]
struct PeekInner<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

fn peek(line: &str) -> Result<Peek<'_>, String> {
    if !line.trim_start().starts_with('{') {
        return Err("not an object".into());
    }
    serde_json::from_str::<Peek<'_>>(line).map_err(|e| e.to_string())
}

fn spawn_thread(name: &str, f: impl FnOnce() + Send + 'static) -> Result<()> {
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(256 * 1024)
        .spawn(f)
        .with_context(|| format!("spawning thread {name}"))?;
    Ok(())
}

/// Moves program output into the ring until EOF.
async fn read_pty(pty: Arc<pty::Pty>, output: Arc<Output>) {
    // Up to 64 KiB per push: a flood arrives in 4 KiB reads, and each push
    // wakes the parser and every client.
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        output.make_room().await;
        match pty.read_burst(&mut buf).await {
            Ok(0) => break,
            Ok(n) => output.push(Bytes::copy_from_slice(&buf[..n])),
            Err(e) => {
                debug!(?e, "reading the PTY");
                break;
            }
        }
    }
    output.close();
}
