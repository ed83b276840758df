//! The ACP channel driven directly, without a server: what has no route of
//! its own yet (choosing a model: the browser's picker comes with issue 31
//! point 4), against the scripted agent of the integration tests
//! (`tests/fixtures/fake_acp_agent.py`).

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use super::{Acp, AcpOptions};
use crate::session::channel::conversation::Sink;
use crate::session::channel::log::EventLog;
use crate::session::channel::{Channel, ChannelError, Conversation};
use crate::session::terminal::output::{Output, OutputLimits};

/// Long enough for a loaded machine; it only tells a hang from an answer.
const DEADLINE: Duration = Duration::from_secs(60);

struct Run {
    _dir: tempfile::TempDir,
    _agent: tokio::process::Child,
    log: Arc<EventLog>,
    acp: Arc<Acp>,
    _conversation: Arc<Conversation>,
    seen: u64,
}

impl Run {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().canonicalize().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_acp_agent.py");
        let mut agent = tokio::process::Command::new("python3")
            .arg(script)
            .current_dir(&work)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let log = Arc::new(EventLog::owned(work.join("events.jsonl"), 1 << 20).unwrap());
        let conversation = Arc::new(Conversation::new(
            log.clone(),
            broadcast::channel(64).0,
            16,
            1 << 20,
        ));
        let acp = Acp::start(
            AcpOptions {
                stdin: agent.stdin.take().unwrap(),
                stdout: agent.stdout.take().unwrap(),
                output: Arc::new(Output::new(80, 24, OutputLimits::default())),
                max_line: 1 << 20,
                work_dir: work.clone(),
                load: None,
                raw_log: work.join("acp.jsonl"),
            },
            Sink::new(&conversation),
        );
        conversation.set_channel(acp.clone());
        Self {
            _dir: dir,
            _agent: agent,
            log,
            acp,
            _conversation: conversation,
            seen: 0,
        }
    }

    /// The next event `want` accepts (earlier ones are passed over).
    async fn until(&mut self, want: impl Fn(&Value) -> bool) -> Value {
        let mut changed = self.log.subscribe();
        tokio::time::timeout(DEADLINE, async {
            loop {
                let (events, _) = self.log.read_after(self.seen, 100);
                for e in events {
                    self.seen = e.seq;
                    let v: Value = serde_json::from_str(e.line.as_str()).unwrap();
                    if want(&v) {
                        return v;
                    }
                }
                changed.changed().await.unwrap();
            }
        })
        .await
        .expect("the event did not come")
    }
}

fn text(e: &Value) -> &str {
    e["message"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The models an agent offers (ACP's `models`) are in the handshake; one
/// of them can be chosen (`session/set_model`), which the chat hears of
/// and the agent works with; one it did not offer is refused before it
/// reaches the agent.
#[tokio::test]
async fn a_model_the_agent_offers_can_be_chosen() {
    let mut run = Run::start().await;
    let start = run.until(|e| e["subtype"] == "session_start").await;
    let offered = &start["data"]["models"]["availableModels"];
    assert_eq!(offered[1]["modelId"], "large", "{start}");

    match run.acp.set_model("huge") {
        Err(ChannelError::Invalid(why)) => assert!(why.contains("small, large"), "{why}"),
        other => panic!("{other:?}"),
    }
    run.acp.set_model("large").unwrap();
    let news = run
        .until(|e| e["subtype"] == "acp_current_model_update")
        .await;
    assert_eq!(news["update"]["currentModelId"], "large");
    run.acp.deliver("model?").unwrap();
    let reply = run.until(|e| text(e).starts_with("model:")).await;
    assert_eq!(text(&reply).trim(), "model: large");
}
