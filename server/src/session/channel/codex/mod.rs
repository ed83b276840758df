//! Codex's TUI in the terminal, its chat from the app server it is
//! attached to (`channel = "codex"`; docs/codex.md §7, docs/agents.md).
//! duet runs `codex app-server --listen unix://<session>/codex.sock`
//! (`server.rs`), the TUI with `--remote {codex_remote}` (so no daemon of
//! its own), and is a second client of the same app server (`rpc.rs`):
//!
//! - the TUI's thread is the first `thread/started` with an environment
//!   (its id the agent's session id; on resume duet knows it). Items reach
//!   only clients that `thread/resume`d the thread, which fails until its
//!   first turn started: duet subscribes when the thread turns active (or
//!   its own first prompt started a turn), and catches up with the turn's
//!   items `thread/resume` returns;
//! - prompts from the browser are `turn/start`s (no typing into the TUI,
//!   which shows them as typed ones), held while a turn runs (a prompt
//!   mid-turn would steer it); cancel is `turn/interrupt`;
//! - approvals go to both clients, first answer wins: a request becomes
//!   the chat's approval worded as the TUI's dialog (`decisions.rs`), a
//!   browser's choice is duet's answer, confirmed when the app server says
//!   the request is resolved; one resolved without duet's answer was
//!   answered in the terminal (declined if its item was);
//! - the thread's items become chat events (`events.rs`).
//!
//! Requests duet cannot answer (a question for the user, a tool call of
//! the client's) are left to the TUI: answering them with an error would
//! win the race against it. Every message of the app server's is kept
//! verbatim in `app-server.jsonl`.

mod client;
mod decisions;
mod events;
mod notifications;
mod rpc;
mod server;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use duet_protocol::rest::ApprovalOption;
use duet_protocol::sidecar::CanUseTool;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tracing::warn;

use super::conversation::Sink;
use super::{offered, Channel, ChannelError, Setup, Started, Tasks};
use crate::session::WarningCode;
use crate::sync::lock;
use client::{Call, Inner, State};
use decisions::Subject;
use server::AppServer;

/// See the module docs.
pub(crate) struct Codex {
    inner: Arc<Inner>,
    server: Mutex<Option<AppServer>>,
}

/// Starts the session's app server, connects to it, and starts the TUI
/// attached to it on a PTY.
pub(super) fn start(setup: &Setup<'_>) -> Result<Started> {
    let dir = setup.files.dir;
    let socket = dir.join("codex.sock");
    let remote = format!("unix://{}", socket.display());
    let spawn = setup.spawn_with(|p| p.codex_remote = &remote);
    let server = AppServer::start(&spawn, socket, &dir.join("app-server.log"))?;
    let channel = Codex::start(
        server,
        setup.resume,
        &dir.join("app-server.jsonl"),
        setup.sink(),
    )?;
    Started::on_pty(spawn, Some(channel))
}

impl Codex {
    fn start(
        server: AppServer,
        resume: Option<&str>,
        raw_log: &std::path::Path,
        conversation: Sink,
    ) -> Result<Arc<Self>> {
        let target = server
            .target()
            .ok_or_else(|| anyhow::anyhow!("the Codex app server's socket is gone"))?;
        let raw = super::hook_socket::raw_log(raw_log)?;
        // duet's prompts are turns of the thread, never typed twice.
        conversation.keeps_prompts();
        let (out, queue) = mpsc::channel(rpc::OUT_QUEUE);
        let inner = Arc::new(Inner {
            conversation,
            state: Mutex::new(State::default()),
            out,
            resume: resume.map(String::from),
            raw: Mutex::new(Some(raw)),
            tasks: Tasks::default(),
        });
        inner.tasks.spawn(run(inner.clone(), target, queue));
        Ok(Arc::new(Self {
            inner,
            server: Mutex::new(Some(server)),
        }))
    }
}

/// Connects, says hello, then reads until the app server goes.
async fn run(inner: Arc<Inner>, socket: PathBuf, queue: mpsc::Receiver<String>) {
    let ws = match rpc::connect(&socket).await {
        Ok(ws) => ws,
        Err(e) => {
            warn!(?e, "connecting to the Codex app server");
            inner.conversation.warn(
                WarningCode::NoHandshake,
                format!("duet could not reach Codex's app server, so the chat stays empty: {e:#}"),
                None,
            );
            return;
        }
    };
    let (sink, stream) = ws.split();
    inner.tasks.spawn(rpc::write(sink, queue));
    let id = inner.call(Call::Initialize);
    inner.send(rpc::request(
        id,
        "initialize",
        json!({"clientInfo": {"name": "duet", "version": env!("CARGO_PKG_VERSION")}}),
    ));
    let reader = inner.clone();
    rpc::read(stream, move |msg| reader.on_message(msg)).await;
}

impl Channel for Codex {
    fn deliver(&self, text: &str) -> Result<(), ChannelError> {
        self.inner.prompt(text.to_string())
    }

    fn decide(&self, request_id: &str, option: &ApprovalOption) -> Result<(), ChannelError> {
        let mut st = lock(&self.inner.state);
        let pending = st.pending.remove(request_id).ok_or(ChannelError::Closed)?;
        let Some(answer) = decisions::answer(&pending.decisions, &option.id) else {
            st.pending.insert(request_id.to_string(), pending);
            return Err(ChannelError::Invalid(format!(
                "Codex offered no choice {:?}",
                option.id
            )));
        };
        st.answered
            .insert(request_id.to_string(), option.kind.allows());
        drop(st);
        self.inner.send(rpc::reply(&pending.id, answer));
        Ok(())
    }

    fn options(&self, request: &CanUseTool) -> Vec<ApprovalOption> {
        offered(request).unwrap_or_else(|| {
            decisions::options(Subject::Command, &decisions::available(&Value::Null))
        })
    }

    fn cancel(&self) -> Option<Result<(), ChannelError>> {
        let (thread, turn) = {
            let mut st = lock(&self.inner.state);
            st.queued.clear();
            (st.thread.clone(), st.turn.clone())
        };
        let (Some(thread), Some(turn)) = (thread, turn.filter(|t| !t.is_empty())) else {
            return Some(Ok(()));
        };
        let id = self.inner.call(Call::Interrupt);
        self.inner.send(rpc::request(
            id,
            "turn/interrupt",
            json!({"threadId": thread, "turnId": turn}),
        ));
        Some(Ok(()))
    }

    fn finish(&self) -> BoxFuture<'static, ()> {
        let server = lock(&self.server).take();
        let inner = self.inner.clone();
        Box::pin(async move {
            if let Some(mut server) = server {
                // The TUI is gone; its thread was left to the app server.
                let _ = tokio::task::spawn_blocking(move || server.stop()).await;
            }
            inner.tasks.abort_all();
            let events = lock(&inner.state).normalizer.flush();
            inner.conversation.emit_all(&events);
            lock(&inner.raw).take();
        })
    }
}
