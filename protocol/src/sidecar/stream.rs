//! Partial messages: `stream_event`, the Anthropic-style streaming events
//! (a message starts, its blocks start, grow by deltas and stop) that the
//! chat shows while the assistant is still writing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::{ContentBlock, Envelope, Extra};

/// `type: "stream_event"`: one Anthropic-style streaming event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct StreamEventEnvelope {
    /// The session id, uuid and parent tool call, at the event's top level.
    #[serde(flatten)]
    pub envelope: Envelope,
    /// The streaming event itself.
    pub event: StreamEvent,
    /// Fields this crate does not model, kept verbatim.
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// The streaming event itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum StreamEvent {
    /// A streaming event of a type this crate models.
    Known(KnownStreamEvent),
    /// Any other (e.g. a `ping`), kept verbatim.
    Unknown(Extra),
}

/// Streaming event types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownStreamEvent {
    /// An assistant message begins; its blocks follow.
    MessageStart {
        /// The message as it starts, Anthropic-style (`id`, `role`, `model`,
        /// ...): its `id` is the final `assistant` message's too.
        message: Value,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// Block `index` of the message begins.
    ContentBlockStart {
        /// The block's place in the message, from 0: its deltas and its stop
        /// name it.
        index: u32,
        /// The block as it starts: empty text or thinking, or a `tool_use`
        /// with its id, name and `input: {}`.
        content_block: ContentBlock,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// More of block `index`.
    ContentBlockDelta {
        /// The block it adds to (see `content_block_start`).
        index: u32,
        /// What it adds.
        delta: Delta,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// Block `index` is complete (a tool call's input can be parsed now).
    ContentBlockStop {
        /// The block that is complete.
        index: u32,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// A change to the whole message (Anthropic's `stop_reason`, `usage`).
    MessageDelta {
        /// The event's `delta` and `usage`, kept verbatim (not modelled).
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// The message is complete.
    MessageStop {
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}

/// A `content_block_delta` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[ts(rename = "StreamDelta")]
pub enum Delta {
    /// A delta of a type this crate models.
    Known(KnownDelta),
    /// Any other (e.g. a `signature_delta`), kept verbatim.
    Unknown(Extra),
}

/// Delta types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownDelta {
    /// More text for a text block.
    TextDelta {
        /// The text to append.
        text: String,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// More of a `tool_use` block's input.
    InputJsonDelta {
        /// A piece of JSON text: the pieces joined, in order, parse as the
        /// tool's input.
        partial_json: String,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// More reasoning for a thinking block.
    ThinkingDelta {
        /// The text to append.
        thinking: String,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}
