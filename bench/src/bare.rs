//! The baseline: a program on a bare PTY (portable-pty, read by a thread),
//! its master read directly by this process with no duet in between.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{Context, Result};
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

/// A program on a bare PTY.
pub(crate) struct Bare {
    pub reader: Box<dyn Read + Send>,
    pub writer: Box<dyn Write + Send>,
    pub child: Box<dyn Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
}

impl Bare {
    /// Spawns `program args` on a fresh 120×36 PTY with duet's TERM.
    pub(crate) fn spawn(program: &str, args: &[&str], cwd: &Path) -> Result<Self> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 36,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .context("opening a PTY")?;
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        cmd.env("COLORTERM", "truecolor");
        let child = pair.slave.spawn_command(cmd)?;
        drop(pair.slave);
        let reader = pair.master.try_clone_reader()?;
        let writer = pair.master.take_writer()?;
        Ok(Self {
            reader,
            writer,
            child,
            _master: pair.master,
        })
    }

    /// Reads until the output contains `needle` (≤ 64 bytes).
    pub(crate) fn wait_for_text(&mut self, needle: &[u8]) -> Result<()> {
        let mut tail = crate::duet::Tail::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = self.reader.read(&mut buf)?;
            anyhow::ensure!(n > 0, "EOF while waiting for {needle:?}");
            if tail.push_contains(&buf[..n], needle) {
                return Ok(());
            }
        }
    }

    /// Types keys.
    pub(crate) fn keys(&mut self, bytes: &[u8]) -> Result<()> {
        self.writer.write_all(bytes)?;
        self.writer.flush()?;
        Ok(())
    }

    /// Kills the program and reaps it.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
