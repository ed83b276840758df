//! The agent's pipes: the `session/prompt` line for the writer
//! (`piped/writer.rs`), and a reader task that reads its messages until EOF.

use std::io::Write;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::BufReader;
use tokio::process::ChildStdout;
use tracing::warn;

use super::jsonrpc::request;
use super::{Call, Inner};
use crate::session::channel::piped::first_line;
use crate::session::channel::piped::lines::{next_line, Line};
use crate::session::WarningCode;
use crate::sync::lock;

/// The `session/prompt` line of a prompt (recorded first), or nothing,
/// with a warning, when the agent has no session to take it.
pub(super) fn prompt(inner: &Inner, text: &str) -> Option<String> {
    let sid = {
        let mut st = lock(&inner.state);
        // What the agent sends from now on is news, not a replay.
        st.replaying = false;
        st.session_id.clone()
    };
    let Some(sid) = sid else {
        inner.shared.conversation.warn(
            WarningCode::SubmitFailed,
            "the agent has no session; the prompt was dropped".into(),
            None,
        );
        return None;
    };
    inner.shared.prompt(text);
    let id = inner.call(Call::Prompt);
    let params = json!({"sessionId": sid, "prompt": [{"type": "text", "text": text}]});
    Some(request(id, "session/prompt", params))
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
                    WarningCode::BadEvent,
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
