//! What particular ACP agents do that the protocol does not say, and how
//! duet meets it (docs/gemini-cli.md §6, docs/codex.md §6):
//!
//! - Gemini CLI 0.61.0 reads a file through the client before it writes
//!   it, and fails `write_file` of a new file whatever error the client
//!   answers for the missing one (it looks for "not found" in the error's
//!   message, but the SDK hands it a plain object). Zed and others answer
//!   an empty file; so does duet, for this agent, when the file's directory
//!   exists. Other agents keep ACP's error.
//! - Gemini CLI announces a mode change as the assistant text
//!   `[MODE_UPDATE] <mode>`: it becomes the mode change it stands for
//!   (any agent: only the exact text naming a mode it offered).
//! - codex-acp 2.6.0 puts Codex's warnings into the reply (`Warning: …`,
//!   `Config warning: …`, chunks without a `messageId`): they become
//!   warnings.
//!
//! Pure: the agent's `initialize` answer and updates in, decisions out.

use serde_json::Value;

/// See the module docs.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Quirks {
    /// A missing file (in a directory that exists) reads as "".
    pub(super) missing_file_is_empty: bool,
    /// Chunks without a message id that start like a warning are warnings.
    pub(super) warnings_in_replies: bool,
}

impl Quirks {
    /// The quirks of the agent that answered `initialize` with `agent`.
    pub(super) fn of(agent: &Value) -> Self {
        let name = agent["agentInfo"]["name"].as_str().unwrap_or_default();
        Self {
            missing_file_is_empty: name == "gemini-cli",
            warnings_in_replies: name == "@agentclientprotocol/codex-acp",
        }
    }

    /// The warning an `agent_message_chunk` stands for, if it is one.
    pub(super) fn warning(&self, update: &Value) -> Option<String> {
        if !self.warnings_in_replies
            || update["sessionUpdate"] != "agent_message_chunk"
            || update.get("messageId").is_some_and(|m| !m.is_null())
        {
            return None;
        }
        let text = update["content"]["text"].as_str()?;
        ["Warning: ", "Config warning: "]
            .iter()
            .any(|p| text.starts_with(p))
            .then(|| text.trim_end().to_string())
    }
}

/// The mode an `agent_message_chunk` of exactly `[MODE_UPDATE] <mode>`
/// announces, when `modes` offers that mode.
pub(super) fn mode_notice(update: &Value, modes: &Value) -> Option<String> {
    if update["sessionUpdate"] != "agent_message_chunk" {
        return None;
    }
    let mode = update["content"]["text"]
        .as_str()?
        .strip_prefix("[MODE_UPDATE] ")?
        .trim();
    modes["availableModes"]
        .as_array()?
        .iter()
        .any(|m| m["id"] == mode)
        .then(|| mode.to_string())
}

/// Whether an update retells the conversation (what a `session/load`
/// replays) rather than news about the session (commands, modes, usage).
pub(super) fn is_history(update: &Value) -> bool {
    matches!(
        update["sessionUpdate"].as_str(),
        Some(
            "user_message_chunk"
                | "agent_message_chunk"
                | "agent_thought_chunk"
                | "tool_call"
                | "tool_call_update"
                | "plan"
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chunk(text: &str) -> Value {
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})
    }

    #[test]
    fn each_agent_gets_its_own_quirks() {
        let gemini = Quirks::of(&json!({"agentInfo": {"name": "gemini-cli"}}));
        assert!(gemini.missing_file_is_empty && !gemini.warnings_in_replies);
        let codex = Quirks::of(&json!({"agentInfo": {"name": "@agentclientprotocol/codex-acp"}}));
        assert!(!codex.missing_file_is_empty && codex.warnings_in_replies);
        let qwen = Quirks::of(&json!({"agentInfo": {"name": "qwen-code"}}));
        assert!(!qwen.missing_file_is_empty && !qwen.warnings_in_replies);
    }

    /// Real lines of codex-acp 2.6.0 (fixtures/codex-0.171.0/acp.jsonl).
    #[test]
    fn codex_warnings_are_told_from_its_replies() {
        let codex = Quirks::of(&json!({"agentInfo": {"name": "@agentclientprotocol/codex-acp"}}));
        let warning = chunk("Warning: Model metadata for `mock-model` not found.\n\n");
        assert_eq!(
            codex.warning(&warning).as_deref(),
            Some("Warning: Model metadata for `mock-model` not found.")
        );
        let mut reply = chunk("Warning: this is what the model said");
        reply["messageId"] = json!("msg_mock_6");
        assert_eq!(codex.warning(&reply), None);
        assert_eq!(codex.warning(&chunk("Mock reply")), None);
        assert_eq!(Quirks::default().warning(&warning), None);
    }

    /// Gemini CLI 0.61.0's answer to `session/set_mode yolo`
    /// (fixtures/gemini-0.61.0/acp.jsonl).
    #[test]
    fn a_mode_update_chunk_names_an_offered_mode() {
        let modes = json!({"availableModes": [{"id": "default"}, {"id": "yolo"}], "currentModeId": "default"});
        assert_eq!(
            mode_notice(&chunk("[MODE_UPDATE] yolo"), &modes).as_deref(),
            Some("yolo")
        );
        assert_eq!(mode_notice(&chunk("[MODE_UPDATE] warp"), &modes), None);
        assert_eq!(
            mode_notice(&chunk("about [MODE_UPDATE] yolo"), &modes),
            None
        );
        assert_eq!(
            mode_notice(&chunk("[MODE_UPDATE] yolo"), &Value::Null),
            None
        );
    }
}
