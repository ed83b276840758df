//! REST errors: one type that every handler returns, rendered as
//! `{"error": {"code", "message"}}` with the matching HTTP status.

use axum::extract::Request;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use duet_protocol::rest::{ApiError, ApiErrorBody};
use duet_protocol::ws::ErrorCode;

/// An error answer.
#[derive(Debug)]
pub(crate) struct AppError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
    /// Sent as `Retry-After` (whole seconds, rounded up).
    pub retry_after: Option<std::time::Duration>,
}

impl AppError {
    /// An error with an explicit status.
    pub(crate) fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// 429: try again after `wait`.
    pub(crate) fn too_many(message: impl Into<String>, wait: std::time::Duration) -> Self {
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
    pub(crate) fn no_session() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            ErrorCode::SessionNotFound,
            "no such session (it may have ended and been cleaned up)",
        )
    }

    /// 400 for a malformed request.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::BadMessage, message)
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

/// Middleware for `/api`: an error answer that is not already one of duet's
/// JSON errors (an extractor's rejection, the router's 405, a failed
/// WebSocket upgrade) becomes one, with its text as the message and its
/// other headers (`Allow`, `Retry-After`) kept.
pub(crate) async fn json_errors(req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    // Rejection texts are a line or two.
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let message = if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("request failed")
            .to_ascii_lowercase()
    } else {
        text
    };
    let code = match status {
        StatusCode::UNAUTHORIZED => ErrorCode::Unauthorized,
        StatusCode::FORBIDDEN | StatusCode::MISDIRECTED_REQUEST => ErrorCode::Forbidden,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::TooLarge,
        StatusCode::TOO_MANY_REQUESTS => ErrorCode::LimitReached,
        s if s.is_server_error() => ErrorCode::Internal,
        _ => ErrorCode::BadMessage,
    };
    let mut out = AppError::new(status, code, message).into_response();
    for (name, value) in &parts.headers {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            out.headers_mut().insert(name, value.clone());
        }
    }
    out
}
