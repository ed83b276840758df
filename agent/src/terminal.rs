//! The terminal's modes and its input: raw mode and bracketed paste while the
//! agent runs (restored on every exit path), and a thread that turns key
//! presses, pastes and resizes into app events.
//!
//! Nothing here asks the terminal anything (no cursor-position or device
//! queries): under duet the other end of the PTY may be a gateway with no
//! terminal emulator attached, and an unanswered query would hang.

use std::io::{self, Write};
use std::thread;

use crossterm::event::{
    self, DisableBracketedPaste, EnableBracketedPaste, Event, KeyEvent, KeyEventKind,
};
use crossterm::style::ResetColor;
use crossterm::{cursor, execute, terminal};

/// Raw mode for as long as this lives.
pub(crate) struct RawTerminal(());

impl RawTerminal {
    /// Switches the terminal to raw mode with bracketed paste.
    pub(crate) fn enter() -> io::Result<Self> {
        terminal::enable_raw_mode()?;
        let guard = RawTerminal(());
        execute!(io::stdout(), EnableBracketedPaste)?;
        Ok(guard)
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        let mut out = io::stdout();
        let _ = execute!(out, DisableBracketedPaste, ResetColor, cursor::Show);
        let _ = out.flush();
        let _ = terminal::disable_raw_mode();
    }
}

/// Leaves raw mode without writing to stdout, for the emergency exit: the
/// main thread may be blocked in a write to stdout, holding its lock.
pub(crate) fn restore_modes_only() {
    let _ = terminal::disable_raw_mode();
}

/// The terminal's size, with a usable default when it cannot be read.
pub(crate) fn size() -> (u16, u16) {
    terminal::size().unwrap_or((80, 24))
}

/// Input from the terminal.
#[derive(Debug)]
pub(crate) enum TermInput {
    Key(KeyEvent),
    Paste(String),
    Resize(u16, u16),
    /// The terminal cannot be read any more (hangup).
    Gone,
}

/// Reads the terminal on its own thread; `deliver` returns false once nobody
/// listens, which ends the thread.
pub(crate) fn spawn_reader(deliver: impl Fn(TermInput) -> bool + Send + 'static) -> io::Result<()> {
    thread::Builder::new()
        .name("terminal-input".into())
        .spawn(move || loop {
            let input = match event::read() {
                Ok(Event::Key(key)) if key.kind != KeyEventKind::Release => TermInput::Key(key),
                Ok(Event::Paste(text)) => TermInput::Paste(text),
                Ok(Event::Resize(cols, rows)) => TermInput::Resize(cols, rows),
                Ok(_) => continue,
                // A signal (SIGTERM from duet ending the session, SIGWINCH)
                // interrupts the read; that is not a hangup, and the signal
                // thread reports the signal itself.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    deliver(TermInput::Gone);
                    return;
                }
            };
            if !deliver(input) {
                return;
            }
        })
        .map(|_| ())
}
