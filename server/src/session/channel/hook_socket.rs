//! The Unix socket a TUI agent's hooks reach their session through: each
//! hook runs `duet hook --socket <session>/hook.sock <Event>` (`hook.rs`),
//! which sends one line `{"event", "payload"}` and prints the `stdout` of
//! the one line it gets back. What the hook channels of Claude Code
//! (`claude/`) and Gemini CLI (`gemini/`) share: binding the socket, the
//! verbatim log of every payload (`hooks.jsonl`), reading one call.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use tracing::warn;

use crate::sync::lock;

/// Largest hook message taken (a payload carries a tool's input or output).
const MAX_HOOK_MESSAGE: u64 = 16 << 20;
/// How long a hook may take to send its payload.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

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

/// The next hook connection (a failed accept, say out of descriptors, is
/// logged and tried again a moment later).
pub(crate) async fn accept(listener: &UnixListener) -> UnixStream {
    loop {
        match listener.accept().await {
            Ok((s, _)) => return s,
            Err(e) => {
                warn!(?e, "accepting a hook connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
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

/// Reads one hook's message (bounded in size and time) and keeps it in
/// `raw`, if that is still open.
pub(crate) async fn read(stream: UnixStream, raw: &Mutex<Option<std::fs::File>>) -> Result<Call> {
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
    let event = msg["event"].as_str().unwrap_or_default().to_string();
    let payload = msg["payload"].clone();
    if let Some(raw) = lock(raw).as_mut() {
        let mut entry = json!({"hook": event, "payload": payload}).to_string();
        entry.push('\n');
        let _ = raw.write_all(entry.as_bytes());
    }
    Ok(Call {
        event,
        payload,
        stream: reader.into_inner(),
    })
}

/// Answers a hook: `stdout` is what it prints (empty: nothing).
pub(crate) async fn answer(stream: &mut UnixStream, stdout: &str) -> std::io::Result<()> {
    let mut reply = json!({ "stdout": stdout }).to_string();
    reply.push('\n');
    stream.write_all(reply.as_bytes()).await
}
