//! Command-line options, spelled like Qwen Code's dual-output flags so duet
//! can launch the demo agent and Qwen Code the same way.

use std::path::PathBuf;

/// Command-line options of `duet demo-agent` (and of `duet-demo-agent`).
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// Write dual-output JSON events to this file: a regular file (appended
    /// to), a FIFO, or /dev/fd/N.
    #[arg(long, value_name = "PATH", conflicts_with = "json_fd")]
    pub json_file: Option<PathBuf>,

    /// Write dual-output JSON events to this inherited file descriptor. Must
    /// be 3 or more: 0, 1 and 2 belong to the terminal and are refused.
    #[arg(long, value_name = "N")]
    pub json_fd: Option<u32>,

    /// Watch this file for JSONL commands (`submit`, `confirmation_response`),
    /// read from its beginning.
    #[arg(long, value_name = "PATH")]
    pub input_file: Option<PathBuf>,

    /// Pause between streamed tokens, in milliseconds.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 25,
        value_parser = clap::value_parser!(u64).range(0..=10_000)
    )]
    pub token_delay_ms: u64,
}

/// Where the events go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventTarget {
    Path(PathBuf),
    Fd(u32),
}

impl Options {
    /// The events channel asked for, if any.
    pub fn event_target(&self) -> Option<EventTarget> {
        match (&self.json_file, self.json_fd) {
            (Some(path), _) => Some(EventTarget::Path(path.clone())),
            (None, Some(fd)) => Some(EventTarget::Fd(fd)),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        opts: Options,
    }

    #[test]
    fn json_fd_and_json_file_are_mutually_exclusive() {
        let err = Cli::try_parse_from(["x", "--json-fd", "3", "--json-file", "/tmp/e"])
            .err()
            .map(|e| e.kind());
        assert_eq!(err, Some(clap::error::ErrorKind::ArgumentConflict));
    }

    #[test]
    fn defaults_to_a_plain_tui_at_a_readable_pace() {
        let cli = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(cli.opts.event_target(), None);
        assert_eq!(cli.opts.input_file, None);
        assert_eq!(cli.opts.token_delay_ms, 25);
    }
}
