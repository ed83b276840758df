//! Gemini CLI 0.61.0 (`gemini --acp`) and Codex through codex-acp 2.6.0,
//! driven by duet's ACP channel as it is today (`channel = "acp"`, no
//! change to duet), against the mocks: the handshake, a prompt answered in
//! the chat, and a shell call approved in the browser with the agent's own
//! option, worded as the agent words it. What these runs showed about
//! duet's client is in docs/gemini-cli.md §5 and docs/codex.md §6. One
//! session each.

use std::collections::BTreeMap;
use std::path::Path;

use duet_protocol::rest::{ApprovalOptionKind, ApprovalState};
use duet_server::config::{ChannelKind, Profile};

use crate::mocks::gemini::{write_settings, MockGemini};
use crate::mocks::openai_responses::MockResponses;
use crate::mocks::{reply_to, AFTER_TOOL, TOOL_FILE, TOOL_TRIGGER};
use crate::support::installed::{codex_acp, gemini};
use crate::support::{assistant_text, kind, one_session, Client};

/// An ACP profile running `command args` in `cwd` with `env`.
fn acp_profile(
    name: &str,
    command: &Path,
    args: &[&str],
    cwd: &Path,
    env: BTreeMap<String, String>,
) -> Profile {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    Profile {
        name: name.into(),
        description: None,
        command: command.to_string_lossy().into_owned(),
        args: args.clone(),
        env,
        cwd: Some(cwd.to_string_lossy().into_owned()),
        ready_text: None,
        channel: Some(ChannelKind::Acp),
        resume_args: Some(args),
        extra_args: false,
    }
}

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
    let Some(gemini) = gemini() else {
        return;
    };
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_settings(home.path());
    let mock = MockGemini::start().await;
    let env = mock.env(home.path()).into_iter().collect();
    let profile = acp_profile("gemini-acp", &gemini, &["--acp"], work.path(), env);
    let (_server, _, mut client, start) = one_session(profile).await;
    eprintln!("session_start: {start}");
    assert_eq!(start["data"]["agent"]["name"], "gemini-cli", "{start}");
    assert_eq!(
        start["data"]["modes"]["currentModeId"], "default",
        "{start}"
    );
    let options = prompt_and_approved_call(&mut client, work.path()).await;
    let labels: Vec<&str> = options.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["Allow for this session", "Allow", "Reject"],
        "{}",
        mock.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_over_codex_acp_answers_and_asks_with_its_own_options() {
    let Some(adapter) = codex_acp() else {
        return;
    };
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockResponses::start().await;
    let mut env: BTreeMap<String, String> = mock.env(home.path()).into_iter().collect();
    // The adapter's default mode, "agent" (Auto review), asks a model to
    // approve instead of the user (the built-in profile sets it too).
    env.insert("INITIAL_AGENT_MODE".into(), "workspace-write".into());
    let profile = acp_profile("codex-acp", &adapter, &[], work.path(), env);
    let (_server, _, mut client, start) = one_session(profile).await;
    eprintln!("session_start: {start}");
    assert_eq!(
        start["data"]["agent"]["name"], "@agentclientprotocol/codex-acp",
        "{start}"
    );
    assert_eq!(
        start["data"]["modes"]["currentModeId"], "workspace-write",
        "{start}"
    );
    let options = prompt_and_approved_call(&mut client, work.path()).await;
    let labels: Vec<&str> = options.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels[0], "Yes, proceed", "{}", mock.summary());
    assert_eq!(labels[2], "No, and tell Codex what to do differently");
}
