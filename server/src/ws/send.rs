//! The writing end of a client connection: each kind of message the
//! client gets, counted, fed to the socket and flushed. What to send next
//! is the drain loop's to decide (`drain.rs`).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use duet_protocol::ids::ClientId;
use duet_protocol::rest::SessionStatus;
use duet_protocol::ws::{Hello, ResyncReason, ServerMessage, CAPABILITIES};
use duet_protocol::PROTOCOL_VERSION;
use futures_util::stream::SplitSink;
use futures_util::SinkExt;

use super::Outgoing;
use crate::auth::Principal;
use crate::session::Event as LogEvent;
use crate::session::{Control, Session};

/// The longest a snapshot waits for the screen to take the output and
/// resizes so far (a parser 8 MiB behind, its cap, takes ~0.2 s); past it the
/// snapshot is taken as the screen stands, as before.
const SETTLE_FOR_SNAPSHOT: Duration = Duration::from_secs(2);

/// The socket's sending half, and what the messages are built from.
pub(super) struct Sender {
    sink: SplitSink<WebSocket, Message>,
    pub(super) session: Arc<Session>,
    /// The id of the last warning sent to this client.
    warnings_seen: u64,
    /// Something was fed to the sink since the last flush.
    unflushed: bool,
}

fn warning_message(w: crate::session::Warning) -> ServerMessage {
    ServerMessage::Warning {
        id: w.id,
        code: w.code.as_str().to_string(),
        message: w.message,
        seq: w.seq,
    }
}

/// The connection is over (client gone or server stopping).
pub(super) struct Closed;

impl Sender {
    pub(super) fn new(sink: SplitSink<WebSocket, Message>, session: Arc<Session>) -> Self {
        Self {
            sink,
            session,
            warnings_seen: 0,
            unflushed: false,
        }
    }

    /// The first message: who this client is and the session as it stands.
    /// Returns whether it announced the program exited.
    pub(super) async fn hello(
        &mut self,
        client: ClientId,
        who: &Principal,
    ) -> Result<bool, Closed> {
        let s = self.session.clone();
        let (cols, rows) = s.size();
        let info = s.info();
        let hello = Hello {
            session_id: s.id,
            client_id: client,
            role: who.role,
            principal: who.name.clone(),
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
            modes: s.modes(),
            exit: info.exit.clone(),
            agent: s.agent(),
            unsent: s.unsent(),
            held: s.held(),
        };
        self.text(&ServerMessage::Hello(hello)).await?;
        Ok(info.status == SessionStatus::Exited)
    }

    /// What went wrong before this client came.
    pub(super) async fn earlier_warnings(&mut self) -> Result<(), Closed> {
        for w in self.session.warnings_after(0) {
            self.warnings_seen = w.id;
            self.text(&warning_message(w)).await?;
        }
        Ok(())
    }

    pub(super) async fn text(&mut self, msg: &ServerMessage) -> Result<(), Closed> {
        let json = msg.to_json();
        let m = &self.session.observe.metrics;
        m.sent_json.inc_by(json.len() as u64);
        if let ServerMessage::Error { code, .. } = msg {
            m.ws_error(code.as_str());
        }
        self.feed(Message::Text(Utf8Bytes::from(json))).await
    }

    /// Queues a message; [`flush`](Self::flush) sends it.
    pub(super) async fn feed(&mut self, msg: Message) -> Result<(), Closed> {
        self.unflushed = true;
        self.sink.feed(msg).await.map_err(|_| Closed)
    }

    /// Sends what the receive half handed over; a close ends the connection.
    pub(super) async fn outgoing(&mut self, out: Outgoing) -> Result<(), Closed> {
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

    /// Sends our close frame; the connection is over either way.
    pub(super) async fn close(&mut self, code: u16, reason: &'static str) -> Closed {
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        };
        let _ = self.sink.send(Message::Close(Some(frame))).await;
        Closed
    }

    /// Sends events, counted.
    pub(super) async fn relay(&mut self, events: &[LogEvent]) -> Result<(), Closed> {
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

    /// Flushes whatever the socket has queued, fed or not (the answer to
    /// a client's close among it).
    pub(super) async fn flush_queued(&mut self) -> Result<(), Closed> {
        self.unflushed = false;
        self.sink.flush().await.map_err(|_| Closed)
    }

    pub(super) async fn flush(&mut self) -> Result<(), Closed> {
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
    pub(super) async fn resync(&mut self, reason: ResyncReason) -> Result<u64, Closed> {
        let output = &self.session.terminal.output;
        let _ = tokio::time::timeout(SETTLE_FOR_SNAPSHOT, output.settle()).await;
        let snap = output.snapshot();
        let m = &self.session.observe.metrics;
        // A resize's redraw is neither an attach nor a client falling behind.
        match reason {
            ResyncReason::Attach => {
                m.resync_attach.inc();
            }
            ResyncReason::Lagged => {
                m.resync_lagged.inc();
            }
            ResyncReason::Resize => {}
        }
        m.sent_terminal.inc_by(snap.bytes.len() as u64);
        self.text(&ServerMessage::Resync {
            cols: snap.cols,
            rows: snap.rows,
            reason,
        })
        .await?;
        self.feed(Message::Binary(snap.bytes.clone())).await?;
        // A resize after the settle is announced by control news, which
        // brings a resync of its own.
        Ok(snap.offset)
    }

    /// The message for a piece of control news; `None` for a warning this
    /// client has had already (replayed when it attached).
    pub(super) fn control_message(&mut self, c: Control) -> Option<ServerMessage> {
        Some(match c {
            Control::Approval(a) => ServerMessage::Approval(a),
            Control::Modes(m) => ServerMessage::Modes(m),
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
    pub(super) async fn catch_up_control(&mut self) -> Result<(), Closed> {
        for a in self.session.approvals() {
            self.text(&ServerMessage::Approval(a)).await?;
        }
        for w in self.session.warnings_after(self.warnings_seen) {
            self.warnings_seen = w.id;
            self.text(&warning_message(w)).await?;
        }
        if let Some(modes) = self.session.modes() {
            self.text(&ServerMessage::Modes(modes)).await?;
        }
        let clients = self.session.connected();
        self.text(&ServerMessage::Clients { clients }).await?;
        let (prompts, held) = (self.session.unsent(), self.session.held());
        self.text(&ServerMessage::Unsent { prompts, held }).await?;
        let (cols, rows) = self.session.size();
        self.text(&ServerMessage::Resize { cols, rows }).await
    }
}
