//! `edit <file>` proposes a change as a diff and applies it once allowed: an
//! `edit` of an existing file, a `write_file` of a missing one.

mod common;

use common::{is_tool_result, standard_args, Agent};

const ADDED: &str = "edited by the duet demo agent";

#[test]
fn editing_an_existing_file_appends_a_line_after_approval() {
    let mut agent = Agent::start_with(
        |dir| std::fs::write(dir.join("notes.txt"), "one\ntwo\n").unwrap(),
        standard_args,
    );
    agent.submit("edit notes.txt");
    let request = agent.wait_event("control_request", |e| e["type"] == "control_request");
    let body = &request["request"];
    assert_eq!(body["tool_name"], "edit");
    assert_eq!(body["input"]["old_string"], "two");
    assert_eq!(body["input"]["new_string"], format!("two\n{ADDED}"));
    assert!(body["input"]["file_path"]
        .as_str()
        .unwrap()
        .ends_with("notes.txt"));
    agent.wait_screen(&format!("+{ADDED}"));
    agent.wait_screen("Allow edit: `notes.txt`?");
    agent.type_keys("y");
    let result = agent.wait_event("tool_result", is_tool_result);
    assert_eq!(result["message"]["content"][0]["is_error"], false);
    assert_eq!(
        std::fs::read_to_string(agent.dir.path().join("notes.txt")).unwrap(),
        format!("one\ntwo\n{ADDED}\n")
    );
}

#[test]
fn editing_a_missing_file_proposes_write_file_and_denial_leaves_it_missing() {
    let mut agent = Agent::start();
    agent.submit("edit fresh.txt");
    let request = agent.wait_event("control_request", |e| e["type"] == "control_request");
    assert_eq!(request["request"]["tool_name"], "write_file");
    assert_eq!(request["request"]["input"]["content"], format!("{ADDED}\n"));
    agent.wait_screen("Allow write_file: `fresh.txt`?");
    agent.type_keys("\x1b");
    let result = agent.wait_event("tool_result", is_tool_result);
    assert_eq!(result["message"]["content"][0]["content"], "denied by user");
    assert!(!agent.dir.path().join("fresh.txt").exists());
}
