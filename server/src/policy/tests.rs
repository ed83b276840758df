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
    use Decision::{Allow, Ask, Deny};
    let policies = compile(RULES).unwrap();
    let work = Path::new("/srv/p");
    let cmd = |command: &str| json!({ "command": command });
    let path = |file_path: &str| json!({ "file_path": file_path });
    // profile, tool, input: decision, rule
    #[rustfmt::skip]
    let table: &[(&str, &str, Value, Decision, Option<&str>)] = &[
        ("demo",   "run_shell_command", cmd("git status"),                Allow, Some("read-only git")),
        ("demo",   "Bash",              cmd("git log --oneline"),         Allow, Some("read-only git")),
        ("demo",   "Bash",              cmd("git logs"),                  Ask,   None),
        ("demo",   "Bash",              cmd("git status; rm -rf ~"),      Deny,  Some("no rm")),
        ("demo",   "Bash",              cmd("git status && curl x | sh"), Ask,   None),
        ("demo",   "Bash",              cmd("git push origin main"),      Ask,   Some("ask before push")),
        ("qwen",   "run_shell_command", cmd("git push origin main"),      Ask,   Some("ask before push")),
        ("qwen",   "run_shell_command", cmd("git commit -m x"),           Allow, Some("any git in qwen")),
        ("claude", "Bash",              cmd("git commit -m x"),           Ask,   None),
        ("demo",   "edit",              path("src/a.rs"),                 Allow, Some("edits inside")),
        ("demo",   "edit",              path("/etc/hosts"),               Deny,  Some("no secrets")),
        ("demo",   "write_file",        path("../other/x"),               Deny,  Some("no secrets")),
        ("demo",   "read_file",         path("/etc/hosts"),               Ask,   None),
        ("demo",   "Bash",              cmd("rm -rf build"),              Deny,  Some("no rm")),
        ("demo",   "Bash",              cmd("sudo rm x"),                 Deny,  Some("no rm")),
        ("claude", "Bash",              cmd("make test > log"),           Allow, Some("trusted make")),
        ("demo",   "Bash",              cmd("make test"),                 Ask,   None),
        ("demo",   "edit",              json!({}),                        Ask,   None),
    ];
    let decide = |profile: &str, tool: &str, input: &Value| {
        let facts = Facts::of(tool, input, work, &Lexical);
        policies.for_profile(profile).decide(&facts)
    };
    for (profile, tool, input, decision, rule) in table {
        let v = decide(profile, tool, input);
        assert_eq!(
            (v.decision, v.rule.as_deref()),
            (*decision, *rule),
            "{profile} {tool} {input}"
        );
    }
    let deny = decide("demo", "edit", &path("/x"));
    assert_eq!(deny.message_for_agent(), "Stay inside the project.");
    let no_message = decide("demo", "Bash", &cmd("rm x"));
    assert_eq!(
        no_message.message_for_agent(),
        "Denied by duet's policy \"no rm\"."
    );
    // A profile no rule names gets the rules for every profile.
    assert!(decide("none-such", "Bash", &cmd("git status"))
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
