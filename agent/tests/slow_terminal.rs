//! A terminal nobody reads: the agent blocks on its writes without losing
//! anything, recovers when reading resumes, and still ends the session with
//! `session_end` when signalled while blocked.

mod common;

use common::{is_user_text, kind, standard_args, Agent};
use duet_protocol::command::InputCommand;

/// More than a PTY buffers (about 64 KiB on Linux) once echoed on screen.
fn big_prompts(dir: &std::path::Path) {
    let lines: String = (0..3)
        .map(|i| {
            InputCommand::Submit {
                text: format!("{i} {}", "lorem ipsum ".repeat(5000)),
            }
            .to_line()
        })
        .chain([InputCommand::Submit {
            text: "final".into(),
        }
        .to_line()])
        .collect();
    std::fs::write(dir.join("input.jsonl"), lines).unwrap();
}

#[test]
fn a_stalled_terminal_delays_the_agent_but_loses_nothing() {
    let mut agent = Agent::start_paused(big_prompts, standard_args);
    agent.wait_event("the first prompt", |e| e["type"] == "user");
    agent.resume_reading();
    agent.wait_event("the last prompt", |e| is_user_text(e, "final"));
    agent.wait_screen("You said \u{201c}final\u{201d}");
    assert!(
        agent.output_len() > 128 * 1024,
        "the agent wrote less than the PTY buffers, so it never blocked"
    );
    agent.type_keys("/quit\r");
    assert_eq!(agent.wait_exit(), 0);
}

#[test]
fn sigterm_while_blocked_on_the_terminal_still_writes_session_end() {
    let mut agent = Agent::start_paused(big_prompts, standard_args);
    agent.wait_event("the first prompt", |e| e["type"] == "user");
    let pid = nix::unistd::Pid::from_raw(agent.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(agent.wait_exit(), 143);
    let events = agent.events();
    assert_eq!(kind(events.last().unwrap()), "session_end");
}
