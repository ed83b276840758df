//! Malformed lines and unknown command types in the input file are skipped
//! with a notice, and the watcher keeps going.

mod common;

use common::{is_user_text, Agent};

#[test]
fn bad_lines_are_skipped_and_the_next_submit_still_works() {
    let agent = Agent::start();
    agent.append_input("this is not json");
    agent.append_input(r#"{"type":"dance","steps":3}"#);
    agent.append_input(r#"{"type":"submit"}"#);
    // A partial line: only complete lines count.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&agent.input)
        .and_then(|mut f| std::io::Write::write_all(&mut f, br#"{"type":"submit","#))
        .unwrap();
    agent.append_input(r#""text":"still listening"}"#);
    agent.wait_event("the good submit", |e| is_user_text(e, "still listening"));
    agent.wait_event("its reply", |e| e["type"] == "assistant");
    agent.wait_screen("skipped line 1: not JSON");
    agent.wait_screen("skipped line 2: unknown command type \"dance\"");
    agent.wait_screen("skipped line 3: bad submit");
}
