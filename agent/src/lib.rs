//! duet's demo agent (placeholder until the real TUI lands).

/// Command-line options of `duet demo-agent`.
#[derive(Debug, Clone, clap::Args)]
pub struct Options {}

/// Runs the demo agent; returns the process exit code.
pub fn run(_opts: Options) -> anyhow::Result<i32> {
    anyhow::bail!("the demo agent is not built yet")
}
