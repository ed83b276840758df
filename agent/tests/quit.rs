//! Every way out writes `system/session_end` last: /quit, Ctrl-D, a /quit
//! queued behind a running turn, and SIGTERM.

mod common;

use common::{kind, Agent};

fn assert_ended(agent: &Agent) {
    let events = agent.events();
    let last = events.last().expect("events");
    assert_eq!(kind(last), "session_end", "last event: {last}");
    assert_eq!(last["data"]["session_id"], events[0]["session_id"]);
    assert_eq!(
        events.iter().filter(|e| kind(e) == "session_end").count(),
        1
    );
}

#[test]
fn slash_quit_ends_the_session_with_exit_code_0() {
    let mut agent = Agent::start();
    agent.wait_screen("Type a message");
    agent.type_keys("/quit\r");
    assert_eq!(agent.wait_exit(), 0);
    assert_ended(&agent);
}

#[test]
fn ctrl_d_ends_the_session() {
    let mut agent = Agent::start();
    agent.wait_screen("Type a message");
    agent.type_keys("\x04");
    assert_eq!(agent.wait_exit(), 0);
    assert_ended(&agent);
}

#[test]
fn a_submitted_quit_waits_for_the_turn_before_it() {
    let mut agent = Agent::start();
    agent.submit("hello");
    agent.submit("/quit");
    assert_eq!(agent.wait_exit(), 0);
    assert_ended(&agent);
    let kinds: Vec<String> = agent.events().iter().map(kind).collect();
    assert_eq!(
        &kinds[kinds.len() - 2..],
        ["assistant", "session_end"],
        "{kinds:?}"
    );
}

#[test]
fn sigterm_ends_the_session_and_restores_the_terminal() {
    let mut agent = Agent::start();
    agent.wait_event("session_start", |e| kind(e) == "session_start");
    agent.wait_screen("Type a message");
    let pid = nix::unistd::Pid::from_raw(agent.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(agent.wait_exit(), 143);
    assert_ended(&agent);
    // Raw mode's companion, bracketed paste, was switched off on the way out.
    agent.wait_raw("\x1b[?2004l");
}
