//! REST errors: one type that every handler returns, rendered as
//! `{"error": {"code", "message"}}` with the matching HTTP status.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use duet_protocol::rest::{ApiError, ApiErrorBody};
use duet_protocol::ws::ErrorCode;

use crate::session::SessionError;

/// An error answer.
#[derive(Debug)]
pub struct AppError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
    /// Sent as `Retry-After` (whole seconds, rounded up).
    pub retry_after: Option<std::time::Duration>,
}

impl AppError {
    /// An error with an explicit status.
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// 429: try again after `wait`.
    pub fn too_many(message: impl Into<String>, wait: std::time::Duration) -> Self {
        Self {
            retry_after: Some(wait),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::LimitReached,
                message,
            )
        }
    }

    /// 404 for a session id that does not exist (or was already reaped).
    pub fn no_session() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            ErrorCode::SessionNotFound,
            "no such session (it may have ended and been cleaned up)",
        )
    }

    /// 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::BadMessage, message)
    }
}

impl From<SessionError> for AppError {
    fn from(e: SessionError) -> Self {
        let code = e.code();
        let status = match code {
            ErrorCode::UnknownRequest => StatusCode::NOT_FOUND,
            ErrorCode::AlreadyResolved | ErrorCode::SessionEnded | ErrorCode::NoSidecar => {
                StatusCode::CONFLICT
            }
            ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::LimitReached => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, code, e.to_string())
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(code = ?self.code, message = %self.message, "request failed");
        }
        let body = ApiError {
            error: ApiErrorBody {
                code: self.code,
                message: self.message,
            },
        };
        let mut resp = (self.status, Json(body)).into_response();
        if let Some(wait) = self.retry_after {
            let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            resp.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, secs.max(1).into());
        }
        resp
    }
}
