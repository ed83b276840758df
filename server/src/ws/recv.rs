//! The receive half of a client connection: parses each client message,
//! checks it, and turns it into a session call. Answers go to the send
//! half, which owns writing to the socket.

use std::sync::Arc;

use axum::extract::ws::{close_code, CloseFrame, Message, Utf8Bytes, WebSocket};
use duet_protocol::rest::Role;
use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use futures_util::stream::SplitStream;
use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};
use tracing::debug;

use super::Outgoing;
use crate::auth::Action;
use crate::observe::Actor;
use crate::session::Session;
use crate::session::{Accepted, Choice};

/// How often a client without the driver role is told that its keystrokes
/// are dropped: once, then at most once per this long, however many
/// frames it sends (a held key must not become a flood of errors).
const KEYS_REFUSED_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// The `forbidden` error for `action`, or `None` if `role` may do it.
fn refused(role: Role, action: Action, id: Option<String>) -> Option<ServerMessage> {
    (!action.allowed(role)).then(|| {
        ServerMessage::error(
            ErrorCode::Forbidden,
            format!(
                "this needs {}; this connection is {}",
                action.roles(),
                role.as_str()
            ),
            id,
        )
    })
}

/// What the receive half works with.
pub(super) struct Inbound {
    pub(super) session: Arc<Session>,
    /// What this connection may do.
    pub(super) role: Role,
    /// Answers and closes, for the send half.
    pub(super) replies: mpsc::Sender<Outgoing>,
    /// The client's `pause`/`resume`, for the send half.
    pub(super) pause: watch::Sender<bool>,
    /// The largest message taken (named in the close that refuses one).
    pub(super) max_message: usize,
    /// Who this client is, as the audit trail names it.
    pub(super) who: Actor,
}

/// Turns client messages into session calls; answers go to the send half.
pub(super) async fn receive(mut stream: SplitStream<WebSocket>, inbound: Inbound) {
    let Inbound {
        session,
        role,
        replies,
        pause,
        max_message,
        who,
    } = inbound;
    let keys_in = session.observe.metrics.keys_in.clone();
    let mut keys_refused_at: Option<tokio::time::Instant> = None;
    while let Some(msg) = stream.next().await {
        let reply = match msg {
            Ok(Message::Binary(_)) if !Action::Drive.allowed(role) => {
                let now = tokio::time::Instant::now();
                if keys_refused_at.is_some_and(|t| now.duration_since(t) < KEYS_REFUSED_EVERY) {
                    None
                } else {
                    keys_refused_at = Some(now);
                    // As often as the client is told: once per 10 s.
                    session.observe.forbidden("keys", Action::Drive, &who);
                    refused(role, Action::Drive, None).map(|e| match e {
                        ServerMessage::Error { code, message, id } => ServerMessage::Error {
                            code,
                            message: format!("keystrokes ignored: {message}"),
                            id,
                        },
                        other => other,
                    })
                }
            }
            Ok(Message::Binary(bytes)) => {
                // Before the write: the program may answer an approval
                // with this key, and its decision be recorded, before this
                // task runs again (seen under load).
                session.observe.keys_from(&who);
                match session.write_keys(counted(&keys_in, bytes)).await {
                    Ok(()) => None,
                    Err(e) => Some(ServerMessage::error(e.code(), e.to_string(), None)),
                }
            }
            Ok(Message::Text(text)) => handle_text(&session, role, &text, &pause, &who).await,
            Ok(Message::Close(frame)) => {
                // RFC 6455 5.5.1: answer a close with a close, echoing its
                // code, so the client is not left waiting for its timeout.
                let reply = frame.map(|f| CloseFrame {
                    code: f.code,
                    reason: Utf8Bytes::from_static(""),
                });
                let _ = replies.send(Outgoing::Close(reply)).await;
                return;
            }
            Err(e) => {
                debug!(?e, "client stream ended");
                let _ = replies.send(Outgoing::Close(refusal(e, max_message))).await;
                return;
            }
            Ok(Message::Ping(_) | Message::Pong(_)) => None,
        };
        if let Some(reply) = reply {
            if replies
                .send(Outgoing::Reply(Box::new(reply)))
                .await
                .is_err()
            {
                break;
            }
        }
    }
}

/// The close frame that says why the socket refused what the client sent:
/// 1009 for a message over the limit, 1007 for a text message that is not
/// UTF-8 (RFC 6455 §7.4.1), 1002 for a frame that breaks the protocol.
/// `None` when the socket itself failed: there is no one to tell. (axum's
/// socket checks the UTF-8 before a message gets here; its error carries
/// tungstenite's, which says which it was.)
fn refusal(e: axum::Error, max_message: usize) -> Option<CloseFrame> {
    use tungstenite::error::ProtocolError as P;
    let inner = e.into_inner();
    let (code, reason) = match inner.downcast_ref::<tungstenite::Error>()? {
        tungstenite::Error::Capacity(_) => (
            close_code::SIZE,
            format!("message too big: the limit is {max_message} bytes"),
        ),
        tungstenite::Error::Utf8(_) => (
            close_code::INVALID,
            "a text message that is not UTF-8".to_string(),
        ),
        tungstenite::Error::Protocol(
            p @ (P::NonZeroReservedBits
            | P::UnmaskedFrameFromClient
            | P::FragmentedControlFrame
            | P::ControlFrameTooBig
            | P::UnknownControlFrameType(_)
            | P::UnknownDataFrameType(_)
            | P::UnexpectedContinueFrame
            | P::ExpectedFragment(_)
            | P::InvalidOpcode(_)
            | P::InvalidCloseSequence),
        ) => (close_code::PROTOCOL, format!("protocol error: {p}")),
        _ => return None,
    };
    Some(CloseFrame {
        code,
        reason: Utf8Bytes::from(reason),
    })
}

/// Counts keystroke bytes on their way to the program.
fn counted(
    counter: &prometheus_client::metrics::counter::Counter,
    keys: bytes::Bytes,
) -> bytes::Bytes {
    counter.inc_by(keys.len() as u64);
    keys
}

const CLIENT_TYPES: &[&str] = &[
    "submit", "approve", "discard", "resize", "cancel", "pause", "resume", "ping",
];

/// Parses a client message with errors that say what was wrong.
pub(crate) fn parse(text: &str) -> Result<ClientMessage, Box<ServerMessage>> {
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

/// What a message needs, its id, and the kind of its audit line (under
/// which a refusal is recorded).
fn needs(msg: &ClientMessage) -> (Action, Option<String>, &'static str) {
    match msg {
        ClientMessage::Submit { id, .. } => (Action::Drive, id.clone(), "submit"),
        ClientMessage::Discard { id, .. } => (Action::Drive, id.clone(), "discard"),
        ClientMessage::Resize { id, .. } => (Action::Drive, id.clone(), "resize"),
        ClientMessage::Cancel { id } => (Action::Drive, id.clone(), "cancel"),
        ClientMessage::Approve { id, .. } => (Action::Approve, id.clone(), "approval"),
        ClientMessage::Pause { id } => (Action::Read, id.clone(), "pause"),
        ClientMessage::Resume { id } => (Action::Read, id.clone(), "resume"),
        ClientMessage::Ping { id } => (Action::Read, id.clone(), "ping"),
    }
}

async fn handle_text(
    session: &Session,
    role: Role,
    text: &str,
    pause: &watch::Sender<bool>,
    who: &Actor,
) -> Option<ServerMessage> {
    let msg = match parse(text) {
        Ok(m) => m,
        Err(reply) => return Some(*reply),
    };
    let (action, id, kind) = needs(&msg);
    if let Some(err) = refused(role, action, id) {
        session.observe.forbidden(kind, action, who);
        return Some(err);
    }
    let ack = |id: Option<String>, queued: bool| id.map(|id| ServerMessage::Ack { id, queued });
    match msg {
        ClientMessage::Submit { text, id } => match session.submit_as(text, who) {
            Ok(d) => ack(id, d == Accepted::Queued),
            Err(e) => Some(ServerMessage::error(e.code(), e.to_string(), id)),
        },
        ClientMessage::Discard { prompt, id } => {
            session.discard_as(prompt, who);
            ack(id, false)
        }
        ClientMessage::Approve {
            request_id,
            allowed,
            option,
            id,
        } => {
            let choice = match Choice::from_fields(option, allowed) {
                Ok(c) => c,
                Err(why) => {
                    return Some(ServerMessage::error(
                        ErrorCode::BadMessage,
                        format!("approve: {why}"),
                        id,
                    ))
                }
            };
            match session.approve_as(&request_id, &choice, who) {
                Ok(_) => ack(id, false),
                Err(e) => Some(ServerMessage::error(e.code(), e.to_string(), id)),
            }
        }
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
