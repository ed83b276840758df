//! The terminal client: your own terminal as one more client of a duet
//! session, beside the browsers (`duet attach`, `duet run`, `duet resume`,
//! `duet ls`).
//!
//! `find.rs` finds (or starts) the duet, `api.rs` makes its REST calls,
//! `pick.rs` says which session a name means, `attach.rs` runs the
//! session in this terminal (with `tty.rs`, `draw.rs`, `keys.rs` and
//! `size.rs`), `run.rs` starts one first, `ls.rs` lists them. What a
//! client writes to the terminal is its job, so it writes there itself;
//! nothing here is logged.

mod api;
mod args;
mod attach;
mod draw;
mod find;
mod keys;
mod ls;
mod pick;
mod qr;
mod run;
mod size;
mod tty;

use std::io::Write;
use std::process::ExitCode;

use anyhow::{bail, Result};
use duet_protocol::rest::{ExitInfo, SessionInfo};

pub use args::{AttachArgs, ConnectArgs, LsArgs, ResumeArgs, RunArgs, TerminalArgs};
pub use keys::{DetachKey, DEFAULT_DETACH};
pub use run::{resume, run};

use api::Api;
use attach::{Attach, Outcome};
use find::Target;

/// The exit status of duet's own failures in the commands that pass a
/// program's on (as ssh does): a program's 1 is not duet's.
const FAILED: u8 = 255;

/// `duet attach [SESSION]`.
pub fn attach(args: AttachArgs) -> ExitCode {
    block_on("attach", FAILED, async move {
        require_tty("attach")?;
        let api = connect(&args.connect, false).await?;
        let sessions = api.sessions().await?;
        let session = pick::pick(&sessions, args.session.as_deref())?;
        attach_to(api, session, &args.terminal, false).await
    })
}

/// `duet ls`.
pub fn ls(args: LsArgs) -> ExitCode {
    block_on("ls", 1, async move {
        let api = connect(&args.connect, false).await?;
        let sessions = api.sessions().await?;
        let text = if args.json {
            serde_json::to_string_pretty(&sessions)?
        } else if sessions.is_empty() {
            "no sessions; `duet run [PROFILE]` starts one".into()
        } else {
            ls::table(&sessions.iter().collect::<Vec<_>>())
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Runs `work` on a runtime of its own (one thread: a client has one
/// connection), and turns an error into its message and `failed`.
fn block_on(
    command: &str,
    failed: u8,
    work: impl std::future::Future<Output = Result<ExitCode>>,
) -> ExitCode {
    tty::restore_on_panic();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("duet {command}: starting the runtime: {e}");
            return ExitCode::from(failed);
        }
    };
    match runtime.block_on(work) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("duet {command}: {e:#}");
            ExitCode::from(failed)
        }
    }
}

fn require_tty(command: &str) -> Result<()> {
    if !tty::stdin_is_tty() {
        bail!(
            "needs a terminal, and its standard input is not one (`duet {command}` puts a \
             session in this terminal; scripts can use `duet ls` and the REST API)"
        );
    }
    Ok(())
}

fn target(c: &ConnectArgs) -> Target {
    Target {
        server: c.server.clone(),
        token: c.token.clone(),
        state_dir: c
            .state_dir
            .clone()
            .unwrap_or_else(crate::state_dir::default_state_dir),
    }
}

/// The duet's API; with `start`, the local duet is started when none runs.
async fn connect(c: &ConnectArgs, start: bool) -> Result<Api> {
    let t = target(c);
    let http = find::http();
    let server = if start {
        let (server, started) = find::find_or_start(&t, &http).await?;
        if started {
            eprintln!(
                "duet: started a duet in the background at {} (its log: {})",
                server.base,
                t.state_dir.join(find::LOG_FILE).display()
            );
        }
        server
    } else {
        match find::find(&t, &http).await? {
            Some(s) => s,
            None => bail!(
                "no duet is running for {} (`duet run` starts one; --server names a remote one)",
                t.state_dir.display()
            ),
        }
    };
    Ok(Api { http, server })
}

/// What this client calls its device to the session's other clients.
fn device() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "this machine".into());
    format!("terminal on {host}")
}

/// Attaches to `session` until it ends or the user leaves, then gives the
/// terminal back and says, in one line, what happened and how to go on.
async fn attach_to(
    api: Api,
    session: SessionInfo,
    terminal: &TerminalArgs,
    driver: bool,
) -> Result<ExitCode> {
    let id = session.id;
    let short = id.to_string()[..8].to_string();
    let profile = session.profile.clone();
    let detach = terminal.detach_key.0.clone();
    let outcome = Attach {
        api: api.clone(),
        session,
        driver,
        detach,
        device: device(),
    }
    .run()
    .await?;
    let (line, code) = match outcome {
        Outcome::Detached => (
            format!("duet: detached; {profile} runs on in session {short}. Back to it: duet attach {short}"),
            0,
        ),
        Outcome::Removed => (format!("duet: session {short} was deleted"), 1),
        Outcome::Signalled(n) => (
            format!("duet: stopped by a signal; {profile} runs on in session {short} (duet attach {short})"),
            128 + n as u8,
        ),
        Outcome::Exited(exit) => {
            let resumable = api.session(id).await.is_ok_and(|s| s.resumable);
            let again = if resumable {
                format!(". Continue it: duet resume {short}")
            } else {
                String::new()
            };
            (
                format!("duet: {profile} {}{again}", ended(&exit)),
                exit_status(&exit),
            )
        }
    };
    eprintln!("{line}");
    Ok(ExitCode::from(code))
}

/// How a program ended, in words.
fn ended(exit: &ExitInfo) -> String {
    if let Some(who) = &exit.ended_by {
        return format!("was ended by {who}");
    }
    match (exit.server_stopped, &exit.code, &exit.signal) {
        (true, _, _) => "ended when duet stopped".into(),
        (_, Some(code), _) => format!("exited with status {code}"),
        (_, None, Some(sig)) => format!("was ended by {sig}"),
        (_, None, None) => "ended".into(),
    }
}

/// The program's exit status as a shell shows it: its code, or 128 plus
/// the signal that ended it.
fn exit_status(exit: &ExitInfo) -> u8 {
    match (&exit.code, &exit.signal) {
        (Some(code), _) => (code & 0xff) as u8,
        (None, Some(sig)) => sig
            .parse::<nix::sys::signal::Signal>()
            .map_or(1, |s| 128u8.wrapping_add(s as u8)),
        (None, None) => u8::from(!exit.success),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: Option<u32>, signal: Option<&str>) -> ExitInfo {
        ExitInfo {
            code,
            signal: signal.map(String::from),
            success: code == Some(0),
            server_stopped: false,
            ended_by: None,
        }
    }

    #[test]
    fn a_programs_status_passes_through() {
        assert_eq!(exit_status(&exit(Some(0), None)), 0);
        assert_eq!(exit_status(&exit(Some(3), None)), 3);
        assert_eq!(exit_status(&exit(None, Some("SIGTERM"))), 143);
        assert_eq!(exit_status(&exit(None, Some("SIGKILL"))), 137);
        assert_eq!(ended(&exit(Some(3), None)), "exited with status 3");
        let by_owner = ExitInfo {
            ended_by: Some("owner".into()),
            ..exit(None, Some("SIGTERM"))
        };
        assert_eq!(ended(&by_owner), "was ended by owner");
        assert_eq!(exit_status(&by_owner), 143);
        assert_eq!(ended(&exit(None, Some("SIGHUP"))), "was ended by SIGHUP");
    }
}
