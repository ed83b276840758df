//! A prompt typed in the terminal (with line editing) becomes a `user` event
//! just like a submitted one.

mod common;

use common::{is_user_text, Agent};

#[test]
fn a_typed_prompt_becomes_a_user_event() {
    let mut agent = Agent::start();
    agent.wait_screen("Type a message");
    // Backspace (DEL) fixes a typo; UTF-8 goes through whole.
    agent.type_keys("héllo wörlx\x7fd 日本\r");
    agent.wait_event("the typed prompt", |e| is_user_text(e, "héllo wörld 日本"));
    agent.wait_event("the reply", |e| e["type"] == "assistant");
    agent.wait_screen("héllo wörld 日本");
}

#[test]
fn slash_commands_make_no_user_event() {
    let mut agent = Agent::start();
    agent.wait_screen("Type a message");
    // Ctrl-J (a bare newline) submits like Enter.
    agent.type_keys("/help\n");
    agent.wait_screen("/clear");
    agent.type_keys("hi\r");
    agent.wait_event("the reply", |e| e["type"] == "assistant");
    let users: Vec<_> = agent
        .events()
        .into_iter()
        .filter(|e| e["type"] == "user")
        .collect();
    assert_eq!(users.len(), 1, "{users:?}");
    assert!(common::is_user_text(&users[0], "hi"));
}
