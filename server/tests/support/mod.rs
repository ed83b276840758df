//! Test harness: a duet server in-process on port 0 (shut down on drop), the
//! fake dual-output TUI as its profiles, and a typed WebSocket client.
//! Waits are bounded by a deadline and woken by what they wait for; no test
//! sleeps to wait for readiness.

#![allow(dead_code)]

pub mod fetch;
pub mod installed;
pub mod killable;
pub mod servers;

use std::path::PathBuf;
use std::time::Duration;

use duet_protocol::rest::SessionInfo;
use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::{ConfigFile, Profile, Profiles};
use duet_server::ServerOptions;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long any single wait may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(20);
pub const TOKEN: &str = "test-token-0123456789abcdef";

pub fn fake_tui() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_tui.py")
        .to_string_lossy()
        .into_owned()
}

fn profile(name: &str, args: &[&str]) -> Profile {
    let mut all = vec![fake_tui()];
    all.extend(args.iter().map(|s| s.to_string()));
    Profile {
        name: name.into(),
        description: None,
        command: "python3".into(),
        args: all,
        env: Default::default(),
        cwd: None,
        ready_text: None,
        channel: None,
        resume_args: None,
    }
}

/// duet's demo agent with dual output, streaming fast, in `cwd` (or the
/// session's work directory).
pub fn demo_profile(name: &str, cwd: Option<String>) -> Profile {
    Profile {
        name: name.into(),
        description: None,
        command: env!("CARGO_BIN_EXE_duet").into(),
        args: [
            "demo-agent",
            "--json-file",
            "{events_file}",
            "--input-file",
            "{input_file}",
            "--token-delay-ms",
            "1",
        ]
        .map(String::from)
        .to_vec(),
        env: Default::default(),
        cwd,
        ready_text: None,
        channel: None,
        resume_args: None,
    }
}

/// The profiles every test server offers.
pub fn profiles() -> Profiles {
    let sidecar = [
        "--json-file",
        "{events_file}",
        "--input-file",
        "{input_file}",
    ];
    let mut late = sidecar.to_vec();
    late.push("--no-start");
    let demo = demo_profile("demo", None);
    Profiles::from_config(
        ConfigFile {
            default_profile: Some("fake".into()),
            profiles: vec![
                profile("fake", &sidecar),
                profile("late-start", &late),
                profile("plain", &[]),
                demo,
            ],
            tokens: Vec::new(),
        },
        env!("CARGO_BIN_EXE_duet").into(),
    )
    .expect("test profiles")
}

/// A server on 127.0.0.1:0, stopped when dropped.
pub struct TestServer {
    pub addr: std::net::SocketAddr,
    pub state_dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    pub http: reqwest::Client,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// A server whose only profiles are `profiles` (as a config file would
    /// give them).
    pub async fn with_profiles(profiles: Vec<Profile>) -> Self {
        let profiles = Profiles::from_config(
            ConfigFile {
                default_profile: None,
                profiles,
                tokens: Vec::new(),
            },
            env!("CARGO_BIN_EXE_duet").into(),
        )
        .unwrap();
        Self::start_with(|o| o.profiles = profiles).await
    }

    pub async fn start_with(adjust: impl FnOnce(&mut ServerOptions)) -> Self {
        let state_dir = tempfile::tempdir().unwrap();
        let mut opts = ServerOptions::new(profiles(), Some(TOKEN.into()));
        opts.state_dir = state_dir.path().join("state");
        opts.limits.kill_grace = Duration::from_secs(2);
        adjust(&mut opts);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(duet_server::run(listener, opts, async {
            let _ = rx.await;
        }));
        Self {
            addr,
            state_dir,
            stop: Some(tx),
            task: Some(task),
            http: reqwest::Client::new(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.get(self.url(path)).bearer_auth(TOKEN)
    }

    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.post(self.url(path)).bearer_auth(TOKEN)
    }

    /// GETs `path` and decodes the JSON body.
    pub async fn json<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        let resp = self.get(path).send().await.unwrap();
        assert!(resp.status().is_success(), "GET {path}: {}", resp.status());
        resp.json().await.unwrap()
    }

    /// GETs `path` and returns the body as text (asserting success).
    pub async fn text(&self, path: &str) -> String {
        let resp = self.get(path).send().await.unwrap();
        assert!(resp.status().is_success(), "GET {path}: {}", resp.status());
        resp.text().await.unwrap()
    }

    /// The session's current REST view.
    pub async fn info(&self, id: impl std::fmt::Display) -> SessionInfo {
        self.json(&format!("/api/sessions/{id}")).await
    }

    /// POSTs a JSON body.
    pub async fn post_json(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        self.post(path).json(&body).send().await.unwrap()
    }

    /// DELETEs `path`.
    pub async fn delete(&self, path: &str) -> reqwest::Response {
        self.http
            .delete(self.url(path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
    }

    /// Starts a session of `profile` and returns its info.
    pub async fn create(&self, profile: &str) -> SessionInfo {
        let resp = self
            .post("/api/sessions")
            .json(&serde_json::json!({"profile": profile, "cols": 100, "rows": 30}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
        resp.json().await.unwrap()
    }

    pub async fn connect(&self, id: impl std::fmt::Display, from: Option<u64>) -> Client {
        self.connect_as(id, from, TOKEN).await
    }

    /// Like [`TestServer::connect`], with another credential (the hello is
    /// in `texts[0]`).
    pub async fn connect_as(
        &self,
        id: impl std::fmt::Display,
        from: Option<u64>,
        token: &str,
    ) -> Client {
        let query = from.map(|f| format!("?from={f}")).unwrap_or_default();
        let url = format!("ws://{}/api/sessions/{id}/ws{query}", self.addr);
        Client::connect(&url, token).await
    }

    /// Stops the server and waits for it to finish.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(DEADLINE, task)
                .await
                .expect("server stops in time")
                .unwrap()
                .unwrap();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// A WebSocket client that renders terminal output into a screen and keeps
/// every JSON message it saw.
pub struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    pub screen: vt100::Parser,
    /// Every JSON message received, in order.
    pub texts: Vec<ServerMessage>,
    /// Received but not yet taken by `next`/`until` (a mailbox: each
    /// message is matched at most once, and none is lost by a wait for
    /// another).
    pub pending: std::collections::VecDeque<ServerMessage>,
    pub term_bytes: u64,
}

impl Client {
    /// Connects to the WebSocket at `url` (a duet of its own, as a
    /// separate process) with `token`; the hello is in `texts[0]`.
    pub async fn connect(url: &str, token: &str) -> Client {
        let mut req = url.into_client_request().unwrap();
        req.headers_mut().insert(
            "authorization",
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        let mut client = Client {
            ws,
            screen: vt100::Parser::new(30, 100, 1000),
            texts: Vec::new(),
            pending: Default::default(),
            term_bytes: 0,
        };
        match client.next().await {
            ServerMessage::Hello(_) => {}
            other => panic!("expected hello, got {other:?}"),
        }
        client
    }

    /// Reads until the server closes the socket: the close frame's code and
    /// reason, or `None` for a connection dropped without one.
    pub async fn closed(&mut self) -> Option<(u16, String)> {
        tokio::time::timeout(DEADLINE, async {
            loop {
                match self.ws.next().await {
                    Some(Ok(Message::Close(frame))) => {
                        return frame.map(|f| (u16::from(f.code), f.reason.to_string()))
                    }
                    Some(Ok(_)) => {}
                    None | Some(Err(_)) => return None,
                }
            }
        })
        .await
        .expect("the server closes the socket")
    }

    /// The next approval request that is still pending.
    pub async fn pending_approval(&mut self) -> duet_protocol::rest::Approval {
        match self
            .until(|m| {
                matches!(m, ServerMessage::Approval(a)
                    if a.state == duet_protocol::rest::ApprovalState::Pending)
            })
            .await
        {
            ServerMessage::Approval(a) => a,
            _ => unreachable!(),
        }
    }

    /// The next JSON message (terminal bytes go to the screen meanwhile).
    pub async fn next(&mut self) -> ServerMessage {
        if let Some(m) = self.pending.pop_front() {
            return m;
        }
        self.receive().await
    }

    async fn receive(&mut self) -> ServerMessage {
        tokio::time::timeout(DEADLINE, async {
            loop {
                match self.ws.next().await {
                    Some(Ok(Message::Text(t))) => {
                        let msg: ServerMessage = serde_json::from_str(&t)
                            .unwrap_or_else(|e| panic!("bad server message {t}: {e}"));
                        if let ServerMessage::Resync { cols, rows, .. } = &msg {
                            self.screen = vt100::Parser::new(*rows, *cols, 1000);
                        }
                        self.texts.push(msg.clone());
                        return msg;
                    }
                    Some(Ok(Message::Binary(b))) => {
                        self.term_bytes += b.len() as u64;
                        self.screen.process(&b);
                    }
                    Some(Ok(_)) => {}
                    other => panic!("socket ended: {other:?}"),
                }
            }
        })
        .await
        .unwrap_or_else(|_| {
            let recent: Vec<String> = self
                .texts
                .iter()
                .rev()
                .take(12)
                .rev()
                .map(|m| {
                    serde_json::to_string(m)
                        .unwrap()
                        .chars()
                        .take(300)
                        .collect()
                })
                .collect();
            panic!(
                "no server message within {DEADLINE:?}; the last ones were:\n{}\nscreen:\n{}",
                recent.join("\n"),
                self.screen.screen().contents()
            )
        })
    }

    /// The first message matching `pred`, from the mailbox or the socket.
    pub async fn until(&mut self, mut pred: impl FnMut(&ServerMessage) -> bool) -> ServerMessage {
        if let Some(i) = self.pending.iter().position(&mut pred) {
            return self.pending.remove(i).unwrap();
        }
        loop {
            let m = self.receive().await;
            if pred(&m) {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    /// The first event matching `pred`; returns (seq, event).
    pub async fn until_event(&mut self, mut pred: impl FnMut(&Value) -> bool) -> (u64, Value) {
        match self
            .until(|m| matches!(m, ServerMessage::Event { event, .. } if pred(event)))
            .await
        {
            ServerMessage::Event { seq, event, .. } => (seq, event),
            _ => unreachable!(),
        }
    }

    /// Reads (processing terminal bytes) until the screen contains `text`.
    pub async fn until_screen(&mut self, text: &str) {
        self.until_screen_any(&[text]).await;
    }

    /// Waits until the screen shows one of `texts`; returns which.
    pub async fn until_screen_any(&mut self, texts: &[&str]) -> usize {
        tokio::time::timeout(DEADLINE, async {
            loop {
                let shown = self.screen.screen().contents();
                if let Some(i) = texts.iter().position(|t| shown.contains(t)) {
                    return i;
                }
                match self.ws.next().await {
                    Some(Ok(Message::Binary(b))) => {
                        self.term_bytes += b.len() as u64;
                        self.screen.process(&b);
                    }
                    Some(Ok(Message::Text(t))) => {
                        let msg: ServerMessage = serde_json::from_str(&t).unwrap();
                        if let ServerMessage::Resync { cols, rows, .. } = &msg {
                            self.screen = vt100::Parser::new(*rows, *cols, 1000);
                        }
                        self.texts.push(msg.clone());
                        self.pending.push_back(msg);
                    }
                    Some(Ok(_)) => {}
                    other => panic!("socket ended: {other:?}"),
                }
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "screen never showed {texts:?}; it shows:\n{}",
                self.screen.screen().contents()
            )
        })
    }

    pub async fn send(&mut self, msg: &ClientMessage) {
        self.ws
            .send(Message::Text(serde_json::to_string(msg).unwrap().into()))
            .await
            .unwrap();
    }

    pub async fn send_raw(&mut self, text: &str) {
        self.ws.send(Message::Text(text.into())).await.unwrap();
    }

    pub async fn keys(&mut self, bytes: &[u8]) {
        self.ws
            .send(Message::Binary(bytes.to_vec().into()))
            .await
            .unwrap();
    }

    pub async fn submit(&mut self, text: &str) -> ServerMessage {
        let id = format!("s-{}", uuid::Uuid::new_v4());
        self.send(&ClientMessage::Submit {
            text: text.into(),
            id: Some(id.clone()),
        })
        .await;
        self.until(|m| matches!(m, ServerMessage::Ack { id: i, .. } | ServerMessage::Error { id: Some(i), .. } if *i == id))
            .await
    }

    /// The seqs of all `event` messages seen so far.
    pub fn seqs(&self) -> Vec<u64> {
        self.texts
            .iter()
            .filter_map(|m| match m {
                ServerMessage::Event { seq, .. } => Some(*seq),
                _ => None,
            })
            .collect()
    }
}

/// The event's `type`.
pub fn kind(ev: &Value) -> &str {
    ev["type"].as_str().unwrap_or("")
}

/// The secret of a share link (what its URL carries after `/?share=`).
pub fn share_secret(share: &duet_protocol::rest::Share) -> String {
    share
        .url
        .as_deref()
        .unwrap()
        .strip_prefix("/?share=")
        .unwrap()
        .to_string()
}

/// The text of an `assistant` event: its content string, or its text blocks.
pub fn assistant_text(ev: &Value) -> String {
    if kind(ev) != "assistant" {
        return String::new();
    }
    match &ev["message"]["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}
