//! What a session's agent spends, derived from its own reports: the
//! `usage` of each `assistant` message (Qwen Code and Claude Code: one per
//! model call; Claude repeats a message's usage on each of its content
//! blocks, so each message counts once, by id), the `result` of a turn
//! (its usage where no message had one, `duration_api_ms`, Claude's
//! cumulative `total_cost_usd`), ACP's `usage_update` (context used and
//! size, the session's cumulative cost) and tool results (tool calls by
//! outcome). Turns are the agent's busy periods as duet sees them, so an
//! agent that reports nothing still has turns and their durations. Pure:
//! the conversation feeds it events and times.

use std::collections::{HashMap, VecDeque};

use duet_protocol::sidecar::{ContentBlock, KnownBlock, Message, ResultEvent, SystemEvent};
use duet_protocol::usage::{ContextUse, SessionUsage, TokenCounts, TurnUsage, UsageTotals};
use serde_json::Value;

/// Turns kept for `GET /usage`.
const KEEP_TURNS: usize = 100;
/// Message ids remembered for de-duplication (a message's blocks come
/// together).
const KEEP_MESSAGES: usize = 16;
/// Tool names remembered until their results come.
const KEEP_TOOLS: usize = 256;

/// The tokens of a `usage` object, in the names agents use: Anthropic's
/// (Claude, Qwen's events), ACP's camelCase, OpenAI's.
pub(crate) fn tokens(usage: &Value) -> Option<TokenCounts> {
    let n = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| usage.get(*k).and_then(Value::as_u64))
            .unwrap_or(0)
    };
    if !usage.is_object() {
        return None;
    }
    Some(TokenCounts {
        input: n(&["input_tokens", "inputTokens", "prompt_tokens"]),
        output: n(&["output_tokens", "outputTokens", "completion_tokens"]),
        cache_read: n(&[
            "cache_read_input_tokens",
            "cachedReadTokens",
            "cache_read_tokens",
        ]),
        cache_write: n(&[
            "cache_creation_input_tokens",
            "cachedWriteTokens",
            "cache_write_tokens",
        ]),
    })
}

fn add(a: &mut TokenCounts, b: TokenCounts) {
    a.input += b.input;
    a.output += b.output;
    a.cache_read += b.cache_read;
    a.cache_write += b.cache_write;
}

fn minus(a: TokenCounts, b: TokenCounts) -> TokenCounts {
    TokenCounts {
        input: a.input.saturating_sub(b.input),
        output: a.output.saturating_sub(b.output),
        cache_read: a.cache_read.saturating_sub(b.cache_read),
        cache_write: a.cache_write.saturating_sub(b.cache_write),
    }
}

/// What changed, for the metrics.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Spent {
    pub(crate) tokens: TokenCounts,
    pub(crate) cost: f64,
}

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Usage {
    totals: UsageTotals,
    /// Ended turns, oldest first.
    turns: VecDeque<TurnUsage>,
    /// The running turn.
    running: Option<TurnUsage>,
    /// Whether the running (or last) turn's messages reported usage: then
    /// its `result`'s usage is the same tokens again.
    messages_reported: bool,
    counted: VecDeque<(String, TokenCounts)>,
    /// The last cumulative cost an agent reported (a lower one: a new
    /// process of a per-turn agent started from zero).
    reported_cost: Option<f64>,
    tools: HashMap<String, String>,
}

impl Usage {
    /// The turn figures apply to: the running one, else the last.
    fn turn(&mut self) -> Option<&mut TurnUsage> {
        match self.running {
            Some(ref mut t) => Some(t),
            None => self.turns.back_mut(),
        }
    }

    /// The agent became busy at `now` (Unix ms).
    pub(crate) fn begin(&mut self, now: u64) {
        self.totals.turns += 1;
        self.messages_reported = false;
        self.running = Some(TurnUsage {
            n: self.totals.turns,
            started_at: now,
            duration_ms: None,
            api_ms: None,
            tokens: TokenCounts::default(),
            cost: None,
            tool_calls: 0,
        });
    }

    /// The agent became idle at `now`: the finished turn.
    pub(crate) fn end(&mut self, now: u64) -> Option<TurnUsage> {
        let mut t = self.running.take()?;
        let took = now.saturating_sub(t.started_at);
        t.duration_ms = Some(took);
        self.totals.busy_ms += took;
        if self.turns.len() == KEEP_TURNS {
            self.turns.pop_front();
        }
        self.turns.push_back(t.clone());
        Some(t)
    }

    fn spend(&mut self, tokens: TokenCounts) {
        add(&mut self.totals.tokens, tokens);
        if let Some(t) = self.turn() {
            add(&mut t.tokens, tokens);
        }
    }

    fn cost(&mut self, cumulative: f64, currency: Option<&str>) -> f64 {
        if !cumulative.is_finite() || cumulative < 0.0 {
            return 0.0;
        }
        let delta = match self.reported_cost {
            Some(last) if cumulative >= last => cumulative - last,
            _ => cumulative,
        };
        self.reported_cost = Some(cumulative);
        if self.totals.currency.is_none() {
            self.totals.currency = Some(currency.unwrap_or("USD").to_string());
        }
        *self.totals.cost.get_or_insert(0.0) += delta;
        if let Some(t) = self.turn() {
            *t.cost.get_or_insert(0.0) += delta;
        }
        delta
    }

    /// A complete `assistant` message.
    pub(crate) fn assistant(&mut self, message: &Message, event_id: Option<&str>) -> Spent {
        for b in message.content.blocks() {
            if let ContentBlock::Known(KnownBlock::ToolUse { id, name, .. }) = b {
                if self.tools.len() >= KEEP_TOOLS {
                    self.tools.clear();
                }
                self.tools.insert(id, name);
            }
        }
        let Some(now) = message.extra.get("usage").and_then(tokens) else {
            return Spent::default();
        };
        self.messages_reported = true;
        let id = message.id.as_deref().or(event_id);
        let before = id
            .and_then(|id| self.counted.iter_mut().find(|(m, _)| m == id))
            .map(|(_, seen)| std::mem::replace(seen, now));
        let delta = match before {
            Some(seen) => minus(now, seen),
            None => {
                if let Some(id) = id {
                    if self.counted.len() == KEEP_MESSAGES {
                        self.counted.pop_front();
                    }
                    self.counted.push_back((id.to_string(), now));
                }
                now
            }
        };
        self.spend(delta);
        // The prompt of this call is what the context holds now.
        let used = now.input + now.cache_read + now.cache_write;
        if used > 0 {
            let size = self.totals.context.and_then(|c| c.size);
            self.totals.context = Some(ContextUse { used, size });
        }
        Spent {
            tokens: delta,
            cost: 0.0,
        }
    }

    /// A tool's result: its tool's name, when its call was seen.
    pub(crate) fn tool_result(&mut self, tool_use_id: &str, is_error: bool) -> Option<String> {
        self.totals.tool_calls += 1;
        if is_error {
            self.totals.tool_errors += 1;
        }
        if let Some(t) = self.turn() {
            t.tool_calls += 1;
        }
        self.tools.remove(tool_use_id)
    }

    /// The turn's `result`.
    pub(crate) fn result(&mut self, r: &ResultEvent) -> Spent {
        let mut spent = Spent::default();
        if !self.messages_reported {
            if let Some(t) = r.extra.get("usage").and_then(tokens) {
                self.spend(t);
                spent.tokens = t;
            }
        }
        if let Some(api) = r.extra.get("duration_api_ms").and_then(Value::as_f64) {
            let api = api.max(0.0) as u64;
            *self.totals.api_ms.get_or_insert(0) += api;
            if let Some(t) = self.turn() {
                *t.api_ms.get_or_insert(0) += api;
            }
        }
        if let Some(total) = r.extra.get("total_cost_usd").and_then(Value::as_f64) {
            spent.cost = self.cost(total, Some("USD"));
        }
        spent
    }

    /// A `system` event: ACP's `usage_update`.
    pub(crate) fn system(&mut self, sys: &SystemEvent) -> Spent {
        if sys.subtype != "acp_usage_update" {
            return Spent::default();
        }
        let Some(update) = sys.extra.get("update") else {
            return Spent::default();
        };
        if let Some(used) = update.get("used").and_then(Value::as_u64) {
            let size = update.get("size").and_then(Value::as_u64);
            self.totals.context = Some(ContextUse { used, size });
        }
        let cost = update.get("cost");
        match cost.and_then(|c| c.get("amount")).and_then(Value::as_f64) {
            Some(amount) => Spent {
                tokens: TokenCounts::default(),
                cost: self.cost(
                    amount,
                    cost.and_then(|c| c.get("currency")).and_then(Value::as_str),
                ),
            },
            None => Spent::default(),
        }
    }

    /// The totals, the running turn's time counted to `now`.
    pub(crate) fn totals(&self, now: u64) -> UsageTotals {
        let mut t = self.totals.clone();
        if let Some(r) = &self.running {
            t.busy_ms += now.saturating_sub(r.started_at);
        }
        t
    }

    /// Whether anything happened yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.totals.turns == 0
    }

    /// `GET /usage` (without the budget).
    pub(crate) fn report(&self, now: u64) -> SessionUsage {
        SessionUsage {
            totals: self.totals(now),
            turns: self
                .turns
                .iter()
                .chain(self.running.as_ref())
                .cloned()
                .collect(),
            budget: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use duet_protocol::sidecar::{Content, KnownEvent, SidecarEvent};
    use serde_json::json;

    /// Feeds a recorded stream as the conversation does: a prompt begins a
    /// turn, tool results and reports add up.
    fn replay(stream: &str) -> Usage {
        let mut u = Usage::default();
        let mut now = 0;
        for line in stream.lines() {
            now += 10;
            let Ok(SidecarEvent::Known(ev)) = SidecarEvent::from_line(line) else {
                continue;
            };
            match ev {
                KnownEvent::Assistant(m) => {
                    u.assistant(&m.message, m.envelope.uuid.as_deref());
                }
                KnownEvent::User(m) => match &m.message.content {
                    Content::Blocks(b)
                        if b.iter().any(|b| {
                            matches!(b, ContentBlock::Known(KnownBlock::ToolResult { .. }))
                        }) =>
                    {
                        for b in b {
                            if let ContentBlock::Known(KnownBlock::ToolResult {
                                tool_use_id,
                                is_error,
                                ..
                            }) = b
                            {
                                u.tool_result(tool_use_id, is_error.unwrap_or(false));
                            }
                        }
                    }
                    _ => {
                        u.end(now);
                        u.begin(now);
                    }
                },
                KnownEvent::Result(r) => {
                    u.result(&r);
                }
                KnownEvent::System(s) => {
                    u.system(&s);
                }
                _ => {}
            }
        }
        u.end(now);
        u
    }

    fn fixture(path: &str) -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        std::fs::read_to_string(dir.join(path)).unwrap()
    }

    #[test]
    fn claude_codes_messages_add_up_to_its_own_totals() {
        let transcript = fixture("claude-2.1.330/transcript.jsonl");
        let u = replay(&transcript);
        // Claude Code's own account of the session: its last cost-state.
        let own: Value = transcript
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "cost-state")
            .unwrap();
        let model = own["modelUsage"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap();
        let t = u.totals(0);
        assert_eq!(t.tokens.input, model["inputTokens"].as_u64().unwrap());
        assert_eq!(t.tokens.output, model["outputTokens"].as_u64().unwrap());
        assert_eq!((t.tokens.input, t.tokens.output), (110, 55));
        assert_eq!(
            t.tokens.cache_read,
            model["cacheReadInputTokens"].as_u64().unwrap()
        );
        // Tool calls: two ran, one denied from the browser, one in the terminal.
        assert_eq!((t.tool_calls, t.tool_errors), (4, 2));
        assert_eq!(t.context.map(|c| c.used), Some(10));
    }

    #[test]
    fn qwen_codes_messages_add_up_per_model_call() {
        // The mock model answers every call with 10 tokens in, 5 out
        // (fixtures/mock_openai.py), and Qwen Code reports each call once.
        for (path, calls, tools) in [
            ("qwen-0.15.10/tool-allow-deny/events.jsonl", 4, 1),
            ("qwen-0.24.4/two-submits/events.jsonl", 4, 0),
            ("qwen-0.24.4/approval-choices/events.jsonl", 9, 4),
            ("qwen-0.24.4/goal/events.jsonl", 3, 0),
        ] {
            let t = replay(&fixture(path)).totals(0);
            assert_eq!(
                (t.tokens.input, t.tokens.output, t.tool_calls),
                (10 * calls, 5 * calls, tools),
                "{path}"
            );
            assert_eq!(t.cost, None, "{path}: Qwen Code reports no cost");
        }
    }

    #[test]
    fn a_message_counts_once_however_many_blocks_repeat_it() {
        let mut u = Usage::default();
        u.begin(0);
        let msg = |id: &str, out: u64| {
            serde_json::from_value::<Message>(json!({
                "role": "assistant", "id": id, "content": [],
                "usage": {"input_tokens": 7, "output_tokens": out, "cache_read_input_tokens": 100}
            }))
            .unwrap()
        };
        u.assistant(&msg("m1", 3), None);
        // Claude's stream-json repeats the message per content block, its
        // output tokens growing.
        let again = u.assistant(&msg("m1", 9), None);
        assert_eq!(again.tokens.output, 6);
        u.assistant(&msg("m2", 1), None);
        let t = u.totals(0);
        assert_eq!(
            (t.tokens.input, t.tokens.output, t.tokens.cache_read),
            (14, 10, 200)
        );
        assert_eq!(t.context.unwrap().used, 107);
        // The result repeats what the messages said: not counted again;
        // its cumulative cost is, as a difference.
        let result = |cost: f64| {
            serde_json::from_value::<ResultEvent>(json!({
                "subtype": "success", "duration_ms": 900, "duration_api_ms": 700,
                "total_cost_usd": cost, "usage": {"input_tokens": 14, "output_tokens": 10}
            }))
            .unwrap()
        };
        assert_eq!(u.result(&result(0.25)).cost, 0.25);
        let turn = u.end(1000).unwrap();
        assert_eq!(
            (turn.duration_ms, turn.api_ms, turn.cost),
            (Some(1000), Some(700), Some(0.25))
        );
        u.begin(2000);
        // A turn with no message usage takes the result's.
        assert_eq!(u.result(&result(0.5)).tokens.input, 14);
        u.end(2500);
        // A print-mode agent's next process starts its total from zero.
        u.begin(3000);
        u.result(&result(0.1));
        u.end(3100);
        let t = u.totals(0);
        assert_eq!(
            (t.turns, t.tokens.input, t.busy_ms, t.api_ms),
            (3, 42, 1600, Some(2100))
        );
        assert!((t.cost.unwrap() - 0.6).abs() < 1e-9, "{:?}", t.cost);
        assert_eq!(u.report(0).turns.len(), 3);
    }

    #[test]
    fn acp_usage_updates_give_context_and_cost() {
        let mut u = Usage::default();
        u.begin(0);
        let update = |used: u64, amount: f64| {
            serde_json::from_value::<SystemEvent>(json!({
                "type": "system", "subtype": "acp_usage_update",
                "update": {"sessionUpdate": "usage_update", "used": used, "size": 200000,
                           "cost": {"amount": amount, "currency": "EUR"}}
            }))
            .unwrap()
        };
        u.system(&update(5000, 0.02));
        u.system(&update(9000, 0.05));
        let t = u.totals(0);
        assert_eq!(
            t.context,
            Some(ContextUse {
                used: 9000,
                size: Some(200000)
            })
        );
        assert_eq!(t.currency.as_deref(), Some("EUR"));
        assert!((t.cost.unwrap() - 0.05).abs() < 1e-9);
        // ACP's prompt response usage, camelCase, as the result's.
        let r: ResultEvent = serde_json::from_value(
            json!({"subtype": "success", "usage": {"inputTokens": 30, "outputTokens": 4, "cachedReadTokens": 2}}),
        )
        .unwrap();
        assert_eq!(
            u.result(&r).tokens,
            TokenCounts {
                input: 30,
                output: 4,
                cache_read: 2,
                cache_write: 0
            }
        );
    }
}
