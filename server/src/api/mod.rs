//! REST handlers under `/api` (share links in `shares.rs`).

pub(crate) mod board;
pub(crate) mod body;
pub(crate) mod observe;
pub(crate) mod push;
pub(crate) mod shares;
pub(crate) mod usage;

use body::optional_json_object;
pub(crate) use body::{ApiJson, RawBody};

use axum::body::Body;
use axum::extract::{Extension, Path, Query, State};
use axum::http::header::{CONTENT_TYPE, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use duet_protocol::ids::SessionId;
use duet_protocol::rest::{
    Approval, ApprovalDecision, CreateSession, Me, ProfileInfo, ResumeSession, SessionInfo,
    SetModeRequest, SetModelRequest, SubmitRequest, SubmitResponse,
};
use duet_protocol::ws::ErrorCode;
use serde::Deserialize;

use crate::auth::{Action, Principal};
use crate::error::AppError;
use crate::observe::{Actor, Switch};
use crate::session::{Accepted, Choice, Session};
use crate::state::{AppState, Conn};

/// Session `id` if `who` may see it (else 404, as if it did not exist)
/// and may do `action` on it (else 403).
pub(crate) fn session(
    state: &AppState,
    who: &Principal,
    id: &str,
    action: Action,
) -> Result<std::sync::Arc<Session>, AppError> {
    let id: SessionId = id.parse().map_err(|_| AppError::no_session())?;
    if !who.sees(id) {
        return Err(AppError::no_session());
    }
    let s = state.registry.get(id).ok_or_else(AppError::no_session)?;
    who.require(action)?;
    Ok(s)
}

/// What a request that changes something does: the role it needs, and the
/// kind of its audit line, under which a refusal is recorded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Act {
    pub(crate) action: Action,
    pub(crate) kind: &'static str,
}

impl Act {
    /// Keystrokes, prompts, mode (driver or owner); `kind` as in the audit.
    pub(crate) const fn drive(kind: &'static str) -> Self {
        Self {
            action: Action::Drive,
            kind,
        }
    }

    /// A tool approval decision (approver or owner).
    pub(crate) const fn approve(kind: &'static str) -> Self {
        Self {
            action: Action::Approve,
            kind,
        }
    }

    /// Creating, ending, resuming, naming and sharing (owner).
    pub(crate) const fn manage(kind: &'static str) -> Self {
        Self {
            action: Action::Manage,
            kind,
        }
    }
}

/// [`session`] for `act` by `actor`: a refusal for the role (403) is also
/// written to the session's audit trail, as a refused submit is. Only a
/// principal that authenticated gets this far, and its refusal lines are
/// bounded (`observe/refusals.rs`).
pub(crate) fn session_for(
    state: &AppState,
    who: &Principal,
    actor: &Actor,
    id: &str,
    act: Act,
) -> Result<std::sync::Arc<Session>, AppError> {
    let s = session(state, who, id, Action::Read)?;
    who.require(act.action)
        .inspect_err(|_| s.observe.forbidden(act.kind, act.action, actor))?;
    Ok(s)
}

/// 403 for a share link: it grants its one session, nothing server-wide.
fn not_share(who: &Principal) -> Result<(), AppError> {
    match who.share {
        Some(_) => Err(AppError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            "a share link grants one session only",
        )),
        None => Ok(()),
    }
}

/// `GET /healthz`.
pub(crate) async fn healthz() -> &'static str {
    "ok\n"
}

/// `POST /api/login` body.
#[derive(Deserialize)]
pub(crate) struct Login {
    token: String,
}

/// `POST /api/login`: trades the token for the HttpOnly cookie. Outside
/// `require_auth`, so it checks the Origin itself, as every other `/api`
/// route does: its JSON body needs no `Content-Type` (`ApiJson`), so no
/// CORS preflight keeps another site's page from posting tokens to it.
pub(crate) async fn login(
    State(state): State<AppState>,
    conn: Option<Extension<Conn>>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Login>,
) -> Response {
    if let Err(e) = state.auth.require_origin(&headers) {
        return e.into_response();
    }
    let peer = conn.map(|c| c.remote.ip());
    if let Err(e) = state.auth.verify(&body.token, peer) {
        return e.into_response();
    }
    let mut resp = StatusCode::NO_CONTENT.into_response();
    resp.headers_mut()
        .insert(SET_COOKIE, state.auth.login_cookie(&body.token));
    resp
}

/// `POST /api/logout`.
pub(crate) async fn logout(State(state): State<AppState>) -> Response {
    let mut resp = StatusCode::NO_CONTENT.into_response();
    resp.headers_mut()
        .insert(SET_COOKIE, state.auth.logout_cookie());
    resp
}

/// `GET /api/me`: any credential may ask who it is.
pub(crate) async fn me(Extension(who): Extension<Principal>) -> Json<Me> {
    Json(Me {
        name: who.name,
        role: who.role,
        session: who.share.as_ref().map(|s| s.session),
        expires_at: who.share.map(|s| s.expires_at),
    })
}

/// `GET /api/profiles`.
pub(crate) async fn profiles(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
) -> Result<Json<Vec<ProfileInfo>>, AppError> {
    not_share(&who)?;
    Ok(Json(state.registry.profiles().infos()))
}

/// `POST /api/sessions` → 201.
pub(crate) async fn create(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    actor: Actor,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<SessionInfo>), AppError> {
    who.require(Action::Manage).inspect_err(|_| {
        state
            .observe
            .forbidden("session_create", Action::Manage, &actor)
    })?;
    // An empty body means "the default profile at the default size".
    let req: CreateSession = optional_json_object(&body)?;
    let requested = req.profile.clone();
    let session = state.registry.create(req).inspect_err(|e| {
        // A refused request (no such profile, a bad size, the session
        // limit) is no failed start.
        if e.status.is_server_error() {
            // The profile used, also when the request named none.
            let used = state.registry.profiles().get(requested.as_deref());
            state
                .observe
                .start_failed(used.map(|p| p.name.as_str()), None, &e.message, &actor);
        }
    })?;
    let info = session.info();
    session.observe.created(
        &info,
        session.launch.cwd.as_deref(),
        &session.launch.args,
        &actor,
    );
    Ok((StatusCode::CREATED, Json(info)))
}

/// `POST /api/sessions/{id}/resume` → 201: a new session that continues
/// the ended session's conversation (its profile's `resume_args`).
/// Audited like a create (with `resumed_from`), and in the ended
/// session's trail, which would otherwise not say where it went on.
pub(crate) async fn resume(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: Actor,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<SessionInfo>), AppError> {
    let old = session_for(&state, &who, &actor, &id, Act::manage("session_resume"))?;
    // No body (scripts written before it existed): the ended session's size.
    let size: ResumeSession = optional_json_object(&body)?;
    let session = state.registry.resume(old.id, size).inspect_err(|e| {
        if e.code == ErrorCode::Internal {
            state
                .observe
                .start_failed(Some(&old.profile), Some(old.id), &e.message, &actor);
        }
    })?;
    let info = session.info();
    session.observe.created(
        &info,
        session.launch.cwd.as_deref(),
        &session.launch.args,
        &actor,
    );
    old.observe.resumed_as(info.id, &actor);
    Ok((StatusCode::CREATED, Json(info)))
}

/// `GET /api/sessions`.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
) -> Json<Vec<SessionInfo>> {
    let mut all = state.registry.list();
    all.retain(|s| who.sees(s.id));
    Json(all)
}

/// `GET /api/sessions/{id}`.
pub(crate) async fn get(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<SessionInfo>, AppError> {
    Ok(Json(session(&state, &who, &id, Action::Read)?.info()))
}

/// `DELETE /api/sessions/{id}` options.
#[derive(Deserialize)]
pub(crate) struct DeleteQuery {
    /// Also delete the transcript now instead of after the retention time.
    #[serde(default)]
    purge: bool,
}

/// `DELETE /api/sessions/{id}`: ends the program (its whole process group)
/// and answers once it has exited, with the final state.
pub(crate) async fn delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Query(q): Query<DeleteQuery>,
    actor: Actor,
) -> Result<Response, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::manage("session_delete"))?;
    s.observe.deleted(q.purge, &actor);
    s.terminate_by(&who.name);
    let wait = s.limits.kill_grace + std::time::Duration::from_secs(2);
    let _ = tokio::time::timeout(wait, s.wait_exited()).await;
    if q.purge {
        state.registry.remove(s.id);
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Ok(Json(s.info()).into_response())
}

/// `?from=SEQ`: only events after SEQ; `&times=true`: each line an
/// `event` message with its receive time (as on the WebSocket), not the
/// bare event.
#[derive(Deserialize)]
pub(crate) struct EventsQuery {
    #[serde(default)]
    pub from: u64,
    #[serde(default)]
    pub times: bool,
}

/// `GET /api/sessions/{id}/events?from=SEQ`: the events as written, NDJSON
/// (verbatim: the export). With `times=true`, one `event` message per line,
/// `{"type":"event","seq","at","event"}`, for replay.
pub(crate) async fn events(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
) -> Result<Response, AppError> {
    let framed = q.times;
    let s = session(&state, &who, &id, Action::Read)?;
    let log = s.events().clone();
    let last = log.last_seq();
    let stream = futures_util::stream::unfold(q.from, move |after| {
        let log = log.clone();
        async move {
            if after >= last {
                return None;
            }
            let (events, upto) = log.read_after_async(after, 512).await;
            if upto <= after {
                return None;
            }
            let mut chunk = String::new();
            for e in events.iter().filter(|e| e.seq <= last) {
                chunk.push_str(if framed {
                    e.frame.as_str()
                } else {
                    e.line.as_str()
                });
                chunk.push('\n');
            }
            Some((Ok::<_, std::convert::Infallible>(chunk), upto))
        }
    });
    Ok((
        [
            (CONTENT_TYPE, "application/x-ndjson"),
            (
                axum::http::header::HeaderName::from_static("x-duet-last-seq"),
                &*last.to_string(),
            ),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

/// `GET /api/sessions/{id}/history`: the earlier conversation of a
/// resumed session (see `session/history.rs`), NDJSON, one
/// `{"session", "seq", "event"}` per line, oldest first; empty for a
/// session that resumed nothing. Fixed once the session started.
pub(crate) async fn history(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let s = session(&state, &who, &id, Action::Read)?;
    let data = match tokio::fs::read(s.dir.join(crate::session::history::FILE)).await {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(AppError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                format!("reading the session's history: {e}"),
            ))
        }
    };
    Ok(([(CONTENT_TYPE, "application/x-ndjson")], data).into_response())
}

/// `GET /api/sessions/{id}/recording`: the terminal as asciicast v2.
pub(crate) async fn recording(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let s = session(&state, &who, &id, Action::Read)?;
    // Small bursts wait in the recording's buffer (see `recording.rs`).
    s.terminal.flush_recording();
    let path = s.dir.join(crate::session::RECORDING_FILE);
    let data = tokio::fs::read(&path).await.map_err(|_| {
        AppError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::SessionNotFound,
            "this session has no recording (--max-recording 0?)",
        )
    })?;
    Ok((
        [
            (CONTENT_TYPE, "application/x-asciicast"),
            (
                axum::http::header::CONTENT_DISPOSITION,
                &*format!("attachment; filename=\"duet-{}.cast\"", s.id),
            ),
        ],
        data,
    )
        .into_response())
}

/// The longest `GET .../screen` waits for the screen parser to catch up.
const SCREEN_SETTLE: std::time::Duration = std::time::Duration::from_millis(500);

/// `GET /api/sessions/{id}/screen`: the visible screen as plain text.
pub(crate) async fn screen(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let s = session(&state, &who, &id, Action::Read)?;
    // The screen parser runs behind the stream; answer with the screen as
    // of the output so far, unless the parser is swamped by a flood.
    let _ = tokio::time::timeout(SCREEN_SETTLE, s.terminal.output.settle()).await;
    let mut text = s.terminal.output.screen_text();
    text.push('\n');
    Ok(([(CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
}

/// `POST /api/sessions/{id}/submit`.
pub(crate) async fn submit(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: Actor,
    ApiJson(body): ApiJson<SubmitRequest>,
) -> Result<Json<SubmitResponse>, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::drive("submit"))?;
    let delivery = s.submit_as(body.text, &actor)?;
    Ok(Json(SubmitResponse {
        queued: delivery == Accepted::Queued,
    }))
}

/// `POST /api/sessions/{id}/mode` → 204: the agent is asked to switch
/// (its answer shows as a `current_mode_update`, or a `set_mode_failed`
/// warning); 400 for a mode it did not offer.
pub(crate) async fn set_mode(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: Actor,
    ApiJson(body): ApiJson<SetModeRequest>,
) -> Result<StatusCode, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::drive("set_mode"))?;
    s.switch_as(Switch::Mode, &body.mode, &actor)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/sessions/{id}/model` → 204: as [`set_mode`], for the models
/// the agent offered (`acp_current_model_update`, `set_model_failed`).
pub(crate) async fn set_model(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: Actor,
    ApiJson(body): ApiJson<SetModelRequest>,
) -> Result<StatusCode, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::drive("set_model"))?;
    s.switch_as(Switch::Model, &body.model, &actor)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/sessions/{id}/approvals/{request_id}`: 200, 404 unknown, 409
/// already decided.
pub(crate) async fn approve(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path((id, request_id)): Path<(String, String)>,
    actor: Actor,
    ApiJson(body): ApiJson<ApprovalDecision>,
) -> Result<Json<Approval>, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::approve("approval"))?;
    let choice = Choice::from_fields(body.option, body.allowed).map_err(AppError::bad_request)?;
    Ok(Json(s.approve_as(&request_id, &choice, &actor)?))
}

/// `GET /api/sessions/{id}/approvals`.
pub(crate) async fn approvals(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Vec<Approval>>, AppError> {
    Ok(Json(session(&state, &who, &id, Action::Read)?.approvals()))
}
