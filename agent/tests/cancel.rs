//! Esc while a reply streams cancels the turn: the open block and the message
//! are closed and the partial assistant message is written.

mod common;

use common::{kind, Agent};

#[test]
fn esc_cancels_a_streaming_reply() {
    let mut agent = Agent::start_with(
        |_| {},
        |dir| {
            let mut args = common::standard_args(dir);
            // Slow enough that the reply is still streaming when Esc lands.
            let last = args.len() - 1;
            args[last] = "200".into();
            args
        },
    );
    agent.submit("tell me a long story");
    agent.wait_event("a token", |e| kind(e) == "content_block_delta");
    agent.wait_screen("✦");
    agent.type_keys("\x1b");
    let assistant = agent.wait_event("the partial message", |e| e["type"] == "assistant");
    agent.wait_screen("(cancelled)");
    let kinds: Vec<String> = agent.events().iter().map(kind).collect();
    let at = kinds.iter().position(|k| k == "assistant").unwrap();
    assert_eq!(
        &kinds[at - 2..=at],
        ["content_block_stop", "message_stop", "assistant"]
    );
    let text = assistant["message"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        !text.contains("whichever answers first"),
        "not cancelled: {text}"
    );
    // The agent is idle again and answers the next prompt.
    agent.type_keys("/quit\r");
    assert_eq!(agent.wait_exit(), 0);
}
