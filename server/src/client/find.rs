//! Which duet a terminal client talks to: `--server URL` (`DUET_SERVER`)
//! with `--token` (`DUET_TOKEN`) for a remote one (over SSH port
//! forwarding, or TLS); otherwise the local duet of the user's state
//! directory, whose `server.json` says where it listens and its token
//! (`instance.rs`); and for `duet run`, when none runs, one started in the
//! background, as tmux starts its server: a session and process group of
//! its own, stdin from /dev/null, its log in the state directory.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::instance::{Holder, ServerFile, LOCK_FILE};

/// The log of a duet started by a client, in its state directory.
pub(crate) const LOG_FILE: &str = "duet.log";

/// How long a started duet gets to say it is ready.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Where to look for a duet (the flags and their environment variables).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// A remote duet's URL.
    pub(crate) server: Option<String>,
    pub(crate) token: Option<String>,
    /// The local duet's state directory.
    pub(crate) state_dir: PathBuf,
}

/// A duet to talk to.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    /// `http(s)://host[:port][/prefix]`, without a trailing slash.
    pub(crate) base: String,
    pub(crate) token: Option<String>,
    /// For the local duet: its state directory, where a restarted one
    /// says its new address.
    pub(crate) state_dir: Option<PathBuf>,
}

impl Server {
    /// The remote duet `--server` names, if one does.
    fn remote(t: &Target) -> Result<Option<Server>> {
        let Some(url) = &t.server else {
            return Ok(None);
        };
        let base = url.trim_end_matches('/');
        let rest = base
            .strip_prefix("http://")
            .or_else(|| base.strip_prefix("https://"));
        if rest.is_none_or(|r| r.is_empty() || r.contains(['?', '#'])) {
            bail!("--server must be an http:// or https:// URL, not {url:?}");
        }
        Ok(Some(Server {
            base: base.to_string(),
            token: t.token.clone(),
            state_dir: None,
        }))
    }
}

/// The HTTP client every request of a terminal client goes through. No
/// proxy from the environment: the local duet is on loopback, and the
/// WebSocket would not go through one anyway.
pub(crate) fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(5))
        .build()
        .unwrap_or_default()
}

/// The duet to talk to, if one runs: the remote one named, or the local one.
pub(crate) async fn find(t: &Target, http: &reqwest::Client) -> Result<Option<Server>> {
    if let Some(remote) = Server::remote(t)? {
        return Ok(Some(remote));
    }
    Ok(local(&t.state_dir, http).await)
}

/// Like [`find`], but starts the local duet when none runs; says whether
/// it did.
pub(crate) async fn find_or_start(t: &Target, http: &reqwest::Client) -> Result<(Server, bool)> {
    if let Some(s) = find(t, http).await? {
        return Ok((s, false));
    }
    Ok((start(&t.state_dir, http).await?, true))
}

/// The local duet of `state_dir`, if its `server.json` names a live
/// process that answers.
pub(crate) async fn local(state_dir: &Path, http: &reqwest::Client) -> Option<Server> {
    let file = ServerFile::read(state_dir)?;
    if !alive(file.pid) {
        return None;
    }
    let healthy = http
        .get(format!("{}/healthz", file.url))
        .timeout(Duration::from_secs(3))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success());
    healthy.then(|| Server {
        base: file.url,
        token: file.token,
        state_dir: Some(state_dir.to_path_buf()),
    })
}

fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(e) => e == nix::errno::Errno::EPERM,
    }
}

/// Starts `duet serve` on `state_dir` in the background and waits until it
/// is ready (or another duet that started meanwhile is).
async fn start(state_dir: &Path, http: &reqwest::Client) -> Result<Server> {
    crate::state_dir::prepare(state_dir)?;
    let log_path = state_dir.join(LOG_FILE);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .and_then(|f| {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            Ok(f)
        })
        .with_context(|| format!("opening {}", log_path.display()))?;
    let logged_from = log.metadata().map(|m| m.len()).unwrap_or(0);
    let exe = std::env::current_exe().context("finding the duet executable")?;
    // A session of its own (util-linux setsid, as for hosted programs):
    // no terminal, so closing this one sends it no SIGHUP.
    let mut cmd = match crate::session::terminal::program::setsid() {
        Some(setsid) => {
            let mut c = std::process::Command::new(setsid);
            c.arg(&exe);
            c
        }
        None => {
            use std::os::unix::process::CommandExt;
            let mut c = std::process::Command::new(&exe);
            c.process_group(0);
            c
        }
    };
    cmd.arg("serve").arg("--state-dir").arg(state_dir);
    if std::env::var_os("DUET_LISTEN").is_none() {
        cmd.arg("--listen").arg(listen_address());
    }
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {} serve", exe.display()))?;
    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    loop {
        if let Some(server) = local(state_dir, http).await {
            // Reaped by nobody once we exit: it is init's then.
            drop(child);
            return Ok(server);
        }
        let exited = child.try_wait()?.is_some();
        // A duet started by someone else at the same moment took the lock;
        // ours gave way to it: wait for that one.
        if exited && !holder_alive(state_dir) {
            bail!(
                "the duet started in the background stopped:\n{}\n(its log: {})",
                log_tail(&log_path, logged_from),
                log_path.display()
            );
        }
        if tokio::time::Instant::now() > deadline {
            return Err(anyhow!(
                "the duet started in the background did not get ready within {START_TIMEOUT:?} \
                 (its log: {})",
                log_path.display()
            ));
        }
        // A file another process writes: looked at again shortly.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// 127.0.0.1:8080 as `duet serve` would listen by default, unless that
/// port is taken (then any free one: clients find it in `server.json`).
fn listen_address() -> &'static str {
    match std::net::TcpListener::bind("127.0.0.1:8080") {
        Ok(_) => "127.0.0.1:8080",
        Err(_) => "127.0.0.1:0",
    }
}

fn holder_alive(state_dir: &Path) -> bool {
    std::fs::read(state_dir.join(LOCK_FILE))
        .ok()
        .and_then(|t| serde_json::from_slice::<Holder>(&t).ok())
        .is_some_and(|h| alive(h.pid))
}

/// The last lines the log got since `from`.
fn log_tail(path: &Path, from: u64) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let start = usize::try_from(from).unwrap_or(0).min(text.len());
    let text = String::from_utf8_lossy(&text[start..]);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}
