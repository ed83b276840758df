//! What a session tells a person about itself: its name from its first
//! prompt (an owner's name wins), who ended it (an End is no crash), which
//! session resumed it, and which device each client is. Each survives what
//! it must: the prompt's name, the owner's name and the resumption a
//! restart of duet over the same state directory.

mod support;

use std::path::Path;

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{Role, SessionInfo};
use duet_protocol::ws::ServerMessage;
use duet_server::config::ConfigFile;
use serde_json::json;
use support::{kind, Client, TestServer, TOKEN};

/// A server of the resumable stream-json fake over `state` (kept by the
/// test, so a second server can start over it).
async fn server_over(state: &Path) -> TestServer {
    let profiles = duet_server::config::Profiles::from_config(
        ConfigFile {
            default_profile: None,
            profiles: vec![support::servers::resumable_profile()],
            tokens: Vec::new(),
            ..Default::default()
        },
        env!("CARGO_BIN_EXE_duet").into(),
    )
    .unwrap();
    let state = state.to_path_buf();
    TestServer::start_with(move |o| {
        o.profiles = profiles;
        o.state_dir = state;
    })
    .await
}

/// Attaches and waits for the agent's handshake.
async fn ready(server: &TestServer, id: SessionId) -> Client {
    let mut c = server.connect(id, None).await;
    c.until_event(|e| e["subtype"] == "session_start").await;
    c
}

async fn ask(c: &mut Client, prompt: &str) {
    c.submit(prompt).await;
    c.until_event(|e| kind(e) == "result").await;
}

async fn end(server: &TestServer, c: &mut Client, id: SessionId) -> SessionInfo {
    let resp = server.delete(&format!("/api/sessions/{id}")).await;
    assert_eq!(resp.status(), 200);
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    resp.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_named_by_its_first_prompt_an_owners_name_wins_and_both_outlive_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let server = server_over(&state).await;
    let s = server.create("fake").await;
    assert_eq!(s.prompt_name, None);
    let mut c = ready(&server, s.id).await;
    // A slash command names nothing; the first real prompt does, by its first line.
    ask(&mut c, "/help").await;
    assert_eq!(server.info(s.id).await.prompt_name, None);
    ask(&mut c, "  Fix the   login bug\nand then the tests").await;
    assert_eq!(
        server.info(s.id).await.prompt_name.as_deref(),
        Some("Fix the login bug")
    );
    // Only the first.
    ask(&mut c, "something else entirely").await;
    assert_eq!(
        server.info(s.id).await.prompt_name.as_deref(),
        Some("Fix the login bug")
    );
    // The owner's name is a name of its own: the prompt never overwrites it.
    let resp = server
        .http
        .patch(server.url(&format!("/api/sessions/{}", s.id)))
        .bearer_auth(TOKEN)
        .json(&json!({"name": "Login"}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    ask(&mut c, "a third one").await;
    let info = server.info(s.id).await;
    assert_eq!(info.name.as_deref(), Some("Login"));
    assert_eq!(info.prompt_name.as_deref(), Some("Fix the login bug"));
    // The board says the same.
    let board = server.text("/api/sessions").await;
    assert!(
        board.contains("\"prompt_name\":\"Fix the login bug\""),
        "{board}"
    );
    end(&server, &mut c, s.id).await;
    server.shutdown().await;

    let again = server_over(&state).await;
    let info = again.info(s.id).await;
    assert_eq!(info.name.as_deref(), Some("Login"));
    assert_eq!(info.prompt_name.as_deref(), Some("Fix the login bug"));
    again.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_session_leads_to_the_one_that_resumed_it_also_after_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let server = server_over(&state).await;
    let a = server.create("fake").await;
    let mut c = ready(&server, a.id).await;
    ask(&mut c, "hello").await;
    let ended = end(&server, &mut c, a.id).await;
    assert_eq!(ended.resumed_by, None);
    let resp = server
        .post_json(&format!("/api/sessions/{}/resume", a.id), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let b: SessionInfo = resp.json().await.unwrap();
    assert_eq!(server.info(a.id).await.resumed_by, Some(b.id));
    // A second resume of b: a leads to b, b to c (a client follows the chain).
    let mut cb = ready(&server, b.id).await;
    end(&server, &mut cb, b.id).await;
    let resp = server
        .post_json(&format!("/api/sessions/{}/resume", b.id), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let c3: SessionInfo = resp.json().await.unwrap();
    assert_eq!(server.info(b.id).await.resumed_by, Some(c3.id));
    server.shutdown().await;

    let again = server_over(&state).await;
    assert_eq!(again.info(a.id).await.resumed_by, Some(b.id));
    assert_eq!(again.info(b.id).await.resumed_by, Some(c3.id));
    assert_eq!(again.info(c3.id).await.resumed_by, None);
    again.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_names_who_asked_for_it_and_a_shutdown_names_nobody() {
    // A second owner credential, named, as `duet token` makes it.
    let (boss, snippet) = duet_server::config::mint_token("boss", Role::Owner).unwrap();
    let named = toml::from_str::<ConfigFile>(&snippet)
        .unwrap()
        .named_tokens()
        .unwrap();
    let server = TestServer::start_with(|o| o.tokens = named).await;
    let s = server.create("demo").await;
    let mut c = server.connect(s.id, None).await;
    let resp = server
        .http
        .delete(server.url(&format!("/api/sessions/{}", s.id)))
        .bearer_auth(&boss)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let info: SessionInfo = resp.json().await.unwrap();
    let exit = info.exit.unwrap();
    assert_eq!(exit.ended_by.as_deref(), Some("boss"), "{exit:?}");
    assert!(!exit.server_stopped);
    // Clients hear it in the exit, and a later hello says it again.
    let ServerMessage::Exit(live) = c.until(|m| matches!(m, ServerMessage::Exit(_))).await else {
        unreachable!()
    };
    assert_eq!(live.ended_by.as_deref(), Some("boss"));
    let late = server.connect(s.id, None).await;
    let ServerMessage::Hello(hello) = &late.texts[0] else {
        unreachable!()
    };
    assert_eq!(
        hello.exit.as_ref().unwrap().ended_by.as_deref(),
        Some("boss")
    );

    // duet's own shutdown ends the program too, but nobody asked for that end.
    let other = server.create("demo").await;
    let mut c = server.connect(other.id, None).await;
    c.until_event(|e| e["subtype"] == "session_start").await;
    let stop = tokio::spawn(server.shutdown());
    let ServerMessage::Exit(exit) = c.until(|m| matches!(m, ServerMessage::Exit(_))).await else {
        unreachable!()
    };
    assert!(exit.server_stopped, "{exit:?}");
    assert_eq!(exit.ended_by, None);
    stop.await.unwrap();
}

/// A client of session `id` that calls its device `device` (raw query value).
async fn connect_as_device(server: &TestServer, id: SessionId, device: &str) -> Client {
    let url = format!("ws://{}/api/sessions/{id}/ws?device={device}", server.addr);
    Client::connect(&url, TOKEN).await
}

/// The device this client is, as its hello lists it.
fn own_device(c: &Client) -> Option<String> {
    let ServerMessage::Hello(hello) = &c.texts[0] else {
        panic!("no hello first: {:?}", c.texts.first())
    };
    let me = hello
        .clients
        .iter()
        .find(|x| x.client_id == hello.client_id);
    me.and_then(|x| x.device.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_is_named_by_the_device_it_says_it_is() {
    let server = TestServer::start().await;
    let s = server.create("demo").await;
    let mut phone = connect_as_device(&server, s.id, "Chrome%20on%20Android").await;
    assert_eq!(own_device(&phone).as_deref(), Some("Chrome on Android"));
    // Control characters go (a line break becomes a space), the length is
    // bounded, blank is none.
    let long = "x".repeat(200);
    let odd = connect_as_device(&server, s.id, &format!("%20Lap%0Atop%1b{long}")).await;
    let cut = format!("Lap top{}", "x".repeat(53));
    assert_eq!(own_device(&odd), Some(cut.clone()));
    // The phone hears of the newcomer, by its device.
    let ServerMessage::Clients { clients } = phone
        .until(|m| matches!(m, ServerMessage::Clients { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(clients
        .iter()
        .any(|c| c.device.as_deref() == Some(cut.as_str())));
    let blank = connect_as_device(&server, s.id, "%20%09").await;
    assert_eq!(own_device(&blank), None);
    let none = server.connect(s.id, None).await;
    assert_eq!(own_device(&none), None);
    // The REST view lists the devices too.
    let info = server.info(s.id).await;
    assert!(info
        .connected
        .iter()
        .any(|c| c.device.as_deref() == Some("Chrome on Android")));
}
