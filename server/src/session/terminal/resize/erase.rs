//! Erasing the screen ends the wrap of the newest scrollback line into the
//! screen's first line. xterm keeps that wrap on the first line, which the
//! erase resets; vt100 keeps it on the scrollback line, which no erase
//! reaches. Left there, a later change of width would rewrap the line
//! together with what was drawn at the top since (after Ctrl+L in bash: the
//! prompt). So the screen cuts its input after each such erase
//! ([`next_erase`]) and has the wrap cleared ([`super::unwrap_top`]).

/// An erase that ends the wrap into the first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::session::terminal) enum Erase {
    /// ED 1, ED 2: they reset the first line wherever the cursor is.
    Always,
    /// ED 0: from the cursor on, so only from the top left corner.
    FromHome,
}

/// Where the first such erase in `bytes` ends, and which it is. (An erase
/// cut across two reads is missed, and a lookalike inside a string costs
/// only a look at the wrap.)
pub(in crate::session::terminal) fn next_erase(bytes: &[u8]) -> Option<(usize, Erase)> {
    memchr::memmem::find_iter(bytes, b"\x1b[").find_map(|i| match &bytes[i + 2..] {
        [b'J', ..] => Some((i + 3, Erase::FromHome)),
        [b'0', b'J', ..] => Some((i + 4, Erase::FromHome)),
        [b'1' | b'2', b'J', ..] => Some((i + 4, Erase::Always)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erases_of_the_first_line_are_found_where_they_end() {
        assert_eq!(next_erase(b"ab\x1b[2Jcd"), Some((6, Erase::Always)));
        assert_eq!(next_erase(b"\x1b[H\x1b[J"), Some((6, Erase::FromHome)));
        assert_eq!(next_erase(b"\x1b[0J\x1b[1J"), Some((4, Erase::FromHome)));
        assert_eq!(next_erase(b"\x1b[3J\x1b[2K\x1b[12J\x1b["), None);
    }
}
