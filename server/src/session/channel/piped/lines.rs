//! Bounded line reading from an agent's stdout: a line longer than the
//! limit is skipped (and reported), never buffered whole.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One line read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    Text(String),
    /// A line of this many bytes was over the limit and skipped.
    TooLong(usize),
    /// The line was not UTF-8.
    NotUtf8,
}

/// Reads the next line (without its `\n`) into `buf`, keeping at most
/// `max` bytes of it; `None` at EOF. A last line without its newline
/// counts as a line.
pub(crate) async fn next_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<Line>> {
    buf.clear();
    let mut dropped = 0usize;
    let mut any = false;
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            if !any {
                return Ok(None);
            }
            break;
        }
        any = true;
        let newline = avail.iter().position(|b| *b == b'\n');
        let chunk = &avail[..newline.unwrap_or(avail.len())];
        if dropped == 0 && buf.len() + chunk.len() <= max {
            buf.extend_from_slice(chunk);
        } else {
            dropped += buf.len() + chunk.len();
            buf.clear();
        }
        let used = newline.map_or(avail.len(), |i| i + 1);
        r.consume(used);
        if newline.is_some() {
            break;
        }
    }
    if dropped > 0 {
        return Ok(Some(Line::TooLong(dropped)));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(match String::from_utf8(std::mem::take(buf)) {
        Ok(s) => Line::Text(s),
        Err(_) => Line::NotUtf8,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_too_long_line_is_skipped_and_the_next_one_read() {
        let input = format!("short\n{}\nnext\r\nZx\nlast", "x".repeat(100));
        // An invalid UTF-8 byte in a line of its own.
        let bytes: Vec<u8> = input
            .bytes()
            .map(|b| if b == b'Z' { 0xff } else { b })
            .collect();
        // A tiny buffer, so lines span many reads.
        let mut r = tokio::io::BufReader::with_capacity(7, &bytes[..]);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        while let Some(line) = next_line(&mut r, &mut buf, 20).await.unwrap() {
            got.push(line);
        }
        assert_eq!(
            got,
            [
                Line::Text("short".into()),
                Line::TooLong(100),
                Line::Text("next".into()),
                Line::NotUtf8,
                Line::Text("last".into()),
            ]
        );
    }
}
