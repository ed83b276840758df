//! The one place that touches portable-pty: spawn a program on a fresh PTY and
//! hand back plain blocking handles. portable-pty's I/O is all blocking, so the
//! session runs each handle on a dedicated thread, never on the async runtime.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use portable_pty::{native_pty_system, Child, ChildKiller, CommandBuilder, MasterPty, PtySize};

/// What to run and where.
#[derive(Debug, Clone)]
pub struct SpawnOptions {
    pub program: String,
    pub args: Vec<String>,
    /// Added to (and overriding) duet's own environment, minus `DUET_*`.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub cols: u16,
    pub rows: u16,
}

/// A running program and the handles to drive it.
pub struct Spawned {
    pub master: Box<dyn MasterPty + Send>,
    pub reader: Box<dyn Read + Send>,
    pub writer: Box<dyn Write + Send>,
    pub child: Box<dyn Child + Send + Sync>,
    pub killer: Box<dyn ChildKiller + Send + Sync>,
    pub pid: Option<u32>,
}

/// Spawns `opts.program` as the leader of a new session (portable-pty calls
/// `setsid`), so its pid is also its process-group id.
pub fn spawn(opts: &SpawnOptions) -> Result<Spawned> {
    let pair = native_pty_system()
        .openpty(size(opts.cols, opts.rows))
        .context("opening a PTY")?;
    let mut cmd = CommandBuilder::new(&opts.program);
    cmd.args(&opts.args);
    cmd.cwd(&opts.cwd);
    // duet's own settings (the auth token above all) must not leak into the
    // programs it hosts.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DUET_") {
            cmd.env_remove(&key);
        }
    }
    cmd.env("TERM", "xterm-256color");
    cmd.env("COLORTERM", "truecolor");
    for (k, v) in &opts.env {
        cmd.env(k, v);
    }
    let child = pair
        .slave
        .spawn_command(cmd)
        .with_context(|| format!("starting {:?}", opts.program))?;
    // Keeping the slave open here would hold the PTY open after the program
    // exits, and the reader would never see EOF.
    drop(pair.slave);
    let pid = child.process_id();
    let killer = child.clone_killer();
    let reader = pair
        .master
        .try_clone_reader()
        .context("cloning PTY reader")?;
    let writer = pair.master.take_writer().context("taking PTY writer")?;
    Ok(Spawned {
        master: pair.master,
        reader,
        writer,
        child,
        killer,
        pid,
    })
}

/// A `PtySize` for a cell grid (pixel sizes are unknown and left 0).
pub fn size(cols: u16, rows: u16) -> PtySize {
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}
