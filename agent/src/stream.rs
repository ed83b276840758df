//! Turns a scripted reply into the stream-json event sequence, one step at a
//! time, so the app can pace the token deltas and cancel between any two:
//! `message_start`, then per block `content_block_start`, deltas,
//! `content_block_stop`, then `message_stop` and the full `assistant` message
//! (the order of the dual-output seed; Qwen Code 0.15 writes `assistant`
//! before `message_stop`, and duet's clients accept both).

use std::collections::VecDeque;

use duet_protocol::sidecar::{ContentBlock, SidecarEvent};

use crate::events::{text_block, tool_use_block, Events, Usage};
use crate::script::{self, Block};
use crate::tools::ToolCall;

/// A reply being streamed.
pub(crate) struct Streamer {
    message_id: String,
    blocks: Vec<Block>,
    state: State,
    /// Finished blocks, for the `assistant` message.
    content: Vec<ContentBlock>,
    /// Text streamed so far in the open text block.
    partial: String,
    usage: Usage,
}

#[derive(Debug)]
enum State {
    Start,
    BlockStart(usize),
    Deltas {
        block: usize,
        chunks: VecDeque<String>,
    },
    BlockStop(usize),
    MessageStop,
    Assistant,
    Done,
}

/// One step of the stream.
pub(crate) enum Step {
    /// Write `event`; a `paced` step is a token and takes one token delay.
    Emit {
        event: SidecarEvent,
        paced: bool,
        /// Text to show as it streams.
        text: Option<String>,
    },
    /// The `assistant` message, and the tool call it asks for, if any.
    Finished {
        event: SidecarEvent,
        tool: Option<ToolCall>,
    },
}

impl Streamer {
    /// A stream of `blocks` answering a prompt of about `input_tokens` tokens.
    pub(crate) fn new(blocks: Vec<Block>, input_tokens: u64) -> Self {
        Streamer {
            message_id: uuid::Uuid::new_v4().to_string(),
            blocks,
            state: State::Start,
            content: Vec::new(),
            partial: String::new(),
            usage: Usage {
                input_tokens,
                output_tokens: 0,
            },
        }
    }

    /// The next step; `None` once finished.
    pub(crate) fn next(&mut self, events: &Events) -> Option<Step> {
        let state = std::mem::replace(&mut self.state, State::Done);
        let (next, step) = match state {
            State::Start => (
                State::BlockStart(0),
                self.emit(events.message_start(&self.message_id)),
            ),
            State::BlockStart(i) if i >= self.blocks.len() => {
                return self.step_to(State::MessageStop, events)
            }
            State::BlockStart(i) => {
                let (start, chunks) = match &self.blocks[i] {
                    Block::Text(text) => (text_block(""), script::tokens(text)),
                    Block::Tool(call) => (
                        tool_use_block(&call.id, call.name(), serde_json::json!({})),
                        script::json_chunks(&call.input().to_string()),
                    ),
                };
                self.partial.clear();
                let chunks = chunks.into();
                (
                    State::Deltas { block: i, chunks },
                    self.emit(events.block_start(index(i), start)),
                )
            }
            State::Deltas { block, mut chunks } => match chunks.pop_front() {
                None => return self.step_to(State::BlockStop(block), events),
                Some(chunk) => {
                    self.usage.output_tokens += 1;
                    let (event, text) = match &self.blocks[block] {
                        Block::Text(_) => {
                            self.partial.push_str(&chunk);
                            (events.text_delta(index(block), &chunk), Some(chunk))
                        }
                        Block::Tool(_) => (events.input_json_delta(index(block), &chunk), None),
                    };
                    (
                        State::Deltas { block, chunks },
                        Step::Emit {
                            event,
                            paced: true,
                            text,
                        },
                    )
                }
            },
            State::BlockStop(i) => {
                self.content.push(match &self.blocks[i] {
                    Block::Text(text) => text_block(text),
                    Block::Tool(call) => tool_use_block(&call.id, call.name(), call.input()),
                });
                self.partial.clear();
                (
                    State::BlockStart(i + 1),
                    self.emit(events.block_stop(index(i))),
                )
            }
            State::MessageStop => (State::Assistant, self.emit(events.message_stop())),
            State::Assistant => {
                let tool = self.blocks.iter().find_map(|b| match b {
                    Block::Tool(call) => Some(call.clone()),
                    Block::Text(_) => None,
                });
                let stop_reason = tool.as_ref().map(|_| "tool_use");
                let event = events.assistant(
                    &self.message_id,
                    std::mem::take(&mut self.content),
                    stop_reason,
                    self.usage,
                );
                (State::Done, Step::Finished { event, tool })
            }
            State::Done => return None,
        };
        self.state = next;
        Some(step)
    }

    fn step_to(&mut self, state: State, events: &Events) -> Option<Step> {
        self.state = state;
        self.next(events)
    }

    fn emit(&self, event: SidecarEvent) -> Step {
        Step::Emit {
            event,
            paced: false,
            text: None,
        }
    }

    /// Stops mid-stream: closes the open block, then `message_stop` and the
    /// partial `assistant` message. A tool call cut off while its input was
    /// streaming is left out of the message: it was never made.
    pub(crate) fn cancel(&mut self, events: &Events) -> Vec<SidecarEvent> {
        let state = std::mem::replace(&mut self.state, State::Done);
        let mut out = Vec::new();
        let open = match state {
            State::Start => return out,
            State::Deltas { block, .. } | State::BlockStop(block) => Some(block),
            State::BlockStart(_) | State::MessageStop => None,
            State::Assistant | State::Done => {
                // message_stop is out already: only the message is missing.
                if matches!(state, State::Assistant) {
                    out.push(self.partial_message(events));
                }
                return out;
            }
        };
        if let Some(block) = open {
            out.push(events.block_stop(index(block)));
            if matches!(self.blocks[block], Block::Text(_)) && !self.partial.is_empty() {
                self.content.push(text_block(&self.partial));
            }
        }
        out.push(events.message_stop());
        out.push(self.partial_message(events));
        out
    }

    fn partial_message(&mut self, events: &Events) -> SidecarEvent {
        events.assistant(
            &self.message_id,
            std::mem::take(&mut self.content),
            None,
            self.usage,
        )
    }
}

fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn kinds(events: &[SidecarEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| {
                let v: Value = serde_json::from_str(&e.to_line()).unwrap();
                match v["type"].as_str().unwrap() {
                    "stream_event" => v["event"]["type"].as_str().unwrap().to_string(),
                    other => other.to_string(),
                }
            })
            .collect()
    }

    fn run_all(s: &mut Streamer, events: &Events) -> (Vec<SidecarEvent>, Option<ToolCall>) {
        let mut out = Vec::new();
        while let Some(step) = s.next(events) {
            match step {
                Step::Emit { event, .. } => out.push(event),
                Step::Finished { event, tool } => {
                    out.push(event);
                    return (out, tool);
                }
            }
        }
        panic!("stream ended without finishing")
    }

    #[test]
    fn a_run_reply_streams_text_then_the_tool_call() {
        let events = Events::new("s");
        let blocks = script::respond("run ls", std::path::Path::new("/tmp"));
        let mut s = Streamer::new(blocks, 2);
        let (out, tool) = run_all(&mut s, &events);
        let k = kinds(&out);
        assert_eq!(k[0], "message_start");
        assert_eq!(k[1], "content_block_start");
        let first_stop = k.iter().position(|x| x == "content_block_stop").unwrap();
        assert!(k[2..first_stop].iter().all(|x| x == "content_block_delta"));
        assert_eq!(k[first_stop + 1], "content_block_start");
        assert_eq!(
            &k[k.len() - 3..],
            ["content_block_stop", "message_stop", "assistant"]
        );
        let assistant: Value = serde_json::from_str(&out.last().unwrap().to_line()).unwrap();
        assert_eq!(assistant["message"]["content"][1]["type"], "tool_use");
        assert_eq!(assistant["message"]["content"][1]["input"]["command"], "ls");
        assert_eq!(assistant["message"]["stop_reason"], "tool_use");
        assert_eq!(tool.unwrap().name(), "run_shell_command");
        assert!(s.next(&events).is_none());
    }

    #[test]
    fn cancel_closes_the_block_and_keeps_the_partial_text() {
        let events = Events::new("s");
        let mut s = Streamer::new(vec![Block::Text("one two three".into())], 1);
        for _ in 0..4 {
            s.next(&events); // message_start, block_start, "one ", "two "
        }
        let out = s.cancel(&events);
        assert_eq!(
            kinds(&out),
            ["content_block_stop", "message_stop", "assistant"]
        );
        let assistant: Value = serde_json::from_str(&out[2].to_line()).unwrap();
        assert_eq!(assistant["message"]["content"][0]["text"], "one two ");
        assert!(s.next(&events).is_none());
    }
}
