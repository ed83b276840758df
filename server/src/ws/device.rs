//! What a WebSocket client calls its device (`?device=Chrome on Android`,
//! `?device=terminal on laptop` from `duet attach`):
//! shown to the session's other clients in their presence lists, so it is
//! bounded and cleaned, and it never counts for anything: who a client is
//! and what it may do come from its credential alone.

/// Longest name kept (the web's rename field takes as many), in characters.
pub(crate) const MAX_DEVICE_CHARS: usize = 60;

/// The name to show for `raw`, or `None` when nothing printable is left.
/// Control characters (a terminal escape in someone's presence list) and
/// the bidirectional overrides that could make it read as something else
/// are dropped; runs of whitespace become one space.
pub(crate) fn device_name(raw: &str) -> Option<String> {
    let kept: String = raw
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|c| !c.is_control() && !is_bidi_control(*c))
        .collect();
    let label = kept
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let label: String = label.chars().take(MAX_DEVICE_CHARS).collect();
    let label = label.trim_end().to_string();
    (!label.is_empty()).then_some(label)
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_bounded_and_cleaned() {
        assert_eq!(
            device_name("terminal on laptop").as_deref(),
            Some("terminal on laptop")
        );
        assert_eq!(
            device_name("  a\tb\r\n\x1b[31mc\u{202E}d  ").as_deref(),
            Some("a b [31mcd")
        );
        assert_eq!(device_name("\x07\n \u{2066}"), None);
        assert_eq!(device_name(""), None);
        let long = "é".repeat(500);
        assert_eq!(
            device_name(&long).unwrap().chars().count(),
            MAX_DEVICE_CHARS
        );
    }
}
