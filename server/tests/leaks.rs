//! Sessions are freed, whatever their channel: for every kind of side
//! channel, 200 sessions (40 of the heavier Gemini and Codex stand-ins)
//! are started (each waits for its agent's
//! handshake, every tenth answers a prompt) and purged, or ended and left
//! to their retention; afterwards no session is left in memory
//! (`duet_sessions_in_memory`) and the process has the descriptors it had
//! before (the Gemini channel's fake agent runs its hooks as Gemini CLI
//! does; the Codex channel's runs an app server and a TUI attached to it,
//! as Codex does). The Claude, stream-json and ACP channels once held their
//! conversation while it held them: each of their sessions kept its
//! files and pipes open after its purge (200 stream-json sessions: 14 →
//! 1,274 descriptors).

mod support;

use std::time::Duration;

use duet_protocol::ids::SessionId;
use duet_server::config::{ChannelKind, Profile};
use support::{eventually, kind, metric, open_fds, within, TestServer, DEADLINE, TOKEN};

/// Sessions started and freed per test.
const SESSIONS: usize = 200;
/// Sessions for the kinds whose stand-in runs two programs per session and
/// one more per hook (Gemini, Codex): a fifth as many show a leak as
/// surely (one descriptor a session is 40), in a fifth of the time.
const HEAVY_SESSIONS: usize = 40;
/// How many at once.
const BATCH: usize = 8;
/// Every this many sessions one answers a prompt.
const PROMPT_EVERY: usize = 10;

fn fixture(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn profile(name: &str, command: &str, args: Vec<String>, channel: ChannelKind) -> Profile {
    Profile {
        extra_args: false,
        name: name.into(),
        description: None,
        command: command.into(),
        args,
        env: Default::default(),
        cwd: None,
        ready_text: None,
        channel: Some(channel),
        resume_args: None,
    }
}

/// The profile of each kind, with the fake agent of the kind.
fn profile_of(kind: ChannelKind) -> Profile {
    let python = |script: &str, extra: &[&str]| {
        let mut args = vec![fixture(script)];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    match kind {
        ChannelKind::DualOutput => {
            let mut p = support::demo_profile("agent", None);
            p.channel = Some(ChannelKind::DualOutput);
            p
        }
        ChannelKind::Claude => profile(
            "agent",
            "python3",
            python("fake_claude.py", &["--settings", "{claude_settings}"]),
            kind,
        ),
        ChannelKind::StreamJson => {
            profile("agent", "python3", python("fake_stream_json.py", &[]), kind)
        }
        ChannelKind::StreamJsonPerTurn => profile(
            "agent",
            "python3",
            python("fake_print_agent.py", &["-p", "{prompt}"]),
            kind,
        ),
        ChannelKind::Acp => profile("agent", "python3", python("fake_acp_agent.py", &[]), kind),
        ChannelKind::Gemini => {
            let mut p = profile("agent", "python3", python("fake_gemini.py", &[]), kind);
            // Its settings come from the user's home: one of the test's own.
            let home = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("leaks-gemini-home");
            std::fs::create_dir_all(&home).unwrap();
            p.env
                .insert("HOME".into(), home.to_string_lossy().into_owned());
            // As the built-in profile: prompts wait for its input box.
            p.ready_text = Some(duet_server::config::GEMINI_READY_TEXT.into());
            p
        }
        // The command itself: the channel runs it again as its app server.
        ChannelKind::Codex => profile(
            "agent",
            &fixture("fake_codex.py"),
            vec!["--remote".into(), "{codex_remote}".into()],
            kind,
        ),
        ChannelKind::None => profile(
            "agent",
            "sh",
            vec!["-c".into(), "echo agent-ready; exec cat".into()],
            kind,
        ),
    }
}

/// What each of the process's descriptors is (for a failure's message:
/// which ones stayed open).
fn fd_targets() -> Vec<String> {
    let mut targets: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .map(|e| match std::fs::read_link(e.path()) {
            Ok(t) => format!("{}={}", e.file_name().to_string_lossy(), t.display()),
            Err(_) => e.file_name().to_string_lossy().into_owned(),
        })
        .collect();
    targets.sort();
    targets
}

/// A client that keeps no connection between requests: the test's own
/// sockets must not count as the server's.
fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

/// One session's life: started, seen alive (its handshake, or its
/// terminal's first line), maybe a prompt answered, then let go.
async fn live_one(
    server: &TestServer,
    http: &reqwest::Client,
    kind_: ChannelKind,
    n: usize,
    purge: bool,
) {
    let resp = http
        .post(server.url("/api/sessions"))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({"profile": "agent", "cols": 80, "rows": 24}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
    let id: SessionId = resp
        .json::<duet_protocol::rest::SessionInfo>()
        .await
        .unwrap()
        .id;
    let mut c = server.connect(id, None).await;
    if kind_ == ChannelKind::None {
        c.until_screen("agent-ready").await;
    } else {
        c.until_event(|e| e["subtype"] == "session_start").await;
    }
    if n.is_multiple_of(PROMPT_EVERY) {
        if kind_ == ChannelKind::None {
            c.keys(b"typed-back\r").await;
            c.until_screen("typed-back").await;
        } else {
            c.submit("hello there").await;
            // The demo agent's turn ends with its assistant message.
            let last = match kind_ {
                ChannelKind::DualOutput => "assistant",
                _ => "result",
            };
            c.until_event(|e| kind(e) == last).await;
        }
    }
    drop(c);
    let query = if purge { "?purge=true" } else { "" };
    let resp = http
        .delete(server.url(&format!("/api/sessions/{id}{query}")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "DELETE: {}", resp.status());
}

async fn in_memory(server: &TestServer, http: &reqwest::Client) -> f64 {
    let text = http
        .get(server.url("/metrics"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    metric(&text, "duet_sessions_in_memory")
}

/// Starts and lets go of [`SESSIONS`] (or [`HEAVY_SESSIONS`]) sessions of
/// `kind_`, purged or left to a short retention, and checks that nothing
/// of them stays.
async fn churn(kind_: ChannelKind, purge: bool) {
    let server = TestServer::start_with(|o| {
        let profiles = duet_server::config::Profiles::from_config(
            duet_server::config::ConfigFile {
                default_profile: None,
                profiles: vec![profile_of(kind_)],
                tokens: Vec::new(),
                ..Default::default()
            },
            env!("CARGO_BIN_EXE_duet").into(),
        )
        .unwrap();
        o.profiles = profiles;
        // Ended sessions are forgotten at once (the retention path).
        o.retain = Duration::from_millis(1);
        o.max_sessions = 2 * BATCH;
    })
    .await;
    let http = http();
    // One session first: whatever the server makes once (its watcher,
    // the audit file) is there before the count starts.
    live_one(&server, &http, kind_, 1, true).await;
    eventually("the first session is freed", || async {
        in_memory(&server, &http).await == 0.0
    })
    .await;
    let before = open_fds();

    let sessions = match kind_ {
        ChannelKind::Gemini | ChannelKind::Codex => HEAVY_SESSIONS,
        _ => SESSIONS,
    };
    for batch in 0..sessions / BATCH {
        let runs = (0..BATCH).map(|i| live_one(&server, &http, kind_, batch * BATCH + i, purge));
        futures_util::future::join_all(runs).await;
    }

    let freed = within(DEADLINE, || async {
        in_memory(&server, &http).await == 0.0 && open_fds() <= before
    })
    .await;
    let left = in_memory(&server, &http).await;
    let fds = open_fds();
    assert!(
        freed,
        "{kind_:?} (purge {purge}): {left} sessions still in memory, {fds} descriptors open (before: {before}): {}",
        fd_targets().join(", ")
    );
    let listed: Vec<duet_protocol::rest::SessionInfo> =
        support::fetch::json(http.get(server.url("/api/sessions")).bearer_auth(TOKEN)).await;
    assert!(listed.is_empty(), "sessions still listed: {}", listed.len());
}

macro_rules! kinds {
    ($($name:ident: $kind:expr),* $(,)?) => {
        mod purged {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    churn($kind, true).await;
                }
            )*
        }
        mod expired {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    churn($kind, false).await;
                }
            )*
        }
    };
}

kinds! {
    dual_output: ChannelKind::DualOutput,
    claude: ChannelKind::Claude,
    gemini: ChannelKind::Gemini,
    codex: ChannelKind::Codex,
    stream_json: ChannelKind::StreamJson,
    stream_json_per_turn: ChannelKind::StreamJsonPerTurn,
    acp: ChannelKind::Acp,
    none: ChannelKind::None,
}
