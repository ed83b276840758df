//! `--json-fd` refuses the terminal's own descriptors with a warning and runs
//! the TUI without dual output; `--json-fd` with `--json-file` is a usage
//! error.

mod common;

use common::Agent;

#[test]
fn json_fd_1_is_refused_and_the_tui_still_works() {
    let mut agent = Agent::start_with(
        |_| {},
        |_| {
            vec![
                "--json-fd".into(),
                "1".into(),
                "--token-delay-ms".into(),
                "0".into(),
            ]
        },
    );
    agent.wait_screen("warning: --json-fd 1 refused");
    agent.wait_screen("Type a message");
    agent.type_keys("are you there?\r");
    agent.wait_screen("You said");
    agent.type_keys("/quit\r");
    assert_eq!(agent.wait_exit(), 0);
}

#[test]
fn json_fd_and_json_file_together_are_a_usage_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_duet-demo-agent"))
        .args(["--json-fd", "3", "--json-file", "/tmp/never-written.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}
