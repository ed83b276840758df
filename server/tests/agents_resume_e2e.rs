//! Resume of Qwen Code's dual-output sessions, end to end with real Qwen
//! Code (0.15.10 on Node 20, 0.24.4 on Node 24) against the mock LLM: a
//! conversation is ended (DELETE), resumed (`POST …/resume`), the agent is
//! started with `--resume <its session id>` (the id Qwen put in its
//! `session_start`), and the model's next request carries the earlier
//! conversation with the new prompt; the resumed session's history holds
//! the earlier chat. Needs both versions installed, as `agents_e2e.rs`
//! (`DUET_SKIP_QWEN=1` skips).
//!
//! Run: `cargo nextest run -p duet-server --test agents_resume_e2e`

#[path = "support/agent/mod.rs"]
mod agent;
#[path = "support/mocks/mod.rs"]
mod mocks;
mod support;

use agent::program::{started, Kind};
use agent::qwen::QwenVersion;
use agent::{reply_containing, user_text};
use duet_protocol::rest::{HistoryLine, SessionInfo};
use serde_json::json;

async fn an_ended_session_resumes_with_the_earlier_conversation(version: QwenVersion) {
    let Some(mut run) = started(Kind::Qwen(version)).await else {
        return;
    };
    let earlier = "remember the apples";
    run.client.submit(earlier).await;
    reply_containing(&mut run.client, &run.program.reply_to(earlier)).await;
    let id = run.session.id;
    assert!(run
        .server()
        .delete(&format!("/api/sessions/{id}"))
        .await
        .status()
        .is_success());
    run.client.exited().await;
    let ended = run.server().info(id).await;
    assert!(ended.resumable, "{ended:?}");
    let agent_id = ended
        .agent_session_id
        .clone()
        .expect("Qwen named its session");

    let resp = run
        .server()
        .post_json(&format!("/api/sessions/{id}/resume"), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let resumed: SessionInfo = resp.json().await.unwrap();
    // The agent was started with `--resume <its session id>`.
    let pid = resumed.pid.expect("a running program");
    // The program is started through `setsid` and `env`, so it may still be
    // exec'ing: a process in the middle of execve shows an empty cmdline
    // (its new arguments are not set up yet; seen twice in one CI run under
    // load). Look until the last exec is done.
    let cmdline = || {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        raw.split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<String>>()
    };
    support::within(std::time::Duration::from_secs(10), || async {
        cmdline().iter().any(|a| a == "--resume")
    })
    .await;
    let args = cmdline();
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--resume" && w[1] == agent_id),
        "{args:?}"
    );

    let mut c = run.server().connect(resumed.id, None).await;
    let (_, start) = c.until_event(|e| e["subtype"] == "session_start").await;
    eprintln!("resumed session_start: {start}");
    let now = "what was it";
    c.submit(now).await;
    reply_containing(&mut c, &run.program.reply_to(now)).await;
    let mock = run.program.mock.as_ref().unwrap();
    let last = mock.requests().pop().unwrap().to_string();
    assert!(
        last.contains(earlier) && last.contains(now),
        "the resumed request carries the earlier conversation with the new prompt: {}",
        mock.summary()
    );
    assert_eq!(
        run.server().info(resumed.id).await.agent_session_id,
        Some(agent_id)
    );
    // The chat of the resumed session shows the earlier one above it.
    let history = run
        .server()
        .text(&format!("/api/sessions/{}/history", resumed.id))
        .await;
    let lines: Vec<HistoryLine> = history
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.iter().all(|l| l.session == id));
    assert!(
        lines
            .iter()
            .any(|l| user_text(&l.event).as_deref() == Some(earlier)),
        "{history}"
    );
}

mod qwen_0_15 {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_ended_session_resumes_with_the_earlier_conversation() {
        super::an_ended_session_resumes_with_the_earlier_conversation(super::QwenVersion::V0_15)
            .await
    }
}

mod qwen_0_24 {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_ended_session_resumes_with_the_earlier_conversation() {
        super::an_ended_session_resumes_with_the_earlier_conversation(super::QwenVersion::V0_24)
            .await
    }
}
