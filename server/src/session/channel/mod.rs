//! Structured side channels: how a session learns what its agent does
//! (events for the chat view) and tells it what the user wants (prompts,
//! approval decisions, cancel), whatever the agent's own mechanism.
//!
//! Every kind of channel implements [`Channel`] (its way *out* to the
//! agent) and feeds one [`Conversation`] (its way *in*): events normalised
//! into the stream-json vocabulary the browser renders (`user`, `assistant`,
//! `stream_event`, `control_request`, `result`, ...), from which the shared
//! parts derive turn state (`turn.rs`), approvals (`approvals.rs`) and
//! prompt delivery (`delivery.rs`, its held prompts kept on disk by
//! `held.rs`), usage and budgets (`usage.rs`, `budget.rs`), and which the
//! event log (`log.rs`)
//! numbers and replays. What the agent wrote itself stays verbatim in the
//! session directory.
//!
//! Kinds: `dual_output` (Qwen Code, the demo agent: JSONL files),
//! `claude` (Claude Code's hooks), `gemini` (Gemini CLI's hooks, its
//! approval dialog answered with keys), `codex` (Codex's TUI on an app
//! server duet is a client of too), `stream_json` (headless agents
//! speaking stream-json on their stdin and stdout; `stream_json_per_turn`
//! for print-mode ones) and `acp` (the Agent Client Protocol, duet the
//! client).

pub(crate) mod acp;
pub(crate) mod approvals;
pub(crate) mod budget;
pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod conversation;
pub(crate) mod decisions;
pub(crate) mod delivery;
pub(crate) mod dual_output;
pub(crate) mod gemini;
pub(crate) mod held;
mod hook_socket;
pub(crate) mod log;
pub(crate) mod piped;
mod screen_dialog;
mod screen_modes;
mod start;
pub(crate) mod stream_json;
mod tasks;
pub(crate) mod times;
pub(crate) mod turn;
pub(crate) mod usage;

use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};
use duet_protocol::sidecar::{CanUseTool, Extra};
use futures_util::future::BoxFuture;

pub(crate) use conversation::Conversation;
pub(crate) use start::{duet_writes_events, start, Files, Program, Setup, Started};
pub(crate) use tasks::Tasks;

/// Why a channel could not carry something to its agent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChannelError {
    #[error("the agent is gone")]
    Closed,
    #[error("the agent could not be reached: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Refused(String),
    /// The request does not fit what the agent offers (e.g. a mode it
    /// does not have): the client's mistake, not the agent's.
    #[error("{0}")]
    Invalid(String),
}

/// One structured side channel: the way out to the agent. Methods are
/// called without any lock held and must not block for long (a write to a
/// local file, a send on a bounded queue).
pub(crate) trait Channel: Send + Sync + 'static {
    /// Hands one prompt to the agent now. The [`Conversation`] decides
    /// when (the agent is idle) and whether again (it never showed the
    /// prompt).
    fn deliver(&self, text: &str) -> Result<(), ChannelError>;

    /// Tells the agent a client's choice for one of its tool requests.
    fn decide(&self, request_id: &str, option: &ApprovalOption) -> Result<(), ChannelError>;

    /// [`Channel::decide`] for a denial duet gives a reason for (a
    /// policy's message, "Denied from a notification"): channels whose
    /// agent hears one pass it on; the others deny without it.
    fn decide_because(
        &self,
        request_id: &str,
        option: &ApprovalOption,
        why: &str,
    ) -> Result<(), ChannelError> {
        let _ = why;
        self.decide(request_id, option)
    }

    /// Whether the agent reports the outcome of `option` once it takes it
    /// (dual output: a `control_response`); if not, the decision counts as
    /// confirmed once the channel has handed it over.
    fn confirms(&self, _option: &ApprovalOption) -> bool {
        true
    }

    /// The choices the agent offers for a tool request, in its order.
    fn options(&self, _request: &CanUseTool) -> Vec<ApprovalOption> {
        allow_deny()
    }

    /// Clients were asked about tool request `request_id` (not a replay,
    /// not decided by a policy). A channel whose agent shows more choices
    /// than its request carried (a dialog on its screen) may offer them
    /// with [`Conversation::reoffer`].
    fn asked(&self, _request_id: &str) {}

    /// Whether the agent ends every turn with a `result` of its own (an
    /// ACP prompt's response, stream-json's `result`): the end of a message
    /// is then not the end of the turn, and no held prompt goes before the
    /// `result` (its own turn would otherwise be counted over by it).
    fn ends_turns_with_result(&self) -> bool {
        false
    }

    /// Keys that interrupt the agent's turn in its terminal.
    fn cancel_keys(&self) -> &'static [u8] {
        b"\x1b"
    }

    /// Interrupts the agent's turn through the channel itself, for agents
    /// without a terminal to send keys to; `None`: use [`Channel::cancel_keys`].
    fn cancel(&self) -> Option<Result<(), ChannelError>> {
        None
    }

    /// Switches the agent to one of the modes it offered (ACP
    /// `session/set_mode`).
    fn set_mode(&self, _mode: &str) -> Result<(), ChannelError> {
        Err(ChannelError::Invalid(
            "this agent offers no modes duet can switch".into(),
        ))
    }

    /// Switches the agent to one of the models it offered (ACP
    /// `session/set_model`).
    fn set_model(&self, _model: &str) -> Result<(), ChannelError> {
        Err(ChannelError::Invalid(
            "this agent offers no models duet can switch".into(),
        ))
    }

    /// The session is being ended: a channel that runs the agent's
    /// processes itself (one per turn) ends them.
    fn stop(&self) {}

    /// The user interrupted the agent from its terminal (a lone Escape or
    /// Ctrl-C), for channels whose agent does not report it.
    fn interrupted(&self) {}

    /// The program exited: take in whatever it wrote last and let go of
    /// what the channel holds.
    fn finish(&self) -> BoxFuture<'static, ()>;
}

/// The two choices of an agent that knows only yes and no.
pub(crate) fn allow_deny() -> Vec<ApprovalOption> {
    vec![
        option("allow", "Allow", ApprovalOptionKind::AllowOnce),
        option("deny", "Deny", ApprovalOptionKind::RejectOnce),
    ]
}

/// The options a channel put into its `control_request` itself (as
/// `request.options`, see [`offering`]), for agents whose choices duet
/// reads elsewhere than the request (a dialog on screen, an app server's
/// decisions).
pub(crate) fn offered(request: &CanUseTool) -> Option<Vec<ApprovalOption>> {
    let options = request.extra.get("options")?;
    serde_json::from_value::<Vec<ApprovalOption>>(options.clone())
        .ok()
        .filter(|o| !o.is_empty())
}

/// The `extra` of a `can_use_tool` request that offers `options`, the
/// agent's own choices ([`offered`] reads them back).
pub(crate) fn offering(options: &[ApprovalOption]) -> Extra {
    duet_protocol::build::extra([("options", serde_json::to_value(options).unwrap_or_default())])
}

/// Builds one option.
pub(crate) fn option(id: &str, label: &str, kind: ApprovalOptionKind) -> ApprovalOption {
    ApprovalOption {
        id: id.into(),
        label: label.into(),
        kind,
    }
}
