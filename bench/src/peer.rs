//! Other terminal gateways, measured in the same run with the same client
//! code and the same programs: ttyd (C, libwebsockets) and Jupyter's
//! terminado (Python, tornado). `--peer ttyd[=PATH]`, `--peer terminado[=PYTHON]`.
//!
//! Their wire protocols, from their sources:
//! - ttyd (`src/protocol.c`, `src/server.h`): subprotocol `tty` on `/ws`. The
//!   client first sends a JSON object (`{"AuthToken":"","columns":..,"rows":..}`);
//!   only then does ttyd start the program, one program per connection. Then
//!   every frame starts with a command byte: client → server `0` input,
//!   `1` resize (JSON), `2` pause, `3` resume; server → client `0` output,
//!   `1` window title, `2` preferences (JSON). When the program exits, ttyd
//!   closes the WebSocket (1000 on exit code 0).
//! - terminado (`terminado/websocket.py`, `management.py`): JSON text frames,
//!   `["stdin", text]` and `["set_size", rows, cols]` in, `["setup", {}]`,
//!   `["stdout", text]` and `["disconnect", 1]` out. With `NamedTermManager`
//!   (bench/terminado_server.py) the first connection to a name starts the
//!   program and later ones share it, as duet's sessions are shared.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::duet::Tail;

/// How long setup steps (start, connect) may take.
const SETUP: Duration = Duration::from_secs(30);
/// The repository root, for the tools the setup scripts put in `.cache/`.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Which gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ttyd,
    Terminado,
}

/// A peer named on the command line, with the executable that runs it
/// (ttyd's binary, or the Python that has terminado).
#[derive(Debug, Clone)]
pub struct PeerSpec {
    pub kind: Kind,
    pub exe: PathBuf,
}

impl FromStr for PeerSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (name, path) = match s.split_once('=') {
            Some((n, p)) => (n, Some(PathBuf::from(p))),
            None => (s, None),
        };
        let (kind, default, setup) = match name {
            "ttyd" => (Kind::Ttyd, ".cache/ttyd/bin/ttyd", "bench/build-ttyd.sh"),
            "terminado" => (
                Kind::Terminado,
                ".cache/terminado-venv/bin/python",
                "bench/setup-terminado.sh",
            ),
            _ => return Err(format!("unknown peer {name:?} (ttyd or terminado)")),
        };
        let exe = path.unwrap_or_else(|| Path::new(ROOT).join(default));
        if !exe.exists() {
            return Err(format!(
                "{} not found: run {setup}, or pass {name}=PATH",
                exe.display()
            ));
        }
        Ok(Self { kind, exe })
    }
}

impl PeerSpec {
    /// Its name in the table.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Ttyd => "ttyd",
            Kind::Terminado => "terminado",
        }
    }
}

/// `program` as an absolute path (ttyd gives its programs no PATH).
pub(crate) fn which(program: &str) -> String {
    if program.contains('/') {
        return program.into();
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .map_or_else(|| program.into(), |p| p.to_string_lossy().into_owned())
}

/// A running peer server with one program configured; killed when dropped.
pub(crate) struct Peer {
    pub spec: PeerSpec,
    child: tokio::process::Child,
    pub pid: u32,
    port: u16,
    /// Scratch space for the program (`{dir}` in its arguments) and the log.
    pub dir: tempfile::TempDir,
    next_term: AtomicU64,
}

/// A terminal on a peer (terminado: its name; ttyd has one per connection).
#[derive(Debug, Clone)]
pub(crate) struct Term(String);

impl Peer {
    /// Starts the peer serving `program args...` on 127.0.0.1, port 0; `{dir}`
    /// in an argument becomes [`Peer::dir`].
    pub(crate) async fn start(spec: &PeerSpec, program: &str, args: &[&str]) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("duet-bench-{}-", spec.name()))
            .tempdir()?;
        let d = dir.path().to_string_lossy().into_owned();
        let args: Vec<String> = args.iter().map(|a| a.replace("{dir}", &d)).collect();
        let program = which(program);
        let log_path = dir.path().join("server.log");
        let mut cmd = tokio::process::Command::new(&spec.exe);
        match spec.kind {
            // -W: clients may type (ttyd is read-only by default); pings once
            // an hour, so idle clients cost nothing but their connection.
            Kind::Ttyd => cmd.args(["-p", "0", "-i", "127.0.0.1", "-W", "-P", "3600"]),
            Kind::Terminado => cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/terminado_server.py")),
        };
        cmd.arg(&program).args(&args).current_dir(dir.path());
        cmd.stdin(Stdio::null()).kill_on_drop(true);
        // ttyd announces its port in its log on stderr, terminado on stdout.
        // The rest of that stream is copied to server.log, so it never fills.
        let mut child = match spec.kind {
            Kind::Ttyd => cmd
                .stdout(std::fs::File::create(dir.path().join("stdout.log"))?)
                .stderr(Stdio::piped()),
            Kind::Terminado => cmd
                .stdout(Stdio::piped())
                .stderr(std::fs::File::create(&log_path)?),
        }
        .spawn()
        .with_context(|| format!("starting {}", spec.exe.display()))?;
        let pid = child.id().context("no pid")?;
        let stream: Box<dyn tokio::io::AsyncRead + Unpin + Send> = match spec.kind {
            Kind::Ttyd => Box::new(child.stderr.take().context("stderr")?),
            Kind::Terminado => Box::new(child.stdout.take().context("stdout")?),
        };
        let mut lines = BufReader::new(stream).lines();
        let port = tokio::time::timeout(SETUP, async {
            while let Some(line) = lines.next_line().await? {
                let found = match spec.kind {
                    Kind::Ttyd => line.split("Listening on port: ").nth(1),
                    Kind::Terminado => line.strip_prefix("terminado is ready: "),
                };
                if let Some(p) = found {
                    return Ok::<u16, anyhow::Error>(p.trim().parse()?);
                }
            }
            bail!("{} exited before it was ready", spec.name())
        })
        .await
        .with_context(|| format!("{} did not say its port in time", spec.name()))??;
        let mut log = tokio::fs::File::create(dir.path().join("server-rest.log")).await?;
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = log.write_all(line.as_bytes()).await;
                let _ = log.write_all(b"\n").await;
            }
        });
        Ok(Self {
            spec: spec.clone(),
            child,
            pid,
            port,
            dir,
            next_term: AtomicU64::new(1),
        })
    }

    /// A new terminal (its program starts) and its first client.
    pub(crate) async fn open(&self) -> Result<(Term, PeerClient)> {
        let term = Term(format!(
            "t{}",
            self.next_term.fetch_add(1, Ordering::Relaxed)
        ));
        let c = self.join(&term).await?;
        Ok((term, c))
    }

    /// Another client on `term`. ttyd has no shared terminals: it starts
    /// another program for every connection.
    pub(crate) async fn join(&self, term: &Term) -> Result<PeerClient> {
        let url = match self.spec.kind {
            Kind::Ttyd => format!("ws://127.0.0.1:{}/ws", self.port),
            Kind::Terminado => format!("ws://127.0.0.1:{}/websocket/{}", self.port, term.0),
        };
        let mut req = url.into_client_request()?;
        if self.spec.kind == Kind::Ttyd {
            req.headers_mut()
                .insert("sec-websocket-protocol", HeaderValue::from_static("tty"));
        }
        let mut config = WebSocketConfig::default();
        config.max_message_size = Some(256 << 20);
        config.max_frame_size = Some(256 << 20);
        let (ws, _) = tokio::time::timeout(
            SETUP,
            tokio_tungstenite::connect_async_with_config(req, Some(config), true),
        )
        .await
        .context("WebSocket connect timed out")??;
        let mut c = PeerClient {
            ws,
            kind: self.spec.kind,
        };
        let hello = match self.spec.kind {
            Kind::Ttyd => serde_json::json!({"AuthToken": "", "columns": 120, "rows": 36}),
            Kind::Terminado => serde_json::json!(["set_size", 36, 120]),
        };
        c.ws.send(match self.spec.kind {
            Kind::Ttyd => Message::Binary(hello.to_string().into()),
            Kind::Terminado => Message::Text(hello.to_string().into()),
        })
        .await?;
        Ok(c)
    }

    /// The server's resident memory, KiB (not its programs').
    pub(crate) fn rss_kib(&self) -> u64 {
        crate::duet::proc_status(self.pid, "VmRSS:")
    }

    /// CPU seconds the server used so far.
    pub(crate) fn cpu_secs(&self) -> f64 {
        crate::duet::cpu_secs(self.pid)
    }

    /// Kills the server (and so, through their hangup, its programs).
    pub(crate) async fn stop(mut self) {
        let pid = nix::unistd::Pid::from_raw(self.pid as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// One WebSocket client of a peer.
pub(crate) struct PeerClient {
    pub ws: Ws,
    kind: Kind,
}

/// What a peer client received.
pub(crate) enum PeerFrame {
    /// Terminal output.
    Term(Bytes),
    /// Anything else (title, preferences, setup).
    Other,
    /// The program exited or the connection ended.
    Closed,
}

impl PeerClient {
    /// The next frame.
    pub(crate) async fn next(&mut self) -> Result<PeerFrame> {
        loop {
            let msg = match self.ws.next().await {
                None | Some(Ok(Message::Close(_))) => return Ok(PeerFrame::Closed),
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(m)) => m,
            };
            return Ok(match (self.kind, msg) {
                (Kind::Ttyd, Message::Binary(b)) => match b.first() {
                    Some(b'0') => PeerFrame::Term(b.slice(1..)),
                    _ => PeerFrame::Other,
                },
                (Kind::Terminado, Message::Text(t)) => {
                    let v: (String, serde_json::Value) = match serde_json::from_str(t.as_str()) {
                        Ok(v) => v,
                        // `["setup", {}]` and friends have other shapes.
                        Err(_) => continue,
                    };
                    match (v.0.as_str(), v.1) {
                        ("stdout", serde_json::Value::String(s)) => {
                            PeerFrame::Term(Bytes::from(s.into_bytes()))
                        }
                        ("disconnect", _) => PeerFrame::Closed,
                        _ => PeerFrame::Other,
                    }
                }
                _ => continue,
            });
        }
    }

    /// Types keys.
    pub(crate) async fn keys(&mut self, bytes: &[u8]) -> Result<()> {
        let msg = match self.kind {
            Kind::Ttyd => {
                let mut b = Vec::with_capacity(bytes.len() + 1);
                b.push(b'0');
                b.extend_from_slice(bytes);
                Message::Binary(b.into())
            }
            Kind::Terminado => Message::Text(
                serde_json::json!(["stdin", String::from_utf8_lossy(bytes)])
                    .to_string()
                    .into(),
            ),
        };
        self.ws.send(msg).await?;
        Ok(())
    }

    /// Reads until the terminal output contains `needle` (≤ 64 bytes).
    pub(crate) async fn wait_for_text(&mut self, needle: &[u8]) -> Result<()> {
        let mut tail = Tail::default();
        loop {
            match tokio::time::timeout(SETUP, self.next())
                .await
                .context("waiting for terminal text")??
            {
                PeerFrame::Term(b) if tail.push_contains(&b, needle) => return Ok(()),
                PeerFrame::Closed => bail!("closed while waiting for {needle:?}"),
                _ => {}
            }
        }
    }

    /// Waits for the first frame of any kind: the peer has taken the client
    /// in (ttyd: title and preferences; terminado: `setup`).
    pub(crate) async fn greeted(&mut self) -> Result<()> {
        match tokio::time::timeout(SETUP, self.next())
            .await
            .context("no greeting")??
        {
            PeerFrame::Closed => bail!("closed before the greeting"),
            _ => Ok(()),
        }
    }
}
