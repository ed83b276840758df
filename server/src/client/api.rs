//! The REST calls a terminal client makes, with errors that say what to do.

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{ApiError, CreateSession, ResumeSession, SessionInfo};
use reqwest::StatusCode;
use serde::de::DeserializeOwned;

use super::find::Server;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    /// The credential was refused.
    #[error("{base} refused the token (401): {hint}")]
    Unauthorized { base: String, hint: String },
    /// No such session (any more).
    #[error("no session {0}; `duet ls` lists them")]
    NoSession(String),
    /// duet answered with an error.
    #[error("{message} ({status})")]
    Refused { status: StatusCode, message: String },
    /// duet could not be reached.
    #[error("cannot reach duet at {base}: {source}")]
    Unreachable {
        base: String,
        #[source]
        source: reqwest::Error,
    },
}

/// A duet's REST API.
#[derive(Debug, Clone)]
pub(crate) struct Api {
    pub(crate) http: reqwest::Client,
    pub(crate) server: Server,
}

impl Api {
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let req = self
            .http
            .request(method, format!("{}/api{path}", self.server.base));
        match &self.server.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    async fn call<T: DeserializeOwned>(
        &self,
        req: reqwest::RequestBuilder,
        what: &str,
    ) -> Result<T, CallError> {
        let unreachable = |source| CallError::Unreachable {
            base: self.server.base.clone(),
            source,
        };
        let resp = req.send().await.map_err(unreachable)?;
        let status = resp.status();
        if status.is_success() {
            return resp.json().await.map_err(unreachable);
        }
        if status == StatusCode::UNAUTHORIZED {
            let hint = match &self.server.state_dir {
                Some(dir) => format!(
                    "the token in {} is not that duet's",
                    dir.join(crate::instance::SERVER_FILE).display()
                ),
                None if self.server.token.is_none() => {
                    "give the token with --token or DUET_TOKEN".into()
                }
                None => "check --token or DUET_TOKEN".into(),
            };
            return Err(CallError::Unauthorized {
                base: self.server.base.clone(),
                hint,
            });
        }
        if status == StatusCode::NOT_FOUND && what.starts_with("session ") {
            return Err(CallError::NoSession(what["session ".len()..].to_string()));
        }
        let message = match resp.json::<ApiError>().await {
            Ok(e) => e.error.message,
            Err(_) => format!("{what} failed"),
        };
        Err(CallError::Refused { status, message })
    }

    /// Every session the credential sees.
    pub(crate) async fn sessions(&self) -> Result<Vec<SessionInfo>, CallError> {
        let req = self.request(reqwest::Method::GET, "/sessions");
        self.call(req, "listing the sessions").await
    }

    /// One session.
    pub(crate) async fn session(&self, id: SessionId) -> Result<SessionInfo, CallError> {
        let req = self.request(reqwest::Method::GET, &format!("/sessions/{id}"));
        self.call(req, &format!("session {id}")).await
    }

    /// Starts a session.
    pub(crate) async fn create(&self, body: &CreateSession) -> Result<SessionInfo, CallError> {
        let req = self.request(reqwest::Method::POST, "/sessions").json(body);
        self.call(req, "starting the session").await
    }

    /// Names a session.
    pub(crate) async fn rename(&self, id: SessionId, name: &str) -> Result<SessionInfo, CallError> {
        let path = format!("/sessions/{id}");
        let body = duet_protocol::board::RenameSession {
            name: name.to_string(),
        };
        let req = self.request(reqwest::Method::PATCH, &path).json(&body);
        self.call(req, &format!("naming session {id}")).await
    }

    /// Continues an ended session's conversation in a new one.
    pub(crate) async fn resume(
        &self,
        id: SessionId,
        size: &ResumeSession,
    ) -> Result<SessionInfo, CallError> {
        let path = format!("/sessions/{id}/resume");
        let req = self.request(reqwest::Method::POST, &path).json(size);
        self.call(req, &format!("resuming session {id}")).await
    }

    /// The browser's address of session `id` (a browser signed in to this
    /// duet opens it; the token is not in it).
    pub(crate) fn browser_url(&self, id: SessionId) -> String {
        format!("{}/#/session/{id}", self.server.base)
    }

    /// The same, signing a browser in on the way (for a phone, which has
    /// no cookie yet): the token is in it.
    pub(crate) fn sign_in_url(&self, id: SessionId) -> String {
        match &self.server.token {
            Some(t) => format!("{}/?token={t}#/session/{id}", self.server.base),
            None => self.browser_url(id),
        }
    }

    /// The WebSocket of session `id`, as a terminal client opens it: no
    /// events (`from` past any), and its device name.
    pub(crate) fn ws_url(&self, id: SessionId, device: &str) -> String {
        let base = match self.server.base.strip_prefix("https://") {
            Some(rest) => format!("wss://{rest}"),
            None => format!("ws://{}", self.server.base.trim_start_matches("http://")),
        };
        format!(
            "{base}/api/sessions/{id}/ws?from={}&device={}",
            u64::MAX,
            percent_encode(device)
        )
    }
}

/// `s` for a query string: everything but unreserved characters escaped.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let api = Api {
            http: reqwest::Client::new(),
            server: Server {
                base: "https://duet.example/s/duet-0".into(),
                token: Some("t0k".into()),
                state_dir: None,
            },
        };
        let id = SessionId::new();
        assert_eq!(
            api.ws_url(id, "terminal on a&b"),
            format!(
                "wss://duet.example/s/duet-0/api/sessions/{id}/ws?from={}&device=terminal%20on%20a%26b",
                u64::MAX
            )
        );
        assert_eq!(
            api.sign_in_url(id),
            format!("https://duet.example/s/duet-0/?token=t0k#/session/{id}")
        );
    }
}
