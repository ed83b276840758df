//! `duet run [PROFILE] [-- ARGS...]` and `duet resume SESSION`: start a
//! session (of a profile, in this directory, at this window's size; or
//! continuing an ended one) and attach to it as its driver, so that
//! `alias claude='duet run claude --'` feels like running `claude`: one
//! line with the session's browser address (where the phone takes over),
//! then the program, then its exit status as this command's.

use std::process::ExitCode;

use anyhow::Context;
use duet_protocol::rest::{CreateSession, ResumeSession, SessionInfo};

use super::args::{QrWhen, ResumeArgs, RunArgs, TerminalArgs};
use super::{attach_to, block_on, connect, pick, qr, require_tty, tty, Api, FAILED};

/// `duet run`.
pub fn run(args: RunArgs) -> ExitCode {
    block_on("run", FAILED, async move {
        require_tty("run")?;
        let api = connect(&args.connect, true).await?;
        let (cols, rows) = tty::window_size().unzip();
        // A duet on this machine runs the program here; a remote one has
        // other directories (then --cwd names one of its).
        let cwd = match (&args.cwd, &args.connect.server) {
            (Some(dir), _) => Some(std::path::absolute(dir)?),
            (None, None) => Some(std::env::current_dir().context("finding this directory")?),
            (None, Some(_)) => None,
        };
        let session = api
            .create(&CreateSession {
                profile: args.profile.clone(),
                cols,
                rows,
                cwd: cwd.map(|c| c.to_string_lossy().into_owned()),
                args: args.args.clone(),
            })
            .await?;
        if let Some(name) = &args.name {
            api.rename(session.id, name).await?;
        }
        announce(&api, &session, &args.terminal);
        attach_to(api, session, &args.terminal, true).await
    })
}

/// `duet resume`.
pub fn resume(args: ResumeArgs) -> ExitCode {
    block_on("resume", FAILED, async move {
        require_tty("resume")?;
        let api = connect(&args.connect, false).await?;
        let sessions = api.sessions().await?;
        let ended = pick::pick(&sessions, Some(&args.session))?;
        let (cols, rows) = tty::window_size().unzip();
        let session = api.resume(ended.id, &ResumeSession { cols, rows }).await?;
        announce(&api, &session, &args.terminal);
        attach_to(api, session, &args.terminal, true).await
    })
}

/// One line: the session and where a browser opens it (and, for a phone,
/// a QR code that signs it in).
fn announce(api: &Api, session: &SessionInfo, terminal: &TerminalArgs) {
    let detach = terminal
        .detach_key
        .0
        .as_ref()
        .map(|d| format!(" · {} detaches", d.describe()))
        .unwrap_or_default();
    eprintln!(
        "duet: {} in session {} · {}{detach}",
        session.profile,
        &session.id.to_string()[..8],
        api.browser_url(session.id)
    );
    let show = match terminal.qr {
        QrWhen::Always => true,
        QrWhen::Never => false,
        QrWhen::Auto => !on_loopback(&api.server.base),
    };
    if show {
        if let Some(lines) = qr::lines(&api.sign_in_url(session.id)) {
            let mut out = lines.join("\r\n");
            out.push_str("\r\nduet: scan to go on from a phone (the code signs it in)\r\n");
            let _ = tty::write_all(out.as_bytes());
        }
    }
}

/// Whether `base` names this machine only (a phone could not open it).
fn on_loopback(base: &str) -> bool {
    let host = base
        .split("://")
        .nth(1)
        .unwrap_or(base)
        .split('/')
        .next()
        .unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_get_no_qr_code_by_default() {
        assert!(on_loopback("http://127.0.0.1:8080"));
        assert!(on_loopback("http://[::1]:8080"));
        assert!(on_loopback("http://localhost:8080"));
        assert!(!on_loopback("https://duet.example.com"));
        assert!(!on_loopback("http://192.168.1.20:8080"));
    }
}
