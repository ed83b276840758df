//! The prompt-delivery scenarios of `agents_e2e` (run for every program by
//! its `for_every_program!`): a prompt sent before the program is ready,
//! the instant the session exists, mid-turn, during an approval, after a
//! slash command, or after a cancel is delivered and asked of the model
//! exactly once (docs/qwen-code.md §3, §7, §8).

use super::*;

/// Qwen reads its input file only from the size it had at `session_start`
/// (§3.6), and a prompt it reads in the second after that, before it has
/// initialised, fails on screen with no reply event (§3.18). duet must hold a
/// submit sent early until the program can take it.
pub(super) async fn a_submit_before_session_start_is_held_and_delivered(kind: Kind) {
    let Some(mut run) = start(kind).await else {
        return;
    };
    let prompt = "are you there yet";
    let slow_start = run.program.slow_start();
    let c = &mut run.client;
    let ack = c.submit(prompt).await;
    if slow_start {
        assert!(
            queued(&ack),
            "sent before the handshake, so it must be held"
        );
    }
    let (start_seq, _) = c.until_event(|e| e["subtype"] == "session_start").await;
    let user_seq = user_event(c, prompt).await;
    assert!(user_seq > start_seq);
    reply_containing(c, &run.program.reply_to(prompt)).await;
    run.finish().await;
}

/// A client that creates a session and submits in the same breath (REST,
/// before any WebSocket and long before `session_start`) gets its prompt
/// answered, once. Qwen 0.15 loses input written before `session_start` and
/// fails a prompt read in the second after it (§3.6, §3.18); 0.24 loses
/// input before `session_start` (§8.2).
pub(super) async fn a_submit_sent_the_instant_the_session_is_created_is_answered(kind: Kind) {
    let Some(program) = Program::new(kind).await else {
        return;
    };
    let prompt = "first words";
    let server = agent::serve(&program).await;
    let session = server.create("agent").await;
    let sent = std::time::Instant::now();
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/submit", session.id),
            serde_json::json!({"text": prompt}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let ack: serde_json::Value = resp.json().await.unwrap();
    if program.slow_start() {
        assert_eq!(ack["queued"], true, "written before the handshake: {ack}");
    }
    // Attached afterwards, from the first event on.
    let client = server.connect(session.id, Some(0)).await;
    let mut run = Run::attached(program, server, session, client);
    let c = &mut run.client;
    let (start_seq, _) = c.until_event(|e| e["subtype"] == "session_start").await;
    let started = sent.elapsed();
    let user_seq = user_event(c, prompt).await;
    assert!(user_seq > start_seq);
    reply_containing(c, &run.program.reply_to(prompt)).await;
    eprintln!(
        "TIMING {:?}: submit at creation -> session_start {:.2}s, -> reply {:.2}s",
        run.program.kind,
        started.as_secs_f64(),
        sent.elapsed().as_secs_f64()
    );
    c.until_event(|e| e["event"]["type"] == "message_stop")
        .await;
    assert_eq!(asked(&run, prompt), 1, "the prompt was not asked once");
    run.finish().await;
}

/// A submit sent while a reply streams is held (Qwen 0.15 drops input
/// mid-turn in most states, 0.24 steers it into the running turn without a
/// `user` event; §3.5, §8.3), then delivered as a turn of its own: both
/// prompts are answered, in order, each exactly once.
pub(super) async fn a_submit_mid_turn_is_held_and_answered_once(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    // Replies that take seconds to stream: the demo agent's is a paragraph
    // at 25 ms a word; the mock streams filler after "slow story".
    let first = "tell me a slow story please";
    let second = "and then a second question";
    let c = &mut run.client;
    c.submit(first).await;
    user_event(c, first).await;
    c.until_event(|e| e["event"]["delta"]["type"] == "text_delta")
        .await;
    assert!(queued(&c.submit(second).await), "the program is busy");
    let first_reply = reply_containing(c, &run.program.reply_to(first)).await;
    let second_user = user_event(c, second).await;
    assert!(
        second_user > first_reply,
        "delivered before the turn was over"
    );
    let second_reply = reply_containing(c, &run.program.reply_to(second)).await;
    assert!(second_reply > second_user);
    c.until_event(|e| e["event"]["type"] == "message_stop")
        .await;
    for prompt in [first, second] {
        assert_eq!(asked(&run, prompt), 1, "{prompt:?} was not asked once");
    }
    run.finish().await;
}

/// How often the program was asked `prompt`: by the model requests for
/// Qwen, by `user` events for the demo agent.
fn asked(run: &Run, prompt: &str) -> usize {
    match &run.program.mock {
        Some(mock) => mocks::chat_completions::times_asked(&mock.requests(), prompt),
        None => run
            .client
            .texts
            .iter()
            .filter(|m| {
                matches!(m, ServerMessage::Event { event, .. }
                    if user_text(event).as_deref() == Some(prompt))
            })
            .count(),
    }
}

/// Qwen drops a submit that arrives while it waits for an approval or runs
/// the turn after a tool (§3.5): duet holds it and writes it when the whole
/// turn is over, and it is answered.
pub(super) async fn a_submit_during_an_approval_is_held_until_the_turn_is_over(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    let tool_prompt = run.program.tool_prompt();
    let after_tool = run.program.after_tool();
    let later = "and one more thing";
    let c = &mut run.client;
    c.submit(tool_prompt).await;
    let pending = c.pending_approval().await;
    assert!(queued(&c.submit(later).await), "the program is busy");
    approve(c, &pending.request_id, true).await;
    let after_seq = reply_containing(c, &after_tool).await;
    let user_seq = user_event(c, later).await;
    assert!(user_seq > after_seq, "delivered before the turn was over");
    reply_containing(c, &run.program.reply_to(later)).await;
    c.until_event(|e| e["event"]["type"] == "message_stop")
        .await;
    assert_eq!(asked(&run, later), 1, "{later:?} was not asked once");
    assert_eq!(asked(&run, tool_prompt), 1);
    run.finish().await;
}

/// Slash commands run but write no event in Qwen (§3.10), so nothing would
/// ever end their "turn": duet does not wait for one, and the prompt after
/// it is delivered and answered, once (in Qwen 0.24 when the user closes
/// the help box).
pub(super) async fn a_slash_command_does_not_hold_up_the_next_prompt(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    let prompt = "after the help";
    let dialog = run.program.help_is_a_dialog();
    let c = &mut run.client;
    let help = c.submit("/help").await;
    if dialog {
        // Qwen 0.24 shows /help as a modal box and keeps a prompt it reads
        // while the box is open until a key closes it (§8.3). (Read in the
        // same poll as the /help, the prompt would go first.)
        //
        // While it starts, Qwen may reload its commands (it printed
        // "Extensions changed on disk" once in CI) and answer a /help sent
        // then with "Unknown command": its own race, with the /help
        // delivered as it should be. Asked again then.
        if c.until_screen_any(&["Esc to cancel", "Unknown command: /help"])
            .await
            == 1
        {
            c.submit("/help").await;
            c.until_screen("Esc to cancel").await;
        }
    }
    let after = c.submit(prompt).await;
    // Qwen 0.15's submits may be held until its screen shows it is ready;
    // the demo agent is ready at session_start, Qwen 0.24 too.
    if kind == Kind::Demo {
        assert!(!queued(&help));
    }
    if kind == Kind::Demo || dialog {
        assert!(!queued(&after), "a slash command closed the gate");
    }
    if dialog {
        // duet does not send the prompt again while the box holds it (that
        // copy would be asked too); it says it stopped waiting.
        c.until(|m| matches!(m, ServerMessage::Warning { code, .. } if code == "submit_unshown"))
            .await;
        assert_eq!(asked(&run, prompt), 0, "answered behind the help box");
        run.client.keys(b"\x1b").await;
    }
    let c = &mut run.client;
    user_event(c, prompt).await;
    reply_containing(c, &run.program.reply_to(prompt)).await;
    c.until_event(|e| e["event"]["type"] == "message_stop")
        .await;
    assert_eq!(asked(&run, prompt), 1, "{prompt:?} was not asked once");
    run.finish().await;
}

/// `cancel` (Escape) while an approval is pending dismisses it — in Qwen
/// with no event at all, like a denial (§3.4, §4 f). The approval must not
/// stay pending and the next submit must be delivered and answered.
pub(super) async fn a_cancel_during_an_approval_ends_the_turn(kind: Kind) {
    let Some(mut run) = started(kind).await else {
        return;
    };
    let tool_prompt = run.program.tool_prompt();
    let next = "never mind that";
    let c = &mut run.client;
    c.submit(tool_prompt).await;
    let pending = c.pending_approval().await;
    c.send(&ClientMessage::Cancel {
        id: Some("esc".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Ack { id, .. } if id == "esc"))
        .await;
    let d = decided(c, &pending.request_id).await;
    assert!(
        matches!(d.state, ApprovalState::Denied | ApprovalState::Abandoned),
        "{d:?}"
    );
    c.submit(next).await;
    user_event(c, next).await;
    reply_containing(c, &run.program.reply_to(next)).await;
    assert!(!run.program.workspace.path().join(TOOL_FILE).exists());
    run.finish().await;
}
