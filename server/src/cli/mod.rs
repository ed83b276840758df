//! Command-line interface: `duet serve`, the terminal client's `run`,
//! `attach`, `resume` and `ls` (their flags are in `client/args.rs`), and
//! `duet demo-agent`, `duet policy check` (`policy_check.rs`). Every flag
//! also reads an environment variable, for containers, systemd and shell
//! aliases.

mod policy_check;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::builder::BoolishValueParser;
use clap::{Args, Parser, Subcommand};

use crate::clock::parse_duration;
use crate::config::Profiles;
use crate::server::ServerOptions;
use crate::state_dir::default_state_dir;
pub use policy_check::{run_check, CheckArgs, PolicyCommand};

/// Put a terminal program, and its structured chat stream, in front of a browser.
#[derive(Debug, Parser)]
#[command(name = "duet", version, about, long_about = LONG_ABOUT)]
pub struct Cli {
    /// What to do: `serve`, `run`, `attach`, `ls`, ... (see `Command`).
    #[command(subcommand)]
    pub command: Command,
}

const LONG_ABOUT: &str = "\
duet hosts terminal programs (AI coding agents such as Qwen Code, or the demo \
agent that ships with duet) in PTYs and gives browsers two synchronized views: \
the real terminal, and a chat view built from the program's JSONL sidecar \
stream (dual output).

Start it with `duet serve` and open the URL it prints, or run an agent in \
this terminal with `duet run PROFILE` and go on from any browser.";

/// What to do.
// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gateway (HTTP, WebSocket and the web UI).
    Serve(ServeArgs),
    /// Start a session of a profile in this directory and attach this
    /// terminal to it (starting your local duet in the background if it
    /// does not run). `alias claude='duet run claude --'` runs Claude Code
    /// through duet, with its browser views.
    Run(crate::client::RunArgs),
    /// Put a running session in this terminal, beside its browser tabs;
    /// the detach key (Ctrl-\ Ctrl-\) leaves it running.
    Attach(crate::client::AttachArgs),
    /// Continue an ended session's conversation in a new session, here.
    Resume(crate::client::ResumeArgs),
    /// List the sessions: name, profile, status, approvals waiting,
    /// clients and directory.
    Ls(crate::client::LsArgs),
    /// Run duet's demo agent, an offline dual-output TUI (what the default
    /// profile hosts).
    DemoAgent(duet_demo_agent::Options),
    /// Mint a named token with a role: prints the token (once) and the
    /// `[[token]]` snippet to paste into the config file (its hash only).
    Token(TokenArgs),
    /// Approval policies: `duet policy check --config FILE --tool NAME
    /// --input JSON` prints what the config's `[[policy]]` rules decide.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Hand a Claude Code hook event to its duet session (duet puts this
    /// in the settings of the Claude Code sessions it starts).
    #[command(hide = true)]
    Hook(crate::hook::HookArgs),
}

/// `duet token` flags.
#[derive(Debug, Clone, Args)]
pub struct TokenArgs {
    /// The token's name (shown to others as who is connected; logged).
    #[arg(long)]
    pub name: String,
    /// owner, driver, approver or viewer.
    #[arg(long)]
    pub role: duet_protocol::rest::Role,
}

/// `duet serve` flags.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on. Anything but loopback also needs
    /// --behind-tls-proxy, and auth stays on.
    #[arg(long, env = "DUET_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// TOML file with the agent profiles clients may start (see
    /// the README). Without it: the demo agent (the default), a
    /// login shell, Qwen Code and Claude Code when `qwen` and
    /// `claude` are on the PATH, and Claude Code over ACP when
    /// `claude-agent-acp` (or `claude-code-acp`) is.
    #[arg(long, env = "DUET_CONFIG")]
    pub config: Option<PathBuf>,

    /// The access token. Default: a random one, printed in the start URL.
    #[arg(
        long,
        env = "DUET_TOKEN",
        hide_env_values = true,
        conflicts_with = "token_file"
    )]
    pub token: Option<String>,

    /// Read the access token from this file (e.g. a container secret).
    #[arg(long, env = "DUET_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,

    /// Also accept browser requests from this origin (e.g.
    /// https://app.example.com). Repeatable; the server's own origin is
    /// always allowed.
    #[arg(
        long = "allow-origin",
        env = "DUET_ALLOW_ORIGINS",
        value_delimiter = ','
    )]
    pub allow_origins: Vec<String>,

    /// A host name users reach duet by (e.g. duet.example.com, or
    /// *.pods.example for every name under it; add :port to allow that port
    /// only). Repeatable. Requests naming any other host are refused (421),
    /// against DNS rebinding; localhost, loopback addresses, the listen
    /// address and the host of --public-url are always allowed.
    #[arg(
        long = "allowed-host",
        env = "DUET_ALLOWED_HOST",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,

    /// Turn authentication off. Only allowed on a loopback address.
    #[arg(long, env = "DUET_NO_AUTH", conflicts_with_all = ["token", "token_file"], value_parser = BoolishValueParser::new())]
    pub no_auth: bool,

    /// TLS is terminated by a reverse proxy in front of duet: allows a
    /// non-loopback --listen and marks cookies Secure.
    #[arg(long, env = "DUET_BEHIND_TLS_PROXY", value_parser = BoolishValueParser::new())]
    pub behind_tls_proxy: bool,

    /// The URL users reach duet at (behind a proxy); used in the printed
    /// start URL.
    #[arg(long, env = "DUET_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Where session directories (events file, input file, work dir) live.
    /// Default: $XDG_RUNTIME_DIR/duet or /tmp/duet-<uid>.
    #[arg(long, env = "DUET_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// Running sessions at once.
    #[arg(long, env = "DUET_MAX_SESSIONS", default_value_t = 64)]
    pub max_sessions: usize,

    /// Open connections at once (WebSockets included); more are closed as
    /// soon as they are accepted.
    #[arg(long, env = "DUET_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: usize,

    /// How long a client may take to send a request's headers; slower (or
    /// idle keep-alive) connections are closed.
    #[arg(long, env = "DUET_HEADER_READ_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub header_read_timeout: Duration,

    /// Clients attached to one session at once.
    #[arg(long, env = "DUET_MAX_CLIENTS", default_value_t = 128)]
    pub max_clients: u32,

    /// Largest terminal recording (asciicast) kept per session, in bytes;
    /// 0 records nothing.
    #[arg(long, env = "DUET_MAX_RECORDING", default_value_t = 64 << 20)]
    pub max_recording: u64,

    /// How long an ended session stays readable (e.g. 30m, 1h, 2d). Session
    /// directories left by an earlier run are deleted this long after their
    /// last change.
    #[arg(long, env = "DUET_RETAIN", default_value = "1h", value_parser = parse_duration)]
    pub retain: Duration,

    /// Also serve GET /metrics (Prometheus) here, WITHOUT auth (on the main
    /// address it needs the token). Loopback unless --behind-tls-proxy, as
    /// for --listen: only expose it on a network you trust.
    #[arg(long, env = "DUET_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,

    /// Web Push: allow plain-http push endpoints on a loopback address.
    /// For tests with a local push service only; real ones are https.
    #[arg(long, env = "DUET_PUSH_INSECURE_LOOPBACK", value_parser = BoolishValueParser::new())]
    pub push_insecure_loopback: bool,

    /// Web Push: a turn that ran at least this long notifies when it
    /// finishes (e.g. 30s, 5m).
    #[arg(long, env = "DUET_PUSH_LONG_TURN", default_value = "30s", value_parser = parse_duration)]
    pub push_long_turn: Duration,

    /// Web Push: how push services can reach you (the VAPID `sub`), a
    /// `mailto:` or https URL. Default: --public-url if https, else
    /// mailto:duet@localhost.
    #[arg(long, env = "DUET_PUSH_CONTACT")]
    pub push_contact: Option<String>,

    /// Threads that move bytes between sockets and terminals (default: one
    /// per core). One, like ttyd's event loop, echoed a keystroke ~20 µs
    /// sooner while each client had two tasks; with one task per client
    /// the two settings echo alike, and Ctrl-C in a flood took 5-19 ms
    /// with one instead of 1-3 (docs/benchmarks.md). Screens are parsed on
    /// their own threads either way.
    #[arg(long, env = "DUET_WORKER_THREADS",
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub worker_threads: Option<u16>,
}

/// The `host[:port]` of an `http(s)://` URL.
fn url_host(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    (!authority.is_empty() && !authority.contains('@')).then(|| authority.to_string())
}

impl ServeArgs {
    /// Validates the flags into server options. `duet_exe` fills `{duet}` in
    /// profiles.
    pub fn into_options(self, duet_exe: PathBuf) -> Result<(SocketAddr, ServerOptions)> {
        let loopback = self.listen.ip().is_loopback();
        if !loopback && self.no_auth {
            bail!(
                "--no-auth is only allowed on a loopback address, not {}",
                self.listen
            );
        }
        if !loopback && !self.behind_tls_proxy {
            bail!(
                "refusing to listen on {} without TLS: put a TLS-terminating proxy in front \
                 and pass --behind-tls-proxy (DUET_BEHIND_TLS_PROXY=true), or listen on 127.0.0.1",
                self.listen
            );
        }
        if let Some(addr) = self.metrics_listen {
            if !addr.ip().is_loopback() && !self.behind_tls_proxy {
                bail!(
                    "refusing to serve metrics without auth on {addr}: use a loopback address, \
                     or pass --behind-tls-proxy when duet runs on a private network (a pod)"
                );
            }
        }
        let token = if self.no_auth {
            None
        } else if let Some(t) = self.token {
            Some(t)
        } else if let Some(path) = &self.token_file {
            let t = std::fs::read_to_string(path)
                .with_context(|| format!("reading token file {}", path.display()))?
                .trim()
                .to_string();
            Some(t)
        } else {
            Some(crate::secret::random_token()?)
        };
        if let Some(t) = &token {
            if t.len() < 16
                || !t
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && b != b';' && b != b',')
            {
                bail!("the token must be at least 16 printable characters without ';' or ','");
            }
        }
        let (profiles, tokens) = match &self.config {
            Some(path) => {
                let file = crate::config::ConfigFile::read(path)?;
                let tokens = file.named_tokens()?;
                (Profiles::from_config(file, duet_exe)?, tokens)
            }
            None => (Profiles::builtin(duet_exe), Vec::new()),
        };
        if token.is_none() && !tokens.is_empty() {
            bail!("[[token]]s in the config need authentication: drop --no-auth");
        }
        if self.max_connections == 0
            || self.max_sessions == 0
            || self.max_clients == 0
            || self.header_read_timeout.is_zero()
        {
            bail!("--max-sessions, --max-clients, --max-connections and --header-read-timeout must be above zero");
        }
        // It is printed as the start URL and allowed as a Host: a typo must
        // not become a link that leads nowhere.
        if let Some(u) = &self.public_url {
            if !(u.starts_with("http://") || u.starts_with("https://")) || url_host(u).is_none() {
                bail!("--public-url must be an http:// or https:// URL with a host, not {u:?}");
            }
        }
        let mut opts = ServerOptions::new(profiles, token);
        opts.tokens = tokens;
        opts.allowed_origins = self.allow_origins;
        opts.allowed_hosts = self.allowed_hosts;
        // The name users are told to open is one duet answers to.
        if let Some(host) = self.public_url.as_deref().and_then(url_host) {
            opts.allowed_hosts.push(host);
        }
        crate::host::AllowedHosts::new(&opts.allowed_hosts, self.listen, true)?;
        opts.max_connections = self.max_connections;
        opts.header_read_timeout = self.header_read_timeout;
        opts.behind_tls_proxy = self.behind_tls_proxy;
        opts.state_dir = self.state_dir.unwrap_or_else(default_state_dir);
        opts.max_sessions = self.max_sessions;
        opts.retain = self.retain;
        opts.limits.max_clients = self.max_clients;
        opts.limits.max_recording = self.max_recording;
        opts.metrics_listen = self.metrics_listen.map(crate::server::MetricsListen::Addr);
        opts.push_insecure_loopback = self.push_insecure_loopback;
        opts.push_long_turn = self.push_long_turn;
        if let Some(contact) = self
            .push_contact
            .or_else(|| self.public_url.filter(|u| u.starts_with("https://")))
        {
            if !(contact.starts_with("mailto:") || contact.starts_with("https://")) {
                bail!("--push-contact must be a mailto: or https:// URL, not {contact:?}");
            }
            opts.push_contact = contact;
        }
        Ok((self.listen, opts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::local_base_url;

    fn serve(args: &[&str]) -> Result<(SocketAddr, ServerOptions)> {
        let cli = Cli::try_parse_from(std::iter::once("duet").chain(args.iter().copied()))?;
        let Command::Serve(a) = cli.command else {
            bail!("not serve")
        };
        a.into_options("duet".into())
    }

    #[test]
    fn limits_of_zero_and_a_public_url_that_is_no_url_are_refused() {
        for bad in [
            &["serve", "--max-sessions", "0"][..],
            &["serve", "--max-clients", "0"],
            &["serve", "--public-url", "notaurl"],
            &["serve", "--public-url", "https://"],
            &["serve", "--public-url", "ftp://duet.example.com"],
        ] {
            assert!(serve(bad).is_err(), "{bad:?}");
        }
        assert!(serve(&["serve", "--public-url", "https://duet.example.com/"]).is_ok());
    }

    #[test]
    fn the_start_url_of_an_ipv6_listener_has_brackets() {
        let url = |a: &str| local_base_url(a.parse().unwrap());
        assert_eq!(url("[::1]:8080"), "http://[::1]:8080");
        assert_eq!(url("127.0.0.1:80"), "http://127.0.0.1:80");
        assert_eq!(url("0.0.0.0:80"), "http://127.0.0.1:80");
        assert_eq!(url("[::]:80"), "http://127.0.0.1:80");
    }

    #[test]
    fn secure_defaults() {
        let (addr, opts) = serve(&["serve"]).unwrap();
        assert!(addr.ip().is_loopback());
        assert!(opts.token.as_ref().is_some_and(|t| t.len() == 64));
        assert!(serve(&["serve", "--listen", "0.0.0.0:80"]).is_err());
        assert!(serve(&["serve", "--listen", "0.0.0.0:80", "--behind-tls-proxy"]).is_ok());
        assert!(serve(&[
            "serve",
            "--listen",
            "0.0.0.0:80",
            "--behind-tls-proxy",
            "--no-auth"
        ])
        .is_err());
        assert!(serve(&["serve", "--token", "short"]).is_err());
        assert!(serve(&["serve", "--no-auth"]).unwrap().1.token.is_none());
        assert!(serve(&["serve", "--metrics-listen", "127.0.0.1:9100"]).is_ok());
        assert!(serve(&["serve", "--metrics-listen", "0.0.0.0:9100"]).is_err());
        assert!(serve(&[
            "serve",
            "--metrics-listen",
            "0.0.0.0:9100",
            "--behind-tls-proxy"
        ])
        .is_ok());
    }

    #[test]
    fn allowed_hosts() {
        let (_, opts) = serve(&[
            "serve",
            "--allowed-host",
            "a.example,*.b.example",
            "--allowed-host",
            "c.example:8443",
            "--public-url",
            "https://duet.example.com/s/duet-0",
        ])
        .unwrap();
        assert_eq!(
            opts.allowed_hosts,
            [
                "a.example",
                "*.b.example",
                "c.example:8443",
                "duet.example.com"
            ]
        );
        assert!(serve(&["serve", "--allowed-host", "a b"]).is_err());
        assert!(serve(&["serve", "--max-connections", "0"]).is_err());
    }

    #[test]
    fn token_subcommand() {
        let cli =
            Cli::try_parse_from(["duet", "token", "--name", "ci", "--role", "driver"]).unwrap();
        let Command::Token(t) = cli.command else {
            panic!("not token")
        };
        assert_eq!(
            (t.name.as_str(), t.role),
            ("ci", duet_protocol::rest::Role::Driver)
        );
        assert!(Cli::try_parse_from(["duet", "token", "--name", "ci", "--role", "root"]).is_err());
        // [[token]]s need authentication.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        let (_, snippet) =
            crate::config::mint_token("ci", duet_protocol::rest::Role::Viewer).unwrap();
        std::fs::write(
            &path,
            format!("{snippet}\n[[profile]]\nname = \"sh\"\ncommand = \"sh\"\n"),
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let (_, opts) = serve(&["serve", "--config", p]).unwrap();
        assert_eq!(opts.tokens.len(), 1);
        assert!(serve(&["serve", "--config", p, "--no-auth"]).is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("15m").unwrap(), Duration::from_secs(900));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert!(parse_duration("1w").is_err());
    }
}
