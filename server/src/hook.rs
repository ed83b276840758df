//! `duet hook`: what Claude Code runs for each hook of a duet session. It
//! reads the hook's payload from stdin, hands it to its session over the
//! session's Unix socket, and prints the session's answer (the hook's
//! output). It must never get in Claude's way: when duet cannot be
//! reached it prints nothing and exits 0, as if there were no hook.
//!
//! Synchronous and small on purpose: Claude waits for every hook, so this
//! starts, hands over and exits in milliseconds — except for
//! PermissionRequest, which waits for a browser's decision. Claude kills
//! that one when the user answers in the terminal first; the session sees
//! its connection close.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Largest payload handed over (a payload carries a tool's input/output).
const MAX_PAYLOAD: u64 = 16 << 20;

/// `duet hook` arguments.
#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    /// The session's hook socket.
    #[arg(long)]
    pub socket: PathBuf,
    /// The hook event (SessionStart, PermissionRequest, ...).
    pub event: String,
}

/// Runs one hook call.
pub fn run(args: &HookArgs) -> ExitCode {
    match hand_over(args) {
        Ok(stdout) => {
            if !stdout.is_empty() {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(stdout.as_bytes());
                let _ = out.write_all(b"\n");
            }
        }
        Err(e) => eprintln!("duet hook {}: {e} (carrying on without duet)", args.event),
    }
    ExitCode::SUCCESS
}

fn hand_over(args: &HookArgs) -> std::io::Result<String> {
    let mut payload = String::new();
    std::io::stdin()
        .take(MAX_PAYLOAD)
        .read_to_string(&mut payload)?;
    let payload: serde_json::Value =
        serde_json::from_str(payload.trim()).unwrap_or(serde_json::Value::String(payload));
    let mut stream = UnixStream::connect(&args.socket)?;
    let mut line = serde_json::json!({"event": args.event, "payload": payload}).to_string();
    line.push('\n');
    stream.write_all(line.as_bytes())?;
    let mut reply = String::new();
    BufReader::new(stream).read_line(&mut reply)?;
    let reply: serde_json::Value = serde_json::from_str(reply.trim()).unwrap_or_default();
    Ok(reply["stdout"].as_str().unwrap_or_default().to_string())
}
