//! The flags of `duet run`, `duet attach`, `duet resume` and `duet ls`.
//! Each also reads an environment variable, so an alias or a shell's
//! profile can set them once.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::keys::{DetachKey, DEFAULT_DETACH};

/// Which duet to talk to.
#[derive(Debug, Clone, Args)]
pub struct ConnectArgs {
    /// A remote duet's URL (e.g. http://127.0.0.1:9000 through an SSH
    /// tunnel, or https://duet.example.com). Default: your own local duet,
    /// found in its state directory.
    #[arg(long, env = "DUET_SERVER")]
    pub server: Option<String>,

    /// The token for --server (the owner's, or a named one). The local
    /// duet's is read from its state directory.
    #[arg(long, env = "DUET_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// The local duet's state directory. Default: $XDG_RUNTIME_DIR/duet or
    /// /tmp/duet-<uid>, as for `duet serve`.
    #[arg(long, env = "DUET_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
}

/// How this terminal is attached.
#[derive(Debug, Clone, Args)]
pub struct TerminalArgs {
    /// The keys that detach (leave the session running and give the
    /// terminal back): e.g. "ctrl-\ ctrl-\" (the default), "ctrl-b d",
    /// "ctrl-]", or "none". A key of it that turns out to be no detach
    /// still reaches the program.
    #[arg(long, env = "DUET_DETACH_KEY", default_value = DEFAULT_DETACH)]
    pub detach_key: DetachSetting,

    /// Draw the session's address as a QR code for a phone: `auto` when
    /// the duet is reachable from other machines (not on loopback),
    /// `always` (also `--qr` alone), or `never`.
    #[arg(long, env = "DUET_QR", value_enum, default_value = "auto",
          num_args = 0..=1, default_missing_value = "always")]
    pub qr: QrWhen,
}

/// `--qr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QrWhen {
    Auto,
    Always,
    Never,
}

/// `--detach-key`: a sequence, or none.
#[derive(Debug, Clone)]
pub struct DetachSetting(pub Option<DetachKey>);

impl std::str::FromStr for DetachSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        DetachKey::parse(s).map(DetachSetting)
    }
}

/// `duet attach [SESSION]`.
#[derive(Debug, Clone, Args)]
pub struct AttachArgs {
    /// An id, the start of one, or a session's name. Default: the one
    /// running session.
    pub session: Option<String>,
    /// How this terminal attaches (`--detach-key`, `--qr`).
    #[command(flatten)]
    pub terminal: TerminalArgs,
    /// Which duet to talk to (`--server`, `--token`, `--state-dir`).
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `duet run [PROFILE] [-- ARGS...]`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The profile to run (`qwen`, `claude`, `demo`, `shell`, or one of
    /// the config's). Default: the server's default profile.
    pub profile: Option<String>,

    /// Arguments for the program, after the profile's own (the profile
    /// must allow them: the built-in ones do).
    #[arg(last = true)]
    pub args: Vec<String>,

    /// Where the program runs. Default: this directory (for a duet on
    /// this machine), or the profile's (for --server).
    #[arg(long)]
    pub cwd: Option<PathBuf>,

    /// A name for the session (shown by `duet ls` and the browser).
    #[arg(long)]
    pub name: Option<String>,

    /// How this terminal attaches (`--detach-key`, `--qr`).
    #[command(flatten)]
    pub terminal: TerminalArgs,
    /// Which duet to talk to (`--server`, `--token`, `--state-dir`).
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `duet resume SESSION`.
#[derive(Debug, Clone, Args)]
pub struct ResumeArgs {
    /// The ended session (an id, the start of one, or its name).
    pub session: String,
    /// How this terminal attaches (`--detach-key`, `--qr`).
    #[command(flatten)]
    pub terminal: TerminalArgs,
    /// Which duet to talk to (`--server`, `--token`, `--state-dir`).
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `duet ls`.
#[derive(Debug, Clone, Args)]
pub struct LsArgs {
    /// The sessions as JSON (the REST API's `SessionInfo`s), for scripts.
    #[arg(long)]
    pub json: bool,
    /// Which duet to talk to (`--server`, `--token`, `--state-dir`).
    #[command(flatten)]
    pub connect: ConnectArgs,
}
