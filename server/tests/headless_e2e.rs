//! Real agents headless through duet, on pipes, against the mock model
//! APIs served here:
//!
//! - `qwen_0_24` (`channel = "stream_json"`): Qwen Code 0.24.4 with
//!   `--input-format stream-json --output-format stream-json
//!   --include-partial-messages` (the `initialize` duet sends first is what
//!   makes it ask for tool permission over the control channel) answers a
//!   prompt with a streamed reply, runs a tool approved from the browser,
//!   does not run one denied, and ends a turn interrupted mid-approval;
//! - `claude_2_1` (`stream_json`): Claude Code 2.1.330 in its SDK mode
//!   (`-p`, `--permission-prompt-tool stdio`), the same;
//! - `qwen_0_24_acp` (`channel = "acp"`): Qwen Code 0.24.4 with `--acp`,
//!   duet its ACP client: the same, with Qwen's own permission options.
//!
//! Needs Qwen Code 0.24.4 and Node 24 under `DUET_CACHE_DIR` (default
//! `<repo>/.cache`; `scripts/install-qwen.sh 0.24.4`). Without them these
//! fail, unless `DUET_SKIP_QWEN=1`.

#[path = "support/agent/mod.rs"]
mod agent;
#[path = "support/mocks/mod.rs"]
mod mocks;
mod support;

use agent::{qwen, Run, Setup};
use duet_protocol::rest::{ApprovalState, Decider};
use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use duet_server::config::ChannelKind;
use mocks::chat_completions::MockLlm;
use mocks::{reply_to, TOOL_COMMAND, TOOL_TRIGGER};

/// Qwen Code 0.24 on stream-json, started and through its handshake.
async fn qwen_stream_json() -> Option<Run<Setup<MockLlm>>> {
    let args = [
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--include-partial-messages",
    ];
    let setup = qwen::headless(ChannelKind::StreamJson, &args).await?;
    Some(Run::started(setup).await)
}

/// Qwen Code 0.24 over ACP, asking before it runs tools.
async fn qwen_acp() -> Option<Run<Setup<MockLlm>>> {
    let args = ["--acp", "--approval-mode", "default"];
    let setup = qwen::headless(ChannelKind::Acp, &args).await?;
    Some(Run::started(setup).await)
}

mod qwen_0_24 {
    use super::*;

    /// A prompt, a streamed reply; a tool approved in the browser runs,
    /// one denied does not, and the prompt after it is answered; keys are
    /// refused; DELETE ends Qwen.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn prompt_reply_and_tools_approved_and_denied_over_the_control_channel() {
        let Some(mut run) = qwen_stream_json().await else {
            return;
        };
        run.streamed("hello there").await;

        // Allowed from the browser.
        run.client.submit(TOOL_TRIGGER).await;
        let a = run.client.pending_approval().await;
        assert_eq!(a.tool_name, "run_shell_command");
        assert_eq!(a.input["command"], TOOL_COMMAND);
        run.decide(&a.request_id, true).await;
        let done = run.decided(&a.request_id).await;
        assert_eq!(done.state, ApprovalState::Allowed);
        assert_eq!(done.decided_by, Some(Decider::Client));
        run.tool_ran().await;
        std::fs::remove_file(run.tool_file()).unwrap();

        // Denied from the browser: the tool does not run.
        run.client.submit(&format!("{TOOL_TRIGGER} again")).await;
        let a = run.client.pending_approval().await;
        run.denied(&a).await;

        // No terminal to type into.
        run.client.keys(b"x").await;
        match run
            .client
            .until(|m| matches!(m, ServerMessage::Error { .. }))
            .await
        {
            ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::BadMessage),
            _ => unreachable!(),
        }
        run.delete().await;
    }

    /// An interrupt while Qwen waits for an approval ends the turn (the card
    /// is abandoned, Qwen writes its `result`), and the next prompt is
    /// answered.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_interrupt_mid_turn_ends_the_turn() {
        let Some(mut run) = qwen_stream_json().await else {
            return;
        };
        run.cancelled_while_asked().await;
    }
}

mod claude_2_1 {
    use super::*;

    /// Claude Code in its SDK mode (`-p`, stream-json both ways, tool
    /// permission asked over stdio): a prompt is answered, a Bash call
    /// approved from the browser runs, one denied does not.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn prompt_reply_and_tools_approved_and_denied_over_the_control_channel() {
        let Some(setup) = agent::claude::headless().await else {
            return;
        };
        let mut run = Run::started(setup).await;
        eprintln!("claude session_start: {}", run.session_start());
        run.client.submit("hello there").await;
        run.reply(&reply_to("hello there")).await;
        run.result().await;

        run.client.submit(TOOL_TRIGGER).await;
        let a = run.client.pending_approval().await;
        assert_eq!(a.tool_name, "Bash");
        run.decide(&a.request_id, true).await;
        run.tool_ran().await;
        std::fs::remove_file(run.tool_file()).unwrap();

        run.client.submit(&format!("{TOOL_TRIGGER} again")).await;
        let a = run.client.pending_approval().await;
        run.decide(&a.request_id, false).await;
        let r = run.result().await;
        eprintln!("claude result after a denial: {r}");
        assert!(!run.tool_file().exists());
        // Its conversation id (for resume) comes from its `system/init`.
        let info = run.server().info(run.id()).await;
        assert!(info.agent_session_id.is_some(), "{info:?}");

        // Interrupted while it waits for an approval: the card is
        // abandoned and the turn ends.
        run.client
            .submit(&format!("{TOOL_TRIGGER} once more"))
            .await;
        let a = run.client.pending_approval().await;
        run.client.send(&ClientMessage::Cancel { id: None }).await;
        run.client
            .until(|m| {
                matches!(m, ServerMessage::Approval(x)
                    if x.request_id == a.request_id && x.state == ApprovalState::Abandoned)
            })
            .await;
        let r = run.result().await;
        eprintln!("claude result after an interrupt: {r}");
        assert!(!run.tool_file().exists());
        run.client.submit("after the interrupt").await;
        run.reply(&reply_to("after the interrupt")).await;
        run.finish().await;
    }
}

#[path = "headless_e2e/qwen_acp.rs"]
mod qwen_0_24_acp;

#[path = "headless_e2e/qwen_resume.rs"]
mod qwen_0_24_resume;

#[path = "headless_e2e/claude_resume.rs"]
mod claude_2_1_resume;
#[path = "support/agent/turns.rs"]
mod scenarios;
