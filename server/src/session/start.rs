//! Starting a session: its files, its channel, its program, and the tasks
//! around them; and holding prompts until the screen shows a profile's
//! `ready_text`.

use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use tokio::sync::{broadcast, watch};
use tracing::{info, Instrument};

use super::channel::log::EventLog;
use super::channel::{self, Conversation};
use super::process::Process;
use super::terminal::{self, Terminal};
use super::{
    create_private_file, history, Session, SessionOptions, State, READY_TEXT_TIMEOUT,
    RECORDING_FILE,
};
use crate::clock::now_ms;
use crate::session::WarningCode;

impl Session {
    /// Starts the program and everything around it. Must run inside a tokio
    /// runtime.
    pub(crate) fn start(opts: SessionOptions) -> Result<Arc<Session>> {
        let span = tracing::info_span!("session", id = %opts.id, profile = %opts.profile.name);
        let _enter = span.enter();
        let events_path = opts.dir.join("events.jsonl");
        let input_path = opts.dir.join("input.jsonl");
        let work_dir = match (&opts.resume, &opts.launch.cwd) {
            (Some(r), _) => r.work_dir.clone(),
            (None, Some(chosen)) => chosen.clone(),
            (None, None) => opts.dir.join("work"),
        };
        // The owner's directory is used as it is, never made.
        if opts.launch.cwd.is_none() {
            std::fs::create_dir_all(&work_dir).context("creating the session's work directory")?;
        }
        create_private_file(&events_path).context("creating the events file")?;
        create_private_file(&input_path).context("creating the input file")?;
        // Before the agent writes anything: the earlier conversation.
        let history_lost = opts.resume.as_ref().and_then(|r| {
            match history::copy(r.session, &r.dir, &opts.dir) {
                Ok(c) if c.omitted > 0 => Some(format!(
                    "the earlier conversation is long: its oldest {} events are left out of this session's history",
                    c.omitted
                )),
                Ok(_) => None,
                Err(e) => {
                    tracing::warn!(?e, "copying the earlier conversation");
                    Some(format!("the earlier conversation could not be copied: {e}"))
                }
            }
        });

        let profile = &opts.profile;
        let agent_session_id = match &opts.resume {
            Some(r) => r.agent_session_id.clone(),
            None => uuid::Uuid::new_v4().to_string(),
        };
        let placeholders = crate::config::Placeholders {
            events_file: &events_path,
            input_file: &input_path,
            session_dir: &opts.dir,
            work_dir: &work_dir,
            session_id: opts.id,
            cols: opts.cols,
            rows: opts.rows,
            claude_settings: "",
            codex_remote: "",
            agent_session_id: &agent_session_id,
        };
        // Slots are allocated up front (~200 bytes each, per session); a client
        // that falls 32 behind catches up from the current state (`catch_up_control`).
        let control = broadcast::channel(32).0;
        // A dual-output agent writes its events file; for other channels
        // duet writes the normalised events itself.
        let log = if channel::duet_writes_events(profile.channel) {
            EventLog::owned(events_path.clone(), opts.limits.event_cache_bytes)
                .context("creating the events file")?
        } else {
            EventLog::new(events_path.clone(), opts.limits.event_cache_bytes)
        };
        // The session clock: event times and the recording's offsets both
        // count from here, so replay lines them up.
        let epoch = std::time::Instant::now();
        let times = channel::times::EventTimes::create(&opts.dir.join(channel::times::FILE), epoch)
            .context("creating the event times file")?;
        let log = log.with_times(times);
        let decisions =
            channel::decisions::Decisions::create(&opts.dir.join(channel::decisions::FILE))
                .context("creating the approval decisions file")?;
        // The ended session's unsent prompts, offered again (never sent by
        // themselves: see `channel/conversation/unsent.rs`).
        let (carried, left_out) = opts
            .resume
            .as_ref()
            .map(|r| channel::held::carry(&r.dir, opts.limits.max_held_submits))
            .unwrap_or_default();
        let conversation = Arc::new(
            Conversation::new(
                Arc::new(log),
                control.clone(),
                opts.limits.max_held_submits,
                opts.limits.max_submit_bytes,
            )
            .with_decisions(decisions)
            .with_held(channel::held::HeldFile::create(&opts.dir), carried)
            .with_budget(profile.budget().cloned()),
        );
        // Before the program starts: its first request meets the rules.
        let cwd = profile
            .spawn_options(&placeholders, opts.resume.is_some())
            .cwd;
        conversation.set_policy(profile.policies().clone(), &cwd);
        if let Some(why) = history_lost {
            conversation.warn(WarningCode::HistoryIncomplete, why, None);
        }
        if left_out > 0 {
            conversation.warn(
                WarningCode::UnsentIncomplete,
                format!(
                    "the earlier session left more unsent prompts than this one offers: \
                     its oldest {left_out} are only in its own chat"
                ),
                None,
            );
        }
        // Everything that can fail comes before the program starts, so a
        // failed start never leaves a program running with no session.
        let recording = (opts.limits.max_recording > 0)
            .then(|| {
                terminal::recording::Recording::create(
                    &opts.dir.join(RECORDING_FILE),
                    opts.cols,
                    opts.rows,
                    opts.limits.max_recording,
                    epoch,
                )
            })
            .transpose()
            .context("creating the recording")?;
        let terminal = Arc::new(Terminal::new(
            opts.cols,
            opts.rows,
            opts.limits.output,
            recording,
        )?);
        // The observer counts what the conversation and the output report.
        let _ = conversation.observer.set(opts.observe.clone());
        let _ = terminal
            .output
            .flow_holds
            .set(opts.observe.metrics.flow_holds.clone());
        if profile.ready_text.is_some() {
            conversation.wait_for_screen();
        }
        let channel::Started { channel, program } = channel::start(channel::Setup {
            profile,
            placeholders,
            files: channel::Files {
                dir: &opts.dir,
                events: &events_path,
                input: &input_path,
            },
            limits: &opts.limits,
            watcher: &opts.watcher,
            terminal: &terminal,
            conversation: &conversation,
            resume: opts.resume.as_ref().map(|r| r.agent_session_id.as_str()),
        })?;
        let channel::Program {
            pid,
            exit,
            pty,
            spawn,
        } = program;
        info!(pid, program = %spawn.program, "started");

        let channel_info = profile.channel_info();
        let session = Arc::new(Session {
            id: opts.id,
            profile: profile.name.clone(),
            created_at: now_ms(),
            dir: opts.dir.clone(),
            work_dir: spawn.cwd.clone(),
            launch: opts.launch.clone(),
            resumed_from: opts.resume.as_ref().map(|r| r.session),
            can_resume: profile.can_resume(),
            limits: opts.limits,
            terminal,
            conversation,
            observe: opts.observe.clone(),
            channel,
            channel_info,
            control,
            state: Mutex::new(State {
                cols: opts.cols,
                rows: opts.rows,
                exit: None,
                ended_at: None,
                name: None,
                resumed_by: None,
            }),
            exited: watch::channel(false).0,
            removed: watch::channel(false).0,
            process: Process::new(pid),
            clients: AtomicU32::new(0),
            connected: Mutex::new(Vec::new()),
            span: span.clone(),
        });
        if let Some(pty) = pty {
            tokio::spawn(session.terminal.attach_pty(pty).instrument(span.clone()));
        }
        tokio::spawn(session.clone().lifecycle(exit).instrument(span.clone()));
        // A budget that interrupts stops the turn as a client's cancel would.
        let weak = Arc::downgrade(&session);
        let runtime = tokio::runtime::Handle::current();
        session.conversation.on_budget_interrupt(Box::new(move || {
            if let Some(s) = weak.upgrade() {
                runtime.spawn(async move {
                    if let Err(e) = s.cancel().await {
                        tracing::warn!(?e, "stopping the turn at the end of its budget");
                    }
                });
            }
        }));
        if let Some(text) = profile.ready_text.clone() {
            tokio::spawn(
                session
                    .clone()
                    .wait_ready_text(text)
                    .instrument(span.clone()),
            );
        }
        session.save_record();
        drop(_enter);
        Ok(session)
    }

    /// Lets prompts go once the screen shows `text` (or, with a warning,
    /// after [`READY_TEXT_TIMEOUT`]): Qwen Code 0.15 announces
    /// `session_start` about a second before it can answer a prompt, and
    /// shows a prompt it cannot answer yet as taken.
    async fn wait_ready_text(self: Arc<Self>, text: String) {
        let output = &self.terminal.output;
        let mut parsed = output.subscribe_screen();
        let found = tokio::time::timeout(READY_TEXT_TIMEOUT, async {
            loop {
                if output.screen_text().contains(&text) {
                    return;
                }
                if parsed.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        if found.is_err() && !self.is_exited() && self.conversation.waits_for_screen() {
            self.conversation.warn(
                WarningCode::ReadyTimeout,
                format!("the screen did not show {text:?} within {READY_TEXT_TIMEOUT:?}; sending prompts anyway"),
                None,
            );
        }
        self.conversation.screen_ready();
    }
}
