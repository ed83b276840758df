//! Why a session operation was refused, and the wire error code each
//! reason maps to (REST and WebSocket answer with the same codes).

use axum::http::StatusCode;
use duet_protocol::ws::ErrorCode;

use super::channel::approvals::DecideError;
use super::channel::delivery::DeliveryError;
use super::channel::ChannelError;
use crate::error::AppError;

/// Why a session operation was refused; maps to an [`ErrorCode`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    #[error("the program has exited")]
    Ended,
    #[error("this session's profile has no side channel that takes prompts or approvals")]
    NoSidecar,
    #[error("submit text is {0} bytes; the limit is {1}")]
    TooLarge(usize, usize),
    #[error("the prompt is empty (a bare Enter goes to the terminal, not the chat)")]
    EmptyPrompt,
    #[error(transparent)]
    Decide(#[from] DecideError),
    #[error("too many clients on this session (limit {0})")]
    TooManyClients(u32),
    #[error(transparent)]
    Delivery(#[from] DeliveryError),
    /// The agent's channel said no; its message says why (a mode it does
    /// not offer is the client's mistake, not an unreachable agent).
    #[error("{0}")]
    Channel(#[from] ChannelError),
    #[error("this agent runs without a terminal: keys cannot reach it (use the chat)")]
    NoTerminal,
    #[error("{0}")]
    InputFull(String),
}

impl SessionError {
    /// The wire error code.
    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            SessionError::Ended | SessionError::Delivery(DeliveryError::Closed) => {
                ErrorCode::SessionEnded
            }
            SessionError::NoSidecar => ErrorCode::NoSidecar,
            SessionError::TooLarge(..) => ErrorCode::TooLarge,
            SessionError::Decide(DecideError::Unknown(_)) => ErrorCode::UnknownRequest,
            SessionError::Decide(DecideError::UnknownOption(..)) => ErrorCode::BadMessage,
            SessionError::Decide(DecideError::AlreadyResolved(..)) => ErrorCode::AlreadyResolved,
            SessionError::TooManyClients(_)
            | SessionError::Delivery(DeliveryError::QueueFull(_))
            | SessionError::InputFull(_) => ErrorCode::LimitReached,
            SessionError::Channel(ChannelError::Closed) => ErrorCode::SessionEnded,
            SessionError::Channel(ChannelError::Invalid(_)) => ErrorCode::BadMessage,
            SessionError::Channel(_) => ErrorCode::Internal,
            SessionError::NoTerminal | SessionError::EmptyPrompt => ErrorCode::BadMessage,
        }
    }
}

/// How REST answers a refusal (the WebSocket sends the code alone).
impl From<SessionError> for AppError {
    fn from(e: SessionError) -> Self {
        let code = e.code();
        let status = match code {
            ErrorCode::UnknownRequest => StatusCode::NOT_FOUND,
            ErrorCode::AlreadyResolved | ErrorCode::SessionEnded | ErrorCode::NoSidecar => {
                StatusCode::CONFLICT
            }
            ErrorCode::BadMessage => StatusCode::BAD_REQUEST,
            ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::LimitReached => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, code, e.to_string())
    }
}
