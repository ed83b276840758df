//! Gemini CLI 0.61.0 (`gemini --acp`) and Codex through codex-acp 2.6.0,
//! driven by duet's ACP channel as it is today (`channel = "acp"`, no
//! change to duet), against the mocks: the handshake, a prompt answered in
//! the chat, and a shell call approved in the browser with the agent's own
//! option, worded as the agent words it. What these runs showed about
//! duet's client is in docs/gemini-cli.md §5 and docs/codex.md §6. One
//! session each.

use std::path::Path;

use duet_protocol::rest::{ApprovalOptionKind, ApprovalState};

use crate::agent::{self, Run};
use crate::mocks::{reply_to, AFTER_TOOL, TOOL_FILE, TOOL_TRIGGER};
use crate::support::{assistant_text, kind, Client};

/// A prompt answered; then the scripted shell call, approved with the
/// agent's allow-once option, runs. Prints what the chat showed of it.
async fn prompt_and_approved_call(client: &mut Client, work: &Path) -> Vec<(String, String)> {
    client.submit("hello there").await;
    client
        .until_event(|e| assistant_text(e).contains(&reply_to("hello there")))
        .await;
    client.until_event(|e| kind(e) == "result").await;

    client.submit(TOOL_TRIGGER).await;
    let a = client.pending_approval().await;
    let options: Vec<(String, String)> = a
        .options
        .iter()
        .map(|o| (o.id.clone(), o.label.clone()))
        .collect();
    eprintln!(
        "approval: tool {:?}, input {}, options {options:?}",
        a.tool_name, a.input
    );
    client.choose(&a, ApprovalOptionKind::AllowOnce).await;
    let settled = client.settled(&a.request_id).await;
    assert_eq!(settled.state, ApprovalState::Allowed);
    client
        .until_event(|e| assistant_text(e).contains(AFTER_TOOL))
        .await;
    client.until_event(|e| kind(e) == "result").await;
    assert!(work.join(TOOL_FILE).exists());
    options
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_over_acp_answers_and_asks_with_its_own_options() {
    let Some(setup) = agent::gemini::acp().await else {
        return;
    };
    let mut run = Run::started(setup).await;
    let start = run.session_start();
    eprintln!("session_start: {start}");
    assert_eq!(start["data"]["agent"]["name"], "gemini-cli", "{start}");
    assert_eq!(
        start["data"]["modes"]["currentModeId"], "default",
        "{start}"
    );
    let options = prompt_and_approved_call(&mut run.client, run.program.workspace.path()).await;
    let labels: Vec<&str> = options.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["Allow for this session", "Allow", "Reject"],
        "{}",
        run.program.mock.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_over_codex_acp_answers_and_asks_with_its_own_options() {
    let Some(setup) = agent::codex::acp().await else {
        return;
    };
    let mut run = Run::started(setup).await;
    let start = run.session_start();
    eprintln!("session_start: {start}");
    assert_eq!(
        start["data"]["agent"]["name"], "@agentclientprotocol/codex-acp",
        "{start}"
    );
    assert_eq!(
        start["data"]["modes"]["currentModeId"], "workspace-write",
        "{start}"
    );
    let options = prompt_and_approved_call(&mut run.client, run.program.workspace.path()).await;
    let labels: Vec<&str> = options.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels[0], "Yes, proceed", "{}", run.program.mock.summary());
    assert_eq!(labels[2], "No, and tell Codex what to do differently");
}
