//! Access control: a bearer token (or the HttpOnly cookie a browser gets for
//! it) on every API route, with wrong guesses throttled, and an Origin check
//! so another site's page cannot drive a session through the user's browser.
//! (The Host check against DNS rebinding is in `host.rs`.)
//!
//! A credential names a [`Principal`]: the main token is the owner, a
//! `[[token]]` of the config file has its own name and role (only its
//! SHA-256 is configured), and a share link's secret grants its role on its
//! one session. Handlers check the principal's role for what they do.

use std::net::IpAddr;
use std::sync::Arc;

use crate::secret::{constant_time_eq, sha256};
use axum::http::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use duet_protocol::ids::SessionId;
use duet_protocol::rest::Role;
use duet_protocol::ws::ErrorCode;

use crate::config::NamedToken;
use crate::error::AppError;
use crate::shares::Shares;
use crate::throttle::Throttle;

/// Who made a request, set by [`require_auth`] as a request extension (and
/// carried by each WebSocket connection).
#[derive(Debug, Clone)]
pub(crate) struct Principal {
    /// `owner` for the main token, a `[[token]]` name, or `share:<id>`.
    pub name: String,
    pub role: Role,
    /// For a share link: its id, its one session and when it expires.
    pub share: Option<ShareScope>,
}

/// What a share link is limited to.
#[derive(Debug, Clone)]
pub(crate) struct ShareScope {
    pub id: String,
    pub session: SessionId,
    /// Unix time in milliseconds.
    pub expires_at: u64,
}

/// What a request or message does, for the role check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// See a session: terminal, chat, state.
    Read,
    /// Keystrokes, submit, cancel, resize.
    Drive,
    /// Decide tool approvals.
    Approve,
    /// Create, name, delete, resume and share sessions.
    Manage,
    /// Read a session's audit trail (who did what, from where).
    Audit,
    /// Read the server's metrics.
    Metrics,
}

impl Action {
    /// Whether `role` may do this.
    pub(crate) fn allowed(self, role: Role) -> bool {
        matches!(
            (self, role),
            (_, Role::Owner)
                | (Action::Read, _)
                | (Action::Drive, Role::Driver)
                | (Action::Approve, Role::Approver)
        )
    }

    /// Its name in the audit trail.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Drive => "drive",
            Action::Approve => "approve",
            Action::Manage => "manage",
            Action::Audit => "audit",
            Action::Metrics => "metrics",
        }
    }

    /// The roles that may, for messages.
    pub(crate) fn roles(self) -> &'static str {
        match self {
            Action::Read => "any role",
            Action::Drive => "the driver or owner role",
            Action::Approve => "the approver or owner role",
            Action::Manage | Action::Audit | Action::Metrics => "the owner role",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Action::Read => "reading",
            Action::Drive => "typing, prompts, cancel and resize",
            Action::Approve => "approving or denying tool calls",
            Action::Manage => "creating, naming, ending, resuming and sharing sessions",
            Action::Audit => "reading a session's audit trail",
            Action::Metrics => "reading the server's metrics",
        }
    }
}

impl Principal {
    /// The owner (the main token, or no authentication at all).
    pub(crate) fn owner() -> Self {
        Self {
            name: "owner".into(),
            role: Role::Owner,
            share: None,
        }
    }

    /// Why this principal may not do `action`, if it may not.
    pub(crate) fn refusal(&self, action: Action) -> Option<String> {
        (!action.allowed(self.role)).then(|| {
            format!(
                "{} needs {}; you ({}) are {}",
                action.what(),
                action.roles(),
                self.name,
                self.role.as_str()
            )
        })
    }

    /// 403 unless this principal may do `action`.
    pub(crate) fn require(&self, action: Action) -> Result<(), AppError> {
        match self.refusal(action) {
            Some(msg) => Err(AppError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::Forbidden,
                msg,
            )),
            None => Ok(()),
        }
    }

    /// Whether this principal may see session `id` at all (a share link
    /// sees its own session only).
    pub(crate) fn sees(&self, id: SessionId) -> bool {
        self.share.as_ref().is_none_or(|s| s.session == id)
    }
}

/// How clients prove who they are.
#[derive(Clone)]
pub(crate) struct Auth {
    /// `None` disables authentication (loopback only; see the CLI).
    token: Option<String>,
    tokens: Arc<Vec<NamedToken>>,
    /// Share links; their secrets are credentials too.
    pub shares: Arc<Shares>,
    cookie_name: String,
    secure_cookie: bool,
    allowed_origins: Vec<String>,
    throttle: Arc<Throttle>,
}

impl Auth {
    /// `cookie_name` should be distinct per server so two duets on one host
    /// (cookies ignore ports) do not log each other out.
    pub(crate) fn new(
        token: Option<String>,
        cookie_name: String,
        secure_cookie: bool,
        allowed_origins: Vec<String>,
    ) -> Self {
        Self {
            token,
            tokens: Arc::default(),
            shares: Arc::default(),
            cookie_name,
            secure_cookie,
            allowed_origins: allowed_origins
                .into_iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
            throttle: Arc::default(),
        }
    }

    /// Adds the config file's named tokens.
    pub(crate) fn with_tokens(mut self, tokens: Vec<NamedToken>) -> Self {
        self.tokens = Arc::new(tokens);
        self
    }

    /// Whether principal `name` still exists: the owner, a configured
    /// token, a live share link (for devices subscribed earlier).
    pub(crate) fn knows(&self, name: &str) -> bool {
        if name == "owner" || self.token.is_none() {
            return true;
        }
        match name.strip_prefix("share:") {
            Some(id) => self.shares.live(id),
            None => self.tokens.iter().any(|t| t.name == name),
        }
    }

    /// Principal `name` as it stands now (`owner`, a configured token, a
    /// live share link), or `None` once it is gone: a capability made for
    /// it is worth no more than it.
    pub(crate) fn principal_named(&self, name: &str) -> Option<Principal> {
        if name == "owner" || self.token.is_none() {
            return Some(Principal::owner());
        }
        if let Some(id) = name.strip_prefix("share:") {
            let g = self.shares.get(id)?;
            return Some(Principal {
                name: name.to_string(),
                role: g.role,
                share: Some(ShareScope {
                    id: g.id,
                    session: g.session,
                    expires_at: g.expires_at,
                }),
            });
        }
        self.tokens
            .iter()
            .find(|t| t.name == name)
            .map(|t| Principal {
                name: t.name.clone(),
                role: t.role,
                share: None,
            })
    }

    /// 429 while `peer` (or everyone) has guessed wrong too often: the
    /// tokens' throttle, for other secrets a client presents.
    pub(crate) fn guess_allowed(&self, peer: Option<IpAddr>) -> Result<(), AppError> {
        self.throttle.check(peer).map_err(|wait| {
            AppError::too_many(
                "too many wrong secrets from this address; try again later",
                wait,
            )
        })
    }

    /// Counts a wrong secret from `peer` (see [`Auth::guess_allowed`]).
    pub(crate) fn wrong_guess(&self, peer: Option<IpAddr>, candidate: &str) {
        self.throttle.failed(peer, candidate);
    }

    /// Who `candidate` stands for (each comparison in constant time).
    /// Unthrottled: for requests use [`Auth::verify`].
    fn identify(&self, candidate: &str) -> Option<Principal> {
        let main = self.token.as_ref()?;
        if constant_time_eq(main.as_bytes(), candidate.as_bytes()) {
            return Some(Principal::owner());
        }
        let hash = sha256(candidate.as_bytes());
        // Every named token is compared, so the time says nothing about
        // which one (or whether one) matched.
        let mut named = None;
        for t in self.tokens.iter() {
            if constant_time_eq(&t.sha256, &hash) {
                named = Some(Principal {
                    name: t.name.clone(),
                    role: t.role,
                    share: None,
                });
            }
        }
        if named.is_some() {
            return named;
        }
        self.shares.lookup(&hash).map(|g| Principal {
            name: format!("share:{}", g.id),
            role: g.role,
            share: Some(ShareScope {
                id: g.id,
                session: g.session,
                expires_at: g.expires_at,
            }),
        })
    }

    /// Checks a token a client sent from `peer`: 429 while that address (or
    /// everyone) has guessed wrong too often, 401 if wrong (counted).
    pub(crate) fn verify(
        &self,
        candidate: &str,
        peer: Option<IpAddr>,
    ) -> Result<Principal, AppError> {
        if self.token.is_none() {
            return Ok(Principal::owner());
        }
        if let Err(wait) = self.throttle.check(peer) {
            return Err(AppError::too_many(
                "too many wrong tokens from this address; try again later",
                wait,
            ));
        }
        if let Some(p) = self.identify(candidate) {
            return Ok(p);
        }
        self.throttle.failed(peer, candidate);
        Err(AppError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "wrong token",
        ))
    }

    fn credential<'a>(&self, headers: &'a HeaderMap) -> Option<(&'a str, bool)> {
        if let Some(v) = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()) {
            if let Some(t) = v.strip_prefix("Bearer ") {
                return Some((t.trim(), false));
            }
        }
        for v in headers.get_all(COOKIE) {
            let Ok(v) = v.to_str() else { continue };
            for pair in v.split(';') {
                if let Some((k, val)) = pair.trim().split_once('=') {
                    if k == self.cookie_name {
                        return Some((val, true));
                    }
                }
            }
        }
        None
    }

    /// Checks the credentials of a request from `peer`.
    pub(crate) fn check(
        &self,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
    ) -> Result<Principal, AppError> {
        if self.token.is_none() {
            return Ok(Principal::owner());
        }
        match self.credential(headers) {
            Some((t, _)) => self.verify(t, peer),
            None => Err(AppError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthorized,
                "a token is required: `Authorization: Bearer <token>`, or open the URL duet printed at start",
            )),
        }
    }

    /// Whether the request's Origin (if any) may act here: the same origin
    /// as the Host it was sent to, or one allowed by `--allow-origin`.
    /// Requests without Origin come from non-browser clients, which must
    /// hold the token anyway.
    pub(crate) fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else {
            return true;
        };
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.allowed_origins.contains(&origin) {
            return true;
        }
        let Some(host) = headers.get(HOST).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let host = host.to_ascii_lowercase();
        // Behind a TLS proxy the scheme seen here is http while the browser's
        // is https, so compare authorities (host[:port]) only.
        match origin.split_once("://") {
            Some((scheme, authority)) => {
                authority == host
                    || strip_default_port(authority, scheme) == strip_default_port(&host, scheme)
            }
            None => false,
        }
    }

    /// 403 unless [`Auth::origin_allowed`].
    pub(crate) fn require_origin(&self, headers: &HeaderMap) -> Result<(), AppError> {
        if self.origin_allowed(headers) {
            return Ok(());
        }
        Err(AppError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            "requests from this Origin are not allowed (see --allow-origin)",
        ))
    }

    /// `Set-Cookie` value that logs a browser in with `token` (the one it
    /// presented: a named token must not become the owner's).
    pub(crate) fn login_cookie(&self, token: &str) -> HeaderValue {
        let secure = if self.secure_cookie { "; Secure" } else { "" };
        HeaderValue::from_str(&format!(
            "{}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=604800{secure}",
            self.cookie_name
        ))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// `Set-Cookie` value that signs a browser in with a share link's
    /// secret, for as long as the share lives.
    pub(crate) fn share_cookie(&self, secret: &str, max_age_secs: u64) -> HeaderValue {
        let secure = if self.secure_cookie { "; Secure" } else { "" };
        HeaderValue::from_str(&format!(
            "{}={secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age_secs}{secure}",
            self.cookie_name
        ))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// `Set-Cookie` value that logs a browser out.
    pub(crate) fn logout_cookie(&self) -> HeaderValue {
        HeaderValue::from_str(&format!(
            "{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0",
            self.cookie_name
        ))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
    }
}

fn strip_default_port<'a>(authority: &'a str, scheme: &str) -> &'a str {
    match scheme {
        "http" | "ws" => authority.strip_suffix(":80").unwrap_or(authority),
        "https" | "wss" => authority.strip_suffix(":443").unwrap_or(authority),
        _ => authority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn bearer_and_cookie_both_work() {
        let auth = Auth::new(Some("s3cret".into()), "duet_t".into(), false, vec![]);
        assert!(auth
            .check(&headers(&[("authorization", "Bearer s3cret")]), None)
            .is_ok());
        assert!(auth
            .check(&headers(&[("cookie", "a=b; duet_t=s3cret")]), None)
            .is_ok());
        assert!(auth
            .check(&headers(&[("authorization", "Bearer nope")]), None)
            .is_err());
        assert!(auth.check(&headers(&[]), None).is_err());
        assert!(auth
            .check(&headers(&[("cookie", "duet_other=s3cret")]), None)
            .is_err());
    }

    #[test]
    fn origin_must_match_host_or_be_allowed() {
        let auth = Auth::new(
            None,
            "c".into(),
            false,
            vec!["https://app.example.com/".into()],
        );
        let ok = |o: &str, h: &str| auth.origin_allowed(&headers(&[("origin", o), ("host", h)]));
        assert!(ok("http://127.0.0.1:8080", "127.0.0.1:8080"));
        assert!(ok("https://duet.example.com", "duet.example.com"));
        assert!(ok("https://duet.example.com", "duet.example.com:443"));
        assert!(ok("https://app.example.com", "duet.example.com"));
        assert!(!ok("http://evil.example", "127.0.0.1:8080"));
        assert!(!ok("http://127.0.0.1:9999", "127.0.0.1:8080"));
        assert!(!ok("null", "127.0.0.1:8080"));
        assert!(auth.origin_allowed(&headers(&[("host", "x")])));
    }
}
