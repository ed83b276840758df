//! Prompts held while the agent is busy are never lost: they are kept in
//! the session directory until the agent takes them; when the program
//! ends first, or duet is killed, they are shown as unsent, text and all,
//! until a client discards them; and a session that resumes the ended one
//! offers them again without sending them by itself. Every client of the
//! session sees the prompts held for the agent, whichever client sent them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

mod support;

use duet_protocol::rest::SessionInfo;
use duet_protocol::ws::{ClientMessage, HeldPrompt, ServerMessage};
use serde_json::json;
use support::killable::Duet;
use support::{kind, share_secret, Client, TestServer};

fn prompt(n: u64, text: &str) -> HeldPrompt {
    HeldPrompt {
        n,
        text: text.into(),
    }
}

/// The prompts kept in session directory `dir`.
fn kept(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("held.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<HeldPrompt>(l).unwrap().text)
        .collect()
}

fn hello_unsent(c: &Client) -> Vec<HeldPrompt> {
    match &c.texts[0] {
        ServerMessage::Hello(h) => h.unsent.clone(),
        other => panic!("expected hello, got {other:?}"),
    }
}

fn hello_held(c: &Client) -> Vec<HeldPrompt> {
    match &c.texts[0] {
        ServerMessage::Hello(h) => h.held.clone(),
        other => panic!("expected hello, got {other:?}"),
    }
}

/// Makes the agent busy (a tool waits for approval), then sends `texts`,
/// which are held.
async fn hold(c: &mut Client, texts: &[&str]) {
    c.submit("tool sleep 600").await;
    c.pending_approval().await;
    for text in texts {
        let ack = c.submit(text).await;
        assert!(
            matches!(ack, ServerMessage::Ack { queued: true, .. }),
            "{ack:?}"
        );
    }
}

async fn discard(c: &mut Client, n: u64) {
    c.send(&ClientMessage::Discard {
        prompt: n,
        id: Some("d1".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Ack { id, .. } if id == "d1"))
        .await;
}

/// Waits for an `unsent` message with unsent prompts `want` (earlier ones
/// told of held prompts too).
async fn until_unsent(c: &mut Client, want: &[HeldPrompt]) {
    c.until(|m| matches!(m, ServerMessage::Unsent { prompts, .. } if prompts == want))
        .await;
}

/// Waits for an `unsent` message with held prompts `want`.
async fn until_held(c: &mut Client, want: &[HeldPrompt]) {
    c.until(|m| matches!(m, ServerMessage::Unsent { held, .. } if held == want))
        .await;
}

/// A session of the fake TUI with `texts` held, its directory and a client.
async fn session_holding(texts: &[&str]) -> (TestServer, SessionInfo, PathBuf, Client) {
    let server = TestServer::start().await;
    let info = server.create("fake").await;
    let dir = server
        .state_dir
        .path()
        .join("state")
        .join(info.id.to_string());
    let mut c = server.connect(info.id, None).await;
    hold(&mut c, texts).await;
    (server, info, dir, c)
}

#[tokio::test]
async fn a_held_prompt_is_kept_on_disk_until_the_agent_takes_it() {
    let (server, info, dir, mut c) = session_holding(&["held one"]).await;
    assert_eq!(kept(&dir), ["held one"]);
    let mode = std::fs::metadata(dir.join("held.jsonl"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o777,
        0o600,
        "owner-only: it holds what the user typed"
    );
    // The tool is allowed in the terminal: the turn ends, the prompt goes.
    c.keys(b"y").await;
    c.until_event(|e| kind(e) == "user" && e.to_string().contains("held one"))
        .await;
    assert!(!dir.join("held.jsonl").exists());
    assert!(hello_unsent(&server.connect(info.id, None).await).is_empty());
}

#[tokio::test]
async fn every_client_sees_the_held_prompts_until_the_agent_takes_them() {
    let server = TestServer::start().await;
    let info = server.create("fake").await;
    let mut sender = server.connect(info.id, None).await;
    // Another tab, there all along, and a viewer: anyone who reads the
    // session sees what waits.
    let mut other = server.connect(info.id, None).await;
    let share: duet_protocol::rest::Share = server
        .post_json(
            &format!("/api/sessions/{}/shares", info.id),
            json!({"role": "viewer", "expires_in": 600}),
        )
        .await
        .json()
        .await
        .unwrap();
    let mut viewer = server
        .connect_as(info.id, None, &share_secret(&share))
        .await;
    assert!(hello_held(&other).is_empty());
    hold(&mut sender, &["held one", "held two"]).await;
    let both = [prompt(2, "held one"), prompt(3, "held two")];
    // Told as each prompt is held.
    until_held(&mut other, &both[..1]).await;
    until_held(&mut other, &both).await;
    until_held(&mut viewer, &both).await;
    // A tab opened now (or reloaded) is told in its hello.
    let mut later = server.connect(info.id, None).await;
    assert_eq!(hello_held(&later), both);
    assert!(hello_unsent(&later).is_empty());
    // The tool is allowed in the terminal: the turn ends and the first goes
    // to the agent, then, after its turn, the second; every tab sees each
    // leave the list.
    sender.keys(b"y").await;
    for c in [&mut other, &mut later, &mut viewer] {
        until_held(c, &both[1..]).await;
        until_held(c, &[]).await;
        c.until_event(|e| kind(e) == "user" && e.to_string().contains("held two"))
            .await;
    }
    assert!(hello_held(&server.connect(info.id, None).await).is_empty());
}

#[tokio::test]
async fn prompts_held_when_the_program_ends_stay_as_unsent_until_discarded() {
    let (server, info, dir, mut c) = session_holding(&["held one", "held two"]).await;
    server.delete(&format!("/api/sessions/{}", info.id)).await;
    // Told before the exit, with their text (numbered after the first
    // prompt, which was written).
    let want = vec![prompt(2, "held one"), prompt(3, "held two")];
    c.until(|m| matches!(m, ServerMessage::Unsent { prompts, held } if prompts == &want && held.is_empty()))
        .await;
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    assert_eq!(kept(&dir), ["held one", "held two"]);
    // A client that comes later is told in its hello.
    let mut later = server.connect(info.id, None).await;
    assert_eq!(hello_unsent(&later), want);
    // One client lets go of one; every client hears it, the file follows.
    discard(&mut later, 2).await;
    until_unsent(&mut c, &[prompt(3, "held two")]).await;
    assert_eq!(kept(&dir), ["held two"]);
    // Discarded already (by another tab): still acked, nothing changes.
    discard(&mut later, 2).await;
    discard(&mut c, 3).await;
    assert!(!dir.join("held.jsonl").exists());
    let audit = server
        .text(&format!("/api/sessions/{}/audit", info.id))
        .await;
    assert_eq!(audit.matches("\"kind\":\"discard\"").count(), 2, "{audit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_held_when_duet_is_killed_are_shown_after_the_restart_and_offered_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = tmp.path().join("duet.toml");
    // The fake TUI, resumable: its handshake names its conversation.
    let args = format!(
        "[\"{}\", \"--json-file\", \"{{events_file}}\", \"--input-file\", \"{{input_file}}\"]",
        support::fake_tui()
    );
    std::fs::write(
        &config,
        format!(
            "[[profile]]\nname = \"fake\"\ncommand = \"python3\"\nargs = {args}\nresume_args = {args}\n"
        ),
    )
    .unwrap();
    let first = Duet::start(&state, &config);
    let info = first.create().await;
    let mut c = first.ws(info.id).await;
    hold(&mut c, &["held one", "held two"]).await;
    drop(c);
    first.kill();

    let second = Duet::start(&state, &config);
    let recovered = second.ws(info.id).await;
    assert_eq!(
        hello_unsent(&recovered),
        [prompt(2, "held one"), prompt(3, "held two")]
    );

    // The resumed session offers them, numbered as its own...
    let req = second
        .http
        .post(format!("{}/api/sessions/{}/resume", second.url, info.id));
    let resumed: SessionInfo = second.send(req).await.json().await.unwrap();
    let mut r = second.ws(resumed.id).await;
    assert_eq!(
        hello_unsent(&r),
        [prompt(1, "held one"), prompt(2, "held two")]
    );
    assert_eq!(
        kept(&state.join(resumed.id.to_string())),
        ["held one", "held two"]
    );
    // ...and does not send them: a prompt sent now is the first the agent
    // gets (delivery is in order).
    r.submit("hello again").await;
    let (_, first_prompt) = r
        .until_event(|e| kind(e) == "user" && !e.to_string().contains("tool_result"))
        .await;
    assert!(
        first_prompt.to_string().contains("hello again"),
        "{first_prompt}"
    );
    discard(&mut r, 1).await;
    until_unsent(&mut r, &[prompt(2, "held two")]).await;
    // The ended session keeps its own record.
    assert_eq!(
        kept(&state.join(info.id.to_string())),
        ["held one", "held two"]
    );
    drop((recovered, r));
    second.kill();
}
