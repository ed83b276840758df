//! The local terminal of `duet attach`: raw mode for as long as a guard
//! lives, put back on every way out (the guard's drop, a panic, the
//! signals the attach loop turns into a return), the window's size, and
//! the modes a program that still runs may have left on when we detach.

use std::io;
use std::os::fd::AsFd;
use std::sync::Mutex;

use rustix::termios::{self, OptionalActions, Termios};

/// The terminal's settings before raw mode, for the panic hook.
static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

/// Modes a full-screen program turns on and would turn off as it exits,
/// turned off for it when we leave it running: mouse reports, bracketed
/// paste, focus reports, application cursor keys and keypad, a hidden
/// cursor, colours. (The alternate screen is left apart, by
/// [`LEAVE_ALTERNATE`], only when it is on: leaving it when it is not
/// would move the cursor to wherever it was last saved.)
pub(crate) const RESTORE_MODES: &[u8] = b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\
\x1b[?1006l\x1b[?1015l\x1b[?2004l\x1b[?1004l\x1b[?1l\x1b>\x1b[?25h\x1b[m";

/// Leaves the alternate screen (the shell's screen comes back).
pub(crate) const LEAVE_ALTERNATE: &[u8] = b"\x1b[?1049l";

/// Whether standard input is a terminal.
pub(crate) fn stdin_is_tty() -> bool {
    termios::isatty(io::stdin())
}

/// The terminal's size (columns, rows), when it has one.
pub(crate) fn window_size() -> Option<(u16, u16)> {
    let ws = termios::tcgetwinsize(io::stdin()).ok()?;
    (ws.ws_col > 0 && ws.ws_row > 0).then_some((ws.ws_col, ws.ws_row))
}

/// Raw mode on standard input until dropped.
pub(crate) struct RawMode {
    saved: Termios,
}

impl RawMode {
    /// Switches the terminal to raw mode: every key goes to the program as
    /// it is (Ctrl-C, Ctrl-Z and Ctrl-\ included), nothing is echoed by the
    /// local terminal (the program echoes), and output is not translated.
    pub(crate) fn enter() -> io::Result<RawMode> {
        let stdin = io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd())?;
        let mut raw = saved.clone();
        raw.make_raw();
        *crate::sync::lock(&SAVED) = Some(saved.clone());
        termios::tcsetattr(stdin.as_fd(), OptionalActions::Now, &raw)?;
        Ok(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(io::stdin().as_fd(), OptionalActions::Now, &self.saved);
        *crate::sync::lock(&SAVED) = None;
    }
}

/// Puts the terminal back before a panic's message is printed (so it is
/// readable, and the shell is usable after), then panics as before.
pub(crate) fn restore_on_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let saved = crate::sync::lock(&SAVED).take();
        if let Some(saved) = saved {
            let _ = termios::tcsetattr(io::stdin().as_fd(), OptionalActions::Now, &saved);
            let _ = write_all(RESTORE_MODES);
            let _ = write_all(b"\r\n");
        }
        previous(info);
    }));
}

/// Reads standard input on a thread of its own (a blocking read; the
/// descriptor is shared with the shell, so it is not made non-blocking)
/// into a small bounded queue: a program that stops reading holds the
/// typist back rather than queue keys here. The queue closes when the
/// terminal hangs up; the thread ends with the process.
pub(crate) fn spawn_reader() -> io::Result<tokio::sync::mpsc::Receiver<Vec<u8>>> {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    std::thread::Builder::new()
        .name("duet-keys".into())
        .spawn(move || {
            let stdin = io::stdin();
            let mut buf = vec![0u8; 4096];
            loop {
                match rustix::io::read(stdin.as_fd(), &mut buf[..]) {
                    Ok(0) => return,
                    Ok(n) => {
                        if tx.blocking_send(buf[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                    Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                    Err(_) => return,
                }
            }
        })?;
    Ok(rx)
}

/// Writes all of `bytes` to standard output, unbuffered: terminal output
/// is written as it comes, and a terminal that cannot keep up holds the
/// writer back (and, through the WebSocket, the program).
pub(crate) fn write_all(mut bytes: &[u8]) -> io::Result<()> {
    let stdout = io::stdout();
    while !bytes.is_empty() {
        match rustix::io::write(stdout.as_fd(), bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Whether a stream of terminal output leaves the alternate screen on:
/// each `ESC[?1049h`/`l` (and 1047, 47) seen switches it. Looked for in
/// every chunk of output with a fast substring search, so it costs the
/// flood nothing worth measuring; a switch split across two chunks is
/// missed (then a detach may leave the alternate screen on).
#[derive(Debug, Default)]
pub(crate) struct AltScreen {
    pub(crate) on: bool,
}

impl AltScreen {
    /// Takes the switches in `chunk` into account.
    pub(crate) fn scan(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while let Some(at) = memchr::memmem::find(rest, b"\x1b[?") {
            rest = &rest[at + 3..];
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            match (&rest[..digits], rest.get(digits)) {
                (b"1049" | b"1047" | b"47", Some(b'h')) => self.on = true,
                (b"1049" | b"1047" | b"47", Some(b'l')) => self.on = false,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alternate_screen_is_followed() {
        let mut alt = AltScreen::default();
        alt.scan(b"hello \x1b[?25l\x1b[?1049h drawn");
        assert!(alt.on);
        alt.scan(b"\x1b[?1l more \x1b[?2004h");
        assert!(alt.on);
        alt.scan(b"bye\x1b[?1049l\x1b[?25h");
        assert!(!alt.on);
        alt.scan(b"\x1b[?47h");
        assert!(alt.on);
        alt.scan(b"\x1b[?");
        assert!(alt.on, "a cut sequence changes nothing");
    }
}
