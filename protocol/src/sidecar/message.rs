//! Whole messages: `user` and `assistant` events, their Anthropic-style
//! message and its content blocks (text, thinking, tool calls and their
//! results).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::{Envelope, Extra};

/// `type: "user"` and `type: "assistant"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct MessageEvent {
    /// The session id, uuid and parent tool call, at the event's top level.
    #[serde(flatten)]
    pub envelope: Envelope,
    /// The message itself.
    pub message: Message,
    /// Fields this crate does not model, kept verbatim.
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// A chat message in the Anthropic-style shape stream-json uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[ts(rename = "SidecarMessage")]
pub struct Message {
    /// `user` or `assistant`.
    pub role: String,
    /// What the message says: text, thinking, tool calls, tool results.
    pub content: Content,
    /// The model API's id for an assistant message (e.g. `msg_…`): the one
    /// its streamed `message_start` had, so the final message replaces
    /// what was streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub id: Option<String>,
    /// The model that wrote an assistant message, e.g. `qwen3-coder-plus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    /// Fields this crate does not model, kept verbatim (e.g. `usage` and
    /// `stop_reason`).
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// Message content: usually blocks, sometimes a bare string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[ts(rename = "MessageContent")]
pub enum Content {
    /// A list of blocks, in order (what agents usually write).
    Blocks(Vec<ContentBlock>),
    /// A bare string: one text block.
    Text(String),
}

impl Content {
    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Known(KnownBlock::Text { text, .. }) => Some(text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The blocks, treating a bare string as one text block.
    pub fn blocks(&self) -> Vec<ContentBlock> {
        match self {
            Content::Blocks(b) => b.clone(),
            Content::Text(t) => vec![ContentBlock::Known(KnownBlock::Text {
                text: t.clone(),
                extra: Extra::new(),
            })],
        }
    }
}

/// One content block, modelled or kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum ContentBlock {
    /// A block of a type this crate models.
    Known(KnownBlock),
    /// Any other block (an image, say), kept verbatim.
    Unknown(Extra),
}

/// Content block types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownBlock {
    /// Text: the user's prompt, or the assistant's answer (Markdown).
    Text {
        /// The text; empty in a `content_block_start`, whose `text_delta`s
        /// bring it.
        text: String,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// The model's reasoning before it answers.
    Thinking {
        /// The reasoning, as text; empty in a `content_block_start`, whose
        /// `thinking_delta`s bring it.
        thinking: String,
        /// Fields this crate does not model (e.g. a `signature`), kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// A tool call the model makes (in an `assistant` message).
    ToolUse {
        /// The call's id (e.g. `toolu_…`, `call_…`): its `tool_result` and its
        /// approval's `tool_use_id` name it.
        id: String,
        /// The tool, in the agent's name for it (e.g. `run_shell_command`, `Bash`).
        name: String,
        /// The tool's arguments, a JSON object (`{}` in a block that is still
        /// streaming its input).
        #[serde(default)]
        input: Value,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// A tool's result, fed back to the model (in a `user` message).
    ToolResult {
        /// The `id` of the `tool_use` it answers.
        tool_use_id: String,
        /// `true` when the tool failed or was denied; absent counts as `false`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        is_error: Option<bool>,
        /// A string or a list of blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        content: Option<Value>,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}
