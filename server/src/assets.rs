//! The web UI, embedded at build time (see build.rs), served with cache
//! headers and a strict Content-Security-Policy.

use axum::extract::{Extension, Query, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION, REFERRER_POLICY, SET_COOKIE,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use duet_protocol::ws::ErrorCode;
use serde::Deserialize;

use crate::error::AppError;
use crate::state::{AppState, Conn};

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; \
object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

const NOT_BUILT: &str = "<!doctype html><meta charset=utf-8><title>duet</title>\
<body style=\"font-family:sans-serif;max-width:40em;margin:4em auto\">\
<h1>duet is running</h1><p>This binary was built without its web UI. Build it with \
<code>npm --prefix web ci &amp;&amp; npm --prefix web run build</code> and rebuild duet \
(or use <code>scripts/run.sh</code>, which does both). The API is available under \
<code>/api</code>.</p></body>";

fn find(path: &str) -> Option<(&'static [u8], &'static str)> {
    ASSETS
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|(_, bytes, ty)| (*bytes, *ty))
}

fn with_security_headers(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // The login URL carries the token; never leak it in a Referer.
    h.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    resp
}

fn index() -> Response {
    let resp = match find("/index.html") {
        Some((bytes, ty)) => {
            ([(CONTENT_TYPE, ty), (CACHE_CONTROL, "no-cache")], bytes).into_response()
        }
        None => Html(NOT_BUILT).into_response(),
    };
    with_security_headers(resp)
}

/// `?token=` (or `?share=`) on the page URL.
#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    token: Option<String>,
    share: Option<String>,
}

/// `GET /`: the app. With `?token=`, trades the token for the cookie and
/// redirects to a clean URL, so the token leaves the address bar and history.
pub(crate) async fn root(
    State(state): State<AppState>,
    conn: Option<Extension<Conn>>,
    Query(q): Query<LoginQuery>,
) -> Response {
    let peer = conn.map(|c| c.remote.ip());
    if let Some(secret) = q.share {
        return share_login(&state, &secret, peer);
    }
    let Some(token) = q.token else {
        return index();
    };
    if let Err(e) = state.auth.verify(&token, peer) {
        if e.status != StatusCode::UNAUTHORIZED {
            return with_security_headers(e.into_response());
        }
        return with_security_headers(
            (
                StatusCode::UNAUTHORIZED,
                Html("<!doctype html><meta charset=utf-8><title>duet</title><p>That token is not valid for this duet server. Use the URL it printed at start.</p>"),
            )
                .into_response(),
        );
    }
    let mut resp = StatusCode::SEE_OTHER.into_response();
    // Relative, so a proxy that serves duet under a path prefix keeps it.
    resp.headers_mut()
        .insert(LOCATION, HeaderValue::from_static("./"));
    resp.headers_mut()
        .insert(SET_COOKIE, state.auth.login_cookie(&token));
    with_security_headers(resp)
}

/// `GET /?share=<secret>`: a share link. Trades the secret for a cookie
/// that lasts as long as the share, and opens its session.
fn share_login(state: &AppState, secret: &str, peer: Option<std::net::IpAddr>) -> Response {
    let scope = match state.auth.verify(secret, peer) {
        Ok(p) => p.share,
        Err(e) if e.status != StatusCode::UNAUTHORIZED => {
            return with_security_headers(e.into_response())
        }
        Err(_) => None,
    };
    let Some(scope) = scope else {
        return with_security_headers(
            (
                StatusCode::UNAUTHORIZED,
                Html("<!doctype html><meta charset=utf-8><title>duet</title><p>This share link is not valid: it expired, was revoked, or is for another duet server.</p>"),
            )
                .into_response(),
        );
    };
    let max_age = scope
        .expires_at
        .saturating_sub(crate::clock::now_ms())
        .div_ceil(1000);
    let mut resp = StatusCode::SEE_OTHER.into_response();
    let location = format!("./#/session/{}", scope.session);
    resp.headers_mut().insert(
        LOCATION,
        HeaderValue::from_str(&location).unwrap_or_else(|_| HeaderValue::from_static("./")),
    );
    resp.headers_mut()
        .insert(SET_COOKIE, state.auth.share_cookie(secret, max_age));
    with_security_headers(resp)
}

/// Any other non-API path: a file of the build, or the app (client routing).
pub(crate) async fn static_file(uri: Uri) -> Response {
    let path = uri.path();
    match find(path) {
        Some((bytes, ty)) => {
            // Vite puts content hashes in asset names, so those never change.
            let cache = if path.starts_with("/assets/") {
                "public, max-age=31536000, immutable"
            } else {
                "no-cache"
            };
            with_security_headers(
                ([(CONTENT_TYPE, ty), (CACHE_CONTROL, cache)], bytes).into_response(),
            )
        }
        None if path.starts_with("/api/") => AppError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::BadMessage,
            format!("no API route {path}"),
        )
        .into_response(),
        None if path
            .rsplit('/')
            .next()
            .is_some_and(|last| last.contains('.')) =>
        {
            StatusCode::NOT_FOUND.into_response()
        }
        None => index(),
    }
}
