//! Styled lines of text, made safe to print: every piece of text that reaches
//! the terminal goes through [`Span::new`], which neutralises control
//! characters so a prompt or a command's output cannot drive the terminal.

use std::ops::Range;

use crossterm::style::{Attribute, Color, ContentStyle};
use unicode_width::UnicodeWidthStr;

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    pub text: String,
    pub style: ContentStyle,
}

impl Span {
    /// A span of `text` with control characters replaced by visible symbols.
    pub(crate) fn new(text: &str, style: ContentStyle) -> Self {
        Span {
            text: sanitize(text),
            style,
        }
    }

    /// Unstyled text.
    pub(crate) fn plain(text: &str) -> Self {
        Span::new(text, ContentStyle::new())
    }
}

/// One logical line: wrapped to the terminal's width when printed, with
/// continuation rows indented by `indent` columns so they line up under the
/// text rather than under a role marker.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Line {
    pub spans: Vec<Span>,
    pub indent: usize,
}

impl Line {
    /// A line of one span.
    pub(crate) fn styled(text: &str, style: ContentStyle) -> Self {
        Line {
            spans: vec![Span::new(text, style)],
            indent: 0,
        }
    }

    /// An empty line.
    pub(crate) fn blank() -> Self {
        Line::default()
    }

    /// A line made of `spans`, continuation rows indented by `indent`.
    pub(crate) fn from_spans(spans: Vec<Span>, indent: usize) -> Self {
        Line { spans, indent }
    }

    /// The concatenated text of the spans.
    pub(crate) fn text(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }

    /// The spans covering `range` of [`Line::text`], styles kept.
    pub(crate) fn slice(&self, range: Range<usize>) -> Vec<Span> {
        let mut out = Vec::new();
        let mut offset = 0;
        for span in &self.spans {
            let span_range = offset..offset + span.text.len();
            offset = span_range.end;
            let start = range.start.max(span_range.start);
            let end = range.end.min(span_range.end);
            if start < end {
                out.push(Span {
                    text: span.text[start - span_range.start..end - span_range.start].to_string(),
                    style: span.style,
                });
            }
        }
        out
    }
}

/// Display width of `text` in terminal columns.
pub(crate) fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Replaces control characters with visible stand-ins (U+2400 control
/// pictures) and tabs with spaces: whatever a user, a remote submit or a
/// command prints, only our own escape sequences reach the terminal, and the
/// width we compute is the width the terminal shows.
pub(crate) fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str("    "),
            '\u{0}'..='\u{1f}' => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or(char::REPLACEMENT_CHARACTER))
            }
            '\u{7f}' => out.push('\u{2421}'),
            c if c.is_control() => out.push(char::REPLACEMENT_CHARACTER),
            c => out.push(c),
        }
    }
    out
}

/// The styles of the conversation, in one place so roles look the same
/// everywhere.
pub(crate) mod styles {
    use super::*;

    fn fg(color: Color) -> ContentStyle {
        ContentStyle {
            foreground_color: Some(color),
            ..ContentStyle::new()
        }
    }

    fn with(mut style: ContentStyle, attr: Attribute) -> ContentStyle {
        style.attributes.set(attr);
        style
    }

    pub(crate) fn user_marker() -> ContentStyle {
        with(fg(Color::Cyan), Attribute::Bold)
    }
    pub(crate) fn user_text() -> ContentStyle {
        fg(Color::Cyan)
    }
    pub(crate) fn agent_marker() -> ContentStyle {
        with(fg(Color::Magenta), Attribute::Bold)
    }
    pub(crate) fn agent_text() -> ContentStyle {
        ContentStyle::new()
    }
    pub(crate) fn tool() -> ContentStyle {
        with(fg(Color::Yellow), Attribute::Bold)
    }
    pub(crate) fn tool_text() -> ContentStyle {
        fg(Color::Yellow)
    }
    pub(crate) fn dim() -> ContentStyle {
        with(ContentStyle::new(), Attribute::Dim)
    }
    pub(crate) fn ok() -> ContentStyle {
        fg(Color::Green)
    }
    pub(crate) fn error() -> ContentStyle {
        fg(Color::Red)
    }
    pub(crate) fn diff_add() -> ContentStyle {
        fg(Color::Green)
    }
    pub(crate) fn diff_del() -> ContentStyle {
        fg(Color::Red)
    }
    pub(crate) fn diff_hunk() -> ContentStyle {
        fg(Color::Cyan)
    }
    pub(crate) fn approval() -> ContentStyle {
        fg(Color::Yellow)
    }
    pub(crate) fn approval_text() -> ContentStyle {
        with(ContentStyle::new(), Attribute::Bold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(sanitize("a\x1b[2Jb"), "a\u{241b}[2Jb");
        assert_eq!(sanitize("x\r\n"), "x\u{240d}\u{240a}");
        assert_eq!(sanitize("\u{9b}"), "\u{fffd}");
        assert_eq!(sanitize("é 日本"), "é 日本");
    }

    #[test]
    fn slice_keeps_styles_across_spans() {
        let line = Line::from_spans(
            vec![Span::new("> ", styles::user_marker()), Span::plain("hello")],
            2,
        );
        let parts = line.slice(1..4);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].text, " ");
        assert_eq!(parts[1].text, "he");
        assert_eq!(parts[0].style, styles::user_marker());
    }
}
