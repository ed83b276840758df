//! The send half of a client connection: one drain loop that interleaves
//! replies, control news, events and terminal output, each pulled from its
//! source with this client's own cursor.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use bytes::Bytes;
use duet_protocol::ids::ClientId;
use duet_protocol::rest::SessionStatus;
use duet_protocol::ws::{Hello, ServerMessage, CAPABILITIES};
use duet_protocol::PROTOCOL_VERSION;
use futures_util::stream::SplitSink;
use futures_util::SinkExt;
use tokio::sync::{broadcast, mpsc, watch};
use tracing::debug;

use super::Outgoing;
use crate::session::Event as LogEvent;
use crate::session::ReadResult;
use crate::session::{Control, Session};

/// Largest terminal frame sent at once.
const MAX_TERMINAL_FRAME: usize = 256 << 10;
/// Terminal bytes in one round after which the task yields (see `run`).
const HEAVY_OUTPUT: usize = 16 << 10;
/// Events sent per batch before output gets a turn.
const EVENT_BATCH: usize = 256;
/// Protocol-level keepalive.
const PING_EVERY: Duration = Duration::from_secs(30);
/// The longest a snapshot waits for the screen to take the output and
/// resizes so far (a parser 8 MiB behind, its cap, takes ~0.2 s); past it the
/// snapshot is taken as the screen stands, as before.
const SETTLE_FOR_SNAPSHOT: Duration = Duration::from_secs(2);

/// The send half and everything it reads from.
pub(super) struct Sender {
    pub(super) sink: SplitSink<WebSocket, Message>,
    pub(super) session: Arc<Session>,
    pub(super) control: broadcast::Receiver<Control>,
    pub(super) replies: mpsc::Receiver<Outgoing>,
    pub(super) paused: watch::Receiver<bool>,
    pub(super) stop: watch::Receiver<bool>,
    /// The id of the last warning sent to this client.
    pub(super) warnings_seen: u64,
    /// Who this client is (announced in `hello`).
    pub(super) who: crate::auth::Principal,
    /// Something was fed to the sink since the last flush.
    pub(super) unflushed: bool,
}

fn warning_message(w: crate::session::Warning) -> ServerMessage {
    ServerMessage::Warning {
        id: w.id,
        code: w.code.to_string(),
        message: w.message,
        seq: w.seq,
    }
}

/// The connection is over (client gone or server stopping).
struct Closed;

impl Sender {
    async fn text(&mut self, msg: &ServerMessage) -> Result<(), Closed> {
        let json = msg.to_json();
        let m = &self.session.observe.metrics;
        m.sent_json.inc_by(json.len() as u64);
        if let ServerMessage::Error { code, .. } = msg {
            m.ws_error(code.as_str());
        }
        self.feed(Message::Text(Utf8Bytes::from(json))).await
    }

    /// Queues a message; [`flush`](Self::flush) sends it.
    async fn feed(&mut self, msg: Message) -> Result<(), Closed> {
        self.unflushed = true;
        self.sink.feed(msg).await.map_err(|_| Closed)
    }

    /// Sends what the receive half handed over; a close ends the connection.
    async fn outgoing(&mut self, out: Outgoing) -> Result<(), Closed> {
        match out {
            Outgoing::Reply(msg) => self.text(&msg).await,
            Outgoing::Close(frame) => {
                // After a client's close, tungstenite has queued its reply
                // already: a flush sends it (a second close would be
                // refused). Otherwise this close is ours to send.
                let _ = self.sink.flush().await;
                let _ = self.sink.send(Message::Close(frame)).await;
                Err(Closed)
            }
        }
    }

    /// Sends events, counted.
    async fn relay(&mut self, events: &[LogEvent]) -> Result<(), Closed> {
        if events.is_empty() {
            return Ok(());
        }
        let m = self.session.observe.metrics.clone();
        m.events_relayed.inc_by(events.len() as u64);
        for e in events {
            m.sent_json.inc_by(e.frame.len() as u64);
            self.feed(Message::Text(e.frame.clone())).await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), Closed> {
        if self.unflushed {
            self.sink.flush().await.map_err(|_| Closed)?;
            self.unflushed = false;
        }
        Ok(())
    }

    /// Resets the client's terminal to the current screen; returns the
    /// offset to continue from.
    ///
    /// The screen is settled first, so the snapshot has every resize made
    /// so far: its size is the PTY's, and the client draws it at that size
    /// (drawn at one size and resized by the client, xterm and the server's
    /// screen would disagree on which rows a shrink keeps).
    async fn resync(&mut self, reason: &str) -> Result<u64, Closed> {
        let output = &self.session.terminal.output;
        let _ = tokio::time::timeout(SETTLE_FOR_SNAPSHOT, output.settle()).await;
        let snap = output.snapshot();
        let m = &self.session.observe.metrics;
        // A resize's redraw is neither an attach nor a client falling behind.
        match reason {
            "attach" => {
                m.resync_attach.inc();
            }
            "lagged" => {
                m.resync_lagged.inc();
            }
            _ => {}
        }
        m.sent_terminal.inc_by(snap.bytes.len() as u64);
        self.text(&ServerMessage::Resync {
            cols: snap.cols,
            rows: snap.rows,
            reason: reason.to_string(),
        })
        .await?;
        self.feed(Message::Binary(snap.bytes.clone())).await?;
        // A resize after the settle is announced by control news, which
        // brings a resync of its own.
        Ok(snap.offset)
    }

    /// The message for a piece of control news; `None` for a warning this
    /// client has had already (replayed when it attached).
    fn control_message(&mut self, c: Control) -> Option<ServerMessage> {
        Some(match c {
            Control::Approval(a) => ServerMessage::Approval(a),
            Control::Resize { cols, rows } => ServerMessage::Resize { cols, rows },
            Control::Warning(w) => {
                if w.id <= self.warnings_seen {
                    return None;
                }
                self.warnings_seen = w.id;
                warning_message(w)
            }
            Control::Exit(e) => ServerMessage::Exit(e),
            Control::Clients(clients) => ServerMessage::Clients { clients },
            Control::Prompts { unsent, held } => ServerMessage::Unsent {
                prompts: unsent,
                held,
            },
        })
    }

    /// This client missed control news: send the current state instead,
    /// and the warnings it has not seen.
    async fn catch_up_control(&mut self) -> Result<(), Closed> {
        for a in self.session.approvals() {
            self.text(&ServerMessage::Approval(a)).await?;
        }
        for w in self.session.warnings_after(self.warnings_seen) {
            self.warnings_seen = w.id;
            self.text(&warning_message(w)).await?;
        }
        let clients = self.session.connected();
        self.text(&ServerMessage::Clients { clients }).await?;
        let (prompts, held) = (self.session.unsent(), self.session.held());
        self.text(&ServerMessage::Unsent { prompts, held }).await?;
        let (cols, rows) = self.session.size();
        self.text(&ServerMessage::Resize { cols, rows }).await
    }

    pub(super) async fn run(mut self, client: ClientId, from: u64) {
        let _ = self.run_inner(client, from).await;
    }

    async fn run_inner(&mut self, client: ClientId, from: u64) -> Result<(), Closed> {
        let s = self.session.clone();
        let (cols, rows) = s.size();
        let info = s.info();
        let hello = Hello {
            session_id: s.id,
            client_id: client,
            role: self.who.role,
            principal: self.who.name.clone(),
            clients: s.connected(),
            protocol_version: PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            capabilities: CAPABILITIES.iter().map(|c| c.to_string()).collect(),
            profile: s.profile.clone(),
            channel: s.channel_info().clone(),
            status: info.status,
            cols,
            rows,
            last_seq: info.last_seq,
            approvals: s.approvals(),
            exit: info.exit.clone(),
            agent: s.agent(),
            unsent: s.unsent(),
            held: s.held(),
        };
        self.text(&ServerMessage::Hello(hello)).await?;
        // Registered before the first snapshot, so the ring keeps what
        // follows it while this client is still busy with the hello.
        let flow = s.terminal.output.pinned_reader();
        let mut term_cursor = self.resync("attach").await?;
        // What went wrong before this client came.
        for w in s.warnings_after(0) {
            self.warnings_seen = w.id;
            self.text(&warning_message(w)).await?;
        }
        self.flush().await?;
        // Flow control: while this client keeps reading, the program waits
        // for it rather than letting it fall out of the window.
        flow.resynced(term_cursor);
        flow.set_paused(false);
        let mut flow_paused = false;

        let mut event_cursor = from;
        let mut output_rx = s.terminal.output.subscribe();
        let mut events_rx = s.events().subscribe();
        let mut exited_rx = s.exited();
        let mut removed = s.removed();
        // An exit is announced only after the output and events before it.
        let mut exit_pending = info.status == SessionStatus::Exited;
        // The exit is learnt from the broadcast and from the exited watch;
        // announce it once.
        let mut exit_sent = false;
        // A resize was announced: this client's terminal redraws from a
        // snapshot at the new size before more output.
        let mut resize_pending = false;
        // The newest client list not sent yet.
        let mut clients = None;
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;

        loop {
            let mut progressed = false;
            // Whether this round moved a lot: then other tasks get a turn.
            let mut heavy = false;
            // Whether a source may have more at once that no wake-up below
            // announces (a full batch, output past one frame, a snapshot to
            // continue from): then the next round starts without waiting.
            let mut again = false;
            while let Ok(out) = self.replies.try_recv() {
                self.outgoing(out).await?;
                progressed = true;
            }
            // After the replies: the receive half sets a pause before it
            // queues its ack, so once the ack is out the pause holds here.
            let paused = *self.paused.borrow_and_update();
            if paused != flow_paused {
                flow.set_paused(paused);
                flow_paused = paused;
            }
            loop {
                match self.control.try_recv() {
                    Ok(Control::Exit(_)) => exit_pending = true,
                    Ok(Control::Clients(list)) => {
                        clients = Some(list);
                        progressed = true;
                    }
                    Ok(c) => {
                        resize_pending |= matches!(c, Control::Resize { .. });
                        if let Some(msg) = self.control_message(c) {
                            self.text(&msg).await?;
                        }
                        progressed = true;
                    }
                    Err(broadcast::error::TryRecvError::Lagged(n)) => {
                        debug!(missed = n, "control lagged; sending current state");
                        clients = None;
                        self.catch_up_control().await?;
                        exit_pending |= s.is_exited();
                        resize_pending = true;
                        progressed = true;
                    }
                    Err(_) => break,
                }
            }
            // Each list is the whole list: only the newest of those that
            // came since the last round is sent. A hundred clients attaching
            // would otherwise queue a hundred lists, each longer than the
            // last, for every client, and the socket's write buffer keeps
            // the capacity of its largest burst (measured: +12 KiB per
            // client with 100 on a session).
            if let Some(list) = clients.take() {
                self.text(&ServerMessage::Clients { clients: list }).await?;
            }

            let (events, upto) = s.events().read_after_async(event_cursor, EVENT_BATCH).await;
            self.relay(&events).await?;
            progressed |= !events.is_empty();
            heavy |= events.len() >= EVENT_BATCH;
            again |= events.len() >= EVENT_BATCH;
            event_cursor = upto.max(event_cursor);

            let mut output_drained = true;
            if resize_pending {
                // The size policy (README): one PTY size for all clients; after
                // a resize every client redraws from the server's screen at the
                // new size, so each one shows exactly what a reload would.
                resize_pending = false;
                term_cursor = self.resync("resize").await?;
                flow.resynced(term_cursor);
                progressed = true;
                again = true;
                output_drained = false;
            } else if !paused {
                match s.terminal.output.read(term_cursor, MAX_TERMINAL_FRAME) {
                    ReadResult::Data(bytes, next) => {
                        s.observe.metrics.sent_terminal.inc_by(bytes.len() as u64);
                        heavy |= bytes.len() >= HEAVY_OUTPUT;
                        self.feed(Message::Binary(bytes)).await?;
                        term_cursor = next;
                        flow.advance(next);
                        progressed = true;
                        again |= next < *output_rx.borrow();
                        output_drained = false;
                    }
                    ReadResult::Lagged => {
                        debug!("terminal lagged; resyncing from a snapshot");
                        term_cursor = self.resync("lagged").await?;
                        flow.resynced(term_cursor);
                        progressed = true;
                        again = true;
                        output_drained = false;
                    }
                    ReadResult::UpToDate => {}
                }
            }
            self.flush().await?;

            // `exit_pending` is only set once the exit is recorded, which
            // happens after the final read of the events file.
            if exit_pending && !exit_sent && output_drained && event_cursor >= s.events().last_seq()
            {
                exit_pending = false;
                exit_sent = true;
                if let Some(exit) = s.exit_info() {
                    self.text(&ServerMessage::Exit(exit)).await?;
                    self.flush().await?;
                }
            }
            // An exit waits for a round that finds the output drained.
            again |= progressed && exit_pending && !exit_sent;
            if again {
                // After a round that moved a lot, let other clients' tasks
                // (and this client's keys) run. Not after an echo or a few
                // events: a yield puts the task at the back of the queue
                // and wakes the other worker to steal it, a futex call and
                // a thread switch per echoed key (profiled,
                // docs/benchmarks.md).
                if heavy {
                    tokio::task::yield_now().await;
                }
                continue;
            }
            // Otherwise wait: whatever came during this round has marked its
            // source changed, and the select below returns at once. (Going
            // round once more to find nothing, as before, cost every echo a
            // second pass over every source.)

            tokio::select! {
                biased;
                _ = self.stop.changed() => {
                    // The server ends every program before it stops: let
                    // this client see the last events and the exit first.
                    if s.is_exited() && !exit_sent {
                        for _ in 0..64 {
                            let (events, upto) =
                                s.events().read_after_async(event_cursor, EVENT_BATCH).await;
                            self.relay(&events).await?;
                            event_cursor = upto.max(event_cursor);
                            if events.is_empty() {
                                break;
                            }
                        }
                        if let Some(exit) = s.exit_info() {
                            self.text(&ServerMessage::Exit(exit)).await?;
                        }
                    }
                    let _ = self.sink.send(Message::Close(Some(CloseFrame {
                        code: 1001,
                        reason: Utf8Bytes::from_static("duet is shutting down"),
                    }))).await;
                    return Err(Closed);
                }
                Ok(()) = removed.changed() => {
                    // Purged or past its retention: nothing is left to show,
                    // and this client must not keep the session alive.
                    let _ = self.sink.send(Message::Close(Some(CloseFrame {
                        code: 1000,
                        reason: Utf8Bytes::from_static("the session was removed"),
                    }))).await;
                    return Err(Closed);
                }
                out = self.replies.recv() => match out {
                    Some(out) => self.outgoing(out).await?,
                    None => return Err(Closed),
                },
                c = self.control.recv() => match c {
                    Ok(Control::Exit(_)) => exit_pending = true,
                    // Sent by the next round, with any newer list.
                    Ok(Control::Clients(list)) => clients = Some(list),
                    Ok(c) => {
                        resize_pending |= matches!(c, Control::Resize { .. });
                        if let Some(msg) = self.control_message(c) {
                            self.text(&msg).await?;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        self.catch_up_control().await?;
                        exit_pending |= s.is_exited();
                        resize_pending = true;
                    }
                    Err(broadcast::error::RecvError::Closed) => {}
                },
                _ = events_rx.changed() => {}
                _ = output_rx.changed(), if !paused => {}
                _ = exited_rx.changed() => exit_pending |= s.is_exited(),
                changed = self.paused.changed() => {
                    if changed.is_err() {
                        return Err(Closed);
                    }
                }
                _ = ping.tick() => {
                    self.feed(Message::Ping(Bytes::new())).await?;
                }
            }
        }
    }
}
