//! Incremental, bounded reading of a JSONL file another program appends to
//! (an events file, a transcript): complete lines only, partial lines held
//! until their newline, and a line longer than the limit dropped as it
//! streams in (never buffered whole). A file that shrinks, or that the
//! program replaces (rename or symlink over the path), is noticed and read
//! from its start. Only a regular file is read: a FIFO or a device put in
//! its place is refused at once rather than block the reader.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// One line of the events file, as found.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// A complete line (newline and trailing `\r` removed) starting at `offset`.
    Text { offset: u64, text: String },
    /// A complete line that was not UTF-8.
    NotUtf8 { offset: u64 },
    /// A line longer than the limit; its bytes were discarded.
    TooLong { offset: u64, len: u64 },
}

/// Reader state for one events file.
pub(crate) struct Tail {
    /// Kept open between reads: re-opening would be an inotify event of its own.
    file: Option<File>,
    pos: u64,
    partial: Vec<u8>,
    partial_start: u64,
    /// Set while discarding the rest of an over-long line.
    oversized: bool,
    max_line: usize,
}

/// What one [`Tail::read`] found.
pub(crate) struct Batch {
    pub lines: Vec<Line>,
    /// The file got shorter than what was already read: it was truncated,
    /// and reading restarted at its beginning.
    pub truncated: bool,
    /// Another file now stands at the path: reading went on in the new
    /// one, from its beginning; its lines start at this index of `lines`.
    pub replaced_at: Option<usize>,
}

impl Tail {
    /// A reader at the start of the file.
    pub(crate) fn new(max_line: usize) -> Self {
        Self {
            file: None,
            pos: 0,
            partial: Vec::new(),
            partial_start: 0,
            oversized: false,
            max_line,
        }
    }

    /// Bytes appended since the last read, when the file is already open
    /// (a cheap `fstat`); `None` before the first read.
    pub(crate) fn unread(&self) -> Option<u64> {
        let len = self.file.as_ref()?.metadata().ok()?.len();
        Some(len.saturating_sub(self.pos))
    }

    /// Reads everything appended since the last call. A file that does not
    /// exist (yet) reads as empty.
    pub(crate) fn read(&mut self, path: &Path) -> std::io::Result<Batch> {
        let mut batch = Batch {
            lines: Vec::new(),
            truncated: false,
            replaced_at: None,
        };
        if self.file.as_ref().is_some_and(|f| !same_file(f, path)) {
            // Finish what the old file holds first: it was written before
            // the new one took its place.
            if let Some(mut old) = self.file.take() {
                self.read_to_end(&mut old, &mut batch)?;
            }
            if let Some(line) = self.flush_partial() {
                batch.lines.push(line);
            }
            batch.replaced_at = Some(batch.lines.len());
            self.pos = 0;
            self.partial_start = 0;
        }
        if self.file.is_none() {
            match open_regular(path) {
                Ok(f) => self.file = Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(batch),
                // What the old file held is not lost to it; the next read
                // meets the error again.
                Err(_) if batch.replaced_at.is_some() => return Ok(batch),
                Err(e) => return Err(e),
            }
        }
        let Some(mut file) = self.file.take() else {
            return Ok(batch);
        };
        let result = self.read_to_end(&mut file, &mut batch);
        self.file = Some(file);
        result.map(|()| batch)
    }

    /// What the last line holds when it never got its newline: the program
    /// exited (or replaced the file) after writing it.
    pub(crate) fn flush_partial(&mut self) -> Option<Line> {
        if self.oversized {
            self.oversized = false;
            return Some(Line::TooLong {
                offset: self.partial_start,
                len: self.pos - self.partial_start,
            });
        }
        if self.partial.is_empty() {
            return None;
        }
        let offset = self.partial_start;
        let bytes = std::mem::take(&mut self.partial);
        self.partial_start = self.pos;
        Some(match String::from_utf8(bytes) {
            Ok(text) => Line::Text { offset, text },
            Err(_) => Line::NotUtf8 { offset },
        })
    }

    fn read_to_end(&mut self, file: &mut File, batch: &mut Batch) -> std::io::Result<()> {
        let len = file.metadata()?.len();
        if len < self.pos {
            batch.truncated = true;
            self.pos = 0;
            self.partial.clear();
            self.partial_start = 0;
            self.oversized = false;
        }
        if len != self.pos {
            file.seek(SeekFrom::Start(self.pos))?;
            let mut buf = vec![0u8; 64 * 1024];
            // Up to the length seen above: a writer that keeps appending
            // cannot keep this call going (what it adds after the `fstat`
            // is another inotify event, and another call).
            let mut left = len - self.pos;
            while left > 0 {
                let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                let n = file.read(&mut buf[..want])?;
                if n == 0 {
                    break;
                }
                left -= n as u64;
                self.feed(&buf[..n], &mut batch.lines);
            }
        }
        Ok(())
    }

    fn feed(&mut self, mut data: &[u8], out: &mut Vec<Line>) {
        while !data.is_empty() {
            let newline = data.iter().position(|&b| b == b'\n');
            let chunk_len = newline.map_or(data.len(), |i| i);
            if self.partial.is_empty() && !self.oversized {
                self.partial_start = self.pos;
            }
            if !self.oversized {
                if self.partial.len() + chunk_len > self.max_line {
                    self.oversized = true;
                    self.partial.clear();
                    self.partial.shrink_to(64 * 1024);
                } else {
                    self.partial.extend_from_slice(&data[..chunk_len]);
                }
            }
            self.pos += chunk_len as u64;
            data = &data[chunk_len..];
            if newline.is_some() {
                self.pos += 1;
                data = &data[1..];
                let offset = self.partial_start;
                if self.oversized {
                    out.push(Line::TooLong {
                        offset,
                        len: self.pos - 1 - offset,
                    });
                    self.oversized = false;
                } else {
                    let mut bytes = std::mem::take(&mut self.partial);
                    if bytes.last() == Some(&b'\r') {
                        bytes.pop();
                    }
                    match String::from_utf8(bytes) {
                        Ok(text) => out.push(Line::Text { offset, text }),
                        Err(_) => out.push(Line::NotUtf8 { offset }),
                    }
                }
                self.partial_start = self.pos;
            }
        }
    }
}

/// Opens `path` for reading if it is a regular file (following symlinks).
/// Non-blocking, so that a FIFO's open returns at once (and is refused);
/// reads of a regular file never block anyway.
fn open_regular(path: &Path) -> std::io::Result<File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// Whether `file` is still the file at `path` (same device and inode).
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        // Gone from the path: keep reading what we have.
        (_, Err(_)) => true,
        (Err(_), Ok(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// An events file `e` holding `content`, and a tail that has read it
    /// (whose first read is checked to hold `lines` lines).
    fn read_once(content: &str, lines: usize) -> (tempfile::TempDir, std::path::PathBuf, Tail) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e");
        std::fs::write(&path, content).unwrap();
        let mut tail = Tail::new(100);
        assert_eq!(tail.read(&path).unwrap().lines.len(), lines);
        (dir, path, tail)
    }

    /// Appends `bytes` to `path`, as an agent does.
    fn append(path: &Path, bytes: &[u8]) {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    #[test]
    fn holds_partial_lines_and_drops_long_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        let mut tail = Tail::new(10);
        assert!(tail.read(&path).unwrap().lines.is_empty());
        f.write_all(b"{\"a\":1}\n{\"b\"").unwrap();
        let lines = tail.read(&path).unwrap().lines;
        assert_eq!(
            lines,
            vec![Line::Text {
                offset: 0,
                text: "{\"a\":1}".into()
            }]
        );
        f.write_all(b":2}\r\n0123456789abcdef\nok\n\xff\n").unwrap();
        let lines = tail.read(&path).unwrap().lines;
        assert_eq!(
            lines,
            vec![
                Line::Text {
                    offset: 8,
                    text: "{\"b\":2}".into()
                },
                Line::TooLong {
                    offset: 17,
                    len: 16
                },
                Line::Text {
                    offset: 34,
                    text: "ok".into()
                },
                Line::NotUtf8 { offset: 37 },
            ]
        );
    }

    #[test]
    fn truncation_restarts_from_the_beginning() {
        let (_dir, path, mut tail) = read_once("{\"a\":1}\n{\"a\":2}\n", 2);
        std::fs::write(&path, "{}\n").unwrap();
        let batch = tail.read(&path).unwrap();
        assert!(batch.truncated);
        assert_eq!(batch.lines.len(), 1);
    }

    #[test]
    fn a_replaced_file_is_finished_then_followed_from_its_start() {
        let (dir, path, mut tail) = read_once("{\"a\":1}\n", 1);
        // The old file gains a line, then a new file is renamed over it.
        append(&path, b"{\"a\":2}\n{\"partial\":");
        let new = dir.path().join("new");
        std::fs::write(&new, "{\"b\":1}\n{\"b\":2}\n").unwrap();
        std::fs::rename(&new, &path).unwrap();
        let batch = tail.read(&path).unwrap();
        assert_eq!(batch.replaced_at, Some(2));
        let texts: Vec<String> = batch
            .lines
            .iter()
            .map(|l| match l {
                Line::Text { text, .. } => text.clone(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            texts,
            ["{\"a\":2}", "{\"partial\":", "{\"b\":1}", "{\"b\":2}"]
        );
        // Offsets are in the new file now.
        assert_eq!(
            batch.lines[3],
            Line::Text {
                offset: 8,
                text: "{\"b\":2}".into()
            }
        );
    }

    #[test]
    fn a_symlink_put_in_place_is_followed_from_the_target_s_start() {
        let (_dir, path, mut tail) = read_once("{\"a\":1}\n", 1);
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("t");
        std::fs::write(&target, "{\"b\":1}\n").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let batch = tail.read(&path).unwrap();
        assert_eq!(batch.replaced_at, Some(0));
        assert_eq!(batch.lines.len(), 1);
        // Appends to the target are read once each.
        append(&target, b"{\"b\":2}\n");
        let batch = tail.read(&path).unwrap();
        assert_eq!(batch.replaced_at, None);
        assert_eq!(
            batch.lines,
            vec![Line::Text {
                offset: 8,
                text: "{\"b\":2}".into()
            }]
        );
        assert!(tail.read(&path).unwrap().lines.is_empty());
    }

    /// A FIFO put in place of the events file used to block the reader in
    /// its open until something wrote to it (inline, a runtime thread).
    #[test]
    fn a_fifo_put_in_place_is_refused_at_once_and_the_old_lines_kept() {
        let (_dir, path, mut tail) = read_once("{\"a\":1}\n", 1);
        append(&path, b"{\"a\":2}\n");
        std::fs::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let first = tail.read(&path).map(|b| (b.lines, b.replaced_at));
            let second = tail.read(&path).map(|b| b.lines);
            let _ = tx.send((first, second));
        });
        let (first, second) = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the reads return at once");
        // What the old file held is taken in; the FIFO is refused.
        let (lines, replaced_at) = first.unwrap();
        assert_eq!(
            lines,
            vec![Line::Text {
                offset: 8,
                text: "{\"a\":2}".into()
            }]
        );
        assert_eq!(replaced_at, Some(1));
        let err = second.unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn a_last_line_without_newline_is_flushed() {
        let (_dir, _path, mut tail) = read_once("{\"a\":1}\n{\"last\":true}", 1);
        assert_eq!(
            tail.flush_partial(),
            Some(Line::Text {
                offset: 8,
                text: "{\"last\":true}".into()
            })
        );
        assert_eq!(tail.flush_partial(), None);
    }
}
