//! A session's name until an owner gives it one: its first prompt,
//! shortened. Derived from the events (`ingest.rs` takes the first `user`
//! prompt), so a session recovered after a restart has it again.

use super::Conversation;
use crate::sync::lock;

impl Conversation {
    /// The conversation's first prompt, shortened: the session's name
    /// until an owner gives it one. Derived from the events, so a session
    /// recovered after a restart has it again.
    pub(crate) fn prompt_name(&self) -> Option<String> {
        lock(&self.state).prompt_name.clone()
    }
}

/// Longest name taken from a prompt, in characters (an ellipsis marks the cut).
const PROMPT_NAME_CHARS: usize = 60;

/// A session name from a prompt: its first non-blank line, whitespace
/// collapsed, at most [`PROMPT_NAME_CHARS`] characters, control characters
/// dropped. None for a slash command (`/help` names nothing) or a blank one.
pub(super) fn prompt_name(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.starts_with('/') {
        return None;
    }
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    let joined = words.join(" ");
    if joined.chars().count() <= PROMPT_NAME_CHARS {
        return Some(joined);
    }
    let cut: String = joined.chars().take(PROMPT_NAME_CHARS - 1).collect();
    Some(format!("{}…", cut.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::prompt_name;

    #[test]
    fn a_prompt_names_by_its_first_line_shortened() {
        assert_eq!(
            prompt_name("\n  fix the   login bug\nthen tests").as_deref(),
            Some("fix the login bug")
        );
        assert_eq!(prompt_name("/help"), None);
        assert_eq!(prompt_name(" \n\t"), None);
        let long = prompt_name(&"word ".repeat(40)).unwrap();
        assert_eq!(long.chars().count(), 60);
        assert!(long.ends_with('…'));
    }
}
