//! What the events tell: each event line updates the derived state (the
//! handshake, the turn, approvals, prompt delivery).

use duet_protocol::sidecar::{
    Content, ContentBlock, ControlRequestBody, KnownBlock, KnownEvent, SidecarEvent,
};
use serde_json::Value;

use super::super::turn::Signal;
use super::peek::{peek, string_of, PeekInner};
use super::Conversation;
use crate::sync::lock;

impl Conversation {
    /// A line of the agent's own events file, already validated and
    /// recorded in the log as `seq`: updates the derived state.
    pub(crate) fn ingest(&self, seq: u64, line: &str) {
        let Ok(peek) = peek(line) else { return };
        match string_of(peek.kind).as_deref() {
            Some(
                "system" | "user" | "assistant" | "control_request" | "control_response" | "result",
            ) => {
                if let Ok(SidecarEvent::Known(ev)) = SidecarEvent::from_line(line) {
                    self.on_event(seq, ev);
                }
            }
            Some("stream_event") => match peek
                .event
                .and_then(|e| serde_json::from_str::<PeekInner<'_>>(e.get()).ok())
                .and_then(|e| string_of(e.kind))
                .as_deref()
            {
                Some("message_start") => self.signal(Signal::MessageStart),
                Some("message_stop") => self.signal(Signal::MessageStop),
                _ => {}
            },
            _ => {}
        }
    }

    fn on_event(&self, seq: u64, ev: KnownEvent) {
        let mut st = lock(&self.state);
        let mut changed = Vec::new();
        // A request clients are asked (not a replay, not a policy's).
        let mut asked = None;
        match ev {
            KnownEvent::System(sys) if sys.subtype == "session_start" => {
                st.agent_session_id = sys
                    .data
                    .as_ref()
                    .and_then(|d| d.get("session_id"))
                    .and_then(Value::as_str)
                    .or(sys.envelope.session_id.as_deref())
                    .map(str::to_string);
                // Dual output protocol 2 (Qwen Code 0.24) keeps every
                // prompt read after session_start: queued behind a dialog,
                // or merged into a turn without a `user` event of its own
                // (docs/qwen-code.md §8.3). A copy would be answered twice.
                // Nor is there screen text to wait for: it never shows
                // 0.15's `? for shortcuts` (§8.2), so a profile written for
                // 0.15 would hold the first prompt for the whole fallback.
                let protocol = sys.data.as_ref().and_then(|d| d.get("protocol_version"));
                if protocol.and_then(Value::as_u64).is_some_and(|v| v >= 2) {
                    st.delivery.keeps_prompts();
                    st.screen_ready = true;
                }
                st.handshake = sys.data.clone();
                self.turn(&mut st, Signal::SessionStart);
            }
            KnownEvent::System(sys) if sys.subtype == "session_end" => {
                st.ended = true;
                changed = st.approvals.abandon_pending();
            }
            KnownEvent::System(sys) => {
                let spent = st.usage.system(&sys);
                self.spent(&spent);
            }
            KnownEvent::Assistant(msg) => {
                let tool_use = msg
                    .message
                    .content
                    .blocks()
                    .iter()
                    .any(|b| matches!(b, ContentBlock::Known(KnownBlock::ToolUse { .. })));
                // The turn first: a message may be what begins it.
                self.turn(&mut st, Signal::Assistant { tool_use });
                let spent = st
                    .usage
                    .assistant(&msg.message, msg.envelope.uuid.as_deref());
                self.spent(&spent);
            }
            KnownEvent::ControlRequest(req) => {
                self.turn(&mut st, Signal::ControlRequest);
                if let ControlRequestBody::CanUseTool(tool) = &req.request {
                    let options = self
                        .channel
                        .get()
                        .map(|c| c.options(tool))
                        .unwrap_or_else(super::super::allow_deny);
                    let mut approval = st.approvals.requested(&req.request_id, tool, seq, options);
                    // Replayed after a restart: what a client made of it
                    // then, which the events do not say.
                    let restored = st.decisions.take(&req.request_id, seq);
                    let replayed = restored.is_some();
                    if let Some(d) = restored {
                        approval = st.approvals.restore(d).unwrap_or(approval);
                    }
                    // Told as asked, then as decided: the audit trail and
                    // clients see both.
                    let decided = (!replayed)
                        .then(|| self.apply_policy(&mut st, &approval))
                        .flatten();
                    if !replayed && decided.is_none() {
                        asked = Some(req.request_id.clone());
                    }
                    changed.push(approval);
                    changed.extend(decided);
                }
            }
            KnownEvent::ControlResponse(resp) => {
                changed.extend(st.approvals.responded(&resp.response));
            }
            KnownEvent::User(msg) => {
                let results: Vec<(String, bool)> = match &msg.message.content {
                    Content::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Known(KnownBlock::ToolResult {
                                tool_use_id,
                                is_error,
                                ..
                            }) => Some((tool_use_id.clone(), is_error.unwrap_or(false))),
                            _ => None,
                        })
                        .collect(),
                    Content::Text(_) => Vec::new(),
                };
                if results.is_empty() {
                    // A new prompt: the previous turn, and anything it was
                    // waiting for, is over. It may be the one in flight.
                    changed = st.approvals.abandon_pending();
                    let text = msg.message.content.text();
                    if st.prompt_name.is_none() {
                        st.prompt_name = super::naming::prompt_name(&text);
                    }
                    st.delivery.echoed(&text);
                    self.turn(&mut st, Signal::UserTurn);
                } else {
                    for (id, is_error) in results {
                        changed.extend(st.approvals.tool_finished(&id, is_error));
                        let tool = st.usage.tool_result(&id, is_error);
                        self.tool_finished(tool.as_deref(), is_error);
                    }
                    self.turn(&mut st, Signal::ToolResults);
                }
            }
            KnownEvent::Result(r) => {
                changed = st.approvals.abandon_pending();
                // Before the turn ends: the figures are the running turn's.
                let spent = st.usage.result(&r);
                self.spent(&spent);
                self.turn(&mut st, Signal::Result);
            }
            _ => {}
        }
        // A decision or an abandoned request may let a held prompt go.
        self.pump(&mut st);
        drop(st);
        self.announce(changed);
        if let (Some(id), Some(channel)) = (asked, self.channel.get()) {
            channel.asked(&id);
        }
    }

    fn signal(&self, signal: Signal) {
        let mut st = lock(&self.state);
        self.turn(&mut st, signal);
    }
}
