//! `GET /api/sessions/{id}/usage` (what the agent spent, turn by turn, and
//! the budget) and `PUT /api/sessions/{id}/budget` (an owner sets or
//! raises a session's limits; held prompts go once none is reached).

use axum::extract::{Path, State};
use axum::Extension;
use axum::Json;
use duet_protocol::usage::{Budget, BudgetStatus, SessionUsage};

use super::{session, session_for, Act, ApiJson};
use crate::auth::{Action, Principal};
use crate::error::AppError;
use crate::observe::Actor;
use crate::state::AppState;

/// `GET /api/sessions/{id}/usage`: every role that sees the session.
pub(crate) async fn usage(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<SessionUsage>, AppError> {
    Ok(Json(
        session(&state, &who, &id, Action::Read)?
            .conversation
            .usage(),
    ))
}

/// `PUT /api/sessions/{id}/budget` `{turns?, tokens?, cost?, wall_secs?,
/// interrupt?}` (owners): the session's limits from now on (`{}` lifts
/// them); the answer is the budget as it now stands.
pub(crate) async fn set_budget(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: Actor,
    ApiJson(body): ApiJson<Budget>,
) -> Result<Json<Option<BudgetStatus>>, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::manage("budget"))?;
    if body.turns == Some(0)
        || body.tokens == Some(0)
        || body.wall_secs == Some(0)
        || body.cost.is_some_and(|c| !(c > 0.0 && c.is_finite()))
    {
        return Err(AppError::bad_request(
            "limits must be above zero (leave one out to lift it)",
        ));
    }
    let status = s.conversation.set_budget(body);
    s.observe.budget_set(status.as_ref(), &actor);
    Ok(Json(status))
}
