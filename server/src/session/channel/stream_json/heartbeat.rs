//! Heartbeats, as the structured I/O RFC (seed 000) has them: the SDK —
//! duet — writes `{"type":"heartbeat_request","session_id":…}`, the agent
//! answers `{"type":"result/heartbeat","status":"ok",…}` (and may push the
//! same on its own), so a hung agent can be told from a busy one. An agent
//! that asks duet gets the same answer back.
//!
//! Real agents do not all implement it: Qwen Code 0.24.4 logs an unknown
//! message type to its debug log and answers nothing, as does Claude Code.
//! So duet sends one probe once the agent is ready, and goes on only if
//! a heartbeat has ever come back; an agent that never answers is not
//! reported (nothing is wrong with it) and gets no more requests. Once an
//! agent has answered, a silence of two intervals is reported to clients
//! once, as the warning `agent_unresponsive`, and an answer after it as
//! `agent_responsive`. Heartbeats are keep-alives, not conversation: they
//! stay out of the events file.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{Out, Shared};
use crate::session::WarningCode;
use crate::sync::lock;

/// What the heartbeat state machine asks for after a tick or an answer.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Report {
    /// The agent stopped answering; silent this long.
    Silent(Duration),
    /// It answers again after a [`Report::Silent`].
    Back,
}

/// Whether an agent answers heartbeats, and since when it has not.
#[derive(Debug, Default)]
pub(super) struct Beat {
    /// Requests sent before the agent first answered.
    probes: u32,
    /// The last answer, once there was one.
    last: Option<Instant>,
    warned: bool,
}

/// Probes sent to an agent that has not answered yet.
const PROBES: u32 = 1;

impl Beat {
    /// A `result/heartbeat` came.
    pub(super) fn answered(&mut self, now: Instant) -> Option<Report> {
        self.last = Some(now);
        std::mem::take(&mut self.warned).then_some(Report::Back)
    }

    /// A tick of the interval: whether to send a request, and what to
    /// report. Silence counts from the last answer; `timeout` is how much
    /// of it is too much.
    pub(super) fn tick(&mut self, now: Instant, timeout: Duration) -> (bool, Option<Report>) {
        let Some(last) = self.last else {
            // Not known to answer: a probe, then nothing.
            let send = self.probes < PROBES;
            self.probes += u32::from(send);
            return (send, None);
        };
        let silent = now.saturating_duration_since(last);
        if silent >= timeout && !self.warned {
            self.warned = true;
            return (true, Some(Report::Silent(silent)));
        }
        (true, None)
    }
}

/// Whether `event` is a heartbeat line (kept out of the events file).
pub(super) fn is_heartbeat(event: &Value) -> bool {
    matches!(
        event["type"].as_str(),
        Some("heartbeat_request" | "result/heartbeat")
    )
}

/// duet's answer to the agent's own `heartbeat_request`.
pub(super) fn answer(session_id: Option<&str>) -> String {
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    json!({"type": "result/heartbeat", "session_id": session_id, "status": "ok", "ts": ts})
        .to_string()
}

impl Shared {
    /// The agent answered a heartbeat (or pushed one).
    pub(super) fn heartbeat(&self) {
        if lock(&self.beat).answered(Instant::now()) == Some(Report::Back) {
            self.conversation.warn(
                WarningCode::AgentResponsive,
                "the agent answers heartbeats again".into(),
                None,
            );
        }
    }
}

/// Sends heartbeats every `interval` once the agent is ready, until the
/// queue to its stdin closes (or the channel aborts this task).
pub(super) async fn run(shared: Arc<Shared>, out: mpsc::Sender<Out>, interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        if !shared.is_started() {
            continue;
        }
        let (send, report) = lock(&shared.beat).tick(Instant::now(), interval * 2);
        if let Some(Report::Silent(silent)) = report {
            shared.conversation.warn(
                WarningCode::AgentUnresponsive,
                format!(
                    "the agent has not answered a heartbeat for {} s; it may be hung (its process still runs)",
                    silent.as_secs()
                ),
                None,
            );
        }
        if send {
            let sid = shared.conversation.agent_session_id();
            let line = json!({"type": "heartbeat_request", "session_id": sid}).to_string();
            if let Err(mpsc::error::TrySendError::Closed(_)) = out.try_send(Out::Line(line)) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(20);

    #[test]
    fn an_agent_that_never_answers_gets_one_probe_and_no_report() {
        let mut b = Beat::default();
        let t0 = Instant::now();
        assert_eq!(b.tick(t0, T), (true, None));
        for i in 1..10 {
            assert_eq!(b.tick(t0 + T * i, T), (false, None));
        }
    }

    #[test]
    fn silence_after_answers_is_reported_once_and_the_return_too() {
        let mut b = Beat::default();
        let t0 = Instant::now();
        assert_eq!(b.tick(t0, T), (true, None));
        assert_eq!(b.answered(t0 + Duration::from_millis(5)), None);
        let s = Duration::from_secs(10);
        assert_eq!(b.tick(t0 + s, T), (true, None));
        // No answer since t0+5ms.
        let (send, report) = b.tick(t0 + s * 3, T);
        assert!(send);
        assert!(
            matches!(report, Some(Report::Silent(d)) if d >= T),
            "{report:?}"
        );
        assert_eq!(b.tick(t0 + s * 4, T), (true, None));
        assert_eq!(b.answered(t0 + s * 4), Some(Report::Back));
        assert_eq!(b.answered(t0 + s * 4), None);
        // A later silence is a new one.
        assert!(b.tick(t0 + s * 7, T).1.is_some());
    }

    #[test]
    fn an_agent_that_answers_late_is_taken_at_its_word() {
        let mut b = Beat::default();
        let t0 = Instant::now();
        b.tick(t0, T);
        assert_eq!(b.tick(t0 + T, T), (false, None));
        b.answered(t0 + T);
        assert_eq!(b.tick(t0 + T + T / 2, T), (true, None));
    }
}
