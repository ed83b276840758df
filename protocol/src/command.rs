//! Commands duet appends to a program's `--input-file`, one JSON object per line.

use serde::{Deserialize, Serialize};

/// The longest prompt duet sends (bytes of UTF-8), and so the longest the
/// demo agent must take: one limit for both, so that a prompt duet accepted
/// is never dropped by the agent after the browser cleared its box.
pub const MAX_SUBMIT_BYTES: usize = 256 << 10;

/// One line of the input file, as Qwen Code's dual-output mode reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputCommand {
    /// A prompt, handled as if the user typed it (queued while a turn runs).
    Submit {
        /// The prompt text; may be a slash command such as `/quit`.
        text: String,
    },
    /// The answer to a pending `control_request` (`can_use_tool`).
    ConfirmationResponse {
        /// The `request_id` of the `control_request` being answered.
        request_id: String,
        /// Whether the tool may run.
        allowed: bool,
    },
}

impl InputCommand {
    /// The command as one input-file line, newline included.
    pub fn to_line(&self) -> String {
        // Serializing a derive(Serialize) enum of strings and bools cannot fail.
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_match_the_documented_shape() {
        let submit = InputCommand::Submit {
            text: "What does this function do?".into(),
        };
        assert_eq!(
            submit.to_line(),
            "{\"type\":\"submit\",\"text\":\"What does this function do?\"}\n"
        );
        let confirm = InputCommand::ConfirmationResponse {
            request_id: "r1".into(),
            allowed: true,
        };
        assert_eq!(
            confirm.to_line(),
            "{\"type\":\"confirmation_response\",\"request_id\":\"r1\",\"allowed\":true}\n"
        );
    }

    #[test]
    fn newlines_in_text_stay_inside_one_line() {
        let line = InputCommand::Submit {
            text: "a\nb".into(),
        }
        .to_line();
        assert_eq!(line.matches('\n').count(), 1);
        let back: InputCommand = serde_json::from_str(line.trim_end()).unwrap();
        assert_eq!(
            back,
            InputCommand::Submit {
                text: "a\nb".into()
            }
        );
    }
}
