//! `GET /api/sessions/watch` (the board as server-sent events) and
//! `PATCH /api/sessions/{id}` (renaming a session).
//!
//! Server-sent events rather than a WebSocket: the board flows one way;
//! an `EventSource` reconnects by itself and sends the login cookie like
//! any request, so the auth middleware, the Origin check and every proxy
//! in front of duet treat it as the plain GET it is; scripts read it with
//! `curl -N`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use axum::extract::{Extension, Path, State};
use axum::http::HeaderName;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use duet_protocol::board::{RenameSession, MAX_NAME_CHARS};
use duet_protocol::rest::SessionInfo;
use tokio::sync::watch;

use crate::api::{session_for, Act, ApiJson};
use crate::auth::Principal;
use crate::error::AppError;
use crate::observe::Actor;
use crate::state::AppState;

/// A watcher waits this long after a change before it looks, so a burst
/// (an approval with its events, a client with its resize) goes out as
/// one message.
const COALESCE: Duration = Duration::from_millis(100);

/// The stream ends when the server stops or a share link ends.
type Ended = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One watcher's position: the generation it has seen and what it sent.
struct Follower {
    state: AppState,
    who: Principal,
    generation: watch::Receiver<u64>,
    ended: Ended,
    last: Option<String>,
    first: bool,
}

impl Follower {
    /// The next message to send: the board as it is now, once it differs
    /// from the last one sent; `None` when the stream ends.
    async fn next(&mut self) -> Option<String> {
        loop {
            if !self.first {
                tokio::select! {
                    r = self.generation.changed() => r.ok()?,
                    () = &mut self.ended => return None,
                }
                tokio::select! {
                    () = tokio::time::sleep(COALESCE) => {},
                    () = &mut self.ended => return None,
                }
                self.generation.borrow_and_update();
            }
            self.first = false;
            let board = self.state.board.snapshot(&self.who);
            let json = serde_json::to_string(&board).unwrap_or_default();
            if self.last.as_deref() != Some(json.as_str()) {
                self.last = Some(json.clone());
                return Some(json);
            }
        }
    }
}

/// `GET /api/sessions/watch`: `sessions` events, each the whole board
/// (`duet_protocol::board::Board`) the caller may see, sent at once and
/// again on every change. A slow client costs nothing: it is sent the
/// board as it is when it is ready for more, never a queue of old ones.
pub(crate) async fn watch(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
) -> Response {
    let mut stop = state.stop.subscribe();
    // Subscribed before the first look, so no change falls in between.
    let revoked = who.share.as_ref().map(|s| state.auth.shares.revoked(&s.id));
    let generation = state.board.subscribe();
    let ended: Ended = {
        let who = who.clone();
        Box::pin(async move {
            tokio::select! {
                _ = stop.wait_for(|s| *s) => {},
                _ = crate::ws::share_ended(&who, revoked) => {},
            }
        })
    };
    let follower = Follower {
        state,
        who,
        generation,
        ended,
        last: None,
        first: true,
    };
    let stream = futures_util::stream::unfold(follower, |mut f| async move {
        let json = f.next().await?;
        Some((
            Ok::<_, Infallible>(Event::default().event("sessions").data(json)),
            f,
        ))
    });
    (
        // nginx buffers responses unless told not to.
        [(HeaderName::from_static("x-accel-buffering"), "no")],
        Sse::new(stream).keep_alive(KeepAlive::default()),
    )
        .into_response()
}

/// `PATCH /api/sessions/{id}` `{name}`: names the session (owner only);
/// the name is kept in its record, so it survives a restart.
pub(crate) async fn rename(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    actor: Actor,
    ApiJson(body): ApiJson<RenameSession>,
) -> Result<Json<SessionInfo>, AppError> {
    let s = session_for(&state, &who, &actor, &id, Act::manage("session_rename"))?;
    let name = clean_name(&body.name).map_err(AppError::bad_request)?;
    tracing::info!(session = %s.id, ?name, by = %who.name, "session renamed");
    let named = s.clone();
    tokio::task::spawn_blocking(move || named.set_name(name))
        .await
        .map_err(|e| {
            AppError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                duet_protocol::ws::ErrorCode::Internal,
                format!("renaming: {e}"),
            )
        })?;
    state.board.bump();
    Ok(Json(s.info()))
}

/// The name to keep: trimmed, `None` when empty; an error for control
/// characters, bidirectional overrides or more than [`MAX_NAME_CHARS`]
/// characters.
fn clean_name(name: &str) -> Result<Option<String>, String> {
    let name = name.trim();
    if name.chars().any(char::is_control) {
        return Err("a session name may not hold control characters".into());
    }
    // Embeddings, overrides and isolates reorder the text shown after them
    // (U+202E makes "txt.exe" read "exe.txt"): a shared board's names must
    // read as they are.
    if name
        .chars()
        .any(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
    {
        return Err("a session name may not hold bidirectional control characters".into());
    }
    let n = name.chars().count();
    if n > MAX_NAME_CHARS {
        return Err(format!(
            "a session name is at most {MAX_NAME_CHARS} characters; this one has {n}"
        ));
    }
    Ok(Some(name.to_string()).filter(|n| !n.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_bounded_and_printable() {
        assert_eq!(clean_name("  build fix "), Ok(Some("build fix".into())));
        assert_eq!(clean_name("   "), Ok(None));
        assert_eq!(clean_name("ünïcødé ✓"), Ok(Some("ünïcødé ✓".into())));
        assert!(clean_name("a\nb").is_err());
        assert!(clean_name("\u{1b}[31mred").is_err());
        assert!(clean_name("fix \u{202E}txt.exe").is_err());
        assert!(clean_name("a\u{2067}b").is_err());
        assert_eq!(clean_name("שלום build"), Ok(Some("שלום build".into())));
        assert!(clean_name(&"x".repeat(MAX_NAME_CHARS)).is_ok());
        assert!(clean_name(&"é".repeat(MAX_NAME_CHARS + 1)).is_err());
    }
}
