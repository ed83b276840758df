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
    #[serde(flatten)]
    pub envelope: Envelope,
    pub message: Message,
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
    pub content: Content,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// Message content: usually blocks, sometimes a bare string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[ts(rename = "MessageContent")]
pub enum Content {
    Blocks(Vec<ContentBlock>),
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
    Known(KnownBlock),
    Unknown(Extra),
}

/// Content block types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownBlock {
    Text {
        text: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    Thinking {
        thinking: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        is_error: Option<bool>,
        /// A string or a list of blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        content: Option<Value>,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}
