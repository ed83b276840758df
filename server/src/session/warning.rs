//! The warnings duet tells a session's clients about (something odd in the
//! side channel or the agent; the session goes on): one name per kind, the
//! string clients see (`code` of a `warning` message) and the metrics count
//! by. Numbered and kept for clients that come later
//! (`channel/conversation/warnings.rs`).

/// What a warning is about. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WarningCode {
    /// The agent reported an error of its own (an ACP or app-server error).
    AgentError,
    /// The agent's process ended while duet still needed it.
    AgentExited,
    /// The agent stopped reading its input: nothing more can be sent.
    AgentInputClosed,
    /// The agent answers again after it had stopped answering.
    AgentResponsive,
    /// The agent has not answered a request in time.
    AgentUnresponsive,
    /// The agent warned, in its own words.
    AgentWarning,
    /// An approval's answer could not be delivered to the agent.
    ApprovalUnanswered,
    /// An approval decided elsewhere was not confirmed by the agent.
    ApprovalUnseen,
    /// A line of the side channel is not an event duet understands.
    BadEvent,
    /// A budget ran out: the next prompt is held.
    BudgetExhausted,
    /// An owner raised a spent budget: held prompts go.
    BudgetRaised,
    /// The agent did not take a cancel.
    CancelFailed,
    /// The agent answered a control request with an error.
    ControlError,
    /// The events file was replaced; the new one is followed.
    EventsFileReplaced,
    /// The events file was truncated; reading starts over.
    EventsFileTruncated,
    /// duet could not write the events file.
    EventsWriteFailed,
    /// The history read back is missing part of the session.
    HistoryIncomplete,
    /// A line of the side channel is not JSON.
    InvalidLine,
    /// A line of the side channel is over the limit and was skipped.
    LineTooLong,
    /// The agent never completed its start (its handshake).
    NoHandshake,
    /// The agent could not resume the conversation.
    NoResume,
    /// A policy rule could not be applied (the call is asked instead).
    PolicyFailed,
    /// The agent refused a prompt.
    PromptRefused,
    /// The agent's TUI did not show it was ready in time.
    ReadyTimeout,
    /// The agent did not take a mode change.
    SetModeFailed,
    /// The agent did not take a model change.
    SetModelFailed,
    /// A prompt could not be given to the agent.
    SubmitFailed,
    /// The agent ignored a prompt it was given.
    SubmitIgnored,
    /// A prompt was given but the agent did not show it.
    SubmitUnshown,
    /// The list of prompts not yet sent may be incomplete.
    UnsentIncomplete,
    /// The agent speaks a protocol version duet does not.
    UnsupportedProtocol,
}

impl WarningCode {
    /// The code as clients and the metrics see it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::AgentError => "agent_error",
            Self::AgentExited => "agent_exited",
            Self::AgentInputClosed => "agent_input_closed",
            Self::AgentResponsive => "agent_responsive",
            Self::AgentUnresponsive => "agent_unresponsive",
            Self::AgentWarning => "agent_warning",
            Self::ApprovalUnanswered => "approval_unanswered",
            Self::ApprovalUnseen => "approval_unseen",
            Self::BadEvent => "bad_event",
            Self::BudgetExhausted => "budget_exhausted",
            Self::BudgetRaised => "budget_raised",
            Self::CancelFailed => "cancel_failed",
            Self::ControlError => "control_error",
            Self::EventsFileReplaced => "events_file_replaced",
            Self::EventsFileTruncated => "events_file_truncated",
            Self::EventsWriteFailed => "events_write_failed",
            Self::HistoryIncomplete => "history_incomplete",
            Self::InvalidLine => "invalid_line",
            Self::LineTooLong => "line_too_long",
            Self::NoHandshake => "no_handshake",
            Self::NoResume => "no_resume",
            Self::PolicyFailed => "policy_failed",
            Self::PromptRefused => "prompt_refused",
            Self::ReadyTimeout => "ready_timeout",
            Self::SetModeFailed => "set_mode_failed",
            Self::SetModelFailed => "set_model_failed",
            Self::SubmitFailed => "submit_failed",
            Self::SubmitIgnored => "submit_ignored",
            Self::SubmitUnshown => "submit_unshown",
            Self::UnsentIncomplete => "unsent_incomplete",
            Self::UnsupportedProtocol => "unsupported_protocol",
        }
    }
}

/// A warning, as kept for clients that come later.
#[derive(Debug, Clone)]
pub(crate) struct Warning {
    pub(crate) id: u64,
    pub(crate) code: WarningCode,
    pub(crate) message: String,
    pub(crate) seq: Option<u64>,
}
