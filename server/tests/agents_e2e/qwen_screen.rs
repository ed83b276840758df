//! What Qwen Code's terminal does for the chat (both versions): a prompt
//! typed there, as a person would, shows in the chat as a `user` event and
//! is answered, once; and its approval mode, which its dual output does
//! not report, is read from its status line and switched from the browser
//! with its own `/approval-mode` (issue 31 point 4), and Qwen works in it:
//! in YOLO mode the tool that asked before runs without an approval.

use super::*;
use mocks::chat_completions::times_asked;

/// Text on Qwen's screen once its input box is drawn.
const INPUT_BOX: &str = "Type your message";

pub(super) async fn a_prompt_typed_in_the_terminal_shows_in_the_chat(version: QwenVersion) {
    let Some(mut run) = started(Kind::Qwen(version)).await else {
        return;
    };
    let prompt = "typed in the terminal";
    let c = &mut run.client;
    c.until_screen(INPUT_BOX).await;
    c.keys(prompt.as_bytes()).await;
    c.until_screen(prompt).await;
    c.keys(b"\r").await;
    user_event(c, prompt).await;
    reply_containing(c, &run.program.reply_to(prompt)).await;
    c.until_event(|e| e["event"]["type"] == "message_stop")
        .await;
    let mock = run.program.mock.as_ref().unwrap();
    assert_eq!(
        times_asked(&mock.requests(), prompt),
        1,
        "{}",
        mock.summary()
    );
    run.finish().await;
}

pub(super) async fn mode_is_shown_and_switched(version: QwenVersion) {
    let Some(mut run) = started(Kind::Qwen(version)).await else {
        return;
    };
    let c = &mut run.client;
    let modes = c.until_modes(|m| m.current.is_some()).await;
    assert_eq!(modes.current.as_deref(), Some("default"), "{modes:?}");
    let ids: Vec<&str> = modes.available.iter().map(|m| m.id.as_str()).collect();
    // "auto" came after 0.15.
    let expected: &[&str] = match version {
        QwenVersion::V0_15 => &["plan", "default", "auto-edit", "yolo"],
        QwenVersion::V0_24 => &["plan", "default", "auto-edit", "auto", "yolo"],
    };
    assert_eq!(ids, expected);

    let path = format!("/api/sessions/{}/mode", run.session.id);
    let resp = run
        .server()
        .post_json(&path, serde_json::json!({"mode": "warp"}))
        .await;
    assert_eq!(resp.status(), 400);
    let resp = run
        .server()
        .post_json(&path, serde_json::json!({"mode": "yolo"}))
        .await;
    assert_eq!(resp.status(), 204);
    let c = &mut run.client;
    let modes = c
        .until_modes(|m| m.current.as_deref() == Some("yolo"))
        .await;
    let yolo = modes.available.iter().find(|m| m.id == "yolo").unwrap();
    assert_eq!(yolo.name, "YOLO mode");

    c.submit(run.program.tool_prompt()).await;
    let (_, result) = c
        .until_event(|e| kind_is(e, "control_request") || !tool_results(e).is_empty())
        .await;
    assert!(
        !kind_is(&result, "control_request"),
        "asked in YOLO mode: {result}"
    );
    assert!(run.program.workspace.path().join(TOOL_FILE).is_file());
    run.finish().await;
}
