//! Test harness: a duet server in-process on port 0 (shut down on drop), the
//! fake dual-output TUI as its profiles, and a typed WebSocket client.
//! Waits are bounded by a deadline and woken by what they wait for; no test
//! sleeps to wait for readiness.

#![allow(dead_code)]

mod client;
pub(crate) mod fetch;
pub(crate) mod installed;
pub(crate) mod killable;
pub(crate) mod poll;
pub(crate) mod pty;
pub(crate) mod servers;
pub(crate) mod watch;

pub(crate) use client::Client;
// Not every test binary polls.
#[allow(unused_imports)]
pub(crate) use poll::{alive, eventually, metric, open_fds, within};
// Not every test binary reads a close frame.
#[allow(unused_imports)]
pub(crate) use client::{close_of, Closed};

use std::path::PathBuf;
use std::time::Duration;

use duet_protocol::rest::SessionInfo;
use duet_server::config::{ConfigFile, Profile, Profiles};
use duet_server::ServerOptions;
use serde_json::Value;

/// How long any single wait may take before the test fails.
pub(crate) const DEADLINE: Duration = Duration::from_secs(20);
pub(crate) const TOKEN: &str = "test-token-0123456789abcdef";

pub(crate) fn fake_tui() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_tui.py")
        .to_string_lossy()
        .into_owned()
}

fn profile(name: &str, args: &[&str]) -> Profile {
    let mut all = vec![fake_tui()];
    all.extend(args.iter().map(|s| s.to_string()));
    Profile {
        extra_args: false,
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
pub(crate) fn demo_profile(name: &str, cwd: Option<String>) -> Profile {
    Profile {
        extra_args: false,
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
pub(crate) fn profiles() -> Profiles {
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
            ..Default::default()
        },
        env!("CARGO_BIN_EXE_duet").into(),
    )
    .expect("test profiles")
}

/// `profiles` as a config file with only them would give them.
pub(crate) fn profiles_of(profiles: Vec<Profile>) -> Profiles {
    Profiles::from_config(
        ConfigFile {
            default_profile: None,
            profiles,
            tokens: Vec::new(),
            ..Default::default()
        },
        env!("CARGO_BIN_EXE_duet").into(),
    )
    .expect("the profiles")
}

/// [`demo_profile`] as a config file's `[[profile]]`, for the tests of
/// what a config adds to it (budgets, policies).
pub(crate) fn demo_config() -> String {
    let duet = env!("CARGO_BIN_EXE_duet");
    format!(
        r#"
[[profile]]
name = "demo"
command = "{duet}"
args = ["demo-agent", "--json-file", "{{events_file}}", "--input-file", "{{input_file}}", "--token-delay-ms", "1"]
"#
    )
}

/// The profiles of config file `text` (kept as the source, so that a
/// mistake names its line).
pub(crate) fn profiles_from(text: &str) -> Profiles {
    let mut file: ConfigFile = toml::from_str(text).unwrap();
    file.source = Some(text.to_string());
    Profiles::from_config(file, env!("CARGO_BIN_EXE_duet").into()).unwrap()
}

/// A server on 127.0.0.1:0, stopped when dropped.
pub(crate) struct TestServer {
    pub addr: std::net::SocketAddr,
    pub state_dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    pub http: reqwest::Client,
}

impl TestServer {
    pub(crate) async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// A server whose only profiles are `profiles` (as a config file would
    /// give them).
    pub(crate) async fn with_profiles(profiles: Vec<Profile>) -> Self {
        let profiles = profiles_of(profiles);
        Self::start_with(|o| o.profiles = profiles).await
    }

    pub(crate) async fn start_with(adjust: impl FnOnce(&mut ServerOptions)) -> Self {
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

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.get(self.url(path)).bearer_auth(TOKEN)
    }

    pub(crate) fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.post(self.url(path)).bearer_auth(TOKEN)
    }

    /// GETs `path` and decodes the JSON body.
    pub(crate) async fn json<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        let resp = self.get(path).send().await.unwrap();
        assert!(resp.status().is_success(), "GET {path}: {}", resp.status());
        resp.json().await.unwrap()
    }

    /// GETs `path` and returns the body as text (asserting success).
    pub(crate) async fn text(&self, path: &str) -> String {
        let resp = self.get(path).send().await.unwrap();
        assert!(resp.status().is_success(), "GET {path}: {}", resp.status());
        resp.text().await.unwrap()
    }

    /// The session's current REST view.
    pub(crate) async fn info(&self, id: impl std::fmt::Display) -> SessionInfo {
        self.json(&format!("/api/sessions/{id}")).await
    }

    /// POSTs a JSON body.
    pub(crate) async fn post_json(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        self.post(path).json(&body).send().await.unwrap()
    }

    /// DELETEs `path`.
    pub(crate) async fn delete(&self, path: &str) -> reqwest::Response {
        self.http
            .delete(self.url(path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
    }

    /// Starts a session of `profile` and returns its info.
    pub(crate) async fn create(&self, profile: &str) -> SessionInfo {
        let resp = self
            .post("/api/sessions")
            .json(&serde_json::json!({"profile": profile, "cols": 100, "rows": 30}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
        resp.json().await.unwrap()
    }

    /// Resumes the ended session `id` (which must be resumable and must
    /// have named its agent's conversation) and returns a client of the new
    /// session once the agent says it continues that conversation
    /// (`session_start` with `source: "resume"` and the same id).
    pub(crate) async fn resume_ended(&self, id: impl std::fmt::Display) -> Client {
        let ended = self.info(&id).await;
        assert!(ended.resumable, "{ended:?}");
        let agent_id = ended.agent_session_id.clone().expect("the agent's id");
        let resp = self
            .post_json(&format!("/api/sessions/{id}/resume"), serde_json::json!({}))
            .await;
        assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
        let resumed: SessionInfo = resp.json().await.unwrap();
        let mut client = self.connect(resumed.id, None).await;
        let (_, start) = client
            .until_event(|e| e["subtype"] == "session_start")
            .await;
        assert_eq!(start["data"]["source"], "resume", "{start}");
        assert_eq!(start["data"]["session_id"], agent_id.as_str(), "{start}");
        client
    }

    pub(crate) async fn connect(&self, id: impl std::fmt::Display, from: Option<u64>) -> Client {
        self.connect_as(id, from, TOKEN).await
    }

    /// Like [`TestServer::connect`], with another credential (the hello is
    /// in `texts[0]`).
    pub(crate) async fn connect_as(
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
    pub(crate) async fn shutdown(mut self) {
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

/// The event's `type`.
pub(crate) fn kind(ev: &Value) -> &str {
    ev["type"].as_str().unwrap_or("")
}

/// The secret of a share link (what its URL carries after `/?share=`).
pub(crate) fn share_secret(share: &duet_protocol::rest::Share) -> String {
    share
        .url
        .as_deref()
        .unwrap()
        .strip_prefix("/?share=")
        .unwrap()
        .to_string()
}

/// The text of an `assistant` event: its content string, or its text blocks.
pub(crate) fn assistant_text(ev: &Value) -> String {
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
