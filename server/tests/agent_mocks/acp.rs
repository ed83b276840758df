//! Gemini CLI 0.61.0 (`gemini --acp`) and Codex through codex-acp 2.6.0,
//! driven by duet's ACP channel as it is today (`channel = "acp"`, no
//! change to duet), against the mocks: the handshake, a prompt answered in
//! the chat, and a shell call approved in the browser with the agent's own
//! option. What these runs showed about duet's client is in
//! docs/gemini-cli.md §5 and docs/codex.md §5.

use std::collections::BTreeMap;
use std::path::Path;

use duet_protocol::rest::{ApprovalOptionKind, ApprovalState};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::{ChannelKind, Profile};
use serde_json::Value;

use super::real::{codex_config, gemini_settings, installed};
use crate::mocks::gemini::MockGemini;
use crate::mocks::openai_responses::MockResponses;
use crate::mocks::{reply_to, AFTER_TOOL, TOOL_FILE, TOOL_TRIGGER};
use crate::support::{assistant_text, kind, Client, TestServer};

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
    }
}

/// One session of `profile` behind a test server, a client attached and
/// the agent's `session_start` received.
async fn start(profile: Profile) -> (TestServer, Client, Value) {
    let name = profile.name.clone();
    let server = TestServer::with_profiles(vec![profile]).await;
    let session = server.create(&name).await;
    let mut client = server.connect(session.id, None).await;
    let (_, start) = client
        .until_event(|e| e["subtype"] == "session_start")
        .await;
    (server, client, start)
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
    let allow = a
        .options
        .iter()
        .find(|o| o.kind == ApprovalOptionKind::AllowOnce)
        .unwrap_or_else(|| panic!("no allow-once option: {options:?}"))
        .id
        .clone();
    client
        .send(&ClientMessage::Approve {
            request_id: a.request_id.clone(),
            allowed: None,
            option: Some(allow),
            id: None,
        })
        .await;
    let settled = client
        .until(|m| matches!(m, ServerMessage::Approval(s) if s.request_id == a.request_id && s.state != ApprovalState::Pending))
        .await;
    assert!(matches!(settled, ServerMessage::Approval(s) if s.state == ApprovalState::Allowed));
    client
        .until_event(|e| assistant_text(e).contains(AFTER_TOOL))
        .await;
    client.until_event(|e| kind(e) == "result").await;
    assert!(work.join(TOOL_FILE).exists());
    options
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_over_acp_answers_and_asks_with_its_own_options() {
    let Some(gemini) = installed(
        "gemini-cli-0.61.0/node_modules/.bin/gemini",
        "DUET_SKIP_GEMINI",
        "scripts/install-gemini.sh",
    ) else {
        return;
    };
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    gemini_settings(home.path());
    let mock = MockGemini::start().await;
    let env = [
        ("HOME", home.path().to_string_lossy().into_owned()),
        ("GOOGLE_GEMINI_BASE_URL", mock.base_url.clone()),
        ("GEMINI_API_KEY", "mock-key".into()),
        ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
    ];
    let env = env.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let profile = acp_profile("gemini-acp", &gemini, &["--acp"], work.path(), env);
    let (_server, mut client, start) = start(profile).await;
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
    let Some(adapter) = installed(
        "codex-0.171.0/node_modules/.bin/codex-acp",
        "DUET_SKIP_CODEX",
        "scripts/install-codex.sh",
    ) else {
        return;
    };
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockResponses::start().await;
    let codex_home = home.path().join(".codex");
    codex_config(&codex_home, &mock.base_url);
    let env = [
        ("HOME", home.path().to_string_lossy().into_owned()),
        ("CODEX_HOME", codex_home.to_string_lossy().into_owned()),
        ("MOCK_API_KEY", "mock-key".into()),
        // The adapter's default mode, "agent" (Auto review), asks a model
        // to approve instead of the user.
        ("INITIAL_AGENT_MODE", "workspace-write".into()),
    ];
    let env = env.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let profile = acp_profile("codex-acp", &adapter, &[], work.path(), env);
    let (_server, mut client, start) = start(profile).await;
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
