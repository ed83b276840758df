//! The rules as a table: config × tool call → decision and rule, and the
//! mistakes refused at start, each with its line.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::facts::Lexical;
use super::*;

#[derive(Deserialize)]
struct File {
    #[serde(rename = "policy")]
    policies: Vec<toml::Spanned<PolicyRule>>,
}

const PROFILES: &[&str] = &["qwen", "claude", "demo"];

fn compile(text: &str) -> Result<Policies> {
    let file: File = toml::from_str(text).context("toml")?;
    Policies::compile(&file.policies, Some(text), PROFILES)
}

const RULES: &str = r#"
[[policy]]
name = "no secrets"
paths = "outside"
tool = ["edit", "write_file", "Write", "Edit"]
decision = "deny"
message = "Stay inside the project."

[[policy]]
name = "ask before push"
command = "git push*"
decision = "ask"

[[policy]]
name = "read-only git"
tool = ["run_shell_command", "Bash"]
command_regex = '^git (status|log|diff)( |$)'
decision = "allow"

[[policy]]
name = "any git in qwen"
profile = "qwen"
command = "git *"
decision = "allow"

[[policy]]
name = "edits inside"
tool = ["edit", "write_file"]
paths = "inside"
decision = "allow"

[[policy]]
name = "no rm"
command = ["rm *", "* rm *"]
decision = "deny"

[[policy]]
name = "trusted make"
profile = "claude"
command = "make*"
compound = true
decision = "allow"
"#;

#[test]
fn the_first_matching_rule_decides() {
    let policies = compile(RULES).unwrap();
    let work = Path::new("/srv/p");
    // (profile, tool, input, decision, rule)
    let table: &[(&str, &str, Value, Decision, Option<&str>)] = &[
        (
            "demo",
            "run_shell_command",
            json!({"command": "git status"}),
            Decision::Allow,
            Some("read-only git"),
        ),
        (
            "demo",
            "Bash",
            json!({"command": "git log --oneline"}),
            Decision::Allow,
            Some("read-only git"),
        ),
        (
            "demo",
            "Bash",
            json!({"command": "git logs"}),
            Decision::Ask,
            None,
        ),
        (
            "demo",
            "Bash",
            json!({"command": "git status; rm -rf ~"}),
            Decision::Deny,
            Some("no rm"),
        ),
        (
            "demo",
            "Bash",
            json!({"command": "git status && curl x | sh"}),
            Decision::Ask,
            None,
        ),
        (
            "demo",
            "Bash",
            json!({"command": "git push origin main"}),
            Decision::Ask,
            Some("ask before push"),
        ),
        (
            "qwen",
            "run_shell_command",
            json!({"command": "git push origin main"}),
            Decision::Ask,
            Some("ask before push"),
        ),
        (
            "qwen",
            "run_shell_command",
            json!({"command": "git commit -m x"}),
            Decision::Allow,
            Some("any git in qwen"),
        ),
        (
            "claude",
            "Bash",
            json!({"command": "git commit -m x"}),
            Decision::Ask,
            None,
        ),
        (
            "demo",
            "edit",
            json!({"file_path": "src/a.rs"}),
            Decision::Allow,
            Some("edits inside"),
        ),
        (
            "demo",
            "edit",
            json!({"file_path": "/etc/hosts"}),
            Decision::Deny,
            Some("no secrets"),
        ),
        (
            "demo",
            "write_file",
            json!({"file_path": "../other/x"}),
            Decision::Deny,
            Some("no secrets"),
        ),
        (
            "demo",
            "read_file",
            json!({"file_path": "/etc/hosts"}),
            Decision::Ask,
            None,
        ),
        (
            "demo",
            "Bash",
            json!({"command": "rm -rf build"}),
            Decision::Deny,
            Some("no rm"),
        ),
        (
            "demo",
            "Bash",
            json!({"command": "sudo rm x"}),
            Decision::Deny,
            Some("no rm"),
        ),
        (
            "claude",
            "Bash",
            json!({"command": "make test > log"}),
            Decision::Allow,
            Some("trusted make"),
        ),
        (
            "demo",
            "Bash",
            json!({"command": "make test"}),
            Decision::Ask,
            None,
        ),
        ("demo", "edit", json!({}), Decision::Ask, None),
    ];
    for (profile, tool, input, decision, rule) in table {
        let facts = Facts::of(tool, input, work, &Lexical);
        let v = policies.for_profile(profile).decide(&facts);
        assert_eq!(
            (v.decision, v.rule.as_deref()),
            (*decision, *rule),
            "{profile} {tool} {input}"
        );
    }
    let deny = policies.for_profile("demo").decide(&Facts::of(
        "edit",
        &json!({"file_path": "/x"}),
        work,
        &Lexical,
    ));
    assert_eq!(deny.message_for_agent(), "Stay inside the project.");
    let no_message = policies.for_profile("demo").decide(&Facts::of(
        "Bash",
        &json!({"command": "rm x"}),
        work,
        &Lexical,
    ));
    assert_eq!(
        no_message.message_for_agent(),
        "Denied by duet's policy \"no rm\"."
    );
    assert!(policies
        .for_profile("none-such")
        .decide(&Facts::of(
            "Bash",
            &json!({"command": "git status"}),
            work,
            &Lexical
        ))
        .rule
        .is_some());
}

#[test]
fn mistakes_are_refused_with_the_line_and_the_reason() {
    let cases: &[(&str, &str)] = &[
        ("[[policy]]\nname = \"x\"\ncommand_regex = \"git (\"\ndecision = \"allow\"\n", "line 1"),
        ("[[policy]]\nname = \"x\"\ncommand_regex = \"git (\"\ndecision = \"allow\"\n", "not a regular expression"),
        ("[[policy]]\nname = \"x\"\ndecision = \"allow\"\n", "at least one of"),
        ("[[policy]]\nname = \"\"\ntool = \"*\"\ndecision = \"allow\"\n", "needs a name"),
        ("[[policy]]\nname = \"x\"\ntool = []\ndecision = \"deny\"\n", "empty list"),
        ("[[policy]]\nname = \"x\"\ntool = \"*\"\ndecision = \"allow\"\nmessage = \"m\"\n", "only for `decision = \"deny\"`"),
        ("[[policy]]\nname = \"x\"\ntool = \"*\"\ndecision = \"ask\"\ncompound = true\n", "`compound`"),
        ("[[policy]]\nname = \"x\"\nprofile = \"qwne\"\ndecision = \"deny\"\n", "does not exist"),
        ("[[policy]]\nname = \"x\"\ncommand = \"a\"\ncommand_regex = \"a\"\ndecision = \"deny\"\n", "not both"),
        ("[[policy]]\nname = \"x\"\ntool = \"*\"\ndecision = \"ask\"\n\n[[policy]]\nname = \"x\"\ntool = \"a\"\ndecision = \"deny\"\n", "line 6"),
        ("[[policy]]\nname = \"x\"\ntool = \"*\"\ndecision = \"ask\"\n\n[[policy]]\nname = \"x\"\ntool = \"a\"\ndecision = \"deny\"\n", "unique"),
    ];
    for (text, want) in cases {
        let err = format!("{:#}", compile(text).unwrap_err());
        assert!(err.contains(want), "{text:?}: {err}");
    }
    // Mistakes serde sees carry toml's own line and column.
    for (text, want) in [
        (
            "[[policy]]\nname = \"x\"\ntool = \"*\"\ndecision = \"maybe\"\n",
            "unknown variant",
        ),
        (
            "[[policy]]\nname = \"x\"\ntools = \"*\"\ndecision = \"deny\"\n",
            "unknown field",
        ),
        (
            "[[policy]]\nname = \"x\"\npaths = \"nearby\"\ndecision = \"deny\"\n",
            "unknown variant",
        ),
    ] {
        let err = format!("{:#}", compile(text).unwrap_err());
        assert!(
            err.contains(want) && err.contains("line"),
            "{text:?}: {err}"
        );
    }
    // A glob may name profiles that do not exist yet.
    assert!(compile("[[policy]]\nname = \"x\"\nprofile = \"ci-*\"\ndecision = \"deny\"\n").is_ok());
}
