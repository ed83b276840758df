//! What a client may choose for an approval and who decided it, and why a
//! choice is refused.

use duet_protocol::rest::Decider;

/// Why a client's decision was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecideError {
    #[error("no approval request {0:?} was seen in this session")]
    Unknown(String),
    #[error("approval request {0:?} was already decided ({1})")]
    AlreadyResolved(String, &'static str),
    #[error("approval request {0:?} has no option {1:?}")]
    UnknownOption(String, String),
}

/// Who decides inside duet, as the approval records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecidedBy {
    /// A client, a notification's button or a policy (never the terminal:
    /// the agent reports those).
    pub decider: Decider,
    /// The credential (a client, a notification) or the rule (a policy).
    pub name: Option<String>,
    /// What the agent is told of a denial, when duet says why.
    pub reason: Option<String>,
}

impl DecidedBy {
    /// A client holding credential `name`.
    pub(crate) fn client(name: Option<&str>) -> Self {
        Self {
            decider: Decider::Client,
            name: name.map(str::to_string),
            reason: None,
        }
    }
}

/// What a client chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    /// The first option that allows (true) or rejects (false).
    Allowed(bool),
    /// One of the approval's options, by id.
    Option(String),
}

impl Choice {
    /// The choice of a request's `option` and `allowed` fields (REST body,
    /// WebSocket `approve`): exactly one of them. Both is refused rather
    /// than one of them picked: `{"option": "allow", "allowed": false}`
    /// contradicts itself, and which option ids allow is the agent's to say.
    pub(crate) fn from_fields(
        option: Option<String>,
        allowed: Option<bool>,
    ) -> Result<Self, &'static str> {
        match (option, allowed) {
            (Some(option), None) => Ok(Choice::Option(option)),
            (None, Some(allowed)) => Ok(Choice::Allowed(allowed)),
            (None, None) => Err("send \"option\" (one of the approval's options) or \"allowed\""),
            (Some(_), Some(_)) => Err("send \"option\" or \"allowed\", not both"),
        }
    }
}
