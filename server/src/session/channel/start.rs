//! Starting a session's agent with its side channel: one `start` per kind
//! (in the kind's own folder) gets a [`Setup`] and returns the channel and
//! the program it runs, on a PTY, on pipes, or none of its own.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use futures_util::future::BoxFuture;
use tracing::Instrument;

use super::conversation::Sink;
use super::dual_output::watcher::Watcher;
use super::{acp, claude, dual_output, gemini, stream_json, Channel, Conversation};
use crate::config::{ChannelKind, Placeholders, ResolvedProfile, SpawnOptions};
use crate::session::terminal::pipes::Piped;
use crate::session::terminal::pty::{self, Pty};
use crate::session::terminal::{self, Terminal};
use crate::session::SessionLimits;

/// The files of a session its channel uses.
pub(crate) struct Files<'a> {
    /// The session directory (private).
    pub(crate) dir: &'a Path,
    pub(crate) events: &'a Path,
    pub(crate) input: &'a Path,
}

/// What a kind of channel needs to start its agent.
pub(crate) struct Setup<'a> {
    pub(crate) profile: &'a ResolvedProfile,
    /// The values of the command line's placeholders; a kind fills in its
    /// own (`{claude_settings}`) before it spawns.
    pub(crate) placeholders: Placeholders<'a>,
    pub(crate) files: Files<'a>,
    pub(crate) limits: &'a SessionLimits,
    pub(crate) watcher: &'a Arc<Watcher>,
    pub(crate) terminal: &'a Arc<Terminal>,
    pub(crate) conversation: &'a Arc<Conversation>,
    /// The agent's own id of the conversation a resumed session continues.
    pub(crate) resume: Option<&'a str>,
}

impl Setup<'_> {
    /// The program's command line.
    pub(crate) fn spawn(&self) -> SpawnOptions {
        self.spawn_with(|_| {})
    }

    /// The program's command line, with placeholders of the kind's own.
    pub(crate) fn spawn_with<'b>(
        &'b self,
        fill: impl FnOnce(&mut Placeholders<'b>),
    ) -> SpawnOptions {
        let mut p = self.placeholders;
        fill(&mut p);
        self.profile.spawn_options(&p, self.resume.is_some())
    }

    /// The channel's way back into the conversation.
    pub(crate) fn sink(&self) -> Sink {
        Sink::new(self.conversation)
    }
}

/// How the program's exit is awaited.
pub(crate) type Exit = BoxFuture<'static, std::io::Result<std::process::ExitStatus>>;

/// The program a session runs.
pub(crate) struct Program {
    /// Its pid, also its process group (0: none of its own).
    pub(crate) pid: u32,
    pub(crate) exit: Exit,
    /// Its terminal, for a program on a PTY.
    pub(crate) pty: Option<Arc<Pty>>,
    /// What was run, and where.
    pub(crate) spawn: SpawnOptions,
}

/// A started agent.
pub(crate) struct Started {
    pub(crate) channel: Option<Arc<dyn Channel>>,
    pub(crate) program: Program,
}

impl Started {
    /// Runs the program on a PTY; a channel started for it is finished if
    /// the program cannot start.
    pub(crate) fn on_pty(spawn: SpawnOptions, channel: Option<Arc<dyn Channel>>) -> Result<Self> {
        match pty::spawn(&spawn) {
            Ok(s) => {
                let mut child = s.child;
                Ok(Self {
                    channel,
                    program: Program {
                        pid: s.pid,
                        exit: Box::pin(async move { child.wait().await }),
                        pty: Some(s.pty),
                        spawn,
                    },
                })
            }
            Err(e) => {
                if let Some(c) = &channel {
                    tokio::spawn(c.finish());
                }
                Err(e)
            }
        }
    }

    /// Runs the program on pipes, its stderr shown in the terminal pane,
    /// and makes the channel that speaks over them.
    pub(crate) fn on_pipes<C: Channel>(
        setup: &Setup<'_>,
        spawn: SpawnOptions,
        channel: impl FnOnce(PipedIo) -> Arc<C>,
    ) -> Result<Self> {
        let Piped {
            mut child,
            pid,
            stdin,
            stdout,
            stderr,
        } = terminal::pipes::spawn(&spawn)?;
        let channel = channel(PipedIo { stdin, stdout });
        tokio::spawn(setup.terminal.attach_stderr(stderr).in_current_span());
        Ok(Self {
            channel: Some(channel),
            program: Program {
                pid,
                exit: Box::pin(async move { child.wait().await }),
                pty: None,
                spawn,
            },
        })
    }
}

/// The pipes a channel speaks over.
pub(crate) struct PipedIo {
    pub(crate) stdin: tokio::process::ChildStdin,
    pub(crate) stdout: tokio::process::ChildStdout,
}

/// Starts the agent of `setup.profile` with its kind of channel, and
/// connects the channel to the conversation. On failure nothing is left
/// running, and the terminal is closed.
pub(crate) fn start(setup: Setup<'_>) -> Result<Started> {
    let started = match setup.profile.channel {
        ChannelKind::None => Started::on_pty(setup.spawn(), None),
        ChannelKind::DualOutput => dual_output::start(&setup),
        ChannelKind::Claude => claude::start(&setup),
        ChannelKind::Gemini => gemini::start(&setup),
        ChannelKind::StreamJson => stream_json::start(&setup),
        ChannelKind::StreamJsonPerTurn => stream_json::per_turn::start(&setup),
        ChannelKind::Acp => acp::start(&setup),
    };
    match &started {
        Ok(s) => {
            if let Some(c) = &s.channel {
                setup.conversation.set_channel(c.clone());
            }
        }
        Err(_) => setup.terminal.abandon(),
    }
    started
}

/// Whether duet writes the session's events file itself (it normalises
/// the agent's channel) rather than follow the one the agent writes.
pub(crate) fn duet_writes_events(kind: ChannelKind) -> bool {
    match kind {
        ChannelKind::DualOutput | ChannelKind::None => false,
        ChannelKind::Claude
        | ChannelKind::Gemini
        | ChannelKind::StreamJson
        | ChannelKind::StreamJsonPerTurn
        | ChannelKind::Acp => true,
    }
}
