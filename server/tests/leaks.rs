//! Sessions are freed, whatever their channel: for every kind of side
//! channel, 200 sessions are started (each waits for its agent's
//! handshake, every tenth answers a prompt) and purged, or ended and left
//! to their retention; afterwards no session is left in memory
//! (`duet_sessions_in_memory`) and the process has the descriptors it had
//! before (the Gemini channel's fake agent runs its hooks as Gemini CLI
//! does). The Claude, stream-json and ACP channels once held their
//! conversation while it held them: each of their sessions kept its
//! files and pipes open after its purge (200 stream-json sessions: 14 →
//! 1,274 descriptors).

mod support;

use std::time::Duration;

use duet_protocol::ids::SessionId;
use duet_server::config::{ChannelKind, Profile};
use support::{kind, TestServer, DEADLINE, TOKEN};

/// Sessions started and freed per test.
const SESSIONS: usize = 200;
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
        ChannelKind::None => profile(
            "agent",
            "sh",
            vec!["-c".into(), "echo agent-ready; exec cat".into()],
            kind,
        ),
    }
}

/// Descriptors this process has open.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
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

fn gauge(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no series {series} in\n{text}"))
        .trim()
        .parse()
        .unwrap()
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
    gauge(&text, "duet_sessions_in_memory")
}

/// Starts and lets go of [`SESSIONS`] sessions of `kind_`, purged or left
/// to a short retention, and checks that nothing of them stays.
async fn churn(kind_: ChannelKind, purge: bool) {
    let server = TestServer::start_with(|o| {
        let profiles = duet_server::config::Profiles::from_config(
            duet_server::config::ConfigFile {
                default_profile: None,
                profiles: vec![profile_of(kind_)],
                tokens: Vec::new(),
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
    wait_until(|| async { in_memory(&server, &http).await == 0.0 }).await;
    let before = open_fds();

    for batch in 0..SESSIONS / BATCH {
        let runs = (0..BATCH).map(|i| live_one(&server, &http, kind_, batch * BATCH + i, purge));
        futures_util::future::join_all(runs).await;
    }

    let freed = tokio::time::timeout(DEADLINE, async {
        loop {
            if in_memory(&server, &http).await == 0.0 && open_fds() <= before {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let left = in_memory(&server, &http).await;
    let fds = open_fds();
    assert!(
        freed.is_ok(),
        "{kind_:?} (purge {purge}): {left} sessions still in memory, {fds} descriptors open (before: {before})"
    );
    let listed: Vec<duet_protocol::rest::SessionInfo> =
        support::fetch::json(http.get(server.url("/api/sessions")).bearer_auth(TOKEN)).await;
    assert!(listed.is_empty(), "sessions still listed: {}", listed.len());
}

/// Polls `check` until it holds (bounded by [`DEADLINE`]).
async fn wait_until<F, Fut>(mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    tokio::time::timeout(DEADLINE, async {
        while !check().await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("in time");
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
    stream_json: ChannelKind::StreamJson,
    stream_json_per_turn: ChannelKind::StreamJsonPerTurn,
    acp: ChannelKind::Acp,
    none: ChannelKind::None,
}
