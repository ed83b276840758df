//! Word wrapping by display width. The TUI wraps everything itself and ends
//! every row with an explicit newline, because it must know exactly how many
//! rows it drew in order to redraw the prompt without asking the terminal
//! where the cursor is.

use std::ops::Range;

use unicode_width::UnicodeWidthChar;

use super::line::width;

/// Splits `text` (no newlines) into rows: byte ranges of `text`, the first
/// at most `first` columns wide, the others at most `rest`. Breaks after
/// spaces when it can and inside a word when the word is longer than a row.
/// Trailing spaces stay in a row's range (they may overflow; trim them when
/// drawing), so the last range always runs to the end of `text`.
pub(crate) fn wrap(text: &str, first: usize, rest: usize) -> Vec<Range<usize>> {
    let mut rows = Vec::new();
    let mut start = 0;
    let mut used = 0;
    let mut limit = first.max(1);
    // The last space in the current row: the row may end there.
    let mut space: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let w = c.width().unwrap_or(0);
        if c == ' ' {
            space = Some(i);
            used += w;
            continue;
        }
        while used + w > limit {
            if let Some(at) = space.take().filter(|&at| at > start) {
                rows.push(start..at);
                start = at + 1;
                used = width(&text[start..i]);
            } else if i > start {
                rows.push(start..i);
                start = i;
                used = 0;
            } else {
                // A single character wider than a row: place it anyway.
                break;
            }
            limit = rest.max(1);
        }
        used += w;
    }
    rows.push(start..text.len());
    rows
}

/// The row's text as drawn: without the trailing spaces a break left.
pub(crate) fn row_text<'a>(text: &'a str, range: &Range<usize>) -> &'a str {
    text[range.clone()].trim_end_matches(' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str, first: usize, rest: usize) -> Vec<&str> {
        wrap(text, first, rest)
            .iter()
            .map(|r| row_text(text, r))
            .collect()
    }

    #[test]
    fn breaks_between_words() {
        assert_eq!(
            rows("the quick brown fox", 10, 10),
            ["the quick", "brown fox"]
        );
        assert_eq!(
            rows("the quick brown fox", 4, 20),
            ["the", "quick brown fox"]
        );
    }

    #[test]
    fn breaks_long_words() {
        assert_eq!(rows("abcdefghij", 4, 4), ["abcd", "efgh", "ij"]);
        assert_eq!(rows("ab abcdefghij", 4, 4), ["ab", "abcd", "efgh", "ij"]);
    }

    #[test]
    fn counts_wide_characters_as_two_columns() {
        assert_eq!(rows("日本語テキスト", 6, 6), ["日本語", "テキス", "ト"]);
    }

    #[test]
    fn short_and_empty_text_is_one_row() {
        assert_eq!(rows("", 10, 10), [""]);
        assert_eq!(rows("hi", 10, 10), ["hi"]);
    }

    #[test]
    fn the_last_row_keeps_trailing_spaces_for_streaming() {
        let text = "hello world ";
        let r = wrap(text, 20, 20);
        assert_eq!(&text[r[0].clone()], "hello world ");
    }

    #[test]
    fn no_row_is_wider_than_its_limit() {
        let text = "a bb ccc dddd eeeee ffffff ggggggg hhhhhhhh 日本語 x";
        for w in 1..12 {
            for r in wrap(text, w, w) {
                let row = row_text(text, &r);
                assert!(width(row) <= w.max(2), "{row:?} wider than {w}");
            }
        }
    }
}
