//! One WebSocket client of one session.
//!
//! After the upgrade the socket is split: a receive task turns client
//! messages into session calls, a send task pushes everything to the client.
//! The send task pulls terminal bytes and events with its own cursors, so a
//! slow or stalled client only falls behind itself: its terminal catches up
//! with a fresh screen snapshot, its events are replayed from the log (and
//! the events file), and nothing queues up in memory on its behalf.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use axum::extract::{Path, Query, State, WebSocketUpgrade};
use axum::http::header::USER_AGENT;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use duet_protocol::ids::{ClientId, SessionId};
use duet_protocol::rest::SessionStatus;
use duet_protocol::ws::{ClientMessage, ErrorCode, Hello, ServerMessage, CAPABILITIES};
use duet_protocol::PROTOCOL_VERSION;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::sync::{broadcast, mpsc, watch};
use tracing::{debug, info, Instrument};

use crate::error::AppError;
use crate::server::AppState;
use crate::session::output::ReadResult;
use crate::session::{ClientGuard, Control, Session};

/// Largest terminal frame sent at once.
const MAX_TERMINAL_FRAME: usize = 256 << 10;
/// Events sent per batch before output gets a turn.
const EVENT_BATCH: usize = 256;
/// Protocol-level keepalive.
const PING_EVERY: Duration = Duration::from_secs(30);

static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// `?from=SEQ`.
#[derive(Deserialize)]
pub struct WsQuery {
    #[serde(default)]
    from: Option<u64>,
}

/// `GET /api/sessions/{id}/ws?from=SEQ`.
pub async fn upgrade(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<WsQuery>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Result<Response, AppError> {
    // The auth middleware checked credentials and Origin already; this is
    // the one route where a cross-site request would matter most, so check
    // Origin again rather than rely on routing staying as it is.
    if !state.auth.origin_allowed(&headers) {
        return Err(AppError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            "WebSocket connections from this Origin are not allowed (see --allow-origin)",
        ));
    }
    let id: SessionId = id.parse().map_err(|_| AppError::no_session())?;
    let session = state.registry.get(id).ok_or_else(AppError::no_session)?;
    let guard = session.attach()?;
    let client = ClientId(NEXT_CLIENT.fetch_add(1, Ordering::Relaxed));
    let agent = headers
        .get(USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let span = tracing::info_span!(parent: session.span(), "client", id = %client, %agent);
    let stop = state.stop.subscribe();
    let from = q.from.unwrap_or(0);
    Ok(ws
        .max_message_size(state.max_ws_message)
        .max_frame_size(state.max_ws_message)
        .on_upgrade(move |socket| {
            serve(socket, session, guard, client, from, stop).instrument(span)
        })
        .into_response())
}

async fn serve(
    socket: WebSocket,
    session: Arc<Session>,
    guard: ClientGuard,
    client: ClientId,
    from: u64,
    stop: watch::Receiver<bool>,
) {
    info!(from, "attached");
    let (sink, stream) = socket.split();
    let (reply_tx, reply_rx) = mpsc::channel(32);
    let (pause_tx, pause_rx) = watch::channel(false);
    // Subscribe before reading the state announced in `hello`, so no change
    // falls between the two.
    let control = session.subscribe();
    let mut send = tokio::spawn(
        Sender {
            sink,
            session: session.clone(),
            control,
            replies: reply_rx,
            paused: pause_rx,
            stop,
        }
        .run(client, from)
        .in_current_span(),
    );
    let mut recv = tokio::spawn(receive(stream, session, reply_tx, pause_tx).in_current_span());
    tokio::select! {
        _ = &mut send => recv.abort(),
        _ = &mut recv => send.abort(),
    }
    drop(guard);
    info!("detached");
}

/// Turns client messages into session calls; answers go to the send task.
async fn receive(
    mut stream: SplitStream<WebSocket>,
    session: Arc<Session>,
    replies: mpsc::Sender<ServerMessage>,
    pause: watch::Sender<bool>,
) {
    while let Some(msg) = stream.next().await {
        let reply = match msg {
            Ok(Message::Binary(bytes)) => match session.write_keys(bytes).await {
                Ok(()) => None,
                Err(e) => Some(ServerMessage::error(e.code(), e.to_string(), None)),
            },
            Ok(Message::Text(text)) => handle_text(&session, &text, &pause).await,
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(Message::Ping(_) | Message::Pong(_)) => None,
        };
        if let Some(reply) = reply {
            if replies.send(reply).await.is_err() {
                break;
            }
        }
    }
}

const CLIENT_TYPES: &[&str] = &[
    "submit", "approve", "resize", "cancel", "pause", "resume", "ping",
];

/// Parses a client message with errors that say what was wrong.
fn parse(text: &str) -> Result<ClientMessage, Box<ServerMessage>> {
    let err = |code, message: String, id| Box::new(ServerMessage::error(code, message, id));
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| err(ErrorCode::BadMessage, format!("not JSON: {e}"), None))?;
    let Some(obj) = value.as_object() else {
        return Err(err(
            ErrorCode::BadMessage,
            "expected a JSON object with a \"type\" field".into(),
            None,
        ));
    };
    let id = obj.get("id").and_then(|v| v.as_str()).map(str::to_string);
    let Some(kind) = obj.get("type").and_then(|v| v.as_str()).map(str::to_string) else {
        return Err(err(
            ErrorCode::BadMessage,
            "missing string field \"type\"".into(),
            id,
        ));
    };
    if !CLIENT_TYPES.contains(&kind.as_str()) {
        return Err(err(
            ErrorCode::UnknownType,
            format!(
                "unknown message type {kind:?}; expected one of {}",
                CLIENT_TYPES.join(", ")
            ),
            id,
        ));
    }
    serde_json::from_value(value).map_err(|e| {
        err(
            ErrorCode::BadMessage,
            format!("bad {kind:?} message: {e}"),
            id,
        )
    })
}

async fn handle_text(
    session: &Session,
    text: &str,
    pause: &watch::Sender<bool>,
) -> Option<ServerMessage> {
    let msg = match parse(text) {
        Ok(m) => m,
        Err(reply) => return Some(*reply),
    };
    let ack = |id: Option<String>, queued: bool| id.map(|id| ServerMessage::Ack { id, queued });
    match msg {
        ClientMessage::Submit { text, id } => match session.submit(text) {
            Ok(d) => ack(id, d == crate::session::input::Delivery::Queued),
            Err(e) => Some(ServerMessage::error(e.code(), e.to_string(), id)),
        },
        ClientMessage::Approve {
            request_id,
            allowed,
            id,
        } => match session.approve(&request_id, allowed) {
            Ok(_) => ack(id, false),
            Err(e) => Some(ServerMessage::error(e.code(), e.to_string(), id)),
        },
        ClientMessage::Resize { cols, rows, id } => {
            if cols == 0 || rows == 0 {
                return Some(ServerMessage::error(
                    ErrorCode::BadMessage,
                    "cols and rows must be positive",
                    id,
                ));
            }
            session.resize(cols, rows);
            ack(id, false)
        }
        ClientMessage::Cancel { id } => {
            // Escape is how the TUIs duet hosts cancel a turn (the RFC's
            // control/cancel "simulates ESC").
            match session.cancel().await {
                Ok(()) => ack(id, false),
                Err(e) => Some(ServerMessage::error(e.code(), e.to_string(), id)),
            }
        }
        ClientMessage::Pause { id } => {
            pause.send_replace(true);
            ack(id, false)
        }
        ClientMessage::Resume { id } => {
            pause.send_replace(false);
            ack(id, false)
        }
        ClientMessage::Ping { id } => Some(ServerMessage::Pong { id }),
    }
}

/// The send half and everything it reads from.
struct Sender {
    sink: SplitSink<WebSocket, Message>,
    session: Arc<Session>,
    control: broadcast::Receiver<Control>,
    replies: mpsc::Receiver<ServerMessage>,
    paused: watch::Receiver<bool>,
    stop: watch::Receiver<bool>,
}

/// The connection is over (client gone or server stopping).
struct Closed;

impl Sender {
    async fn text(&mut self, msg: &ServerMessage) -> Result<(), Closed> {
        self.sink
            .feed(Message::Text(Utf8Bytes::from(msg.to_json())))
            .await
            .map_err(|_| Closed)
    }

    async fn flush(&mut self) -> Result<(), Closed> {
        self.sink.flush().await.map_err(|_| Closed)
    }

    /// Resets the client's terminal to the current screen; returns the
    /// offset to continue from.
    async fn resync(&mut self, reason: &str) -> Result<u64, Closed> {
        let snap = self.session.output.snapshot();
        self.text(&ServerMessage::Resync {
            cols: snap.cols,
            rows: snap.rows,
            reason: reason.to_string(),
        })
        .await?;
        self.sink
            .feed(Message::Binary(snap.bytes.clone()))
            .await
            .map_err(|_| Closed)?;
        // A snapshot taken before the screen caught up with a resize has the
        // old size, and the resize was announced already: repeat it, or the
        // client would stay at the old size.
        let (cols, rows) = self.session.size();
        if (cols, rows) != (snap.cols, snap.rows) {
            self.text(&ServerMessage::Resize { cols, rows }).await?;
        }
        Ok(snap.offset)
    }

    fn control_message(&self, c: Control) -> ServerMessage {
        match c {
            Control::Approval(a) => ServerMessage::Approval(a),
            Control::Resize { cols, rows } => ServerMessage::Resize { cols, rows },
            Control::Warning { code, message, seq } => ServerMessage::Warning {
                code: code.to_string(),
                message,
                seq,
            },
            Control::Exit(e) => ServerMessage::Exit(e),
        }
    }

    /// This client missed control news: send the current state instead.
    async fn catch_up_control(&mut self) -> Result<(), Closed> {
        for a in self.session.approvals() {
            self.text(&ServerMessage::Approval(a)).await?;
        }
        let (cols, rows) = self.session.size();
        self.text(&ServerMessage::Resize { cols, rows }).await
    }

    async fn run(mut self, client: ClientId, from: u64) {
        let _ = self.run_inner(client, from).await;
    }

    async fn run_inner(&mut self, client: ClientId, from: u64) -> Result<(), Closed> {
        let s = self.session.clone();
        let (cols, rows) = s.size();
        let info = s.info();
        let hello = Hello {
            session_id: s.id,
            client_id: client,
            protocol_version: PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            capabilities: CAPABILITIES.iter().map(|c| c.to_string()).collect(),
            profile: s.profile.clone(),
            status: info.status,
            cols,
            rows,
            last_seq: info.last_seq,
            approvals: s.approvals(),
            exit: info.exit.clone(),
            agent: s.agent(),
        };
        self.text(&ServerMessage::Hello(hello)).await?;
        let mut term_cursor = self.resync("attach").await?;
        self.flush().await?;
        // Flow control: while this client keeps reading, the program waits
        // for it rather than letting it fall out of the window.
        let flow = s.output.reader(term_cursor);
        let mut flow_paused = false;

        let mut event_cursor = from;
        let mut output_rx = s.output.subscribe();
        let mut events_rx = s.events.subscribe();
        let mut exited_rx = s.exited();
        // An exit is announced only after the output and events before it.
        let mut exit_pending = info.status == SessionStatus::Exited;
        // The exit is learnt from the broadcast and from the exited watch;
        // announce it once.
        let mut exit_sent = false;
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;

        loop {
            let mut progressed = false;
            while let Ok(reply) = self.replies.try_recv() {
                self.text(&reply).await?;
                progressed = true;
            }
            // After the replies: the receiving task sets a pause before it
            // queues its ack, so once the ack is out the pause holds here.
            let paused = *self.paused.borrow_and_update();
            if paused != flow_paused {
                flow.set_paused(paused);
                flow_paused = paused;
            }
            loop {
                match self.control.try_recv() {
                    Ok(Control::Exit(_)) => exit_pending = true,
                    Ok(c) => {
                        let msg = self.control_message(c);
                        self.text(&msg).await?;
                        progressed = true;
                    }
                    Err(broadcast::error::TryRecvError::Lagged(n)) => {
                        debug!(missed = n, "control lagged; sending current state");
                        self.catch_up_control().await?;
                        exit_pending |= s.is_exited();
                        progressed = true;
                    }
                    Err(_) => break,
                }
            }

            let (events, upto) = s.events.read_after_async(event_cursor, EVENT_BATCH).await;
            for e in &events {
                self.sink
                    .feed(Message::Text(e.frame.clone()))
                    .await
                    .map_err(|_| Closed)?;
            }
            progressed |= !events.is_empty();
            event_cursor = upto.max(event_cursor);

            let mut output_drained = true;
            if !paused {
                match s.output.read(term_cursor, MAX_TERMINAL_FRAME) {
                    ReadResult::Data(bytes, next) => {
                        self.sink
                            .feed(Message::Binary(bytes))
                            .await
                            .map_err(|_| Closed)?;
                        term_cursor = next;
                        flow.advance(next);
                        progressed = true;
                        output_drained = false;
                    }
                    ReadResult::Lagged => {
                        debug!("terminal lagged; resyncing from a snapshot");
                        term_cursor = self.resync("lagged").await?;
                        flow.resynced(term_cursor);
                        progressed = true;
                        output_drained = false;
                    }
                    ReadResult::UpToDate => {}
                }
            }
            self.flush().await?;

            // `exit_pending` is only set once the exit is recorded, which
            // happens after the final read of the events file.
            if exit_pending && !exit_sent && output_drained && event_cursor >= s.events.last_seq() {
                exit_pending = false;
                exit_sent = true;
                if let Some(exit) = s.exit_info() {
                    self.text(&ServerMessage::Exit(exit)).await?;
                    self.flush().await?;
                }
            }
            if progressed {
                // Let other clients' tasks run between batches.
                tokio::task::yield_now().await;
                continue;
            }

            tokio::select! {
                biased;
                _ = self.stop.changed() => {
                    // The server ends every program before it stops: let
                    // this client see the last events and the exit first.
                    if s.is_exited() && !exit_sent {
                        for _ in 0..64 {
                            let (events, upto) =
                                s.events.read_after_async(event_cursor, EVENT_BATCH).await;
                            for e in &events {
                                self.sink
                                    .feed(Message::Text(e.frame.clone()))
                                    .await
                                    .map_err(|_| Closed)?;
                            }
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
                reply = self.replies.recv() => match reply {
                    Some(reply) => self.text(&reply).await?,
                    None => return Err(Closed),
                },
                c = self.control.recv() => match c {
                    Ok(Control::Exit(_)) => exit_pending = true,
                    Ok(c) => {
                        let msg = self.control_message(c);
                        self.text(&msg).await?;
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        self.catch_up_control().await?;
                        exit_pending |= s.is_exited();
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
                    self.sink.feed(Message::Ping(Bytes::new())).await.map_err(|_| Closed)?;
                }
            }
        }
    }
}
