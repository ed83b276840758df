//! duet's connection to the session's Codex app server: JSON-RPC 2.0 (as
//! Codex speaks it, without the `"jsonrpc"` member) in WebSocket text
//! frames over the app server's Unix socket. One task writes what is
//! queued (bounded: a full queue refuses), one reads and hands each message
//! on; frames are bounded in size.

use std::path::Path;

use anyhow::{Context, Result};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use tracing::debug;

/// Largest message taken from the app server (a turn's items can carry
/// whole command outputs).
const MAX_MESSAGE: usize = 16 << 20;
/// Messages queued for the app server.
pub(super) const OUT_QUEUE: usize = 64;

/// A request of duet's.
pub(super) fn request(id: u64, method: &str, params: Value) -> String {
    json!({"id": id, "method": method, "params": params}).to_string()
}

/// A notification of duet's.
pub(super) fn notification(method: &str, params: Value) -> String {
    json!({"method": method, "params": params}).to_string()
}

/// duet's answer to a request of the app server's.
pub(super) fn reply(id: &Value, result: Value) -> String {
    json!({"id": id, "result": result}).to_string()
}

/// Connects to the app server listening on `socket`.
pub(super) async fn connect(socket: &Path) -> Result<WebSocketStream<UnixStream>> {
    let stream = UnixStream::connect(socket)
        .await
        .with_context(|| format!("connecting to the Codex app server at {}", socket.display()))?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let (ws, _) =
        tokio_tungstenite::client_async_with_config("ws://localhost/", stream, Some(config))
            .await
            .context("the Codex app server's WebSocket handshake")?;
    Ok(ws)
}

/// Writes what is queued until the queue closes or the socket fails.
pub(super) async fn write(
    mut sink: futures_util::stream::SplitSink<WebSocketStream<UnixStream>, Message>,
    mut queue: mpsc::Receiver<String>,
) {
    while let Some(text) = queue.recv().await {
        if let Err(e) = sink.send(Message::Text(text.into())).await {
            debug!(?e, "writing to the Codex app server");
            return;
        }
    }
}

/// Reads messages until the socket ends, handing each JSON object to
/// `on_message`.
pub(super) async fn read(
    mut stream: futures_util::stream::SplitStream<WebSocketStream<UnixStream>>,
    mut on_message: impl FnMut(Value),
) {
    while let Some(frame) = stream.next().await {
        match frame {
            Ok(Message::Text(text)) => match serde_json::from_str::<Value>(&text) {
                Ok(msg) if msg.is_object() => on_message(msg),
                _ => debug!("the Codex app server sent a frame that is not a JSON object"),
            },
            Ok(Message::Close(_)) => return,
            Ok(_) => {}
            Err(e) => {
                debug!(?e, "reading the Codex app server");
                return;
            }
        }
    }
}
