//! Who sets the PTY's size, the browser's rule (web/README.md, "the
//! latest active client sets the PTY size") kept by a terminal client: it
//! drives the size from the start when it started the session (`duet
//! run`), and takes it over when its user types or resizes the window; a
//! `resize` that is not the echo of its own hands the size to another
//! client, and it then draws at the PTY's size until its user acts again.
//! Pure, so the rule is tested without a terminal.

use std::collections::VecDeque;

/// A terminal size: columns, rows.
pub(crate) type Size = (u16, u16);

/// Sizes asked for whose echo has not come back, at most.
const SENT_KEPT: usize = 8;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct SizePolicy {
    driver: bool,
    /// The PTY's size as last heard of (or asked for).
    server: Option<Size>,
    /// Sizes asked for whose `resize` echo has not come back, oldest first
    /// (two quick window changes send two sizes: the first echo must not
    /// look like someone else's).
    sent: VecDeque<Size>,
}

impl SizePolicy {
    /// `driver`: this client started the session at its own size.
    pub(crate) fn new(driver: bool) -> Self {
        SizePolicy {
            driver,
            server: None,
            sent: VecDeque::new(),
        }
    }

    /// Whether this client sets the size now.
    pub(crate) fn drives(&self) -> bool {
        self.driver
    }

    /// A (re)connection announced the PTY's size: a driver asks for its
    /// own again (a reload of a driving tab does the same).
    pub(crate) fn connected(&mut self, pty: Size, local: Option<Size>) -> Option<Size> {
        self.server = Some(pty);
        self.sent.clear();
        self.announce(local)
    }

    /// The user typed: this client takes the size.
    pub(crate) fn typed(&mut self, local: Option<Size>) -> Option<Size> {
        self.driver = true;
        self.announce(local)
    }

    /// The user resized the window (debounced): this client takes the size.
    pub(crate) fn window_changed(&mut self, local: Option<Size>) -> Option<Size> {
        self.typed(local)
    }

    /// A snapshot at this size follows (`resync`).
    pub(crate) fn resynced(&mut self, pty: Size) {
        self.server = Some(pty);
    }

    /// The PTY was resized (`resize`): by us, or by another client, who
    /// drives from now on.
    pub(crate) fn resized(&mut self, pty: Size) {
        match self.sent.iter().position(|s| *s == pty) {
            // Echoes come in order: older sizes of ours will not come back.
            Some(at) => {
                self.sent.drain(..=at);
            }
            None if self.server != Some(pty) => self.driver = false,
            None => {}
        }
        self.server = Some(pty);
    }

    /// The size to ask for, when this client drives and the PTY's differs.
    fn announce(&mut self, local: Option<Size>) -> Option<Size> {
        let local = local?;
        if !self.driver || self.server == Some(local) {
            return None;
        }
        self.server = Some(local);
        if self.sent.len() == SENT_KEPT {
            self.sent.pop_front();
        }
        self.sent.push_back(local);
        Some(local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attach_follows_until_its_user_types_or_resizes() {
        let mut p = SizePolicy::new(false);
        assert_eq!(p.connected((120, 36), Some((80, 24))), None);
        assert!(!p.drives());
        assert_eq!(p.typed(Some((80, 24))), Some((80, 24)));
        // Typing again asks for nothing more.
        assert_eq!(p.typed(Some((80, 24))), None);
        p.resized((80, 24));
        assert!(p.drives(), "its own echo");
        // A browser takes the size over.
        p.resized((100, 30));
        assert!(!p.drives());
        assert_eq!(p.window_changed(Some((90, 20))), Some((90, 20)));
        assert!(p.drives());
    }

    #[test]
    fn a_session_started_here_drives_and_keeps_driving_after_a_reconnect() {
        let mut p = SizePolicy::new(true);
        assert_eq!(p.connected((80, 24), Some((80, 24))), None);
        assert_eq!(p.window_changed(Some((81, 24))), Some((81, 24)));
        assert_eq!(p.window_changed(Some((82, 24))), Some((82, 24)));
        // The echoes of both, in order: still ours.
        p.resized((81, 24));
        p.resized((82, 24));
        assert!(p.drives());
        // Another client resized while we were away; we come back driving.
        assert_eq!(p.connected((100, 30), Some((82, 24))), Some((82, 24)));
        // No window size (not known): nothing to ask.
        assert_eq!(p.typed(None), None);
    }
}
