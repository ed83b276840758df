//! Share links of a session over REST: create (the secret is shown once),
//! list (without secrets), revoke (its live sockets close). Owners only.

use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::Json;
use duet_protocol::rest::{CreateShare, Share};
use duet_protocol::ws::ErrorCode;

use super::{session_for, Act, ApiJson};
use crate::auth::Principal;
use crate::error::AppError;
use crate::observe::Actor;
use crate::shares::ShareError;
use crate::state::AppState;

/// `POST /api/sessions/{id}/shares` → 201: a share link (owner only; an
/// owner share is refused).
pub(crate) async fn create(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: Actor,
    ApiJson(body): ApiJson<CreateShare>,
) -> Result<(StatusCode, Json<Share>), AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::manage("share_create"))?;
    let share = state
        .auth
        .shares
        .create(s.id, body.role, body.expires_in)
        .map_err(|e| match e {
            ShareError::Owner => {
                AppError::new(StatusCode::FORBIDDEN, ErrorCode::Forbidden, e.to_string())
            }
            ShareError::Full => AppError::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::LimitReached,
                e.to_string(),
            ),
            ShareError::Random(_) => AppError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                e.to_string(),
            ),
            ShareError::Lifetime => AppError::bad_request(e.to_string()),
        })?;
    tracing::info!(session = %s.id, share = %share.id, role = share.role.as_str(), by = %who.name, "share created");
    s.observe.shared(&share, &actor);
    Ok((StatusCode::CREATED, Json(share)))
}

/// `GET /api/sessions/{id}/shares`: the live ones, without their secrets.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: Actor,
) -> Result<Json<Vec<Share>>, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::manage("share_list"))?;
    Ok(Json(state.auth.shares.list(s.id)))
}

/// `DELETE /api/sessions/{id}/shares/{share_id}` → 204: the link stops
/// working and its open WebSockets close.
pub(crate) async fn revoke(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path((id, share_id)): Path<(String, String)>,
    actor: Actor,
) -> Result<StatusCode, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::manage("share_revoke"))?;
    if !state.auth.shares.revoke(s.id, &share_id) {
        return Err(AppError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::UnknownRequest,
            "no such share link on this session (it may have expired)",
        ));
    }
    tracing::info!(session = %s.id, share = %share_id, by = %who.name, "share revoked");
    s.observe.unshared(&share_id, &actor);
    Ok(StatusCode::NO_CONTENT)
}
