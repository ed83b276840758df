//! The input line: a string and a cursor, edited one key at a time.

/// Longest prompt the input line accepts; pasting more is cut here rather
/// than growing the live area without bound.
pub(crate) const MAX_INPUT_BYTES: usize = 16 * 1024;

/// A single-line editor. The cursor is a byte offset on a char boundary.
#[derive(Debug, Default)]
pub(crate) struct Editor {
    text: String,
    cursor: usize,
}

impl Editor {
    /// The current text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset.
    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    /// Inserts text at the cursor. Newlines become spaces: a pasted
    /// paragraph stays one prompt instead of submitting line by line.
    pub(crate) fn insert(&mut self, text: &str) {
        for c in text.chars() {
            let c = if c == '\n' || c == '\r' { ' ' } else { c };
            if c.is_control() || self.text.len() + c.len_utf8() > MAX_INPUT_BYTES {
                continue;
            }
            self.text.insert(self.cursor, c);
            self.cursor += c.len_utf8();
        }
    }

    /// Deletes the character before the cursor.
    pub(crate) fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    /// Deletes the character under the cursor.
    pub(crate) fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub(crate) fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub(crate) fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    pub(crate) fn home(&mut self) {
        self.cursor = 0;
    }

    pub(crate) fn end(&mut self) {
        self.cursor = self.text.len();
    }

    /// Empties the line and returns what it held.
    pub(crate) fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_multibyte_text_on_char_boundaries() {
        let mut e = Editor::default();
        e.insert("héllo 日本");
        e.backspace();
        assert_eq!(e.text(), "héllo 日");
        e.home();
        e.right();
        e.right();
        e.delete();
        assert_eq!(e.text(), "hélo 日");
        e.insert("→");
        assert_eq!(e.text(), "hé→lo 日");
        e.end();
        e.left();
        e.backspace();
        assert_eq!(e.text(), "hé→lo日");
        assert_eq!(e.take(), "hé→lo日");
        assert_eq!((e.text(), e.cursor()), ("", 0));
    }

    #[test]
    fn pasted_newlines_become_spaces_and_length_is_capped() {
        let mut e = Editor::default();
        e.insert("a\nb\tc");
        assert_eq!(e.text(), "a bc");
        e.insert(&"x".repeat(MAX_INPUT_BYTES));
        assert_eq!(e.text().len(), MAX_INPUT_BYTES);
    }
}
