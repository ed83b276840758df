//! What every request passes through before its handler: the Host check
//! (every route but `/healthz`), the credential and Origin check (`/api`
//! and `/metrics`), and who made it (the [`Actor`] a handler records).

use std::net::IpAddr;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::Principal;
use crate::host::HEALTH_PATH;
use crate::observe::Actor;
use crate::state::{AppState, Conn};

/// Middleware for every route but `/healthz`: see the module docs.
pub(crate) async fn require_allowed_host(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    if req.uri().path() != HEALTH_PATH {
        let local = req.extensions().get::<Conn>().map(|c| c.local);
        if let Err(e) = state.hosts.check(&req, local) {
            return e.into_response();
        }
    }
    next.run(req).await
}

/// Middleware for `/api/*`: valid credentials and an acceptable Origin.
pub(crate) async fn require_auth(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let peer = req.extensions().get::<Conn>().map(|c| c.remote.ip());
    let principal = match state.auth.check(req.headers(), peer) {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = state.auth.require_origin(req.headers()) {
        return e.into_response();
    }
    let mut req = req;
    req.extensions_mut().insert(principal);
    next.run(req).await
}

/// The client address a proxy appended last to `X-Forwarded-For`: the
/// entries before it were sent by the client and prove nothing.
fn forwarded_for(parts: &Parts) -> Option<IpAddr> {
    let last = parts
        .headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .last()?;
    last.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

impl FromRequestParts<AppState> for Actor {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts.extensions.get::<Conn>().map(|c| c.remote.ip());
        let credential = parts.extensions.get::<Principal>();
        Ok(state
            .observe
            .actor(credential, peer, || forwarded_for(parts)))
    }
}
