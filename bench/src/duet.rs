//! A real `duet serve` in its own process on 127.0.0.1:0, driven over REST
//! and WebSockets like a browser would, and measured through /proc.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use duet_protocol::rest::SessionInfo;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The access token of every benchmarked duet.
pub(crate) const TOKEN: &str = "duet-bench-token-0123456789abcdef";
/// How long setup steps (start, create, connect) may take.
const SETUP: Duration = Duration::from_secs(30);

/// One `[[profile]]` of the generated config.
pub(crate) struct Profile {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
}

impl Profile {
    /// A profile running `command args...`.
    pub(crate) fn new(name: &str, command: impl Into<String>, args: &[&str]) -> Self {
        Self {
            name: name.into(),
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// A TOML basic string (JSON string escapes are valid TOML).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A running duet; killed when dropped.
pub(crate) struct Duet {
    child: tokio::process::Child,
    pub pid: u32,
    pub addr: SocketAddr,
    pub state_dir: PathBuf,
    /// Holds the config, the state dir and duet's log.
    _dir: tempfile::TempDir,
    http: reqwest::Client,
    // Kept open: duet never writes to stdout again, but a closed pipe would
    // turn any late print into SIGPIPE.
    _stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Duet {
    /// Starts `exe serve` with these profiles and waits for its ready line.
    pub(crate) async fn start(exe: &Path, profiles: &[Profile]) -> Result<Self> {
        let dir = tempfile::Builder::new().prefix("duet-bench-").tempdir()?;
        let mut toml = String::new();
        for p in profiles {
            let args: Vec<String> = p.args.iter().map(|a| toml_str(a)).collect();
            toml.push_str(&format!(
                "[[profile]]\nname = {}\ncommand = {}\nargs = [{}]\n\n",
                toml_str(&p.name),
                toml_str(&p.command),
                args.join(", ")
            ));
        }
        let config = dir.path().join("duet.toml");
        std::fs::write(&config, toml)?;
        let state_dir = dir.path().join("state");
        let log = std::fs::File::create(dir.path().join("duet.log"))?;
        let mut child = tokio::process::Command::new(exe)
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--token", TOKEN])
            .arg("--config")
            .arg(&config)
            .arg("--state-dir")
            .arg(&state_dir)
            // Limits far above any workload: the bench measures, it does not defend.
            .args(["--max-sessions", "2000", "--max-clients", "200"])
            .args(["--max-connections", "100000"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        let pid = child.id().context("duet has no pid")?;
        let stdout = child.stdout.take().context("duet's stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(SETUP, lines.next_line())
            .await
            .context("duet did not print its ready line in time")??
            .context("duet exited before it was ready")?;
        let Some(rest) = line.strip_prefix("duet is ready: http://") else {
            bail!("unexpected first line from duet: {line:?}");
        };
        let addr: SocketAddr = rest
            .split('/')
            .next()
            .unwrap_or_default()
            .parse()
            .with_context(|| format!("no address in {line:?}"))?;
        Ok(Self {
            child,
            pid,
            addr,
            state_dir,
            _dir: dir,
            http: reqwest::Client::new(),
            _stdout: lines,
        })
    }

    /// Starts a session of `profile` (120×36).
    pub(crate) async fn create(&self, profile: &str) -> Result<SessionInfo> {
        let resp = self
            .http
            .post(format!("http://{}/api/sessions", self.addr))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({"profile": profile, "cols": 120, "rows": 36}))
            .timeout(SETUP)
            .send()
            .await?;
        if resp.status() != 201 {
            bail!(
                "creating a {profile} session: {} {}",
                resp.status(),
                resp.text().await.unwrap_or_default()
            );
        }
        Ok(resp.json().await?)
    }

    /// `GET /api/sessions/{id}/screen`.
    pub(crate) async fn screen(&self, id: impl std::fmt::Display) -> Result<String> {
        Ok(self
            .http
            .get(format!("http://{}/api/sessions/{id}/screen", self.addr))
            .bearer_auth(TOKEN)
            .timeout(SETUP)
            .send()
            .await?
            .error_for_status()?
            .text()
            .await?)
    }

    /// Opens a WebSocket to session `id` (no reading yet).
    pub(crate) async fn connect(&self, id: impl std::fmt::Display) -> Result<Client> {
        let mut req = format!("ws://{}/api/sessions/{id}/ws", self.addr).into_client_request()?;
        req.headers_mut().insert(
            "authorization",
            HeaderValue::from_str(&format!("Bearer {TOKEN}"))?,
        );
        let mut config = WebSocketConfig::default();
        config.max_message_size = Some(256 << 20);
        config.max_frame_size = Some(256 << 20);
        // Browsers set TCP_NODELAY on WebSockets.
        let (ws, _) = tokio::time::timeout(
            SETUP,
            tokio_tungstenite::connect_async_with_config(req, Some(config), true),
        )
        .await
        .context("WebSocket connect timed out")??;
        Ok(Client { ws })
    }

    /// The session's private directory.
    pub(crate) fn session_dir(&self, id: impl std::fmt::Display) -> PathBuf {
        self.state_dir.join(id.to_string())
    }

    /// duet's resident memory, KiB.
    pub(crate) fn rss_kib(&self) -> u64 {
        proc_status(self.pid, "VmRSS:")
    }

    /// duet's thread count.
    pub(crate) fn threads(&self) -> u64 {
        proc_status(self.pid, "Threads:")
    }

    /// CPU seconds duet used so far (user + system).
    pub(crate) fn cpu_secs(&self) -> f64 {
        cpu_secs(self.pid)
    }

    /// SIGTERM, then SIGKILL if it does not stop within `grace`.
    pub(crate) async fn stop(mut self, grace: Duration) {
        let pid = nix::unistd::Pid::from_raw(self.pid as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        if tokio::time::timeout(grace, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// A field of /proc/PID/status as a number (kB for memory), 0 if missing.
pub(crate) fn proc_status(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// utime + stime of a process, seconds.
pub(crate) fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields overall.
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100);
    ticks as f64 / hz as f64
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// One WebSocket client.
pub(crate) struct Client {
    pub ws: Ws,
}

/// What a client received.
pub(crate) enum Frame {
    /// Terminal bytes (live output or a snapshot after `resync`).
    Term(Bytes),
    /// A JSON message, with the fields the benchmarks look at.
    Json(Head),
    /// The connection ended.
    Closed,
}

/// The fields of server messages the benchmarks use; the rest is skipped.
#[derive(Debug, Deserialize)]
pub(crate) struct Head {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub event: Option<EventBody>,
    #[serde(default)]
    pub message: Option<String>,
}

/// The fields of a relayed event the benchmarks use.
#[derive(Debug, Deserialize)]
pub(crate) struct EventBody {
    #[serde(default)]
    pub subtype: Option<String>,
    #[serde(default)]
    pub i: Option<u64>,
    /// Monotonic ns at the moment the fixture wrote the event.
    #[serde(default)]
    pub t: Option<u64>,
}

impl Client {
    /// The next frame (pings and pongs skipped).
    pub(crate) async fn next(&mut self) -> Result<Frame> {
        loop {
            return Ok(match self.ws.next().await {
                None | Some(Ok(Message::Close(_))) => Frame::Closed,
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(Message::Binary(b))) => Frame::Term(b),
                Some(Ok(Message::Text(t))) => Frame::Json(
                    serde_json::from_str(t.as_str())
                        .with_context(|| format!("bad server message {t}"))?,
                ),
                Some(Ok(_)) => continue,
            });
        }
    }

    /// Reads the greeting: `hello`, `resync`, and the snapshot frame, which
    /// it returns.
    pub(crate) async fn attach(&mut self) -> Result<Bytes> {
        let mut hello = false;
        let mut resync = false;
        loop {
            match tokio::time::timeout(SETUP, self.next())
                .await
                .context("attach timed out")??
            {
                Frame::Json(h) if h.kind == "hello" => hello = true,
                Frame::Json(h) if h.kind == "resync" => resync = true,
                Frame::Json(_) => {}
                Frame::Term(b) if hello && resync => return Ok(b),
                Frame::Term(_) => bail!("terminal bytes before hello/resync"),
                Frame::Closed => bail!("closed during attach"),
            }
        }
    }

    /// Sends keystrokes (a binary frame).
    pub(crate) async fn keys(&mut self, bytes: &[u8]) -> Result<()> {
        self.ws
            .send(Message::Binary(Bytes::copy_from_slice(bytes)))
            .await?;
        Ok(())
    }

    /// Sends a JSON message.
    pub(crate) async fn json(&mut self, v: &serde_json::Value) -> Result<()> {
        self.ws.send(Message::Text(v.to_string().into())).await?;
        Ok(())
    }

    /// Reads until the terminal stream (snapshots included) contains
    /// `needle`, which must not be longer than 64 bytes.
    pub(crate) async fn wait_for_text(&mut self, first: &[u8], needle: &[u8]) -> Result<()> {
        let mut tail = Tail::default();
        if tail.push_contains(first, needle) {
            return Ok(());
        }
        loop {
            match tokio::time::timeout(SETUP, self.next())
                .await
                .context("waiting for terminal text")??
            {
                Frame::Term(b) if tail.push_contains(&b, needle) => return Ok(()),
                Frame::Closed => bail!("closed while waiting for {needle:?}"),
                _ => {}
            }
        }
    }
}

/// The last 64 bytes of a stream, to find a marker split across frames.
#[derive(Default)]
pub(crate) struct Tail(Vec<u8>);

impl Tail {
    /// Appends `data`; whether the stream now *ends* with `marker`.
    pub(crate) fn push_ends_with(&mut self, data: &[u8], marker: &[u8]) -> bool {
        self.push(data);
        self.0.ends_with(marker)
    }

    /// Appends `data`; whether `needle` occurs in the old tail plus `data`.
    pub(crate) fn push_contains(&mut self, data: &[u8], needle: &[u8]) -> bool {
        let mut hay = std::mem::take(&mut self.0);
        hay.extend_from_slice(data);
        let found = hay.windows(needle.len()).any(|w| w == needle);
        self.0 = hay;
        self.trim();
        found
    }

    fn push(&mut self, data: &[u8]) {
        if data.len() >= 64 {
            self.0.clear();
            self.0.extend_from_slice(&data[data.len() - 64..]);
        } else {
            self.0.extend_from_slice(data);
            self.trim();
        }
    }

    fn trim(&mut self) {
        if self.0.len() > 64 {
            self.0.drain(..self.0.len() - 64);
        }
    }
}
