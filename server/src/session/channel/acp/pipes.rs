//! The agent's pipes: a writer task that sends queued lines to its stdin
//! in order, and a reader task that reads its messages until EOF.

use std::io::Write;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::BufReader;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tracing::warn;

use super::super::stream_json::first_line;
use super::super::stream_json::lines::{next_line, Line};
use super::super::stream_json::pipes::{decision_record, write_line};
use super::jsonrpc::request;
use super::{Call, Inner, Out};
use crate::session::lock;

/// Writes queued lines to the agent's stdin, in order.
pub(super) async fn write(mut stdin: ChildStdin, mut rx: mpsc::Receiver<Out>, inner: Arc<Inner>) {
    while let Some(out) = rx.recv().await {
        let (line, after) = match out {
            Out::Prompt(text) => {
                let Some(sid) = lock(&inner.state).session_id.clone() else {
                    inner.shared.conversation.warn(
                        "submit_failed",
                        "the agent has no session; the prompt was dropped".into(),
                        None,
                    );
                    continue;
                };
                inner.shared.prompt(&text);
                let id = inner.call(Call::Prompt);
                let params = json!({"sessionId": sid, "prompt": [{"type": "text", "text": text}]});
                (request(id, "session/prompt", params), None)
            }
            Out::Decision {
                line,
                request_id,
                allowed,
            } => (line, Some(decision_record(request_id, allowed))),
            Out::Line(line) => (line, None),
        };
        if !write_line(&mut stdin, line, &inner.shared.conversation).await {
            return;
        }
        if let Some(event) = after {
            inner.shared.conversation.emit(&event);
        }
    }
}

/// Reads the agent's messages until EOF.
pub(super) async fn read(
    stdout: ChildStdout,
    inner: Arc<Inner>,
    max_line: usize,
    mut raw: Option<std::fs::File>,
) {
    let mut r = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::new();
    loop {
        let line = match next_line(&mut r, &mut buf, max_line).await {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(other)) => {
                inner.shared.skipped(&other);
                continue;
            }
            Ok(None) => return,
            Err(e) => {
                warn!(?e, "reading the agent's stdout");
                return;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(f) = raw.as_mut() {
            let _ = writeln!(f, "{line}");
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(msg) if msg.is_object() => inner.on_message(msg).await,
            _ => {
                inner.shared.conversation.warn(
                    "bad_event",
                    format!(
                        "the agent wrote a line that is not a JSON-RPC message: {}",
                        first_line(&line, 120)
                    ),
                    None,
                );
                inner.shared.show(&line);
            }
        }
    }
}
