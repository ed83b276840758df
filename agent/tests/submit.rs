//! Prompts submitted through the input file: read from the file's beginning,
//! shown as if typed, answered with a streamed reply, and queued in order
//! while a turn runs.

mod common;

use common::{is_user_text, kind, standard_args, Agent};
use duet_protocol::command::InputCommand;

#[test]
fn a_submit_gets_a_user_event_a_streamed_reply_and_the_assistant_message() {
    let agent = Agent::start();
    agent.submit("hello from the file");
    let assistant = agent.wait_event("assistant", |e| e["type"] == "assistant");
    agent.wait_screen("> hello from the file");
    agent.wait_screen("You said");

    let events = agent.events();
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let user = events
        .iter()
        .position(|e| is_user_text(e, "hello from the file"))
        .expect("user event");
    assert_eq!(
        &kinds[user + 1..user + 3],
        ["message_start", "content_block_start"],
        "{kinds:?}"
    );
    let stop = kinds
        .iter()
        .position(|k| k == "content_block_stop")
        .unwrap();
    assert!(stop > user + 3, "no token deltas: {kinds:?}");
    assert!(kinds[user + 3..stop]
        .iter()
        .all(|k| k == "content_block_delta"));
    assert_eq!(&kinds[stop + 1..stop + 3], ["message_stop", "assistant"]);

    let streamed: String = events[user + 3..stop]
        .iter()
        .map(|e| e["event"]["delta"]["text"].as_str().unwrap())
        .collect();
    let text = assistant["message"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(streamed, text);
    assert!(
        text.contains("hello from the file"),
        "reply should reflect the prompt: {text}"
    );
    assert_eq!(assistant["message"]["role"], "assistant");
}

#[test]
fn commands_written_before_start_are_not_lost_and_run_in_order() {
    let agent = Agent::start_with(
        |dir| {
            let lines = ["first", "second"]
                .map(|text| InputCommand::Submit { text: text.into() }.to_line())
                .concat();
            std::fs::write(dir.join("input.jsonl"), lines).unwrap();
        },
        standard_args,
    );
    agent.submit("third");
    agent.wait_events("three replies", 3, |e| e["type"] == "assistant");
    let order: Vec<String> = agent
        .events()
        .iter()
        .filter(|e| e["type"] == "user" || e["type"] == "assistant")
        .map(|e| match e["type"].as_str() {
            Some("user") => e["message"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string(),
            _ => "assistant".to_string(),
        })
        .collect();
    assert_eq!(
        order,
        [
            "first",
            "assistant",
            "second",
            "assistant",
            "third",
            "assistant"
        ]
    );
}
