//! `GET /metrics` (on the main listener behind the token, and without it on
//! `--metrics-listen`) and `GET /api/sessions/{id}/audit`.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Extension;
use axum::Router;
use duet_protocol::ids::SessionId;
use duet_protocol::rest::SessionStatus;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::auth::{Action, Principal};
use crate::error::AppError;
use crate::observe::metrics::CONTENT_TYPE as METRICS_TYPE;
use crate::state::AppState;
use crate::state_dir;

/// `GET /metrics` on the main listener: owners only (a share link or a
/// narrower named token sees its own sessions, not the server's figures).
pub(crate) async fn metrics_for_owner(
    state: State<AppState>,
    Extension(who): Extension<Principal>,
    actor: super::Actor,
) -> Result<Response, AppError> {
    who.require(Action::Metrics)
        .inspect_err(|_| state.observe.forbidden("metrics", Action::Metrics, &actor))?;
    Ok(metrics(state).await)
}

/// `GET /metrics`.
pub(crate) async fn metrics(State(state): State<AppState>) -> Response {
    let sessions = state.registry.list();
    let running = sessions
        .iter()
        .filter(|s| s.status == SessionStatus::Running)
        .count();
    let m = &state.observe.metrics;
    m.set_sessions(running as i64, (sessions.len() - running) as i64);
    ([(CONTENT_TYPE, METRICS_TYPE)], m.render()).into_response()
}

/// Bytes read from the audit file at a time.
const CHUNK: usize = 64 << 10;

/// `GET /api/sessions/{id}/audit`: the session's audit trail, NDJSON. A
/// session from an earlier run of duet (whose directory is still kept)
/// is read from its directory.
pub(crate) async fn audit(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: super::Actor,
) -> Result<Response, AppError> {
    let id: SessionId = id.parse().map_err(|_| AppError::no_session())?;
    if !who.sees(id) {
        return Err(AppError::no_session());
    }
    // Who did what from where is for the session's owners. A refusal is
    // recorded in the trail of a listed session (as for every action on
    // it); a kept directory that is not listed has no observer to write it.
    who.require(Action::Audit).inspect_err(|_| {
        if let Some(s) = state.registry.get(id) {
            s.observe.forbidden("audit_read", Action::Audit, &actor);
        }
    })?;
    let dir = match state.registry.get(id) {
        Some(s) => s.dir.clone(),
        None => {
            let dir = state.observe.state_dir.join(id.to_string());
            if !state_dir::is_session_dir(&dir) {
                return Err(AppError::no_session());
            }
            dir
        }
    };
    state.observe.flush().await;
    let file = match tokio::fs::File::open(dir.join("audit.jsonl")).await {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(AppError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                duet_protocol::ws::ErrorCode::Internal,
                format!("reading the audit trail: {e}"),
            ))
        }
    };
    let stream = futures_util::stream::unfold(file, |file| async move {
        let mut file = file?;
        let mut buf = vec![0u8; CHUNK];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok::<_, std::io::Error>(buf), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    });
    Ok((
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response())
}

/// Serves `GET /metrics`, without auth, on `listener` until `stop` turns
/// true. For a Prometheus that scrapes over a private network or loopback.
pub(crate) async fn serve_metrics(
    listener: tokio::net::TcpListener,
    state: AppState,
    mut stop: watch::Receiver<bool>,
) {
    if let Ok(addr) = listener.local_addr() {
        info!(%addr, "serving metrics (no auth) at /metrics");
    }
    let app = Router::new()
        .route("/metrics", get(metrics))
        .with_state(state);
    let stopped = async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(stopped)
        .await
    {
        warn!(?e, "the metrics listener failed");
    }
}
