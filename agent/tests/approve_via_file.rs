//! `run <command>` asks for approval with a `control_request`; an approval
//! written to the input file runs the command and reports its output.

mod common;

use common::{is_tool_result, kind, Agent};

#[test]
fn run_approved_through_the_input_file_runs_the_command() {
    let agent = Agent::start();
    agent.submit("run echo duet-$((40+2))");
    let request = agent.wait_event("control_request", |e| e["type"] == "control_request");
    let body = &request["request"];
    assert_eq!(body["subtype"], "can_use_tool");
    assert_eq!(body["tool_name"], "run_shell_command");
    assert_eq!(body["input"]["command"], "echo duet-$((40+2))");
    assert!(body["input"]["description"].is_string());
    assert!(body["permission_suggestions"].is_null() && body["blocked_path"].is_null());
    agent.wait_screen("Allow run_shell_command: `echo duet-$((40+2))`? [y] yes  [n] no");

    let request_id = request["request_id"].as_str().unwrap();
    agent.confirm(request_id, true);
    // Where the user made the decision, not the file it travelled through.
    agent.wait_screen("allowed in the browser");
    let result = agent.wait_event("tool_result", is_tool_result);
    let block = &result["message"]["content"][0];
    assert_eq!(block["tool_use_id"], body["tool_use_id"]);
    assert_eq!(block["is_error"], false);
    assert_eq!(block["content"], "duet-42");
    agent.wait_screen("duet-42");

    let events = agent.events();
    let kinds: Vec<String> = events.iter().map(kind).collect();
    let at = |pred: &dyn Fn(&serde_json::Value) -> bool| events.iter().position(pred).unwrap();
    let tool_message =
        at(&|e| e["type"] == "assistant" && e["message"]["content"][1]["type"] == "tool_use");
    let request_at = at(&|e| e["type"] == "control_request");
    let response_at = at(&|e| e["type"] == "control_response");
    let result_at = at(&is_tool_result);
    assert!(tool_message < request_at && request_at < response_at && response_at < result_at);
    assert_eq!(
        events[tool_message]["message"]["content"][1]["id"],
        body["tool_use_id"]
    );
    let response = &events[response_at]["response"];
    assert_eq!(response["subtype"], "success");
    assert_eq!(response["request_id"], request_id);
    assert_eq!(response["response"]["allowed"], true);

    // The follow-up reply summarises the exit code.
    let follow_up = agent.wait_event("follow-up", |e| {
        e["type"] == "assistant"
            && e["message"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("exited with code 0"))
    });
    assert!(follow_up["message"]["content"][0]["text"].is_string());
    assert!(
        kinds.contains(&"input_json_delta".to_string())
            || kinds.contains(&"content_block_delta".to_string())
    );
}
