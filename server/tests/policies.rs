//! Approval policies end to end: `[[policy]]` rules decide tool calls
//! before anyone is asked, through the same path as a client's answer, for
//! the demo agent (dual output) and a headless stream-json agent; the chat
//! hears who decided (the rule), the agent hears a denial's message, the
//! audit trail names the rule, the metrics count it. `duet policy check`
//! prints what the rules say, and a bad rule stops duet at start with its
//! line. (The rules as a table: `src/policy/tests.rs`.)

mod support;

use std::path::PathBuf;
use std::process::Command;

use duet_protocol::rest::{Approval, ApprovalState, Decider};
use duet_protocol::ws::ServerMessage;
use serde_json::Value;
use support::*;

const RULES: &str = r#"
[[policy]]
name = "echo is fine"
tool = ["run_shell_command", "Bash"]
command = "echo *"
decision = "allow"

[[policy]]
name = "no touching"
command = "touch *"
decision = "deny"
message = "Touching files is not allowed here."

[[policy]]
name = "writes inside"
tool = ["edit", "write_file"]
paths = "inside"
profile = "demo"
decision = "allow"
"#;

fn config() -> String {
    let fake = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_stream_json.py");
    format!(
        r#"{}
[[profile]]
name = "headless"
command = "python3"
args = ["{}"]
channel = "stream_json"
{RULES}"#,
        demo_config(),
        fake.display()
    )
}

async fn server() -> TestServer {
    let profiles = profiles_from(&config());
    TestServer::start_with(|o| o.profiles = profiles).await
}

/// The approval of the call whose input mentions `what`, once the client
/// hears it is `pending` or not.
async fn approval(client: &mut Client, what: &str, pending: bool) -> Approval {
    match client
        .until(|m| {
            matches!(m, ServerMessage::Approval(a)
                if (a.state == ApprovalState::Pending) == pending && a.input.to_string().contains(what))
        })
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

/// [`approval`], decided.
async fn decided(client: &mut Client, what: &str) -> Approval {
    approval(client, what, false).await
}

/// [`decided`], as `state` by the rule named `rule`.
async fn by_rule(client: &mut Client, what: &str, state: ApprovalState, rule: &str) -> Approval {
    let a = decided(client, what).await;
    assert_eq!(
        (a.state, a.decided_by, a.decided_by_name.as_deref()),
        (state, Some(Decider::Policy), Some(rule)),
        "{a:?}"
    );
    a
}

fn audit_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_decide_for_the_demo_agent() {
    let server = server().await;
    let s = server.create("demo").await;
    let mut client = server.connect(s.id, None).await;

    // Allowed by a rule: nobody is asked, the command runs.
    client.submit("run echo policy-ok").await;
    by_rule(
        &mut client,
        "policy-ok",
        ApprovalState::Allowed,
        "echo is fine",
    )
    .await;
    client
        .until_event(|e| {
            e.to_string().contains("tool_result") && e.to_string().contains("policy-ok")
        })
        .await;

    // A compound command is not allowed by the echo rule: a person is asked.
    client.submit("run echo a; echo b").await;
    let pending = approval(&mut client, "echo a; echo b", true).await;
    assert_eq!(pending.tool_name, "run_shell_command");
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/approvals/{}", s.id, pending.request_id),
            serde_json::json!({"allowed": false}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        decided(&mut client, "echo a; echo b").await.decided_by,
        Some(Decider::Client)
    );

    // Denied by a rule: the agent is told no.
    client.submit("run touch x").await;
    let a = by_rule(&mut client, "touch x", ApprovalState::Denied, "no touching").await;
    assert_eq!(
        a.reason.as_deref(),
        Some("Touching files is not allowed here.")
    );
    client
        .until_event(|e| {
            kind(e) == "assistant" && assistant_text(e).contains("won't run `touch x`")
        })
        .await;

    // An edit inside the work dir, allowed by the profile's rule.
    client.submit("edit notes.txt").await;
    by_rule(
        &mut client,
        "notes.txt",
        ApprovalState::Allowed,
        "writes inside",
    )
    .await;
    let written = server
        .state_dir
        .path()
        .join("state")
        .join(s.id.to_string())
        .join("work/notes.txt");
    client
        .until_event(|e| kind(e) == "assistant" && assistant_text(e).contains("Done: I created"))
        .await;
    assert!(written.exists(), "the edit ran");

    // The trail names the rule; the metrics count the decisions.
    let audit = audit_lines(&server.text(&format!("/api/sessions/{}/audit", s.id)).await);
    let by_policy: Vec<&Value> = audit
        .iter()
        .filter(|l| l["kind"] == "approval" && l["decided_by"] == "policy")
        .collect();
    assert_eq!(by_policy.len(), 3, "{audit:?}");
    assert_eq!(by_policy[0]["policy"], "echo is fine");
    assert_eq!(
        by_policy[1]["message"],
        "Touching files is not allowed here."
    );
    assert_eq!(
        audit
            .iter()
            .filter(|l| l["kind"] == "approval_request")
            .count(),
        4
    );
    // Each rule's decision comes after the request it decides, once.
    for decided in &by_policy {
        let id = &decided["request_id"];
        let at = |kind: &str| {
            let lines: Vec<usize> = (0..audit.len())
                .filter(|&i| audit[i]["kind"] == kind && audit[i]["request_id"] == *id)
                .collect();
            assert_eq!(lines.len(), 1, "{kind} {id}: {audit:?}");
            lines[0]
        };
        assert!(at("approval_request") < at("approval"), "{audit:?}");
    }
    let metrics = server.text("/metrics").await;
    for series in [
        r#"duet_approvals_total{outcome="allowed",decided_by="policy"} 2"#,
        r#"duet_approvals_total{outcome="denied",decided_by="policy"} 1"#,
        r#"duet_approvals_total{outcome="denied",decided_by="client"} 1"#,
    ] {
        assert!(metrics.contains(series), "{series} in {metrics}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_decide_for_a_headless_agent_and_it_hears_the_message() {
    let server = server().await;
    let s = server.create("headless").await;
    let mut client = server.connect(s.id, None).await;
    // The fake asks to run `touch x` with Bash.
    client.submit("tool please").await;
    by_rule(&mut client, "touch x", ApprovalState::Denied, "no touching").await;
    // The agent got the rule's message as the denial's.
    let (_, ev) = client.until_event(|e| kind(e) == "result").await;
    assert_eq!(
        ev["result"], "denied: Touching files is not allowed here.",
        "{ev}"
    );
    // Writes are only allowed by policy for the demo profile.
    let approvals: Vec<Approval> = server
        .json(&format!("/api/sessions/{}/approvals", s.id))
        .await;
    assert_eq!(approvals.len(), 1);
}

#[test]
fn policy_check_prints_the_decision_and_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("duet.toml");
    std::fs::write(&path, config()).unwrap();
    let check = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_duet"))
            .args(["policy", "check", "--config"])
            .arg(&path)
            .args(args)
            .arg("--work-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, out, _) = check(&["--tool", "Bash", "--input", r#"{"command": "echo hi"}"#]);
    assert!(ok);
    assert_eq!(out, "allow\npolicy: echo is fine\nprofile: demo\n");
    let (_, out, _) = check(&[
        "--tool",
        "Bash",
        "--input",
        r#"{"command": "echo hi && rm -rf ~"}"#,
    ]);
    assert_eq!(
        out,
        "ask\npolicy: (none matched: a person is asked)\nprofile: demo\n"
    );
    let (_, out, _) = check(&[
        "--tool",
        "Bash",
        "--input",
        r#"{"command": "touch a"}"#,
        "--profile",
        "headless",
    ]);
    assert_eq!(
        out,
        "deny\npolicy: no touching\nprofile: headless\nmessage: Touching files is not allowed here.\n"
    );
    let (_, out, _) = check(&[
        "--tool",
        "edit",
        "--input",
        r#"{"file_path": "../elsewhere.txt"}"#,
    ]);
    assert!(out.starts_with("ask\n"), "{out}");
    let (_, out, _) = check(&["--tool", "edit", "--input", r#"{"file_path": "src/a.rs"}"#]);
    assert!(out.starts_with("allow\npolicy: writes inside\n"), "{out}");
    let (ok, _, err) = check(&["--tool", "edit", "--input", "not json"]);
    assert!(!ok && err.contains("--input is not JSON"), "{err}");
    let (ok, _, err) = check(&["--tool", "edit", "--profile", "nope"]);
    assert!(
        !ok && err.contains(r#"--profile "nope" is not in the config (profiles: demo, headless)"#),
        "{err}"
    );
}

#[test]
fn a_bad_rule_stops_duet_at_start_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("duet.toml");
    let bad = config().replace("command = \"touch *\"", "command_regex = \"touch (\"");
    let line = bad
        .lines()
        .position(|l| l.contains("name = \"no touching\""))
        .unwrap()
        + 1;
    std::fs::write(&path, bad).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_duet"))
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(dir.path().join("state"))
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("policy \"no touching\"")
            && err.contains("not a regular expression")
            && (err.contains(&format!("line {line}"))
                || err.contains(&format!("line {}", line - 1))),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no start URL was printed");
}
