//! The detach key: the key sequence that leaves a session running and
//! gives the terminal back (default Ctrl-\ twice), and a matcher over the
//! typed bytes that holds a partial match back and hands it on to the
//! program when it turns out to be no detach (another key follows, or
//! nothing within [`HOLD`]).
//!
//! A key is matched however the terminal sends it: as its byte, or as the
//! escapes of the kitty keyboard protocol (`ESC[92;5u`) and of xterm's
//! modifyOtherKeys (`ESC[27;5;92~`), which programs such as Claude Code
//! may turn on.

use std::time::Duration;

/// The default: Ctrl-\ twice. Ctrl-\ alone is SIGQUIT in a cooked
/// terminal, which full-screen programs in raw mode rarely use; twice in a
/// row is no key anyone types by chance; and unlike tmux's Ctrl-b it
/// means nothing to a tmux around `duet attach`.
pub const DEFAULT_DETACH: &str = "ctrl-\\ ctrl-\\";

/// How long the start of a detach sequence waits for the rest before it
/// goes to the program after all.
pub(crate) const HOLD: Duration = Duration::from_millis(1000);

/// Most keys in a detach sequence.
const MAX_KEYS: usize = 4;

/// A detach sequence: each key is the byte a plain terminal sends for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetachKey {
    keys: Vec<u8>,
}

impl DetachKey {
    /// Parses `ctrl-\ ctrl-\`, `ctrl-b d`, `^]` (keys separated by spaces
    /// or commas; `ctrl-X`, `C-X` or `^X` for a control key, a single
    /// character for itself). `none` turns detaching by key off.
    pub fn parse(s: &str) -> Result<Option<DetachKey>, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let mut keys = Vec::new();
        for word in s.split([' ', ',']).filter(|w| !w.is_empty()) {
            keys.push(parse_key(word)?);
        }
        if keys.is_empty() || keys.len() > MAX_KEYS {
            return Err(format!(
                "{s:?}: give 1 to {MAX_KEYS} keys, e.g. \"ctrl-\\ ctrl-\\\" or \"ctrl-b d\", or none"
            ));
        }
        if !keys[0].is_ascii_control() {
            return Err(format!(
                "{s:?}: the first key must be a control key (ctrl-…): a letter would hold back \
                 everyday typing"
            ));
        }
        Ok(Some(DetachKey { keys }))
    }

    /// As a person would type it: `Ctrl-\ Ctrl-\`.
    pub fn describe(&self) -> String {
        self.keys
            .iter()
            .map(|&k| match k {
                0..=0x1f => format!("Ctrl-{}", ((k | 0x40) as char).to_ascii_lowercase()),
                _ => (k as char).to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn parse_key(word: &str) -> Result<u8, String> {
    let lower = word.to_ascii_lowercase();
    let ctrl = ["ctrl-", "ctrl+", "c-", "^"]
        .iter()
        .find_map(|p| lower.strip_prefix(p).filter(|r| !r.is_empty()));
    match ctrl {
        Some(rest) => match rest.as_bytes() {
            [c @ (b'a'..=b'z' | b'@' | b'[' | b'\\' | b']' | b'^' | b'_')] => {
                Ok(c.to_ascii_uppercase() & 0x1f)
            }
            [b'?'] => Ok(0x7f),
            _ => Err(format!(
                "{word:?} is no control key (ctrl-a … ctrl-z, ctrl-\\, ctrl-], …)"
            )),
        },
        None => match word.as_bytes() {
            [c] if c.is_ascii_graphic() => Ok(*c),
            _ => Err(format!(
                "{word:?} is no key (a single character, or ctrl-…)"
            )),
        },
    }
}

/// What typed input comes to.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Typed {
    /// Bytes for the program.
    pub(crate) keys: Vec<u8>,
    /// The detach sequence was typed (whatever followed it is dropped).
    pub(crate) detach: bool,
}

/// Finds the detach sequence in typed input; see the module docs.
#[derive(Debug)]
pub(crate) struct Matcher {
    key: Option<DetachKey>,
    /// Keys of the sequence matched so far.
    matched: usize,
    /// Those keys as they were typed, for the program if no detach follows.
    held: Vec<u8>,
}

impl Matcher {
    pub(crate) fn new(key: Option<DetachKey>) -> Self {
        Matcher {
            key,
            matched: 0,
            held: Vec::new(),
        }
    }

    /// Whether a partial match waits (then [`Matcher::flush`] is due after
    /// [`HOLD`]).
    pub(crate) fn holding(&self) -> bool {
        self.matched > 0
    }

    /// The held keys go to the program: no detach followed in time.
    pub(crate) fn flush(&mut self) -> Vec<u8> {
        self.matched = 0;
        std::mem::take(&mut self.held)
    }

    /// Takes one read of typed input.
    pub(crate) fn feed(&mut self, input: &[u8]) -> Typed {
        let Some(key) = &self.key else {
            return Typed {
                keys: input.to_vec(),
                detach: false,
            };
        };
        let want = &key.keys;
        let mut out = Typed::default();
        let mut i = 0;
        while i < input.len() {
            let (len, k) = next_key(&input[i..]);
            let raw = &input[i..i + len];
            i += len;
            if k == Some(want[self.matched]) {
                self.held.extend_from_slice(raw);
                self.matched += 1;
                if self.matched == want.len() {
                    self.held.clear();
                    self.matched = 0;
                    out.detach = true;
                    return out;
                }
                continue;
            }
            // No detach after all: what was held goes first.
            out.keys.append(&mut self.held);
            self.matched = 0;
            if k == Some(want[0]) {
                self.held.extend_from_slice(raw);
                self.matched = 1;
            } else {
                out.keys.extend_from_slice(raw);
            }
        }
        out
    }
}

/// The length of the first key in `input` and the byte a plain terminal
/// sends for it (`None` for keys a detach sequence cannot hold: arrows,
/// function keys, Alt-…).
fn next_key(input: &[u8]) -> (usize, Option<u8>) {
    if input.len() > 2 && input[0] == 0x1b && input[1] == b'[' {
        if let Some((len, key)) = csi_key(&input[2..]) {
            return (len + 2, key);
        }
    }
    (1, Some(input[0]))
}

/// A CSI sequence after `ESC[`: `code;mods u` (kitty) or `27;mods;code ~`
/// (modifyOtherKeys). Its length, and the key when it is a plain or
/// Ctrl- key. `None` when `rest` starts no such sequence.
fn csi_key(rest: &[u8]) -> Option<(usize, Option<u8>)> {
    let end = rest
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b';' || *b == b':'))?;
    let params: Vec<u32> = rest[..end]
        .split(|b| *b == b';')
        .map(|p| {
            // kitty may add `:shifted` codes and `:event` types; the first
            // number is the key (or the modifiers).
            let first = p.split(|b| *b == b':').next().unwrap_or(&[]);
            std::str::from_utf8(first).ok()?.parse().ok()
        })
        .collect::<Option<_>>()?;
    let (code, mods) = match (rest[end], params.as_slice()) {
        (b'u', [code]) => (*code, 1),
        (b'u', [code, mods, ..]) => (*code, *mods),
        (b'~', [27, mods, code]) => (*code, *mods),
        _ => return None,
    };
    let key = u8::try_from(code).ok().filter(u8::is_ascii);
    let key = match (key, mods) {
        (Some(k), 1) => Some(k),
        // Ctrl (mods are 1 + a bit mask; 4 is Ctrl).
        (Some(k), 5) if k.is_ascii_lowercase() || b"@[\\]^_".contains(&k) => {
            Some(k.to_ascii_uppercase() & 0x1f)
        }
        _ => None,
    };
    Some((end + 1, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(s: &str) -> Matcher {
        Matcher::new(DetachKey::parse(s).unwrap())
    }

    #[test]
    fn keys_parse_and_describe() {
        let d = DetachKey::parse(DEFAULT_DETACH).unwrap().unwrap();
        assert_eq!(d.keys, [0x1c, 0x1c]);
        assert_eq!(d.describe(), "Ctrl-\\ Ctrl-\\");
        let b = DetachKey::parse("C-b,d").unwrap().unwrap();
        assert_eq!(b.keys, [0x02, b'd']);
        assert_eq!(b.describe(), "Ctrl-b d");
        assert_eq!(DetachKey::parse("^]").unwrap().unwrap().keys, [0x1d]);
        assert_eq!(DetachKey::parse("none").unwrap(), None);
        for bad in ["", "d", "ctrl-", "ctrl-1", "a b c d e", "ctrl-a ab"] {
            assert!(DetachKey::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_sequence_detaches_and_anything_else_reaches_the_program() {
        let mut m = matcher(DEFAULT_DETACH);
        assert_eq!(m.feed(b"ls\r").keys, b"ls\r");
        // Split over two reads, as two key presses are.
        let first = m.feed(b"\x1c");
        assert!(first.keys.is_empty() && !first.detach && m.holding());
        assert!(m.feed(b"\x1c").detach);
        assert!(!m.holding());
        // A lone Ctrl-\ followed by another key: both go, in order.
        assert_eq!(m.feed(b"\x1cx").keys, b"\x1cx");
        // ... or after the hold, by itself.
        assert!(m.feed(b"\x1c").keys.is_empty());
        assert_eq!(m.flush(), b"\x1c");
        // In one read: what comes before goes, the first two detach.
        let t = m.feed(b"a\x1c\x1c\x1c");
        assert_eq!(t.keys, b"a");
        assert!(t.detach && !m.holding());
    }

    #[test]
    fn a_prefix_sequence_and_no_sequence() {
        let mut m = matcher("ctrl-b d");
        assert_eq!(m.feed(b"\x02x").keys, b"\x02x");
        assert!(m.feed(b"\x02d").detach);
        let mut off = Matcher::new(None);
        let t = off.feed(b"\x1c\x1c");
        assert_eq!((t.keys.as_slice(), t.detach), (&b"\x1c\x1c"[..], false));
    }

    #[test]
    fn kitty_and_modify_other_keys_encodings_match() {
        let mut m = matcher(DEFAULT_DETACH);
        assert!(m.feed(b"\x1b[92;5u\x1b[92;5:1u").detach);
        assert!(m.feed(b"\x1b[27;5;92~\x1c").detach);
        let mut b = matcher("ctrl-b d");
        assert!(b.feed(b"\x1b[98;5u\x1b[100u").detach);
        // Arrows and other sequences pass through whole.
        let t = m.feed(b"\x1b[A\x1b[1;5C\x1b[92;3u");
        assert_eq!(t.keys, b"\x1b[A\x1b[1;5C\x1b[92;3u");
        assert!(!t.detach && !m.holding());
    }
}
