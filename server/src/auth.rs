//! Access control: a bearer token (or the HttpOnly cookie a browser gets for
//! it) on every API route, with wrong guesses throttled, and an Origin check
//! so another site's page cannot drive a session through the user's browser.
//! (The Host check against DNS rebinding is in `host.rs`.)

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use duet_protocol::ws::ErrorCode;

use crate::error::AppError;
use crate::server::{AppState, Conn};
use crate::throttle::Throttle;

/// How clients prove who they are.
#[derive(Clone)]
pub struct Auth {
    /// `None` disables authentication (loopback only; see the CLI).
    token: Option<String>,
    cookie_name: String,
    secure_cookie: bool,
    allowed_origins: Vec<String>,
    throttle: Arc<Throttle>,
}

impl Auth {
    /// `cookie_name` should be distinct per server so two duets on one host
    /// (cookies ignore ports) do not log each other out.
    pub fn new(
        token: Option<String>,
        cookie_name: String,
        secure_cookie: bool,
        allowed_origins: Vec<String>,
    ) -> Self {
        Self {
            token,
            cookie_name,
            secure_cookie,
            allowed_origins: allowed_origins
                .into_iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
            throttle: Arc::default(),
        }
    }

    /// Whether `candidate` is the token (constant time). Unthrottled: for
    /// requests use [`Auth::verify`].
    fn token_matches(&self, candidate: &str) -> bool {
        match &self.token {
            None => true,
            Some(t) => constant_time_eq(t.as_bytes(), candidate.as_bytes()),
        }
    }

    /// Checks a token a client sent from `peer`: 429 while that address (or
    /// everyone) has guessed wrong too often, 401 if wrong (counted).
    pub fn verify(&self, candidate: &str, peer: Option<IpAddr>) -> Result<(), AppError> {
        if self.token.is_none() {
            return Ok(());
        }
        if let Err(wait) = self.throttle.check(peer) {
            return Err(AppError::too_many(
                "too many wrong tokens from this address; try again later",
                wait,
            ));
        }
        if self.token_matches(candidate) {
            return Ok(());
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
    pub fn check(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> Result<(), AppError> {
        if self.token.is_none() {
            return Ok(());
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
    pub fn origin_allowed(&self, headers: &HeaderMap) -> bool {
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

    /// `Set-Cookie` value that logs a browser in.
    pub fn login_cookie(&self) -> HeaderValue {
        let token = self.token.as_deref().unwrap_or("");
        let secure = if self.secure_cookie { "; Secure" } else { "" };
        HeaderValue::from_str(&format!(
            "{}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=604800{secure}",
            self.cookie_name
        ))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// `Set-Cookie` value that logs a browser out.
    pub fn logout_cookie(&self) -> HeaderValue {
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

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Middleware for `/api/*`: valid credentials and an acceptable Origin.
pub async fn require_auth(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let peer = req.extensions().get::<Conn>().map(|c| c.remote.ip());
    if let Err(e) = state.auth.check(req.headers(), peer) {
        return e.into_response();
    }
    if !state.auth.origin_allowed(req.headers()) {
        return AppError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            "requests from this Origin are not allowed (see --allow-origin)",
        )
        .into_response();
    }
    next.run(req).await
}

/// A random token: 32 bytes from the OS, hex-encoded.
pub fn random_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("reading OS randomness: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
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
