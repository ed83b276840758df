//! Qwen Code's own approval choices in the chat (issue 31, point 5; both
//! versions): its dialog's four choices are offered in its words, and
//! "Always allow … in this project", which its input file cannot carry,
//! is answered with the dialog's key, confirmed by Qwen's
//! `control_response`, and kept by Qwen: the same command runs unasked next
//! time (docs/qwen-code.md §8.5).

use super::*;
use crate::mocks::TOOL_TRIGGER;
use duet_protocol::rest::{Approval, ApprovalOptionKind};

/// The approval once its options are the dialog's (read from the screen
/// a moment after the request).
async fn offered(c: &mut support::Client) -> Approval {
    match c
        .until(|m| {
            matches!(m, ServerMessage::Approval(a)
                if a.state == ApprovalState::Pending && a.options.len() > 2)
        })
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

pub(super) async fn always_allow_in_this_project_is_answered_with_the_dialogs_key(
    version: QwenVersion,
) {
    let Some(mut run) = started(Kind::Qwen(version)).await else {
        return;
    };
    let c = &mut run.client;
    c.submit(TOOL_TRIGGER).await;
    let a = offered(c).await;
    let choices: Vec<(&str, &str, ApprovalOptionKind)> = a
        .options
        .iter()
        .map(|o| (o.id.as_str(), o.label.as_str(), o.kind))
        .collect();
    assert_eq!(
        choices,
        [
            ("allow", "Yes, allow once", ApprovalOptionKind::AllowOnce),
            (
                "2",
                "Always allow run 'touch *' commands in this project",
                ApprovalOptionKind::AllowAlways
            ),
            (
                "3",
                "Always allow run 'touch *' commands for this user",
                ApprovalOptionKind::AllowAlways
            ),
            (
                "deny",
                "No, suggest changes",
                ApprovalOptionKind::RejectOnce
            ),
        ]
    );
    c.send(&ClientMessage::Approve {
        request_id: a.request_id.clone(),
        allowed: None,
        option: Some("2".into()),
        id: None,
    })
    .await;
    // Qwen confirms it; the chat names the choice.
    let settled = c.settled(&a.request_id).await;
    assert_eq!(settled.state, ApprovalState::Allowed);
    assert_eq!(settled.decided_by, Some(Decider::Client));
    assert_eq!(settled.chosen.as_deref(), Some("2"));
    let after = reply_containing(c, &run.program.after_tool()).await;
    assert!(run.program.workspace.path().join(TOOL_FILE).is_file());
    // Qwen kept the rule where it keeps a project's, and asks no more.
    let settings = run.program.workspace.path().join(".qwen/settings.json");
    let settings = std::fs::read_to_string(&settings).unwrap_or_default();
    assert!(settings.contains("touch *"), "{settings}");
    std::fs::remove_file(run.program.workspace.path().join(TOOL_FILE)).unwrap();
    let c = &mut run.client;
    c.submit(TOOL_TRIGGER).await;
    // The next turn's request or result (the first turn's are still in
    // the client's mailbox).
    let next = match c
        .until(|m| {
            matches!(m, ServerMessage::Event { seq, event, .. } if *seq > after
                && (kind_is(event, "control_request") || !tool_results(event).is_empty()))
        })
        .await
    {
        ServerMessage::Event { event, .. } => event,
        _ => unreachable!(),
    };
    assert!(
        !kind_is(&next, "control_request"),
        "asked again: {next}\nsettings: {settings}\nscreen:\n{}",
        c.screen_text()
    );
    assert!(run.program.workspace.path().join(TOOL_FILE).is_file());
    run.finish().await;
}
