//! The Unix socket a TUI agent's hooks reach their session through: each
//! hook runs `duet hook --socket <session>/hook.sock <Event>` (`hook.rs`),
//! which sends one line `{"event", "payload"}` and prints the `stdout` of
//! the one line it gets back. What the hook channels of Claude Code
//! (`claude/`) and Gemini CLI (`gemini/`) share: binding the socket, the
//! serve loop (each connection read on its own, calls handled in order),
//! the verbatim log of every payload (`hooks.jsonl`).

use std::future::Future;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinSet;
use tracing::{debug, warn, Instrument};

use crate::sync::lock;

/// Largest hook message taken (a payload carries a tool's input or output).
const MAX_HOOK_MESSAGE: u64 = 16 << 20;
/// How long a hook may take to send its payload.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Hook connections read at once; more wait to be accepted. An agent runs
/// one hook at a time, so more than a few at once are strays: the bound
/// keeps what they can hold (a task and up to [`MAX_HOOK_MESSAGE`] each).
const MAX_READING: usize = 16;

/// Listens on `socket` (a stale one is replaced).
pub(crate) fn bind(socket: &Path) -> Result<UnixListener> {
    // sockaddr_un holds 108 bytes; say so rather than fail obscurely.
    if socket.as_os_str().len() >= 100 {
        bail!(
            "the hook socket path {} is too long for a Unix socket; use a shorter --state-dir",
            socket.display()
        );
    }
    let _ = std::fs::remove_file(socket);
    UnixListener::bind(socket).with_context(|| format!("listening on {}", socket.display()))
}

/// The shell command a hook runs: this `duet` handing `event` to `socket`.
pub(crate) fn command(duet: &Path, socket: &Path, event: &str) -> String {
    format!(
        "{} hook --socket {} {event}",
        shell_quote(&duet.to_string_lossy()),
        shell_quote(&socket.to_string_lossy())
    )
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Serves hook calls until the task is dropped. Each connection's message
/// is read on a task of its own, so one that sends nothing, or sends
/// slowly, holds up no other (one idle connection used to stall every hook
/// of its session for [`READ_TIMEOUT`]). Complete calls are kept in `raw`
/// and handed to `handle` here, one at a time, in the order they arrive:
/// the agents run hooks one at a time and wait for each (and Gemini's
/// AfterModel chunks must stay in order).
pub(crate) async fn serve<F, Fut>(
    listener: UnixListener,
    raw: &Mutex<Option<std::fs::File>>,
    mut handle: F,
) where
    F: FnMut(Call) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    // Dropped with this task: the reads end with the channel.
    let mut reading = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept(), if reading.len() < MAX_READING => match accepted {
                Ok((stream, _)) => {
                    reading.spawn(read(stream).in_current_span());
                }
                Err(e) => {
                    // Say, out of descriptors: try again a moment later.
                    warn!(?e, "accepting a hook connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(read) = reading.join_next() => {
                let handled = match read {
                    Ok(Ok(call)) => {
                        keep(raw, &call);
                        handle(call).await
                    }
                    Ok(Err(e)) => Err(e),
                    Err(e) => Err(e.into()),
                };
                if let Err(e) = handled {
                    debug!(?e, "a hook connection failed");
                }
            }
        }
    }
}

/// Opens (owner-only, appending) the file every payload is kept in.
pub(crate) fn raw_log(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))
}

/// One hook call, its payload read.
pub(crate) struct Call {
    pub(crate) event: String,
    pub(crate) payload: Value,
    /// Where the answer goes (the hook waits for it).
    pub(crate) stream: UnixStream,
}

/// Reads one hook's message, bounded in size and time.
async fn read(stream: UnixStream) -> Result<Call> {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    let n = tokio::time::timeout(
        READ_TIMEOUT,
        (&mut reader)
            .take(MAX_HOOK_MESSAGE)
            .read_until(b'\n', &mut line),
    )
    .await
    .context("the hook sent nothing")??;
    if n == 0 || line.last() != Some(&b'\n') {
        bail!("the hook's message was cut off or too long");
    }
    let msg: Value = serde_json::from_slice(&line).context("the hook's message is not JSON")?;
    Ok(Call {
        event: msg["event"].as_str().unwrap_or_default().to_string(),
        payload: msg["payload"].clone(),
        stream: reader.into_inner(),
    })
}

/// Keeps `call`'s payload in `raw`, if that is still open.
fn keep(raw: &Mutex<Option<std::fs::File>>, call: &Call) {
    if let Some(raw) = lock(raw).as_mut() {
        let mut entry = json!({"hook": call.event, "payload": call.payload}).to_string();
        entry.push('\n');
        let _ = raw.write_all(entry.as_bytes());
    }
}

/// Answers a hook: `stdout` is what it prints (empty: nothing).
pub(crate) async fn answer(stream: &mut UnixStream, stdout: &str) -> std::io::Result<()> {
    let mut reply = json!({ "stdout": stdout }).to_string();
    reply.push('\n');
    stream.write_all(reply.as_bytes()).await
}
