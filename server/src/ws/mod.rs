//! One WebSocket client of one session.
//!
//! After the upgrade the socket is split into two halves that run in the
//! connection's one task: the receive half (`recv.rs`) turns client messages
//! into session calls, the send half (`drain.rs`, writing through
//! `send.rs`) pushes everything to the client. The send half pulls
//! terminal bytes and events with its own cursors, so a slow or stalled
//! client only falls behind itself: its terminal catches up with a fresh
//! screen snapshot, its events are replayed from the log (and the events
//! file), and nothing queues up in memory on its behalf.

mod device;
mod drain;
pub(crate) mod recv;
mod send;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::ws::{CloseFrame, WebSocket};
use axum::extract::{Extension, Path, Query, State, WebSocketUpgrade};
use axum::http::header::USER_AGENT;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use duet_protocol::ids::{ClientId, SessionId};
use duet_protocol::rest::ConnectedClient;
use duet_protocol::ws::{ErrorCode, ServerMessage};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::sync::{mpsc, watch};
use tracing::{info, Instrument};

use crate::auth::{Action, Principal};
use crate::error::AppError;
use crate::observe::metrics::ClientCount;
use crate::observe::Actor;
use crate::session::{ClientGuard, Session};
use crate::state::AppState;

/// How long the send half gets to finish once the client stopped sending.
const CLOSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// What the receive half hands the send half.
enum Outgoing {
    /// An answer to a client message.
    Reply(Box<ServerMessage>),
    /// Close the connection with this frame (answering the client's close,
    /// or refusing an oversized message).
    Close(Option<CloseFrame>),
}

/// `?from=SEQ&device=NAME`.
#[derive(Deserialize)]
pub(crate) struct WsQuery {
    #[serde(default)]
    from: Option<u64>,
    /// What the client calls its device, shown to the session's other
    /// clients (see `device.rs`).
    #[serde(default)]
    device: Option<String>,
}

/// `GET /api/sessions/{id}/ws?from=SEQ&device=NAME`.
pub(crate) async fn upgrade(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Query(q): Query<WsQuery>,
    headers: HeaderMap,
    actor: Actor,
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
    if !who.sees(id) {
        return Err(AppError::no_session());
    }
    let session = state.registry.get(id).ok_or_else(AppError::no_session)?;
    who.require(Action::Read)?;
    let client = ClientId(NEXT_CLIENT.fetch_add(1, Ordering::Relaxed));
    // Subscribed before the share can be revoked after this check.
    let revoked = who.share.as_ref().map(|s| state.auth.shares.revoked(&s.id));
    let guard = session.attach(ConnectedClient {
        client_id: client,
        name: who.name.clone(),
        role: who.role,
        device: q.device.as_deref().and_then(device::device_name),
    })?;
    let agent = headers
        .get(USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let span = tracing::info_span!(parent: session.span(), "client", id = %client, %agent, principal = %who.name, role = who.role.as_str());
    let stop = state.stop.subscribe();
    let from = q.from.unwrap_or(0);
    let max_message = state.max_ws_message;
    let actor = actor.with_client(client);
    Ok(ws
        // tungstenite's default 128 KiB read buffer is zero-filled before
        // reads, so it stays resident: 142 KiB per client (measured, see
        // docs/benchmarks.md). Keys and JSON messages are small.
        .read_buffer_size(8 << 10)
        // Frames are gathered up to this before a write; the buffer keeps
        // the capacity of its largest burst for the connection's life (at
        // the default 128 KiB: ~56 KB a connection in the soak, growing with
        // the backlog an attach replays; docs/soak.md).
        .write_buffer_size(16 << 10)
        .max_message_size(state.max_ws_message)
        .max_frame_size(state.max_ws_message)
        .on_upgrade(move |socket| {
            Connection {
                session,
                guard,
                client,
                who,
                actor,
                revoked,
                from,
                stop,
                max_message,
            }
            .serve(socket)
            .instrument(span)
        })
        .into_response())
}

/// One attached client, before it runs.
struct Connection {
    session: Arc<Session>,
    guard: ClientGuard,
    client: ClientId,
    who: Principal,
    /// The same, as the audit trail names it.
    actor: Actor,
    /// For a share link: turns true when it is revoked.
    revoked: Option<watch::Receiver<bool>>,
    from: u64,
    stop: watch::Receiver<bool>,
    max_message: usize,
}

/// Resolves when a share link's socket must close: revoked or expired.
pub(crate) async fn share_ended(
    who: &Principal,
    revoked: Option<watch::Receiver<bool>>,
) -> &'static str {
    let (Some(scope), Some(mut revoked)) = (&who.share, revoked) else {
        return std::future::pending().await;
    };
    let left = scope.expires_at.saturating_sub(crate::clock::now_ms());
    tokio::select! {
        _ = revoked.wait_for(|r| *r) => "the share link was revoked",
        () = tokio::time::sleep(std::time::Duration::from_millis(left)) => "the share link expired",
    }
}

impl Connection {
    async fn serve(self, socket: WebSocket) {
        let Connection {
            session,
            guard,
            client,
            who,
            actor,
            revoked,
            from,
            stop,
            max_message,
        } = self;
        info!(from, "attached");
        let _counted = ClientCount::new(&session.observe.metrics);
        let (sink, stream) = socket.split();
        let (reply_tx, reply_rx) = mpsc::channel::<Outgoing>(32);
        let (pause_tx, pause_rx) = watch::channel(false);
        // Subscribe before reading the state announced in `hello`, so no change
        // falls between the two.
        let control = session.subscribe();
        // Both halves run in this one task, not a task each: a key then goes
        // from `recvfrom` to the PTY, and its echo from the ring to
        // `sendto`, on the thread that polled the socket. Two tasks made two
        // runnable at once on every key (tokio-tungstenite wakes the sink's
        // waker too when the socket turns readable), and tokio woke the
        // other worker to steal one: a futex call and a thread hop per key
        // (profiled, docs/benchmarks.md). Each half still waits on its own:
        // keys are read while a slow client's flush is pending, and output
        // goes on while a key waits for room in the PTY.
        let send = drain::run(
            send::Sender::new(sink, session.clone()),
            drain::Inputs {
                control,
                replies: reply_rx,
                paused: pause_rx,
                stop,
                client,
                who: who.clone(),
                from,
            },
        );
        let closer = reply_tx.clone();
        let recv = recv::receive(
            stream,
            recv::Inbound {
                session,
                role: who.role,
                replies: reply_tx,
                pause: pause_tx,
                max_message,
                who: actor,
            },
        );
        let ended = share_ended(&who, revoked);
        tokio::pin!(send, recv, ended);
        tokio::select! {
            // Keys first: they are what a user waits on.
            biased;
            () = &mut recv => {
                // The send half answers a close (or sees the replies end)
                // and stops; a dead socket must not keep it for long.
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, &mut send).await;
            }
            () = &mut send => {}
            reason = &mut ended => {
                info!(reason, "closing: share ended");
                let close = Outgoing::Close(Some(CloseFrame {
                    code: axum::extract::ws::close_code::POLICY,
                    reason: reason.into(),
                }));
                // The send half must keep running while the close waits for
                // room in its queue.
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, async {
                    let _ = tokio::join!(closer.send(close), &mut send);
                })
                .await;
            }
        }
        drop(guard);
        info!("detached");
    }
}
