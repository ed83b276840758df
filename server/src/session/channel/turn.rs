//! Whether the program is between turns, derived from its events.
//!
//! Real Qwen Code silently drops a `submit` that arrives while a turn is
//! running (an open approval, the model call after a tool, a prompt typed in
//! the terminal; see docs/qwen-code.md), although its docs promise a retry.
//! So duet holds submits and writes the next one only when the program is
//! idle: after `session_start`, and whenever a reply has ended — a final
//! `assistant` message without tool calls plus its `message_stop`, in either
//! order (Qwen writes the message first, the docs the stop first) — or a
//! `result` arrives, or a client denied a tool (Qwen then waits for the next
//! prompt without calling the model), or the user interrupted the turn. An
//! agent that stops a running tool on Escape may write only that tool's
//! result and then wait for a prompt: after an interrupt, tool results do
//! not reopen the turn; the model's next message does.

/// What an event means for the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    SessionStart,
    /// A prompt went to the model.
    UserTurn,
    /// Tool results (the model is usually called next).
    ToolResults,
    MessageStart,
    MessageStop,
    /// A complete assistant message; `tool_use` says whether it asks for tools.
    Assistant {
        tool_use: bool,
    },
    /// Waiting for a tool approval.
    ControlRequest,
    /// A client denied a tool.
    Denied,
    /// The user interrupted the turn (Escape, Ctrl-C, a client's cancel).
    Interrupted,
    Result,
}

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Turn {
    started: bool,
    busy: bool,
    final_message: bool,
    stopped: bool,
    /// Interrupted since the model last started a message.
    interrupted: bool,
    /// Only a `result` ends a turn (see [`Turn::ends_with_result`]).
    result_ends: bool,
}

impl Turn {
    /// The agent ends every turn with a `result` (ACP, stream-json): a
    /// final message and its stop are not the turn's end. At an ACP
    /// prompt's end the open message is flushed before the `result`; taken
    /// as the end, it let a held prompt go first, and that prompt's turn
    /// was then counted over by the late `result`.
    pub(crate) fn ends_with_result(&mut self) {
        self.result_ends = true;
    }

    /// Feeds one signal; returns whether the program is idle afterwards.
    pub(crate) fn on(&mut self, signal: Signal) -> bool {
        match signal {
            Signal::SessionStart => {
                self.started = true;
                self.busy = false;
            }
            Signal::UserTurn | Signal::MessageStart => {
                self.busy = true;
                self.final_message = false;
                self.stopped = false;
                self.interrupted = false;
            }
            // A stopped tool's result, after an interrupt: no model call
            // follows unless a message starts.
            Signal::ToolResults if self.interrupted => {}
            Signal::ToolResults => {
                self.busy = true;
                self.final_message = false;
                self.stopped = false;
            }
            Signal::Interrupted => {
                self.busy = false;
                self.interrupted = true;
            }
            Signal::MessageStop => self.stopped = true,
            Signal::Assistant { tool_use } => {
                self.busy = true;
                self.final_message = !tool_use;
            }
            Signal::ControlRequest => {
                self.busy = true;
                self.final_message = false;
            }
            Signal::Denied | Signal::Result => self.busy = false,
        }
        if self.busy && self.final_message && self.stopped && !self.result_ends {
            self.busy = false;
        }
        self.idle()
    }

    /// The agent has announced itself.
    pub(crate) fn started(&self) -> bool {
        self.started
    }

    /// Started and not in a turn.
    pub(crate) fn idle(&self) -> bool {
        self.started && !self.busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Signal::*;

    #[test]
    fn qwen_order_and_doc_order_both_end_a_turn() {
        let mut t = Turn::default();
        assert!(!t.idle());
        assert!(t.on(SessionStart));
        // Qwen Code 0.15: assistant before message_stop.
        assert!(!t.on(UserTurn));
        assert!(!t.on(MessageStart));
        assert!(!t.on(Assistant { tool_use: false }));
        assert!(t.on(MessageStop));
        // The documented order: message_stop, then assistant.
        t.on(UserTurn);
        t.on(MessageStart);
        assert!(!t.on(MessageStop));
        assert!(t.on(Assistant { tool_use: false }));
    }

    #[test]
    fn tools_keep_the_turn_going_until_the_final_reply() {
        let mut t = Turn::default();
        t.on(SessionStart);
        t.on(UserTurn);
        t.on(MessageStart);
        t.on(Assistant { tool_use: true });
        assert!(!t.on(MessageStop));
        assert!(!t.on(ControlRequest));
        assert!(!t.on(UserTurn)); // tool_result
        t.on(MessageStart);
        t.on(Assistant { tool_use: false });
        assert!(t.on(MessageStop));
        // A denial ends the turn at once.
        t.on(UserTurn);
        t.on(ControlRequest);
        assert!(t.on(Denied));
    }

    #[test]
    fn an_interrupted_tool_ends_the_turn_even_if_only_its_result_follows() {
        let mut t = Turn::default();
        t.on(SessionStart);
        t.on(UserTurn);
        t.on(Assistant { tool_use: true });
        t.on(MessageStop);
        assert!(!t.on(ToolResults));
        // A tool runs; the user presses Escape; the agent writes the
        // stopped tool's result and waits.
        t.on(Assistant { tool_use: true });
        assert!(t.on(Interrupted));
        assert!(t.on(ToolResults));
        // An agent that calls the model anyway is busy again...
        assert!(!t.on(MessageStart));
        // ...and, that message started, a later tool result keeps it so.
        t.on(Assistant { tool_use: true });
        assert!(!t.on(ToolResults));
    }

    #[test]
    fn an_agent_that_ends_turns_with_results_is_busy_until_its_result() {
        let mut t = Turn::default();
        t.ends_with_result();
        t.on(SessionStart);
        t.on(UserTurn);
        t.on(Assistant { tool_use: false });
        assert!(!t.on(MessageStop), "the message's end is not the turn's");
        assert!(t.on(Result));
        // Without the flag the same events end it at the stop.
        let mut q = Turn::default();
        q.on(SessionStart);
        q.on(UserTurn);
        q.on(Assistant { tool_use: false });
        assert!(q.on(MessageStop));
    }
}
