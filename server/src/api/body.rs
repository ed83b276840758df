//! Request bodies for the REST handlers: a size-bounded raw body and a JSON
//! object, both rejected with duet's JSON errors, and both bounded in time.

use std::time::Duration;

use axum::extract::{FromRef, FromRequest, Request};
use axum::http::StatusCode;
use duet_protocol::ws::ErrorCode;

use crate::error::AppError;
use crate::state::AppState;

/// How long a request body may take to arrive, all of it, counted from
/// when its handler starts reading it (`ServerOptions::body_read_timeout`).
/// The header timeout ends at the headers: without this, a client that
/// sent a `Content-Length` and then one byte a second held its connection,
/// its permit and a handler for as long as it liked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyTimeout(pub Duration);

impl FromRef<AppState> for BodyTimeout {
    fn from_ref(state: &AppState) -> Self {
        BodyTimeout(state.body_read_timeout)
    }
}

/// 408 for a body that did not arrive in time.
fn body_too_slow(limit: Duration) -> AppError {
    AppError::new(
        StatusCode::REQUEST_TIMEOUT,
        ErrorCode::BadMessage,
        format!(
            "the request body did not arrive within {} s",
            limit.as_secs_f32()
        ),
    )
}

/// 413 for a body over axum's default limit: the same code as every other
/// size limit, so a client can branch on it, and the same words on every
/// route.
fn body_too_large() -> AppError {
    AppError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::TooLarge,
        "the request body is too large (the limit is 2 MiB)",
    )
}

/// A request body of at most axum's default limit (2 MiB) that arrived
/// within the [`BodyTimeout`], its rejections duet's JSON errors.
pub(crate) struct RawBody(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody
where
    BodyTimeout: FromRef<S>,
{
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let BodyTimeout(limit) = BodyTimeout::from_ref(state);
        let read = axum::body::Bytes::from_request(req, state);
        let Ok(read) = tokio::time::timeout(limit, read).await else {
            return Err(body_too_slow(limit));
        };
        read.map(RawBody).map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                body_too_large()
            } else {
                AppError::new(e.status(), ErrorCode::BadMessage, e.body_text())
            }
        })
    }
}

/// A JSON object body as `T`, whatever the request's `Content-Type`:
/// scripts send JSON with `curl -d` (form-encoded) or with no type at all,
/// and the body says what it is. Taking it costs no protection: a page on
/// another site could post such a body without a CORS preflight, but every
/// `/api` route checks the Origin (`auth.rs`) and the cookie is
/// SameSite=Strict. Rejections are duet's JSON errors.
pub(crate) struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for ApiJson<T>
where
    BodyTimeout: FromRef<S>,
{
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let RawBody(body) = RawBody::from_request(req, state).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(AppError::bad_request(
                "the request body is empty; send a JSON object",
            ));
        }
        json_object(&body).map(ApiJson)
    }
}

/// `body` as `T`: it must be JSON, and a JSON object (serde would also
/// take a struct from an array of its fields in order, `["demo", 80, 24]`,
/// which no client means).
pub(super) fn json_object<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, AppError> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| AppError::bad_request(format!("the request body is not JSON: {e}")))?;
    if !v.is_object() {
        return Err(AppError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    serde_json::from_value(v).map_err(|e| AppError::bad_request(format!("bad request body: {e}")))
}

/// [`json_object`] for a body a client may leave out: none (or only
/// whitespace) is `T::default()`.
pub(super) fn optional_json_object<T: serde::de::DeserializeOwned + Default>(
    body: &[u8],
) -> Result<T, AppError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    json_object(body)
}
