//! A `duet serve` as a process of its own over a test's state directory,
//! so that it can be killed with SIGKILL and started again over the same
//! directory: what a crash of duet leaves behind.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use duet_protocol::ids::SessionId;
use duet_protocol::rest::SessionInfo;
use serde_json::Value;

use super::Client;

/// The owner token of every killable duet.
pub(crate) const TOKEN: &str = "restart-test-token";

/// `duet serve` as a separate process (so it can be killed), with the
/// profiles of `config`; returns it and its base URL.
pub(crate) fn start_duet(state: &std::path::Path, config: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_duet"))
        .args(["serve", "--listen", "127.0.0.1:0", "--token", TOKEN])
        .arg("--state-dir")
        .arg(state)
        .arg("--config")
        .arg(config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("duet printed its URL").unwrap();
        if let Some(rest) = line.strip_prefix("duet is ready: ") {
            let url = rest.split_whitespace().next().unwrap();
            break url
                .split('?')
                .next()
                .unwrap()
                .trim_end_matches('/')
                .to_string();
        }
    };
    (child, url)
}

/// A `duet serve` of its own over `state`, killed with SIGKILL by
/// [`Duet::kill`].
pub(crate) struct Duet {
    pub child: Child,
    pub url: String,
    pub http: reqwest::Client,
}

impl Duet {
    pub(crate) fn start(state: &std::path::Path, config: &std::path::Path) -> Self {
        let (child, url) = start_duet(state, config);
        Self {
            child,
            url,
            http: reqwest::Client::new(),
        }
    }

    pub(crate) async fn send(&self, req: reqwest::RequestBuilder) -> reqwest::Response {
        let resp = req.bearer_auth(TOKEN).send().await.unwrap();
        assert!(resp.status().is_success(), "{}", resp.status());
        resp
    }

    pub(crate) async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        let req = self.http.get(format!("{}{path}", self.url));
        self.send(req).await.json().await.unwrap()
    }

    pub(crate) async fn create(&self) -> SessionInfo {
        let req = self.http.post(format!("{}/api/sessions", self.url));
        self.send(req.json(&serde_json::json!({"profile": "fake"})))
            .await
            .json()
            .await
            .unwrap()
    }

    /// The session's trail (which also waits until every audit line so far,
    /// the server's too, is on disk).
    pub(crate) async fn audit(&self, id: SessionId) -> Vec<Value> {
        let req = self
            .http
            .get(format!("{}/api/sessions/{id}/audit", self.url));
        lines(&self.send(req).await.text().await.unwrap())
    }

    /// A WebSocket client of session `id` (the hello is in `texts[0]`).
    pub(crate) async fn ws(&self, id: impl std::fmt::Display) -> Client {
        let url = format!("{}/api/sessions/{id}/ws", self.url.replace("http", "ws"));
        Client::connect(&url, TOKEN).await
    }

    pub(crate) fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// The lines of an NDJSON body.
pub(crate) fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
