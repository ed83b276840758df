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
    #[serde(flatten)]
    pub envelope: Envelope,
    pub event: StreamEvent,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// The streaming event itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum StreamEvent {
    Known(KnownStreamEvent),
    Unknown(Extra),
}

/// Streaming event types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownStreamEvent {
    MessageStart {
        message: Value,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ContentBlockStart {
        index: u32,
        content_block: ContentBlock,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ContentBlockDelta {
        index: u32,
        delta: Delta,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ContentBlockStop {
        index: u32,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    MessageDelta {
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    MessageStop {
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
    Known(KnownDelta),
    Unknown(Extra),
}

/// Delta types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownDelta {
    TextDelta {
        text: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    InputJsonDelta {
        partial_json: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ThinkingDelta {
        thinking: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}
