//! The agent's main loop and turn state machine. One thread owns all state;
//! the terminal reader, the input-file watcher, the shell tool and the signal
//! handler talk to it through one bounded channel, so there are no locks
//! around the conversation and events are written in the order they happen.

mod approval;
mod chrome;

use std::collections::VecDeque;
use std::io::{self, Stdout, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use duet_protocol::command::InputCommand;

use crate::editor::Editor;
use crate::events::{Events, UNKNOWN_REQUEST};
use crate::input::{self, Input};
use crate::options::Options;
use crate::script::{self, Block};
use crate::sidecar::Sidecar;
use crate::signals;
use crate::stream::{Step, Streamer};
use crate::terminal::{self, RawTerminal, TermInput};
use crate::tools::{self, Action, Outcome, ToolCall};
use crate::ui::line::{styles, Line, Span};
use crate::ui::{Live, Ui};

/// Messages the main loop can hold before producers wait. Every producer
/// either blocks (the terminal reader and the input watcher: the tty buffer
/// and the file hold the rest) or may drop (notices), so nothing is lost
/// that matters and nothing grows without bound.
const EVENT_QUEUE: usize = 256;
/// Prompts waiting for the agent to be idle; more are refused with a notice.
const MAX_QUEUED_PROMPTS: usize = 64;
/// How long the events writer gets to flush `session_end` on exit.
const FLUSH_GRACE: Duration = Duration::from_secs(2);
/// Lines of command output shown in the terminal (the tool_result has it all).
const SHOWN_OUTPUT_LINES: usize = 12;
/// Lines of a proposed diff shown in the terminal.
const SHOWN_DIFF_LINES: usize = 40;
/// Exit code when the terminal went away, as for SIGHUP.
const EXIT_HANGUP: i32 = 129;

/// Everything the main loop reacts to.
enum AppEvent {
    Term(TermInput),
    Input(Input),
    ToolDone(Outcome),
    Signal(i32),
    Notice(String),
}

/// Who decided an approval.
#[derive(Clone, Copy)]
enum Decider {
    Terminal,
    /// A command in the input file: under duet, a decision made in the
    /// browser (or through duet's API).
    InputFile,
}

enum Phase {
    Idle,
    Streaming(Streamer),
    Approval {
        request_id: String,
        call: ToolCall,
    },
    Tool {
        call: ToolCall,
        running: tools::Running,
    },
}

struct App {
    cwd: PathBuf,
    events: Events,
    sidecar: Arc<Sidecar>,
    /// Dual output was on at start (so its loss is worth showing).
    dual: bool,
    /// An input file is watched, so approvals may come from outside.
    remote_input: bool,
    ui: Ui<Stdout>,
    editor: Editor,
    phase: Phase,
    queue: VecDeque<String>,
    token_delay: Duration,
    next_token: Instant,
    tx: SyncSender<AppEvent>,
    exit: Option<i32>,
}

/// Runs the agent until the user quits or a signal arrives; returns the exit
/// code (0 for a quit, 128 + n for signal n, 129 when the terminal vanished).
pub(crate) fn run(opts: Options) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let events = Events::new(&uuid::Uuid::new_v4().to_string());
    let (tx, rx) = mpsc::sync_channel::<AppEvent>(EVENT_QUEUE);

    // Opened before raw mode so a warning prints as a plain line.
    let sidecar = match opts.event_target() {
        None => Sidecar::disabled(),
        Some(target) => {
            let notices = tx.clone();
            let notify = Box::new(move |text| {
                let _ = notices.try_send(AppEvent::Notice(text));
            });
            Sidecar::open(&target, notify).unwrap_or_else(|warning| {
                warn(&format!("{warning}; dual output disabled"));
                Sidecar::disabled()
            })
        }
    };
    let sidecar = Arc::new(sidecar);

    // Signals first: from the moment raw mode is on, a SIGTERM must end the
    // session through the main loop, which restores the terminal.
    let finished = Arc::new(AtomicBool::new(false));
    let mut startup_notices = Vec::new();
    {
        let signal_tx = tx.clone();
        let sidecar = Arc::clone(&sidecar);
        let session_end = events.session_end();
        let started = signals::spawn(
            move |signal| {
                let _ = signal_tx.try_send(AppEvent::Signal(signal));
            },
            move |signal| {
                // The main loop is stuck (most likely blocked writing to a
                // terminal nobody reads) and cannot return: this is the one
                // place the library ends the process itself.
                sidecar.end(&session_end, FLUSH_GRACE);
                terminal::restore_modes_only();
                std::process::exit(128 + signal);
            },
            Arc::clone(&finished),
        );
        if let Err(e) = started {
            startup_notices.push(format!("cannot handle signals ({e})"));
        }
    }
    let raw = RawTerminal::enter().context("the demo agent needs a terminal")?;
    sidecar.emit(&events.session_start(&cwd));
    {
        let term_tx = tx.clone();
        if let Err(e) =
            terminal::spawn_reader(move |input| term_tx.send(AppEvent::Term(input)).is_ok())
        {
            startup_notices.push(format!("cannot read the keyboard ({e})"));
        }
    }
    if let Some(path) = &opts.input_file {
        let input_tx = tx.clone();
        if let Err(e) = input::spawn(path.clone(), move |input| {
            input_tx.send(AppEvent::Input(input)).is_ok()
        }) {
            startup_notices.push(format!("cannot watch {} ({e})", path.display()));
        }
    }

    let (cols, rows) = terminal::size();
    let mut app = App {
        cwd,
        events,
        dual: sidecar.is_alive(),
        remote_input: opts.input_file.is_some(),
        sidecar,
        ui: Ui::new(io::stdout(), cols, rows),
        editor: Editor::default(),
        phase: Phase::Idle,
        queue: VecDeque::new(),
        token_delay: Duration::from_millis(opts.token_delay_ms),
        next_token: Instant::now(),
        tx,
        exit: None,
    };
    app.banner(&opts);
    for notice in startup_notices {
        app.notice(&notice);
    }

    let code = app.main_loop(&rx);
    app.shutdown();
    drop(raw);
    finished.store(true, Ordering::SeqCst);
    Ok(code)
}

/// A warning before the TUI starts; stderr is the terminal too, so this is
/// the only time the agent writes to it.
fn warn(text: &str) {
    let _ = writeln!(io::stderr(), "duet-demo-agent: warning: {text}");
}

impl App {
    fn main_loop(&mut self, rx: &mpsc::Receiver<AppEvent>) -> i32 {
        loop {
            if self.render().is_err() {
                // The terminal is gone (EIO after a hangup): end the session.
                return self.exit.unwrap_or(EXIT_HANGUP);
            }
            if let Some(code) = self.exit {
                return code;
            }
            let event = match self.token_wait() {
                Some(wait) => rx.recv_timeout(wait),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match event {
                Ok(event) => self.handle(event),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return 0,
            }
            // Take everything already waiting before drawing once.
            while self.exit.is_none() {
                match rx.try_recv() {
                    Ok(event) => self.handle(event),
                    Err(_) => break,
                }
            }
            if self.exit.is_none() {
                self.advance(Instant::now());
            }
        }
    }

    /// How long until the next token is due, while streaming.
    fn token_wait(&self) -> Option<Duration> {
        match self.phase {
            Phase::Streaming(_) => Some(self.next_token.saturating_duration_since(Instant::now())),
            _ => None,
        }
    }

    fn handle(&mut self, event: AppEvent) {
        match event {
            AppEvent::Term(TermInput::Key(key)) => self.on_key(key),
            AppEvent::Term(TermInput::Paste(text)) => {
                if !matches!(self.phase, Phase::Approval { .. }) {
                    self.editor.insert(&text);
                }
            }
            AppEvent::Term(TermInput::Resize(cols, rows)) => self.ui.resize(cols, rows),
            AppEvent::Term(TermInput::Gone) => self.exit = Some(EXIT_HANGUP),
            AppEvent::Input(Input::Command(InputCommand::Submit { text })) => self.enqueue(text),
            AppEvent::Input(Input::Command(InputCommand::ConfirmationResponse {
                request_id,
                allowed,
            })) => self.confirm_from_file(&request_id, allowed),
            AppEvent::Input(Input::Notice(text)) | AppEvent::Notice(text) => self.notice(&text),
            AppEvent::ToolDone(outcome) => self.tool_done(outcome),
            AppEvent::Signal(signal) => self.exit = Some(128 + signal),
        }
    }

    fn on_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'd')) {
            self.exit = Some(0);
            return;
        }
        // Ctrl-J is a bare newline: what a program writing "\n" to the PTY
        // sends for Enter.
        let enter = key.code == KeyCode::Enter || (ctrl && key.code == KeyCode::Char('j'));
        if matches!(self.phase, Phase::Approval { .. }) {
            match key.code {
                _ if enter => self.decide(true, Decider::Terminal),
                KeyCode::Char('y' | 'Y' | '1') => self.decide(true, Decider::Terminal),
                KeyCode::Char('n' | 'N' | '2') | KeyCode::Esc => {
                    self.decide(false, Decider::Terminal)
                }
                _ => {}
            }
            return;
        }
        match key.code {
            _ if enter => {
                let text = self.editor.take();
                if text.trim().is_empty() {
                    return;
                }
                if text.trim_start().starts_with('/') {
                    // Slash commands are local and act at once, even mid-turn.
                    self.slash(text.trim());
                } else {
                    self.enqueue(text);
                }
            }
            KeyCode::Esc => self.cancel_turn(),
            KeyCode::Backspace => self.editor.backspace(),
            KeyCode::Delete => self.editor.delete(),
            KeyCode::Left => self.editor.left(),
            KeyCode::Right => self.editor.right(),
            KeyCode::Home => self.editor.home(),
            KeyCode::End => self.editor.end(),
            KeyCode::Char('a') if ctrl => self.editor.home(),
            KeyCode::Char('e') if ctrl => self.editor.end(),
            KeyCode::Char('u') if ctrl => {
                self.editor.take();
            }
            KeyCode::Char(c) if !ctrl && !key.modifiers.contains(KeyModifiers::ALT) => {
                self.editor.insert(c.encode_utf8(&mut [0; 4]));
            }
            _ => {}
        }
    }

    /// Queues a prompt; it starts when the agent is idle, in arrival order.
    fn enqueue(&mut self, text: String) {
        if self.queue.len() >= MAX_QUEUED_PROMPTS {
            self.notice(&format!(
                "{MAX_QUEUED_PROMPTS} prompts are already waiting; dropped one"
            ));
            return;
        }
        self.queue.push_back(text);
    }

    /// Moves the conversation forward: streams due tokens, starts queued
    /// prompts when idle.
    fn advance(&mut self, now: Instant) {
        // After a stall (a blocked terminal), resume the pace instead of
        // bursting every missed token at once.
        if self.next_token + Duration::from_secs(1) < now {
            self.next_token = now;
        }
        while self.exit.is_none() {
            match &mut self.phase {
                Phase::Streaming(streamer) => {
                    if self.next_token > now {
                        return;
                    }
                    match streamer.next(&self.events) {
                        Some(Step::Emit { event, paced, text }) => {
                            self.sidecar.emit(&event);
                            if let Some(text) = text {
                                self.ui.stream_push(&text);
                            }
                            if paced {
                                self.next_token += self.token_delay;
                            }
                        }
                        Some(Step::Finished { event, tool }) => {
                            self.sidecar.emit(&event);
                            self.ui.stream_end();
                            self.reply_done(tool);
                        }
                        None => self.phase = Phase::Idle,
                    }
                }
                Phase::Idle => match self.queue.pop_front() {
                    Some(text) => self.start_prompt(text),
                    None => return,
                },
                Phase::Approval { .. } | Phase::Tool { .. } => return,
            }
        }
    }

    /// A prompt reaches the agent, typed or from the input file alike.
    fn start_prompt(&mut self, text: String) {
        if text.trim_start().starts_with('/') {
            self.slash(text.trim());
            return;
        }
        self.ui.push(Line::blank());
        self.ui.push(Line::from_spans(
            vec![
                Span::new("> ", styles::user_marker()),
                Span::new(&text, styles::user_text()),
            ],
            2,
        ));
        self.sidecar.emit(&self.events.user_text(&text));
        let words = text.split_whitespace().count() as u64;
        self.stream(script::respond(&text, &self.cwd), words);
    }

    fn stream(&mut self, blocks: Vec<Block>, input_tokens: u64) {
        self.ui.stream_begin();
        self.phase = Phase::Streaming(Streamer::new(blocks, input_tokens));
        self.next_token = Instant::now();
    }

    /// A reply finished streaming; a tool call in it now needs approval.
    fn reply_done(&mut self, tool: Option<ToolCall>) {
        let Some(call) = tool else {
            self.phase = Phase::Idle;
            return;
        };
        self.show_call(&call);
        let request_id = uuid::Uuid::new_v4().to_string();
        self.sidecar.emit(&self.events.can_use_tool(
            &request_id,
            call.name(),
            &call.id,
            &call.input(),
        ));
        self.phase = Phase::Approval { request_id, call };
    }

    /// Esc: stop the reply being streamed or the command being run.
    fn cancel_turn(&mut self) {
        match &mut self.phase {
            Phase::Streaming(streamer) => {
                for event in streamer.cancel(&self.events) {
                    self.sidecar.emit(&event);
                }
                self.ui.stream_end();
                self.ui.push(Line::styled("(cancelled)", styles::dim()));
                self.phase = Phase::Idle;
            }
            Phase::Tool { running, .. } => running.cancel(),
            Phase::Idle | Phase::Approval { .. } => {}
        }
    }

    /// Ends the session on any exit path: closes an open reply, stops a
    /// running command, writes `session_end`, then draws the last frame
    /// (in that order: drawing may block on a stalled terminal, and the
    /// signal handler's emergency exit must find `session_end` written).
    fn shutdown(&mut self) {
        match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Streaming(mut streamer) => {
                for event in streamer.cancel(&self.events) {
                    self.sidecar.emit(&event);
                }
            }
            Phase::Tool { running, .. } => running.cancel(),
            Phase::Idle | Phase::Approval { .. } => {}
        }
        self.sidecar.end(&self.events.session_end(), FLUSH_GRACE);
        self.ui.stream_end();
        let _ = self.ui.close();
    }
}
