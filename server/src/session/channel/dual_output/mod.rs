//! Dual output, the side channel of Qwen Code and duet's demo agent: the
//! agent writes JSONL events to `--json-file` (already in the stream-json
//! vocabulary, so they are relayed as written) and reads JSONL commands
//! (`submit`, `confirmation_response`) from `--input-file`.
//!
//! Events path: the agent appends → `watcher` (inotify, on the events file
//! and, when it is a symlink, on its target) wakes the follow task →
//! `tail` reads complete lines → `ingest` numbers and validates them
//! → the conversation and the log. Commands path: the conversation →
//! [`DualOutput`] as [`Channel`] → `input` appends one line. Qwen's
//! approval mode, which no event carries, comes from its screen (`modes`),
//! and so do the choices of its approval dialog that the input file cannot
//! carry (`dialog`): those are answered with the dialog's keys.

mod dialog;
pub(crate) mod ingest;
pub(crate) mod input;
pub(crate) mod modes;
pub(crate) mod tail;
pub(crate) mod watcher;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use duet_protocol::command::InputCommand;
use duet_protocol::rest::ApprovalOption;
use futures_util::future::BoxFuture;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tracing::{warn, Instrument};

use super::conversation::Sink;
use super::screen_dialog::{self, Answer, Unanswered};
use super::screen_modes::ScreenModes;
use super::{Channel, ChannelError, Conversation, Setup, Started, Tasks};
use crate::session::terminal::Terminal;
use crate::session::WarningCode;
use crate::sync::lock;
use input::InputFile;
use tail::Tail;
use watcher::{LinkTarget, Watcher};

/// How long after its request the agent's dialog may take to show (Qwen
/// draws it within ~0.1 s; a loaded machine takes longer).
const DIALOG_WAIT: Duration = Duration::from_secs(10);

/// The most unread events-file bytes read on the runtime rather than on the
/// blocking pool.
const INLINE_READ_MAX: u64 = 64 << 10;

/// Where a dual-output channel reads and writes.
pub(crate) struct DualOutputOptions {
    /// The session directory (watched for changes to the events file).
    pub(crate) dir: PathBuf,
    pub(crate) events_path: PathBuf,
    /// Absent for a profile whose agent takes no commands.
    pub(crate) input_path: Option<PathBuf>,
    pub(crate) max_line: usize,
    pub(crate) watcher: Arc<Watcher>,
    /// The agent's terminal, whose screen shows Qwen's approval mode and
    /// dialog, and which takes the dialog's keys; none in tests of the
    /// files alone.
    pub(crate) terminal: Option<Arc<Terminal>>,
}

/// See the module docs.
pub(crate) struct DualOutput {
    input: Option<Arc<InputFile>>,
    follow: Mutex<Option<(watch::Sender<bool>, JoinHandle<()>)>>,
    /// The approval mode on the agent's screen, if it has one.
    modes: Option<Arc<ScreenModes>>,
    /// Where its approval dialog is read and answered (an agent that takes
    /// commands, on a terminal).
    dialogs: Option<Arc<Terminal>>,
    conversation: Sink,
    /// Ends the follow task (and the mode's) if the channel goes without
    /// finishing.
    tasks: Tasks,
    dir: PathBuf,
    events_path: PathBuf,
    watcher: Arc<Watcher>,
    /// What the watcher wakes.
    wake: Arc<Notify>,
}

/// Starts following the agent's events file, then the agent on a PTY.
pub(super) fn start(setup: &Setup<'_>) -> Result<Started> {
    let profile = setup.profile;
    let channel = DualOutput::start(
        DualOutputOptions {
            dir: setup.files.dir.to_path_buf(),
            events_path: setup.files.events.to_path_buf(),
            input_path: profile.has_input.then(|| setup.files.input.to_path_buf()),
            max_line: setup.limits.max_sidecar_line,
            watcher: setup.watcher.clone(),
            terminal: Some(setup.terminal.clone()),
        },
        setup.sink(),
    )?;
    Started::on_pty(setup.spawn(), Some(channel))
}

impl DualOutput {
    /// Opens the input file and starts following the events file. Must run
    /// inside a tokio runtime.
    pub(crate) fn start(opts: DualOutputOptions, conversation: Sink) -> Result<Arc<Self>> {
        let input = match &opts.input_path {
            Some(p) => Some(Arc::new(
                InputFile::open(p).context("opening the input file")?,
            )),
            None => None,
        };
        let wake = Arc::new(Notify::new());
        opts.watcher
            .watch(&opts.dir, opts.events_path.clone(), wake.clone())
            .context("watching the events file")?;
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(
            follow(
                conversation.clone(),
                opts.events_path.clone(),
                LinkTarget::new(opts.watcher.clone(), wake.clone()),
                stopped,
                opts.max_line,
            )
            .in_current_span(),
        );
        let tasks = Tasks::default();
        tasks.add(&task);
        // Only an agent that takes commands can be switched.
        let dialogs = opts.terminal.filter(|_| input.is_some());
        let modes = match &dialogs {
            Some(terminal) => {
                let modes = ScreenModes::new(
                    terminal.output.clone(),
                    conversation.clone(),
                    modes::READING,
                );
                tasks.spawn(modes.clone().follow().in_current_span());
                Some(modes)
            }
            _ => None,
        };
        Ok(Arc::new(Self {
            input,
            follow: Mutex::new(Some((stop, task))),
            modes,
            dialogs,
            conversation,
            tasks,
            dir: opts.dir,
            events_path: opts.events_path,
            watcher: opts.watcher,
            wake,
        }))
    }

    fn input(&self) -> Result<&InputFile, ChannelError> {
        self.input.as_deref().ok_or_else(|| {
            ChannelError::Refused("this profile gives the agent no input file".into())
        })
    }
}

/// An input file that refuses writes belongs to an agent that is gone.
fn sent(r: std::io::Result<()>) -> Result<(), ChannelError> {
    r.map_err(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => ChannelError::Closed,
        _ => ChannelError::Io(e),
    })
}

impl Channel for DualOutput {
    fn deliver(&self, text: &str) -> Result<(), ChannelError> {
        sent(self.input()?.send(&InputCommand::Submit {
            text: text.to_string(),
        }))
    }

    fn decide(&self, request_id: &str, option: &ApprovalOption) -> Result<(), ChannelError> {
        if !dialog::by_key(option) {
            return sent(self.input()?.send(&InputCommand::ConfirmationResponse {
                request_id: request_id.to_string(),
                allowed: option.kind.allows(),
            }));
        }
        let terminal = self.dialogs.clone().ok_or_else(|| {
            ChannelError::Refused("this choice is made in the agent's terminal".into())
        })?;
        self.tasks.spawn(
            press(
                terminal,
                self.conversation.clone(),
                request_id.to_string(),
                option.label.clone(),
            )
            .in_current_span(),
        );
        Ok(())
    }

    fn asked(&self, request_id: &str) {
        if let Some(terminal) = &self.dialogs {
            self.tasks.spawn(
                offer(
                    terminal.clone(),
                    self.conversation.clone(),
                    request_id.to_string(),
                )
                .in_current_span(),
            );
        }
    }

    fn set_mode(&self, mode: &str) -> Result<(), ChannelError> {
        let modes = self.modes.as_ref().ok_or_else(|| {
            ChannelError::Invalid("this agent offers no modes duet can switch".into())
        })?;
        let command = InputCommand::Submit {
            text: modes::command(modes, mode).map_err(ChannelError::Invalid)?,
        };
        let refused = modes::refusals(&modes.screen_text());
        sent(self.input()?.send(&command))?;
        let input = self.input.clone();
        let resend = move || input.as_ref().is_some_and(|i| i.send(&command).is_ok());
        self.tasks.spawn(
            modes::confirm(modes.clone(), mode.to_string(), refused, resend).in_current_span(),
        );
        Ok(())
    }

    fn confirms(&self, option: &ApprovalOption) -> bool {
        // Qwen Code writes a control_response for an allowed tool only.
        option.kind.allows()
    }

    fn finish(&self) -> BoxFuture<'static, ()> {
        let follow = lock(&self.follow).take();
        let input = self.input.clone();
        let watcher = self.watcher.clone();
        let (dir, path) = (self.dir.clone(), self.events_path.clone());
        let wake = self.wake.clone();
        Box::pin(async move {
            if let Some((stop, task)) = follow {
                stop.send_replace(true);
                let _ = task.await;
            }
            watcher.unwatch(&dir, &path, &wake);
            if let Some(input) = input {
                input.close();
            }
        })
    }
}

/// Offers the choices of the agent's dialog once it is on screen, if it
/// has any the input file cannot carry.
async fn offer(terminal: Arc<Terminal>, conversation: Sink, request_id: String) {
    let Some(choices) = screen_dialog::shown(&terminal.output, DIALOG_WAIT).await else {
        return;
    };
    if let (Some(options), Some(c)) = (dialog::options(&choices), conversation.get()) {
        c.reoffer(&request_id, options);
    }
}

/// Answers the dialog with the key of `label`; the agent's
/// `control_response` confirms it.
async fn press(terminal: Arc<Terminal>, conversation: Sink, request_id: String, label: String) {
    let answered = screen_dialog::answer(Answer {
        terminal: &terminal,
        label: &label,
        reject: false,
        open: || {
            conversation
                .get()
                .is_some_and(|c| c.awaits_agent(&request_id))
        },
    })
    .await;
    if answered == Err(Unanswered::NoChoice) {
        conversation.warn(
            WarningCode::ApprovalUnanswered,
            format!(
                "the agent's dialog on screen has no choice {label:?}; answer it in the terminal"
            ),
            None,
        );
    }
}

/// Reads the events file whenever it changes (or the file it links to);
/// after `stop`, reads it a last time, including a final line the agent
/// left without its newline.
async fn follow(
    conversation: Sink,
    path: PathBuf,
    mut link: LinkTarget,
    mut stop: watch::Receiver<bool>,
    max_line: usize,
) {
    let mut tail = Tail::new(max_line);
    let wake = link.wake();
    loop {
        let last = tokio::select! {
            _ = wake.notified() => false,
            _ = stop.wait_for(|s| *s) => true,
        };
        // The session is gone: nothing to follow for.
        let Some(conversation) = conversation.get() else {
            return;
        };
        tail = read(tail, &path, &conversation, max_line).await;
        // After the read: a link made since is followed from now on, and
        // its new watch wakes this loop once more for what the target
        // gained in between.
        link.update(&path);
        if last {
            if let Some(line) = tail.flush_partial() {
                ingest::line(&conversation, line, max_line);
            }
            return;
        }
    }
}

/// Reads whatever the events file gained and takes it in.
async fn read(
    mut tail: Tail,
    path: &std::path::Path,
    conversation: &Conversation,
    max_line: usize,
) -> Tail {
    // A few appended events are in the page cache and read in
    // microseconds: inline, that saves two thread handoffs per event. Only
    // a large backlog goes to the blocking pool.
    let small = tail.unread().is_some_and(|n| n <= INLINE_READ_MAX);
    let (tail, batch) = if small {
        let batch = tail.read(path);
        (tail, batch)
    } else {
        let path = path.to_path_buf();
        match tokio::task::spawn_blocking(move || {
            let batch = tail.read(&path);
            (tail, batch)
        })
        .await
        {
            Ok(r) => r,
            Err(e) => {
                warn!(?e, "events reader panicked");
                return Tail::new(max_line);
            }
        }
    };
    match batch {
        Ok(batch) => ingest::batch(conversation, batch, max_line),
        Err(e) => warn!(?e, "reading the events file"),
    }
    tail
}
