//! The ACP channel (`channel = "acp"`) against a scripted agent
//! (`fixtures/fake_acp_agent.py`, Qwen's shapes): what duet advertises,
//! file reads and writes confined to the work dir (no way out through a
//! dangling symlink, no FIFO that blocks), terminals, "method not
//! found" for what duet does not implement, plans and unknown update kinds passed
//! through, an agent that dies mid-prompt, and resume by `session/load`.
//! Real Qwen Code with `--acp`: `headless_e2e.rs`.

mod support;

use duet_protocol::ids::SessionId;
use duet_protocol::ws::ServerMessage;
use duet_server::config::{ChannelKind, Profile};
use rustix::fs::{FileType, Mode, OFlags};
use serde_json::{json, Value};
use std::path::PathBuf;
use support::{kind, Client, TestServer};
use tempfile::TempDir;

fn profile(cwd: &std::path::Path, env: &[(&str, &str)]) -> Profile {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_acp_agent.py")
        .to_string_lossy()
        .into_owned();
    Profile {
        extra_args: false,
        name: "acp".into(),
        description: None,
        command: "python3".into(),
        args: vec![script.clone()],
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        cwd: Some(cwd.to_string_lossy().into_owned()),
        ready_text: None,
        channel: Some(ChannelKind::Acp),
        // The same command: duet loads the session over ACP.
        resume_args: Some(vec![script]),
    }
}

async fn start() -> (TestServer, Client, SessionId, TempDir) {
    start_with(&[]).await
}

/// [`start`] with the agent's environment.
async fn start_with(env: &[(&str, &str)]) -> (TestServer, Client, SessionId, TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let cwd = workspace.path().canonicalize().unwrap();
    let server = TestServer::with_profiles(vec![profile(&cwd, env)]).await;
    let session = server.create("acp").await;
    assert_eq!(session.channel.kind, "acp");
    let mut c = server.connect(session.id, None).await;
    let (_, start) = c.until_event(|e| e["subtype"] == "session_start").await;
    assert_eq!(start["data"]["agent"]["name"], "fake-acp");
    assert_eq!(start["session_id"], "acp-sess-1");
    // The models it offers are part of the handshake.
    assert_eq!(
        start["data"]["models"]["currentModelId"], "small",
        "{start}"
    );
    (server, c, session.id, workspace)
}

fn text(e: &Value) -> String {
    if kind(e) != "assistant" {
        return String::new();
    }
    e["message"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

async fn reply(c: &mut Client, fragment: &str) -> String {
    text(&c.until_event(|e| text(e).contains(fragment)).await.1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_and_terminals_stay_in_the_work_dir_and_the_rest_is_method_not_found() {
    let (server, mut c, _id, ws) = start().await;
    // duet advertised text files and no terminals (the agent says so on
    // its stderr, which the terminal pane shows).
    c.until_screen(r#"client fs: {"readTextFile": true, "writeTextFile": true} terminal: True"#)
        .await;
    let root = ws.path().canonicalize().unwrap();
    std::fs::write(root.join("in.txt"), "inside").unwrap();
    c.submit(&format!("read {}", root.join("in.txt").display()))
        .await;
    reply(&mut c, "read: inside").await;
    c.until_event(|e| kind(e) == "result").await;

    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "no").unwrap();
    c.submit(&format!("read {}", outside.path().join("secret").display()))
        .await;
    reply(&mut c, "refused:").await;
    std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
    c.submit(&format!("write {}", root.join("out/secret").display()))
        .await;
    let r = reply(&mut c, "refused:").await;
    assert!(r.contains("outside the session's work dir"), "{r}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret")).unwrap(),
        "no"
    );
    c.submit(&format!("write {}", root.join("new.txt").display()))
        .await;
    reply(&mut c, "wrote it").await;
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).unwrap(),
        "written over acp"
    );

    c.submit("unknown").await;
    reply(&mut c, "unknown: -32601").await;

    // Terminals: run in the work dir, output kept and shown in the pane.
    c.submit("terminal").await;
    // stdout and stderr are read apart: either may come first.
    let t = reply(&mut c, "terminal: exit 3 output").await;
    assert!(
        t.contains(r"hi\n") && t.contains(r"err\n") && t.contains("then True"),
        "{t}"
    );
    c.until_screen("$ sh -c echo hi").await;
    c.submit("terminal kill").await;
    reply(&mut c, "killed: SIGKILL").await;
    c.submit("terminal outside").await;
    reply(&mut c, "outside: / is outside the session's work dir").await;

    c.submit("plan").await;
    let (_, plan) = c.until_event(|e| e["subtype"] == "acp_plan").await;
    assert_eq!(plan["update"]["entries"][0]["content"], "look");
    c.until_event(|e| e["subtype"] == "acp_fancy_update").await;
    reply(&mut c, "planned").await;
    server.shutdown().await;
}

/// Issue 27: a write through a dangling symlink created the file it
/// pointed to outside the work dir, and a read of a FIFO pinned a thread of
/// duet's for good (past the session's purge, and so duet's shutdown).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dangling_symlink_or_a_fifo_gets_the_agent_nowhere() {
    let (server, mut c, id, ws) = start().await;
    let root = ws.path().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let pwned = outside.path().join("pwned.txt");
    std::os::unix::fs::symlink(&pwned, root.join("x")).unwrap();
    c.submit(&format!("write {}", root.join("x").display()))
        .await;
    let r = reply(&mut c, "refused:").await;
    assert!(r.contains("leads outside the session's work dir"), "{r}");
    assert!(!pwned.exists());
    c.until_event(|e| kind(e) == "result").await;

    let pipe = root.join("pipe");
    let mode = Mode::from_raw_mode(0o600);
    rustix::fs::mknodat(rustix::fs::CWD, &pipe, FileType::Fifo, mode, 0).unwrap();
    let _release = Release(pipe.clone());
    c.submit(&format!("read {}", pipe.display())).await;
    let r = reply(&mut c, "refused:").await;
    assert!(r.contains("is a FIFO"), "{r}");
    c.until_event(|e| kind(e) == "result").await;
    server.delete(&format!("/api/sessions/{id}")).await;
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    server.shutdown().await;
}

/// Opens a FIFO's writing end and closes it again, so that a reader
/// blocked on it gets EOF: when the test fails on a blocked read, it
/// reports the failure instead of hanging in the runtime's shutdown.
struct Release(PathBuf);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = rustix::fs::open(&self.0, OFlags::WRONLY | OFlags::NONBLOCK, Mode::empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_dies_mid_prompt_ends_the_turn() {
    let (server, mut c, _id, _ws) = start().await;
    c.submit("die").await;
    reply(&mut c, "half a").await;
    let why = match c
        .until(|m| matches!(m, ServerMessage::Warning { code, .. } if code == "agent_exited"))
        .await
    {
        ServerMessage::Warning { message, .. } => message,
        _ => unreachable!(),
    };
    assert!(why.contains("exited before"), "{why}");
    let (_, r) = c.until_event(|e| kind(e) == "result").await;
    assert_eq!(r["is_error"], true);
    match c.until(|m| matches!(m, ServerMessage::Exit(_))).await {
        ServerMessage::Exit(e) => assert_eq!(e.code, Some(5)),
        _ => unreachable!(),
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_loads_the_agents_session() {
    resumed_without_the_replay(&[]).await;
}

/// Gemini CLI replays the conversation after it answers `session/load`:
/// dropped too, until the first prompt (it was shown as new chat).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_after_the_load_answer_is_dropped_too() {
    resumed_without_the_replay(&[("ACP_REPLAY_AFTER_ANSWER", "1")]).await;
}

async fn resumed_without_the_replay(env: &[(&str, &str)]) {
    let (server, mut c, id, _ws) = start_with(env).await;
    c.submit("hello").await;
    reply(&mut c, "Echo: hello").await;
    server.delete(&format!("/api/sessions/{id}")).await;
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    assert_eq!(
        server.info(id).await.agent_session_id.as_deref(),
        Some("acp-sess-1")
    );
    let resp = server
        .post_json(&format!("/api/sessions/{id}/resume"), json!({}))
        .await;
    assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
    let resumed: duet_protocol::rest::SessionInfo = resp.json().await.unwrap();
    let mut c = server.connect(resumed.id, None).await;
    // The agent replays the conversation before it answers session/load;
    // duet drops the replay: the chat shows it from the session's history.
    let (_, start) = c.until_event(|e| e["subtype"] == "session_start").await;
    assert_eq!(start["session_id"], "acp-sess-1");
    c.submit("again").await;
    reply(&mut c, "Echo: again").await;
    let get = |path: String| {
        let req = server.get(&path);
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    let own = get(format!("/api/sessions/{}/events", resumed.id)).await;
    assert!(!own.contains("earlier prompt"), "{own}");
    let history = get(format!("/api/sessions/{}/history", resumed.id)).await;
    assert!(history.contains("Echo: hello"), "{history}");
    server.shutdown().await;
}

/// The modes the agent offered in `session/new` can be chosen over REST:
/// duet sends `session/set_mode`, the agent works in that mode, and the
/// chat hears of the change; a mode it did not offer is a 400 naming the
/// ones it did, and never reaches the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_the_agent_offers_can_be_chosen() {
    let (server, mut c, id, _ws) = start().await;
    let info = server.info(id).await;
    assert_eq!(info.channel.kind, "acp");
    let resp = server
        .post_json(
            &format!("/api/sessions/{id}/mode"),
            serde_json::json!({"mode": "warp"}),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_message");
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("default, plan"), "{msg}");
    // The client's mistake, not an unreachable agent.
    assert!(!msg.contains("could not be reached"), "{msg}");

    let resp = server
        .post_json(
            &format!("/api/sessions/{id}/mode"),
            serde_json::json!({"mode": "plan"}),
        )
        .await;
    assert_eq!(resp.status(), 204);
    let (_, news) = c
        .until_event(|e| e["subtype"] == "acp_current_mode_update")
        .await;
    assert_eq!(news["update"]["currentModeId"], "plan");
    // Clients hear of it as of every agent's modes, and a later one is
    // greeted with them.
    let modes = c
        .until_modes(|m| m.current.as_deref() == Some("plan"))
        .await;
    let ids: Vec<&str> = modes.available.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["default", "plan"]);
    let later = server.connect(id, None).await;
    match &later.texts[0] {
        ServerMessage::Hello(h) => assert_eq!(h.modes.as_ref(), Some(&modes)),
        other => panic!("{other:?}"),
    }
    c.submit("mode?").await;
    assert!(reply(&mut c, "mode:").await.contains("mode: plan"));
}

/// The models the agent offered can be chosen over REST as its modes can:
/// `session/set_model` goes out, the agent answers with that model, and the
/// chat hears of it; a model it did not offer is a 400 naming those it did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_the_agent_offers_can_be_chosen() {
    let (server, mut c, id, _ws) = start().await;
    let path = format!("/api/sessions/{id}/model");
    let resp = server
        .post_json(&path, serde_json::json!({"model": "huge"}))
        .await;
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("small, large"), "{msg}");

    let resp = server
        .post_json(&path, serde_json::json!({"model": "large"}))
        .await;
    assert_eq!(resp.status(), 204);
    let (_, news) = c
        .until_event(|e| e["subtype"] == "acp_current_model_update")
        .await;
    assert_eq!(news["update"]["currentModelId"], "large");
    c.submit("model?").await;
    assert!(reply(&mut c, "model:").await.contains("model: large"));
}
