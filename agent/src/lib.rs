//! duet's demo agent: the program duet hosts by default. An interactive,
//! offline TUI with a scripted "model" that streams replies, runs shell
//! commands and edits files after approval, and speaks Qwen Code's
//! dual-output protocol (`--json-file`/`--json-fd` events, `--input-file`
//! commands) so the browser's chat view can follow and steer it.

mod app;
mod editor;
mod events;
mod input;
mod options;
mod script;
mod sidecar;
mod signals;
mod stream;
mod terminal;
mod tools;
mod ui;

pub use options::Options;

/// Runs the demo agent in the current terminal until the user quits or a
/// termination signal arrives; returns the process exit code (0 after a quit,
/// 128 + n after signal n).
pub fn run(opts: Options) -> anyhow::Result<i32> {
    app::run(opts)
}
