//! End to end through duet's WebSocket, written once and run against the
//! demo agent (`demo::*`) and real Qwen Code with a mock LLM, both the last
//! release on Node 20 (`qwen_0_15::*`, 0.15.10) and the latest
//! (`qwen_0_24::*`, 0.24.4 on Node 24): (a) handshake, (b) submit and
//! streamed reply, (c) tool approval, (d) denial, (e) quitting and ending —
//! plus the places where Qwen differs from its docs in ways that matter to
//! clients (docs/qwen-code.md §3, §7 and §8): input before it is ready and
//! input during a turn are lost (0.15) or folded into another turn (0.24),
//! so duet holds them and every prompt is asked of the model exactly once;
//! a denial or an Escape on an approval writes no event, so duet must close
//! it and reopen the turn itself; slash commands write nothing, so they must
//! not hold up the next prompt.
//!
//! The Qwen tests need both versions installed: `scripts/install-qwen.sh`
//! and `scripts/install-qwen.sh 0.24.4` (or, for 0.15.10,
//! `DUET_QWEN_BIN=/path/to/qwen`; both look under `DUET_CACHE_DIR`, default
//! `.cache/`). Without them they fail, unless `DUET_SKIP_QWEN=1`, which
//! makes them print a skip line and pass.
//!
//! Run: `cargo nextest run -p duet-server --test agents_e2e`
//! (only Qwen: add `-E 'test(/qwen/)'`; one version: `'test(/qwen_0_24/)'`).
//! The submit-at-creation and DELETE scenarios print `TIMING` lines
//! (`--success-output final` shows them).

#[path = "support/agent/mod.rs"]
mod agent;
#[path = "agents_e2e/dialog_choices.rs"]
mod dialog_choices;
#[path = "support/mocks/mod.rs"]
mod mocks;
#[path = "agents_e2e/prompt_delivery.rs"]
mod prompt_delivery;
#[path = "agents_e2e/qwen_screen.rs"]
mod qwen_screen;
mod support;

use agent::program::*;
use agent::qwen::QwenVersion;
use agent::{decided, reply_containing, tool_results, user_event, user_text};
use duet_protocol::rest::{ApprovalState, Decider, SessionInfo};
use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use mocks::chat_completions::prompt_of;
use mocks::{text_of, TOOL_COMMAND, TOOL_FILE};
use prompt_delivery::*;
use support::{assistant_text, kind};

/// Declares each scenario as a test for every program: `demo::NAME`,
/// `qwen_0_15::NAME` and `qwen_0_24::NAME`.
macro_rules! for_every_program {
    ($($name:ident),* $(,)?) => {
        for_every_program!(@mod demo, super::Kind::Demo; $($name),*);
        for_every_program!(@mod qwen_0_15,
            super::Kind::Qwen(super::QwenVersion::V0_15); $($name),*);
        for_every_program!(@mod qwen_0_24,
            super::Kind::Qwen(super::QwenVersion::V0_24); $($name),*);
    };
    (@mod $module:ident, $kind:expr; $($name:ident),*) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($kind).await
                }
            )*
        }
    };
}

for_every_program!(
    handshake_is_the_first_event,
    a_submit_reaches_the_program_and_the_reply_streams_back,
    an_approval_from_a_client_runs_the_tool,
    a_denial_from_a_client_ends_the_turn_and_the_next_submit_is_answered,
    quit_ends_the_session_with_code_0,
    delete_ends_the_session_with_session_end,
    a_submit_before_session_start_is_held_and_delivered,
    a_submit_sent_the_instant_the_session_is_created_is_answered,
    a_submit_mid_turn_is_held_and_answered_once,
    a_submit_during_an_approval_is_held_until_the_turn_is_over,
    a_slash_command_does_not_hold_up_the_next_prompt,
    a_cancel_during_an_approval_ends_the_turn,
);

/// (a) The first event is the program's handshake, and clients attaching
/// later get it in their `hello`.
async fn handshake_is_the_first_event(kind: Kind) {
    let Some(mut run) = start(kind).await else {
        return;
    };
    let first = run
        .client
        .until(|m| matches!(m, ServerMessage::Event { .. }))
        .await;
    let ServerMessage::Event { seq, event, .. } = first else {
        unreachable!()
    };
    assert_eq!(seq, 1);
    assert_eq!(support::kind(&event), "system");
    assert_eq!(event["subtype"], "session_start", "{event}");
    let data = &event["data"];
    assert_eq!(
        data["protocol_version"],
        run.program.protocol_version(),
        "{data}"
    );
    assert_eq!(data["version"], run.program.version(), "{data}");
    assert!(data["session_id"].is_string(), "{data}");
    let cwd = std::path::PathBuf::from(data["cwd"].as_str().unwrap());
    assert_eq!(
        cwd.canonicalize().unwrap(),
        run.program.workspace.path().canonicalize().unwrap()
    );
    let late = run.server().connect(run.session.id, None).await;
    match &late.texts[0] {
        ServerMessage::Hello(h) => assert_eq!(h.agent.as_ref(), Some(data)),
        other => panic!("{other:?}"),
    }
    run.finish().await;
}

/// (b) A submit shows up in the terminal as if typed, as a `user` event, and
/// its reply streams back as deltas and then a whole `assistant` message.
async fn a_submit_reaches_the_program_and_the_reply_streams_back(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    let prompt = "hello from the e2e test";
    let c = &mut run.client;
    // Idle after session_start: written at once, not held (Qwen's may be
    // held until its screen shows it is ready).
    let ack = c.submit(prompt).await;
    if kind == Kind::Demo {
        assert!(!queued(&ack));
    }
    c.until_screen(prompt).await;
    let user_seq = user_event(c, prompt).await;
    let mut deltas = 0;
    let (reply_seq, reply) = c
        .until_event(|e| {
            if e["event"]["delta"]["type"] == "text_delta" {
                deltas += 1;
            }
            kind_is(e, "assistant")
        })
        .await;
    assert!(reply_seq > user_seq);
    assert!(
        assistant_text(&reply).contains(&run.program.reply_to(prompt)),
        "{reply}"
    );
    assert!(
        deltas >= 2,
        "the reply was not streamed: {deltas} text deltas"
    );
    c.until_event(|e| e["event"]["type"] == "message_stop")
        .await;
    if let Some(mock) = &run.program.mock {
        let requests = mock.requests();
        let last = requests.last().expect("Qwen called the model");
        assert_eq!(last["stream"], true);
        let messages = last["messages"].as_array().unwrap();
        let prompt_msg = messages.last().unwrap();
        assert_eq!(prompt_msg["role"], "user");
        assert_eq!(prompt_of(&prompt_msg["content"]), prompt);
    }
    run.finish().await;
}

/// (c) Approve from the client: the request is pending for every client, the
/// approval resolves as allowed by the client, the program confirms it and
/// runs the tool, which changes the workspace.
async fn an_approval_from_a_client_runs_the_tool(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    let tool_prompt = run.program.tool_prompt();
    let c = &mut run.client;
    c.submit(tool_prompt).await;
    let (req_seq, req) = c.until_event(|e| kind_is(e, "control_request")).await;
    let request_id = req["request_id"].as_str().unwrap().to_string();
    assert_eq!(req["request"]["subtype"], "can_use_tool");
    let pending = c.pending_approval().await;
    assert_eq!(pending.request_id, request_id);
    assert_eq!(pending.seq, req_seq);
    assert_eq!(pending.tool_name, "run_shell_command");
    assert_eq!(pending.input["command"], TOOL_COMMAND);
    let tool_use_id = pending.tool_use_id.clone().expect("tool_use_id");

    assert!(matches!(
        approve(c, &request_id, true).await,
        ServerMessage::Ack { .. }
    ));
    let d = decided(c, &request_id).await;
    assert_eq!(d.state, ApprovalState::Allowed);
    assert_eq!(d.decided_by, Some(Decider::Client));
    let (_, resp) = c.until_event(|e| kind_is(e, "control_response")).await;
    assert_eq!(resp["response"]["subtype"], "success", "{resp}");
    assert_eq!(resp["response"]["request_id"], request_id.as_str());
    assert_eq!(resp["response"]["response"]["allowed"], true);
    let (_, result) = c
        .until_event(|e| {
            tool_results(e)
                .iter()
                .any(|r| r["tool_use_id"] == tool_use_id.as_str())
        })
        .await;
    assert_ne!(tool_results(&result)[0]["is_error"], true, "{result}");
    assert!(
        run.program.workspace.path().join(TOOL_FILE).is_file(),
        "the tool did not create {TOOL_FILE}"
    );
    reply_containing(c, &run.program.after_tool()).await;
    // The confirmation did not leave the approval open anywhere.
    assert_eq!(session_info(&run).await.pending_approvals, 0);
    if let Some(mock) = &run.program.mock {
        // The tool's output went back to the model.
        let last = mock.requests().last().cloned().unwrap();
        let msg = last["messages"]
            .as_array()
            .unwrap()
            .last()
            .cloned()
            .unwrap();
        assert_eq!(msg["role"], "tool", "{msg}");
        assert!(text_of(&msg["content"]).contains("Exit Code: 0"));
    }
    run.finish().await;
}

/// (d) Deny from the client. Qwen writes no event at all for a denial
/// (docs/qwen-code.md §3.4); duet still shows the approval as denied by the
/// client, nothing stays pending, a late answer is refused without reaching
/// the program, and the next submit is delivered and answered.
async fn a_denial_from_a_client_ends_the_turn_and_the_next_submit_is_answered(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    let tool_prompt = run.program.tool_prompt();
    let c = &mut run.client;
    c.submit(tool_prompt).await;
    let pending = c.pending_approval().await;
    assert!(matches!(
        approve(c, &pending.request_id, false).await,
        ServerMessage::Ack { .. }
    ));
    let d = decided(c, &pending.request_id).await;
    assert_eq!(d.state, ApprovalState::Denied);
    assert_eq!(d.decided_by, Some(Decider::Client));
    assert_eq!(session_info(&run).await.pending_approvals, 0);
    match approve(&mut run.client, &pending.request_id, true).await {
        ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::AlreadyResolved),
        other => panic!("a late approval was accepted: {other:?}"),
    }

    let next = "what now";
    let c = &mut run.client;
    c.submit(next).await;
    user_event(c, next).await;
    reply_containing(c, &run.program.reply_to(next)).await;
    assert!(
        !run.program.workspace.path().join(TOOL_FILE).exists(),
        "the denied tool ran"
    );
    // Whatever the program said about the denial, duet's verdict stands.
    let d = run
        .client
        .texts
        .iter()
        .rev()
        .find_map(|m| match m {
            ServerMessage::Approval(a) if a.request_id == pending.request_id => Some(a.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (d.state, d.decided_by),
        (ApprovalState::Denied, Some(Decider::Client))
    );
    if let Some(mock) = &run.program.mock {
        // Qwen tells the model about the denial only with the next prompt.
        let body = serde_json::to_string(mock.requests().last().unwrap()).unwrap();
        assert!(body.contains("[Operation Cancelled]"), "{body}");
    }
    run.finish().await;
}

/// (e) `/quit` through the input file, after a conversation: `session_end`,
/// then `exit` code 0. (The turn first is not decoration: Qwen loads its
/// slash commands only after it has initialised, so a `/quit` right after
/// "? for shortcuts" appears can still meet "Unknown command"; §3.18.)
async fn quit_ends_the_session_with_code_0(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    let prompt = "one question first";
    let c = &mut run.client;
    c.submit(prompt).await;
    reply_containing(c, &run.program.reply_to(prompt)).await;
    c.submit("/quit").await;
    let (end_seq, _) = c.until_event(|e| e["subtype"] == "session_end").await;
    let e = c.exited().await;
    assert!(e.success, "{e:?}");
    assert_eq!(e.code, Some(0));
    assert_eq!(
        *c.seqs().last().unwrap(),
        end_seq,
        "events after session_end"
    );
    run.finish().await;
}

/// (e) `DELETE /api/sessions/{id}` signals the program (SIGTERM): it still
/// writes `session_end` and exits with 128+15.
async fn delete_ends_the_session_with_session_end(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    let sent = std::time::Instant::now();
    let resp = run
        .server()
        .delete(&format!("/api/sessions/{}", run.session.id))
        .await;
    assert_eq!(resp.status(), 200);
    let info: SessionInfo = resp.json().await.unwrap();
    let c = &mut run.client;
    let (end_seq, _) = c.until_event(|e| e["subtype"] == "session_end").await;
    let e = c.exited().await;
    eprintln!(
        "TIMING {:?}: DELETE -> exit {:.2}s",
        run.program.kind,
        sent.elapsed().as_secs_f64()
    );
    assert_eq!(info.exit.as_ref(), Some(&e));
    assert!(!e.success);
    assert_eq!((e.code, e.signal.as_deref()), (Some(143), None), "{e:?}");
    assert_eq!(
        *c.seqs().last().unwrap(),
        end_seq,
        "events after session_end"
    );
    run.finish().await;
}

fn kind_is(ev: &serde_json::Value, k: &str) -> bool {
    kind(ev) == k
}

async fn session_info(run: &Run) -> SessionInfo {
    run.server().info(run.session.id).await
}

/// `exit` is the last word on a connection, said once. (duet bug: the
/// WebSocket loop sets `exit_pending` both from the `Control::Exit`
/// broadcast and from the `exited` watch, and sends `exit` for each.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exit_is_announced_once() {
    let mut run = started(Kind::Demo).await.unwrap();
    let c = &mut run.client;
    c.submit("/quit").await;
    c.exited().await;
    // Anything the server sends after the exit arrives before this pong.
    c.send(&ClientMessage::Ping {
        id: Some("after-exit".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Pong { id: Some(i) } if i == "after-exit"))
        .await;
    let exits: Vec<&ServerMessage> = c
        .texts
        .iter()
        .filter(|m| matches!(m, ServerMessage::Exit(_)))
        .collect();
    assert_eq!(exits.len(), 1, "{exits:?}");
    run.finish().await;
}

/// The profile and settings file docs/qwen-profile.md gives operators work
/// as written: a per-session HOME in the session directory, the shared
/// settings file left untouched, the endpoint from the environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_qwen_profile_works() {
    documented_qwen_profile_works(QwenVersion::V0_15).await
}

/// The same profile, `ready_text = "? for shortcuts"` included, with Qwen
/// 0.24, which never shows that text (§8.2): the first prompt is not held
/// for duet's 20 s fallback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_qwen_profile_works_with_0_24() {
    documented_qwen_profile_works(QwenVersion::V0_24).await
}

async fn documented_qwen_profile_works(version: QwenVersion) {
    let Some(program) = Program::documented_qwen(version).await else {
        return;
    };
    let settings_path = program.workspace.path().join("qwen-settings.json");
    let settings_before = std::fs::read(&settings_path).unwrap();
    let mut run = Run::start(program).await;
    run.handshake().await;
    let prompt = "hello from the docs";
    let c = &mut run.client;
    c.submit(prompt).await;
    user_event(c, prompt).await;
    reply_containing(c, &run.program.reply_to(prompt)).await;
    // Sent before the held prompt goes out, if it was held that long.
    assert!(
        !c.texts
            .iter()
            .any(|m| matches!(m, ServerMessage::Warning { code, .. } if code == "ready_timeout")),
        "prompts waited for the ready text's fallback"
    );
    let session_dir = run.session_dir();
    assert!(
        session_dir.join(".qwen/debug").is_dir(),
        "Qwen's HOME is not the session dir"
    );
    assert_eq!(
        std::fs::read(&settings_path).unwrap(),
        settings_before,
        "Qwen rewrote the shared settings file"
    );
    run.finish().await;
}

/// Qwen's approval mode in the chat (`qwen_screen.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_0_24_mode_is_shown_and_switched() {
    qwen_screen::mode_is_shown_and_switched(QwenVersion::V0_24).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_0_15_mode_is_shown_and_switched() {
    qwen_screen::mode_is_shown_and_switched(QwenVersion::V0_15).await
}

/// A prompt typed in Qwen's terminal, in the chat (`qwen_screen.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_0_15_a_prompt_typed_in_the_terminal_shows_in_the_chat() {
    qwen_screen::a_prompt_typed_in_the_terminal_shows_in_the_chat(QwenVersion::V0_15).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_0_24_a_prompt_typed_in_the_terminal_shows_in_the_chat() {
    qwen_screen::a_prompt_typed_in_the_terminal_shows_in_the_chat(QwenVersion::V0_24).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_0_15_always_allow_in_this_project_is_answered_with_the_dialogs_key() {
    dialog_choices::always_allow_in_this_project_is_answered_with_the_dialogs_key(
        QwenVersion::V0_15,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_0_24_always_allow_in_this_project_is_answered_with_the_dialogs_key() {
    dialog_choices::always_allow_in_this_project_is_answered_with_the_dialogs_key(
        QwenVersion::V0_24,
    )
    .await
}
