//! The session's terminal, recorded as an asciicast v2 file
//! (`recording.cast` beside the events file): a header with the size, then
//! one `[seconds, "o", text]` line per output burst and `[seconds, "r",
//! "COLSxROWS"]` per resize. It plays in the stock `asciinema play`, and is
//! kept and swept with the transcript.
//!
//! Bounded: past `max_bytes` recording stops, with a last line that says
//! so. A failed write stops the recording, never the session.
//!
//! The PTY reader records every burst before it hands it to clients, so a
//! write here sits on the path of every echoed key. Small bursts are
//! therefore only copied into a buffer, and the screen parser's thread
//! writes them out after each batch it parses (within ~10 ms, see
//! `output::ParserState`); a burst that fills the buffer is written at
//! once, by the reader, as before. Resizes, the end of the output and a
//! request for the file write the buffer out first, so the file is always
//! in stream order.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::json;
use tracing::warn;

use crate::sync::lock;

struct State {
    file: Option<File>,
    written: u64,
    /// The start of a UTF-8 sequence cut at the end of the last burst.
    partial: Vec<u8>,
    /// Output not written yet, and when its first byte came (seconds).
    pending: Vec<u8>,
    pending_at: f64,
}

/// Buffered output past this is written at once (a flood's bursts are
/// 4-64 KiB, so a flood is written as it comes, in large lines).
const WRITE_AT: usize = 16 << 10;

/// See the module docs.
pub(crate) struct Recording {
    state: Mutex<State>,
    start: Instant,
    max_bytes: u64,
}

impl Recording {
    /// Starts a recording of a `cols`×`rows` terminal at `path`; its time 0
    /// is `start`, the session clock that event times use too
    /// (`channel/times.rs`).
    pub(crate) fn create(
        path: &Path,
        cols: u16,
        rows: u16,
        max_bytes: u64,
        start: Instant,
    ) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .open(path)?;
        let header = json!({
            "version": 2,
            "width": cols,
            "height": rows,
            "timestamp": crate::clock::now_ms() / 1000,
            "env": {"TERM": "xterm-256color"},
        });
        let line = format!("{header}\n");
        file.write_all(line.as_bytes())?;
        Ok(Self {
            state: Mutex::new(State {
                file: Some(file),
                written: line.len() as u64,
                partial: Vec::new(),
                pending: Vec::new(),
                pending_at: 0.0,
            }),
            start,
            max_bytes,
        })
    }

    /// Records program output: buffered, or written once enough waits.
    pub(crate) fn output(&self, bytes: &[u8]) {
        let mut st = lock(&self.state);
        if st.file.is_none() {
            return;
        }
        if st.pending.is_empty() {
            st.pending_at = self.now();
        }
        st.pending.extend_from_slice(bytes);
        if st.pending.len() >= WRITE_AT {
            self.write_pending(&mut st);
        }
    }

    /// Writes out the buffered output.
    pub(crate) fn flush(&self) {
        let mut st = lock(&self.state);
        self.write_pending(&mut st);
    }

    /// Records a resize, after the output before it.
    pub(crate) fn resize(&self, cols: u16, rows: u16) {
        let mut st = lock(&self.state);
        self.write_pending(&mut st);
        let at = self.now();
        self.write(&mut st, at, "r", &format!("{cols}x{rows}"));
    }

    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn write_pending(&self, st: &mut State) {
        if st.pending.is_empty() || st.file.is_none() {
            st.pending.clear();
            return;
        }
        let mut data = std::mem::take(&mut st.partial);
        data.append(&mut st.pending);
        // Hold back an incomplete UTF-8 sequence at the end for the next
        // burst; anything else that is not UTF-8 becomes U+FFFD.
        let cut = incomplete_tail(&data);
        st.partial = data.split_off(data.len() - cut);
        if data.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&data);
        let at = st.pending_at;
        self.write(st, at, "o", &text);
        // The buffer's memory goes back once written: an idle session keeps
        // none, and a flood's large buffer is not kept for its typing.
        st.pending = Vec::new();
    }

    fn write(&self, st: &mut State, at: f64, kind: &str, data: &str) {
        let Some(file) = st.file.as_mut() else { return };
        let mut line = json!([(at * 1e6).round() / 1e6, kind, data]).to_string();
        line.push('\n');
        if st.written + line.len() as u64 > self.max_bytes {
            let note = json!([
                at,
                "o",
                format!(
                    "\r\n[duet: the recording stopped at its limit of {} bytes]\r\n",
                    self.max_bytes
                )
            ]);
            let _ = file.write_all(format!("{note}\n").as_bytes());
            st.file = None;
            return;
        }
        if let Err(e) = file.write_all(line.as_bytes()) {
            warn!(?e, "writing the recording; it stops here");
            st.file = None;
            return;
        }
        st.written += line.len() as u64;
    }
}

/// How many bytes at the end of `data` start a UTF-8 sequence that is not
/// complete yet.
fn incomplete_tail(data: &[u8]) -> usize {
    for back in 1..=3.min(data.len()) {
        let b = data[data.len() - back];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: look further back
        }
        let need = match b {
            0b1100_0000..=0b1101_1111 => 2,
            0b1110_0000..=0b1110_1111 => 3,
            0b1111_0000..=0b1111_0111 => 4,
            _ => return 0,
        };
        return if need > back { back } else { 0 };
    }
    0
}

/// How much of a recording's end a session recovered after a restart
/// replays into its screen: a TUI's last several redraws, and a bound on
/// what each recovered session holds in its output ring.
pub(crate) const REPLAY_TAIL: u64 = 512 << 10;

/// Feeds the last `max` bytes of the cast at `path`, whole lines only, into
/// `output` (output and resizes), so that a session recovered after a
/// restart shows its last screen instead of a blank one: the screen lived
/// only in the memory of the duet that ran it.
pub(crate) fn replay_tail(
    path: &Path,
    output: &super::output::Output,
    max: u64,
) -> std::io::Result<()> {
    let mut file = File::open(path)?;
    let start = file.metadata()?.len().saturating_sub(max);
    file.seek(SeekFrom::Start(start))?;
    let mut text = Vec::new();
    file.take(max).read_to_end(&mut text)?;
    // From the middle of the file, the first line is cut: skip it.
    let body = match start {
        0 => &text[..],
        _ => match text.iter().position(|&b| b == b'\n') {
            Some(i) => &text[i + 1..],
            None => return Ok(()),
        },
    };
    for line in body.split(|&b| b == b'\n') {
        // The header (an object) and a torn last line do not parse.
        let Ok((_, kind, data)) = serde_json::from_slice::<(f64, String, String)>(line) else {
            continue;
        };
        match kind.as_str() {
            "o" => output.push(bytes::Bytes::from(data.into_bytes())),
            "r" => {
                let size = data
                    .split_once('x')
                    .and_then(|(c, r)| Some((c.parse().ok()?, r.parse().ok()?)));
                if let Some((cols, rows)) = size {
                    output.resize(cols, rows);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cast_with_split_utf8_resizes_and_a_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.cast");
        let rec = Recording::create(&path, 80, 24, 400, Instant::now()).unwrap();
        let text = "héllo ✓".as_bytes();
        rec.output(&text[..2]); // cut inside "é"
        rec.output(&text[2..]);
        rec.resize(100, 30);
        for _ in 0..20 {
            rec.output(b"0123456789");
            rec.flush();
        }
        let cast = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = cast
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["version"], 2);
        assert_eq!(lines[0]["width"], 80);
        let out: String = lines[1..]
            .iter()
            .filter(|l| l[1] == "o")
            .map(|l| l[2].as_str().unwrap())
            .collect();
        assert!(out.starts_with("héllo ✓"), "{out}");
        assert!(lines.iter().any(|l| l[1] == "r" && l[2] == "100x30"));
        assert!(out.contains("recording stopped"));
        assert!(cast.len() < 600);
    }

    #[test]
    fn a_recording_s_tail_replays_whole_lines_only() {
        use super::super::output::{Output, OutputLimits, ReadResult};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.cast");
        let rec = Recording::create(&path, 80, 24, 1 << 20, Instant::now()).unwrap();
        for i in 0..100 {
            rec.output(format!("line {i:03}\r\n").as_bytes());
            rec.flush();
        }
        rec.resize(90, 20);
        rec.output(b"the end");
        rec.flush();
        let output = Output::new(80, 24, OutputLimits::default());
        replay_tail(&path, &output, 300).unwrap();
        let mut all = Vec::new();
        let mut cursor = 0;
        while let ReadResult::Data(b, next) = output.read(cursor, 1 << 20) {
            all.extend_from_slice(&b);
            cursor = next;
        }
        let text = String::from_utf8(all).unwrap();
        assert!(text.ends_with("line 099\r\nthe end"), "{text:?}");
        // Only whole lines of the cast: each replayed line is a whole one.
        assert!(text.starts_with("line "), "{text:?}");
        assert!(!text.contains("line 000"), "{text:?}");
        assert!(replay_tail(&dir.path().join("none.cast"), &output, 300).is_err());
    }

    #[test]
    fn small_bursts_wait_for_a_flush_and_stay_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.cast");
        let rec = Recording::create(&path, 80, 24, 1 << 20, Instant::now()).unwrap();
        let lines = || std::fs::read_to_string(&path).unwrap().lines().count();
        rec.output(b"a");
        rec.output(b"b");
        assert_eq!(lines(), 1, "a keystroke's echo is not written on its way");
        rec.resize(100, 30);
        rec.output(&vec![b'x'; WRITE_AT]);
        assert_eq!(
            lines(),
            4,
            "the buffer, the resize, then a burst that fills it"
        );
        let cast: Vec<serde_json::Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(cast[1][2], "ab");
        assert_eq!(cast[2][2], "100x30");
        assert_eq!(cast[3][2].as_str().unwrap().len(), WRITE_AT);
        rec.flush();
        assert_eq!(lines(), 4, "nothing left to write");
    }
}
