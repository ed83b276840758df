//! `claude_e2e`'s end of a session from the browser: DELETE signals Claude
//! Code (SIGTERM), whose SessionEnd hook becomes the chat's `session_end`,
//! the last event, before the `exit` DELETE answered with.

use super::*;
use crate::mocks::reply_to;
use duet_protocol::rest::SessionInfo;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_the_session_with_session_end() {
    let Some(mut run) = start().await else {
        return;
    };
    run.client.submit("hello there").await;
    run.reply(&reply_to("hello there")).await;
    run.result().await;
    let resp = run
        .server()
        .delete(&format!("/api/sessions/{}", run.id()))
        .await;
    assert_eq!(resp.status(), 200);
    let info: SessionInfo = resp.json().await.unwrap();
    let (end_seq, end) = run
        .client
        .until_event(|e| e["subtype"] == "session_end")
        .await;
    // Claude's own SessionEnd hook, which names no reason for a signal.
    assert_eq!(end["data"]["reason"], "other", "{end}");
    let exit = run.client.exited().await;
    assert_eq!(info.exit.as_ref(), Some(&exit));
    assert!(!exit.success, "{exit:?}");
    assert_eq!(
        *run.client.seqs().last().unwrap(),
        end_seq,
        "events after session_end"
    );
    run.finish().await;
}
