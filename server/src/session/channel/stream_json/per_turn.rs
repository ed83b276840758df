//! Print-mode agents (seed 004): one process per prompt, run with
//! `--print --output-format stream-json`, each later one resumed by the
//! conversation id the agent reported (`resume_args` with
//! `{agent_session_id}`), chained into one duet session
//! (`channel = "stream_json_per_turn"`). The prompt goes in `{prompt}` in
//! the arguments, or on stdin when they do not mention it.
//!
//! Each turn's stdout is normalised (`tool_call.rs`) into the chat's
//! events; its raw lines are kept in `turns.jsonl` beside the events
//! file. Its stderr shows in the terminal pane. A turn that ends without
//! a `result` (a non-zero exit, a crash) ends with an error `result` that
//! quotes the end of its stderr, and a warning. Cancel ends the running
//! turn's process group; ending the session ends it too, and the session
//! has no process of its own between turns.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use duet_protocol::rest::ApprovalOption;
use futures_util::future::BoxFuture;
use nix::sys::signal::Signal;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};
use tracing::{debug, Instrument};

use crate::config::SpawnOptions;
use crate::session::channel::conversation::Sink;
use crate::session::channel::piped::lines::{next_line, Line};
use crate::session::channel::piped::tool_call::Normalizer;
use crate::session::channel::piped::{first_line, Agent};
use crate::session::channel::{Channel, ChannelError, Setup, Started};
use crate::session::terminal::output::Output;
use crate::session::terminal::pipes::{self, crlf};
use crate::session::WarningCode;
use crate::sync::lock;

/// Prompts waiting for their turn (the conversation holds more).
const PROMPT_QUEUE: usize = 8;
/// The end of a failed turn's stderr quoted in its error.
const STDERR_TAIL: usize = 2048;
/// How long a finished turn's last output may take to drain.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// How to run turns.
pub(crate) struct PerTurnOptions {
    /// The first turn's command line (`{prompt}` and `{agent_session_id}`
    /// still in it).
    pub(crate) first: SpawnOptions,
    /// Later turns', once the agent reported its conversation id.
    pub(crate) resume: Option<SpawnOptions>,
    /// The conversation continued (a resumed session), if any.
    pub(crate) agent_session_id: Option<String>,
    pub(crate) output: Arc<Output>,
    pub(crate) max_line: usize,
    /// Between SIGTERM and SIGKILL when a turn is ended.
    pub(crate) kill_grace: Duration,
    /// Where each turn's raw stdout lines are kept.
    pub(crate) raw_log: PathBuf,
}

/// See the module docs.
pub(crate) struct PerTurn {
    prompts: mpsc::Sender<String>,
    stop: watch::Sender<bool>,
    done: watch::Receiver<bool>,
    /// The running turn's pid (and group), 0 between turns.
    pid: Arc<AtomicU32>,
    cancelled: Arc<AtomicBool>,
}

/// Starts the channel that runs the turns: the session has no program of
/// its own, and "exits" once it is ended.
pub(in crate::session::channel) fn start(setup: &Setup<'_>) -> anyhow::Result<Started> {
    // `{agent_session_id}` is filled in each turn.
    let first = setup.spawn_with(|p| p.agent_session_id = "{agent_session_id}");
    // A program or directory that is missing fails the start, as it does
    // for the other channels, not the first turn.
    crate::session::terminal::program::program_path(&first)?;
    let profile = setup.profile;
    let resume = profile.can_resume().then(|| {
        let mut p = setup.placeholders;
        p.agent_session_id = "{agent_session_id}";
        profile.spawn_options(&p, true)
    });
    let channel = PerTurn::start(
        PerTurnOptions {
            resume,
            first: first.clone(),
            agent_session_id: setup.resume.map(String::from),
            output: setup.terminal.output.clone(),
            max_line: setup.limits.max_sidecar_line,
            kill_grace: setup.limits.kill_grace,
            raw_log: setup.files.dir.join("turns.jsonl"),
        },
        setup.sink(),
    );
    Ok(Started {
        program: crate::session::channel::Program {
            pid: 0,
            exit: channel.ended(),
            pty: None,
            spawn: first,
        },
        channel: Some(channel),
    })
}

impl PerTurn {
    /// Ready for prompts at once. Must run inside a tokio runtime.
    pub(crate) fn start(opts: PerTurnOptions, conversation: Sink) -> Arc<Self> {
        let shared = Agent::new(conversation, opts.output.clone());
        let (prompts, rx) = mpsc::channel(PROMPT_QUEUE);
        let (stop, stop_rx) = watch::channel(false);
        let (done_tx, done) = watch::channel(false);
        let pid = Arc::new(AtomicU32::new(0));
        let cancelled = Arc::new(AtomicBool::new(false));
        let turns = Turns {
            opts,
            shared,
            pid: pid.clone(),
            cancelled: cancelled.clone(),
            stop: stop_rx,
        };
        tokio::spawn(
            async move {
                turns.run(rx).await;
                done_tx.send_replace(true);
            }
            .in_current_span(),
        );
        Arc::new(Self {
            prompts,
            stop,
            done,
            pid,
            cancelled,
        })
    }

    /// Resolves once the session is over (after [`Channel::stop`]): the
    /// session's "exit".
    pub(crate) fn ended(&self) -> BoxFuture<'static, std::io::Result<ExitStatus>> {
        let mut done = self.done.clone();
        Box::pin(async move {
            let _ = done.wait_for(|d| *d).await;
            Ok(ExitStatus::from_raw(0))
        })
    }
}

impl Channel for PerTurn {
    fn deliver(&self, text: &str) -> Result<(), ChannelError> {
        self.prompts
            .try_send(text.to_string())
            .map_err(|e| match e {
                mpsc::error::TrySendError::Closed(_) => ChannelError::Closed,
                mpsc::error::TrySendError::Full(_) => {
                    ChannelError::Refused("too many prompts are waiting".into())
                }
            })
    }

    fn decide(&self, _request_id: &str, _option: &ApprovalOption) -> Result<(), ChannelError> {
        Err(ChannelError::Refused(
            "a print-mode agent asks for no approvals".into(),
        ))
    }

    fn cancel(&self) -> Option<Result<(), ChannelError>> {
        let pid = self.pid.load(Ordering::Acquire);
        if pid != 0 {
            self.cancelled.store(true, Ordering::Release);
            signal_group(pid, Signal::SIGTERM);
        }
        Some(Ok(()))
    }

    fn stop(&self) {
        self.stop.send_replace(true);
    }

    fn finish(&self) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// Resolves once the session is being ended.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

fn signal_group(pid: u32, signal: Signal) {
    if pid == 0 {
        return;
    }
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid as i32), signal);
}

struct Turns {
    opts: PerTurnOptions,
    shared: Arc<Agent>,
    pid: Arc<AtomicU32>,
    cancelled: Arc<AtomicBool>,
    stop: watch::Receiver<bool>,
}

impl Turns {
    async fn run(mut self, mut prompts: mpsc::Receiver<String>) {
        let mut agent_id = self.opts.agent_session_id.clone();
        self.shared.start(
            agent_id.as_deref(),
            json!({"protocol": "stream-json", "per_turn": true}),
        );
        loop {
            let prompt = tokio::select! {
                p = prompts.recv() => p,
                _ = stopped(&mut self.stop) => None,
            };
            let Some(prompt) = prompt else { break };
            self.shared.prompt(&prompt);
            self.turn(&prompt, &mut agent_id).await;
            if *self.stop.borrow() {
                break;
            }
        }
        self.shared.output.close();
    }

    /// Runs one prompt's process to its end.
    async fn turn(&mut self, prompt: &str, agent_id: &mut Option<String>) {
        self.cancelled.store(false, Ordering::Release);
        let template = match (&self.opts.resume, agent_id.as_ref()) {
            (Some(resume), Some(_)) => resume,
            _ => &self.opts.first,
        };
        let mut spawn = template.clone();
        let id = agent_id.clone().unwrap_or_default();
        let prompt_in_args = spawn.args.iter().any(|a| a.contains("{prompt}"));
        if let Some(why) = option_like(&spawn.args, prompt) {
            self.shared.failed(WarningCode::PromptRefused, &why);
            return;
        }
        spawn.args = spawn
            .args
            .iter()
            .map(|a| {
                a.replace("{agent_session_id}", &id)
                    .replace("{prompt}", prompt)
            })
            .collect();
        let mut piped = match pipes::spawn(&spawn) {
            Ok(p) => p,
            Err(e) => {
                self.shared
                    .ended(&format!("the agent could not be started: {e:#}"));
                return;
            }
        };
        self.pid.store(piped.pid, Ordering::Release);
        let stdin_text = (!prompt_in_args).then(|| prompt.to_string());
        let mut stdin = piped.stdin;
        tokio::spawn(async move {
            if let Some(text) = stdin_text {
                let _ = stdin.write_all(text.as_bytes()).await;
            }
            // EOF: the whole prompt is there.
        });
        let tail = Arc::new(Mutex::new(Vec::<u8>::new()));
        let stderr = tokio::spawn(show_stderr(
            piped.stderr,
            self.opts.output.clone(),
            tail.clone(),
        ));
        let reader = tokio::spawn(
            read(
                piped.stdout,
                self.shared.clone(),
                self.opts.max_line,
                self.opts.raw_log.clone(),
            )
            .in_current_span(),
        );
        let status = tokio::select! {
            s = piped.child.wait() => s,
            _ = stopped(&mut self.stop) => {
                signal_group(piped.pid, Signal::SIGTERM);
                match tokio::time::timeout(self.opts.kill_grace, piped.child.wait()).await {
                    Ok(s) => s,
                    Err(_) => {
                        signal_group(piped.pid, Signal::SIGKILL);
                        piped.child.wait().await
                    }
                }
            }
        };
        // Whatever it left behind in its group goes with it.
        signal_group(piped.pid, Signal::SIGKILL);
        self.pid.store(0, Ordering::Release);
        let _ = tokio::time::timeout(DRAIN_TIMEOUT, stderr).await;
        match tokio::time::timeout(DRAIN_TIMEOUT, reader).await {
            Ok(Ok(Some(id))) => {
                self.shared.conversation.learn_agent_session_id(&id);
                *agent_id = Some(id);
            }
            Ok(_) => {}
            Err(_) => debug!("the turn's stdout did not drain"),
        }
        let tail = String::from_utf8_lossy(&lock(&tail)).trim().to_string();
        let how = match &status {
            Ok(s) => match (s.code(), s.signal()) {
                (Some(c), _) => format!("exited with code {c}"),
                (_, Some(sig)) => format!("was ended by signal {sig}"),
                _ => "exited".into(),
            },
            Err(e) => format!("could not be waited for ({e})"),
        };
        let why = if self.cancelled.load(Ordering::Acquire) {
            "interrupted".to_string()
        } else if tail.is_empty() {
            format!("the agent {how} without finishing its turn")
        } else {
            // The last line says what went wrong, in tracebacks and logs.
            let last = tail.lines().last().unwrap_or_default();
            format!(
                "the agent {how} without finishing its turn: {}",
                first_line(last, 300)
            )
        };
        self.shared.ended(&why);
    }
}

/// Why `prompt` must not go into `args`: an argument of its own that
/// starts with `-` would be read as an option of the agent's (a client
/// must never choose the command line), unless a `--` comes before it.
fn option_like(args: &[String], prompt: &str) -> Option<String> {
    let at = args.iter().position(|a| a == "{prompt}")?;
    let guarded = args[..at].iter().any(|a| a == "--");
    (!guarded && prompt.starts_with('-')).then(|| {
        "this agent takes the prompt as an argument, and one that starts with '-' would read as an option: start it with something else (or give the profile a \"--\" before {prompt})".to_string()
    })
}

/// Shows a turn's stderr in the terminal pane, keeping its end.
async fn show_stderr(
    mut stderr: tokio::process::ChildStderr,
    output: Arc<Output>,
    tail: Arc<Mutex<Vec<u8>>>,
) {
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                output.push(bytes::Bytes::from(crlf(&buf[..n])));
                let mut t = lock(&tail);
                t.extend_from_slice(&buf[..n]);
                let excess = t.len().saturating_sub(STDERR_TAIL);
                t.drain(..excess);
            }
        }
    }
}

/// Relays one turn's stdout, normalised; returns the conversation id the
/// agent reported.
async fn read(
    stdout: tokio::process::ChildStdout,
    shared: Arc<Agent>,
    max_line: usize,
    raw_log: PathBuf,
) -> Option<String> {
    let mut raw = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&raw_log)
            .ok()
    };
    let mut r = BufReader::new(stdout);
    let mut buf = Vec::new();
    let mut normalizer = Normalizer::default();
    let mut agent_id = None;
    loop {
        let line = match next_line(&mut r, &mut buf, max_line).await {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(other)) => {
                shared.skipped(&other);
                continue;
            }
            Ok(None) | Err(_) => break,
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(f) = raw.as_mut() {
            let _ = writeln!(f, "{line}");
        }
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            shared.conversation.warn(
                WarningCode::BadEvent,
                format!(
                    "the agent wrote a line that is not JSON: {}",
                    first_line(&line, 120)
                ),
                None,
            );
            shared.show(&line);
            continue;
        };
        if !event.is_object() {
            continue;
        }
        if let Some(id) = event["session_id"].as_str() {
            if agent_id.as_deref() != Some(id) {
                agent_id = Some(id.to_string());
            }
        }
        for e in normalizer.events(&event) {
            shared.emit(&e);
        }
    }
    let mut rest = Vec::new();
    normalizer.flush(&mut rest);
    for e in rest {
        shared.emit(&e);
    }
    agent_id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_never_becomes_an_option() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(option_like(&args(&["-p", "{prompt}"]), "--force").is_some());
        assert!(option_like(&args(&["-p", "{prompt}"]), "hello -x").is_none());
        assert!(option_like(&args(&["--", "{prompt}"]), "--force").is_none());
        // Inside a longer argument it cannot be an option.
        assert!(option_like(&args(&["--prompt={prompt}"]), "--force").is_none());
    }
}
