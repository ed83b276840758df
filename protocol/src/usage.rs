//! What agents spend, as they report it (tokens, cost, durations), and the
//! budgets that hold a session's next prompt once it is spent:
//! `GET /api/sessions/{id}/usage`, `PUT /api/sessions/{id}/budget`, and the
//! `usage` and `budget` of [`crate::rest::SessionInfo`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Tokens, as the agent's model API counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct TokenCounts {
    /// Prompt tokens sent (without the cached ones, where the API tells
    /// them apart).
    #[ts(type = "number")]
    pub input: u64,
    /// Tokens the model wrote.
    #[ts(type = "number")]
    pub output: u64,
    /// Prompt tokens read from the API's cache.
    #[ts(type = "number")]
    pub cache_read: u64,
    /// Prompt tokens written to the API's cache.
    #[ts(type = "number")]
    pub cache_write: u64,
}

impl TokenCounts {
    /// Tokens in and out, the figure budgets count.
    pub fn billed(&self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

/// How much of the model's context the conversation fills, where reported
/// (ACP's `usage_update`; the last API call's prompt otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ContextUse {
    /// Tokens the conversation fills now: as the agent says (ACP), else
    /// the last model call's prompt, cached tokens included.
    #[ts(type = "number")]
    pub used: u64,
    /// The context window, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub size: Option<u64>,
}

/// One turn: a prompt and everything the agent did for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct TurnUsage {
    /// 1 for the session's first turn.
    pub n: u32,
    /// Unix ms.
    #[ts(type = "number")]
    pub started_at: u64,
    /// How long the turn ran, as duet saw it; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub duration_ms: Option<u64>,
    /// Time spent waiting on the model's API, where the agent reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub api_ms: Option<u64>,
    /// Tokens the turn's model calls used.
    pub tokens: TokenCounts,
    /// Cost, where the agent reports it (see [`UsageTotals::currency`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost: Option<f64>,
    /// Tool calls that finished in this turn.
    pub tool_calls: u32,
}

/// A session's usage so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct UsageTotals {
    /// Turns begun.
    pub turns: u32,
    /// Tokens of every turn so far, added up.
    pub tokens: TokenCounts,
    /// Cost, where the agent reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost: Option<f64>,
    /// The unit of `cost`: `USD` unless the agent names another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub currency: Option<String>,
    /// Wall-clock time the agent spent working on turns (the running one
    /// included), ms.
    #[ts(type = "number")]
    pub busy_ms: u64,
    /// Time spent waiting on the model's API, where reported, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub api_ms: Option<u64>,
    /// Tool calls that finished (`ok` and `error`).
    pub tool_calls: u32,
    /// Of `tool_calls`, those whose result was an error (`is_error`).
    pub tool_errors: u32,
    /// How full the model's context is, where the agent reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context: Option<ContextUse>,
}

/// Limits on a session. Each is optional; a session over any of them has
/// its next prompt held until an owner raises the limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Turns begun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turns: Option<u32>,
    /// Tokens in and out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub tokens: Option<u64>,
    /// Cost, in the agent's currency (agents that report none are not
    /// held by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost: Option<f64>,
    /// Seconds of the agent's working time (see [`UsageTotals::busy_ms`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub wall_secs: Option<u64>,
    /// Also interrupt the running turn once a limit is passed (else it
    /// finishes and the next prompt waits).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub interrupt: bool,
}

impl Budget {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.turns.is_none()
            && self.tokens.is_none()
            && self.cost.is_none()
            && self.wall_secs.is_none()
    }
}

/// A session's budget and whether it is spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct BudgetStatus {
    /// The limits in force (`PUT /api/sessions/{id}/budget` sets them).
    pub limits: Budget,
    /// Why prompts are held, once a limit is reached (e.g. "the budget of
    /// 3 turns is spent").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exhausted: Option<String>,
}

/// `GET /api/sessions/{id}/usage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SessionUsage {
    /// The session's usage so far (as `SessionInfo.usage` has it).
    pub totals: UsageTotals,
    /// The most recent turns, oldest first (at most 100).
    pub turns: Vec<TurnUsage>,
    /// The session's budget and whether it is spent; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub budget: Option<BudgetStatus>,
}
