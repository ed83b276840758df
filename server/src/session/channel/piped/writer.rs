//! The agent's stdin: one task per agent writes the lines queued for it,
//! in order, so a prompt and a decision never interleave; the queue is
//! bounded (a full one refuses: the agent stopped reading).

use std::sync::Arc;

use duet_protocol::build;
use duet_protocol::sidecar::SidecarEvent;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tracing::debug;

use super::Agent;
use crate::session::channel::conversation::Sink;
use crate::session::channel::ChannelError;
use crate::session::WarningCode;

/// Lines queued for the agent's stdin.
pub(crate) const OUT_QUEUE: usize = 64;

/// What goes to the agent's stdin, in order.
pub(crate) enum Out {
    /// A prompt: recorded as a `user` event, then written in the agent's
    /// own form.
    Prompt(String),
    /// A decision: written, then mirrored as the `control_response` event
    /// the approvals are confirmed by (the agent does not echo it).
    Decision {
        line: String,
        request_id: String,
        allowed: bool,
    },
    /// Any other line.
    Line(String),
}

/// Queues `out` for the writer, refusing at once when it cannot take it.
pub(crate) fn send(queue: &mpsc::Sender<Out>, out: Out) -> Result<(), ChannelError> {
    queue.try_send(out).map_err(|e| match e {
        mpsc::error::TrySendError::Closed(_) => ChannelError::Closed,
        mpsc::error::TrySendError::Full(_) => {
            ChannelError::Refused("the agent is not reading its input".into())
        }
    })
}

/// What the conversation records once a decision went to the agent: the
/// stream-json `control_response`, which every channel writes.
pub(crate) fn decision_record(request_id: String, allowed: bool) -> SidecarEvent {
    build::control_allowed(&request_id, allowed)
}

/// Writes `line` and a newline to the agent's stdin. False, after one
/// `agent_input_closed` warning, once the agent no longer reads it.
pub(crate) async fn write_line(stdin: &mut ChildStdin, line: String, conversation: &Sink) -> bool {
    let mut bytes = line.into_bytes();
    bytes.push(b'\n');
    if let Err(e) = stdin.write_all(&bytes).await {
        debug!(?e, "writing to the agent's stdin");
        conversation.warn(
            WarningCode::AgentInputClosed,
            format!("the agent no longer reads its input: {e}"),
            None,
        );
        return false;
    }
    true
}

/// Writes queued lines to the agent's stdin, in order, until the queue
/// closes or the agent stops reading. `prompt` turns a prompt into the
/// agent's line (recording it first), or drops it (`None`).
pub(crate) async fn write<F>(
    mut stdin: ChildStdin,
    mut rx: mpsc::Receiver<Out>,
    agent: Arc<Agent>,
    mut prompt: F,
) where
    F: FnMut(&str) -> Option<String> + Send,
{
    while let Some(out) = rx.recv().await {
        let (line, after) = match out {
            Out::Prompt(text) => match prompt(&text) {
                Some(line) => (line, None),
                None => continue,
            },
            Out::Decision {
                line,
                request_id,
                allowed,
            } => (line, Some(decision_record(request_id, allowed))),
            Out::Line(line) => (line, None),
        };
        if !write_line(&mut stdin, line, &agent.conversation).await {
            return;
        }
        if let Some(event) = after {
            agent.conversation.emit(&event);
        }
    }
}
