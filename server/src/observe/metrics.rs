//! The server's Prometheus metrics (`GET /metrics`, OpenMetrics text).
//!
//! Counting happens on hot paths (every terminal frame, every event), so
//! the series counted there are resolved once, here, into plain handles:
//! an increment is one atomic add, with no lock and no allocation. Series
//! with a label taken from rare news (a warning code, an error code, an
//! approval's outcome) are looked up in their family when counted, which
//! takes a read lock: fine for things that happen a few times a minute.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// One label.
type Label = [(&'static str, &'static str); 1];
/// An approval's outcome and who decided it.
type ApprovalLabels = [(&'static str, &'static str); 2];
/// A label whose value comes from the config or an agent (a profile, a
/// tool), and a fixed one.
type NamedLabels = [(&'static str, String); 2];
/// Distinct tool names counted apart; more are counted as `other` (an
/// agent with hundreds of MCP tools must not grow the series without end).
const MAX_TOOLS: usize = 64;

/// Every series duet exports. Clone-free: share it behind an `Arc`.
pub(crate) struct Metrics {
    registry: Registry,
    sessions: Family<Label, Gauge>,
    /// WebSocket clients attached to any session.
    pub(crate) clients: Gauge,
    /// Terminal bytes sent to clients (binary frames).
    pub(crate) sent_terminal: Counter,
    /// JSON sent to clients (text frames), bytes.
    pub(crate) sent_json: Counter,
    /// Keystroke bytes from clients.
    pub(crate) keys_in: Counter,
    /// Sidecar events relayed to clients (one per event per client).
    pub(crate) events_relayed: Counter,
    warnings: Family<Label, Counter>,
    approvals: Family<ApprovalLabels, Counter>,
    /// Seconds from an approval request to its decision.
    pub(crate) decision_seconds: Histogram,
    pub(crate) resync_attach: Counter,
    pub(crate) resync_lagged: Counter,
    /// Times the PTY reader waited for a client to catch up.
    pub(crate) flow_holds: Counter,
    ws_errors: Family<Label, Counter>,
    pub(crate) sessions_started: Counter,
    pub(crate) start_failures: Counter,
    /// Audit lines that could not be written.
    pub(crate) audit_dropped: Counter,
    /// Sessions whose state is still in memory (see `SessionObserver`).
    pub(crate) sessions_in_memory: Gauge,
    push: Family<Label, Counter>,
    tokens: Family<NamedLabels, Counter>,
    cost: Family<[(&'static str, String); 1], Counter<f64, std::sync::atomic::AtomicU64>>,
    tool_calls: Family<NamedLabels, Counter>,
    /// Tool names given a series of their own so far.
    tools_seen: std::sync::Mutex<std::collections::HashSet<String>>,
    /// How long turns ran, as duet saw them.
    pub(crate) turn_seconds: Histogram,
}

impl Metrics {
    /// A fresh set of series, all at zero.
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("duet");
        let sessions = Family::<Label, Gauge>::default();
        registry.register("sessions", "Sessions by status", sessions.clone());
        let clients = Gauge::default();
        registry.register(
            "clients_connected",
            "WebSocket clients attached to a session",
            clients.clone(),
        );
        let sent = Family::<Label, Counter>::default();
        registry.register(
            "ws_sent_bytes",
            "Bytes sent to WebSocket clients: terminal output (binary) and JSON (text)",
            sent.clone(),
        );
        let keys_in = Counter::default();
        registry.register(
            "keystroke_bytes",
            "Keystroke bytes received from clients",
            keys_in.clone(),
        );
        let events_relayed = Counter::default();
        registry.register(
            "events_relayed",
            "Sidecar events sent to clients (each event once per client)",
            events_relayed.clone(),
        );
        let warnings = Family::<Label, Counter>::default();
        registry.register(
            "warnings",
            "Warnings sent to clients, by code",
            warnings.clone(),
        );
        let approvals = Family::<ApprovalLabels, Counter>::default();
        registry.register(
            "approvals",
            "Approval requests resolved, by outcome (allowed, denied, abandoned) and decider (client, terminal, none)",
            approvals.clone(),
        );
        // 100 ms .. about 27 minutes: a person reads a tool call, then decides.
        let decision_seconds = Histogram::new(exponential_buckets(0.1, 2.0, 15));
        registry.register(
            "approval_decision_seconds",
            "Time from an approval request to its decision",
            decision_seconds.clone(),
        );
        let resyncs = Family::<Label, Counter>::default();
        registry.register(
            "resyncs",
            "Terminal resynchronisations from a screen snapshot, by reason (attach, lagged)",
            resyncs.clone(),
        );
        let flow_holds = Counter::default();
        registry.register(
            "flow_holds",
            "Times the PTY reader waited for a client to catch up (flow control)",
            flow_holds.clone(),
        );
        let ws_errors = Family::<Label, Counter>::default();
        registry.register(
            "ws_errors",
            "Error frames sent to WebSocket clients, by code",
            ws_errors.clone(),
        );
        let sessions_started = Counter::default();
        registry.register(
            "sessions_started",
            "Sessions started",
            sessions_started.clone(),
        );
        let start_failures = Counter::default();
        registry.register(
            "session_start_failures",
            "Sessions whose program could not be started",
            start_failures.clone(),
        );
        let audit_dropped = Counter::default();
        registry.register(
            "audit_dropped",
            "Audit lines that could not be written",
            audit_dropped.clone(),
        );
        let sessions_in_memory = Gauge::default();
        registry.register(
            "sessions_in_memory",
            "Sessions whose state is still in memory, removed ones not yet freed included: \
             after sessions are purged it falls back to the number listed (a leak stays here)",
            sessions_in_memory.clone(),
        );
        let push = Family::<Label, Counter>::default();
        registry.register(
            "push_deliveries",
            "Web Push messages, by outcome (sent, pruned: the subscription was gone, failed, dropped: the queue was full)",
            push.clone(),
        );
        let tokens = Family::<NamedLabels, Counter>::default();
        registry.register(
            "tokens",
            "Tokens agents reported, by profile and direction (input, output, cache_read, cache_write)",
            tokens.clone(),
        );
        let cost = Family::<[(&'static str, String); 1], Counter<f64, std::sync::atomic::AtomicU64>>::default();
        registry.register(
            "agent_cost",
            "Cost agents reported, by profile, in the agent's currency (USD for Claude Code)",
            cost.clone(),
        );
        let tool_calls = Family::<NamedLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls that finished, by tool and outcome (ok, error)",
            tool_calls.clone(),
        );
        // 0.5 s .. about 2 h 15 min.
        let turn_seconds = Histogram::new(exponential_buckets(0.5, 2.0, 15));
        registry.register(
            "turn_duration_seconds",
            "How long agents' turns ran, from the prompt to the end of the reply",
            turn_seconds.clone(),
        );
        let handle = |family: &Family<Label, Counter>, label: &'static str, value| {
            family.get_or_create(&[(label, value)]).clone()
        };
        let metrics = Self {
            sent_terminal: handle(&sent, "frame", "binary"),
            sent_json: handle(&sent, "frame", "text"),
            resync_attach: handle(&resyncs, "reason", "attach"),
            resync_lagged: handle(&resyncs, "reason", "lagged"),
            registry,
            sessions,
            clients,
            keys_in,
            events_relayed,
            warnings,
            approvals,
            decision_seconds,
            flow_holds,
            ws_errors,
            sessions_started,
            start_failures,
            audit_dropped,
            sessions_in_memory,
            push,
            tokens,
            cost,
            tool_calls,
            tools_seen: Default::default(),
            turn_seconds,
        };
        // Series that read 0 until something happens, so dashboards and
        // `rate()` see them from the start.
        for status in ["running", "exited"] {
            let _ = metrics.sessions.get_or_create(&[("status", status)]);
        }
        for outcome in ["allowed", "denied", "abandoned"] {
            for decider in ["client", "terminal", "notification", "policy", "none"] {
                if (outcome == "abandoned") == (decider == "none") {
                    let _ = metrics
                        .approvals
                        .get_or_create(&[("outcome", outcome), ("decided_by", decider)]);
                }
            }
        }
        metrics
    }

    /// Sets the sessions gauge (read from the registry at scrape time).
    pub(crate) fn set_sessions(&self, running: i64, exited: i64) {
        self.sessions
            .get_or_create(&[("status", "running")])
            .set(running);
        self.sessions
            .get_or_create(&[("status", "exited")])
            .set(exited);
    }

    /// A warning went to clients.
    pub(crate) fn warning(&self, code: &'static str) {
        self.warnings.get_or_create(&[("code", code)]).inc();
    }

    /// An error frame went to a client.
    pub(crate) fn ws_error(&self, code: &'static str) {
        self.ws_errors.get_or_create(&[("code", code)]).inc();
    }

    /// An approval request was resolved.
    pub(crate) fn approval(&self, outcome: &'static str, decided_by: &'static str) {
        self.approvals
            .get_or_create(&[("outcome", outcome), ("decided_by", decided_by)])
            .inc();
    }

    /// `n` tokens of `profile` went `direction`.
    pub(crate) fn tokens(&self, profile: &str, direction: &'static str, n: u64) {
        self.tokens
            .get_or_create(&[
                ("profile", profile.to_string()),
                ("direction", direction.to_string()),
            ])
            .inc_by(n);
    }

    /// `profile`'s agent reported spending `amount` more.
    pub(crate) fn cost(&self, profile: &str, amount: f64) {
        self.cost
            .get_or_create(&[("profile", profile.to_string())])
            .inc_by(amount);
    }

    /// A call of `tool` finished with `outcome`.
    pub(crate) fn tool_call(&self, tool: &str, outcome: &'static str) {
        let tool = {
            let mut seen = crate::sync::lock(&self.tools_seen);
            if seen.contains(tool) {
                tool
            } else if seen.len() < MAX_TOOLS {
                seen.insert(tool.to_string());
                tool
            } else {
                "other"
            }
        };
        self.tool_calls
            .get_or_create(&[("tool", tool.to_string()), ("outcome", outcome.to_string())])
            .inc();
    }

    /// The counter of Web Push messages with `outcome`.
    pub(crate) fn push(&self, outcome: &'static str) -> Counter {
        self.push.get_or_create(&[("outcome", outcome)]).clone()
    }

    /// The OpenMetrics text exposition.
    pub(crate) fn render(&self) -> String {
        let mut out = String::with_capacity(8 << 10);
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// The content type of [`Metrics::render`].
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Counts one attached client while it lives.
pub(crate) struct ClientCount(Gauge);

impl ClientCount {
    pub(crate) fn new(metrics: &Metrics) -> Self {
        metrics.clients.inc();
        Self(metrics.clients.clone())
    }
}

impl Drop for ClientCount {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grafana_dashboard_uses_only_exported_series() {
        let dashboard = include_str!("../../../deploy/grafana/duet.json");
        let metrics = Metrics::new();
        // Families with no series yet are not rendered at all.
        metrics.warning("some_warning");
        metrics.ws_error("some_error");
        metrics.tokens("demo", "input", 1);
        metrics.cost("demo", 0.5);
        metrics.tool_call("Bash", "ok");
        let rendered = metrics.render();
        let mut seen = 0;
        for (i, _) in dashboard.match_indices("duet_") {
            let name: String = dashboard[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name == "duet_" || !dashboard[..i].ends_with(['(', ' ', '"']) {
                continue;
            }
            assert!(
                rendered.contains(name.trim_end_matches("_total")),
                "{name} is not exported"
            );
            seen += 1;
        }
        assert!(seen > 15, "{seen}");
    }
}
