//! The profile config: any TOML text, and configs built from the real
//! keys with random values, load or are refused with a message; an
//! accepted one expands its placeholders without a panic.

use std::path::Path;

use duet_protocol::ids::SessionId;
use proptest::prelude::*;

use crate::config::Placeholders;
use crate::config::{ConfigFile, Profiles};

fn load(text: &str) -> Result<Profiles, String> {
    let file: ConfigFile = toml::from_str(text).map_err(|e| e.to_string())?;
    Profiles::from_config(file, "/usr/bin/duet".into()).map_err(|e| format!("{e:#}"))
}

fn check(text: &str) -> Result<(), TestCaseError> {
    match load(text) {
        Err(message) => prop_assert!(!message.trim().is_empty(), "empty error for {:?}", text),
        Ok(profiles) => {
            let names: Vec<String> = profiles.infos().into_iter().map(|p| p.name).collect();
            prop_assert!(!names.is_empty());
            prop_assert!(profiles.get(None).is_some(), "no default profile");
            for name in &names {
                let p = profiles.get(Some(name)).unwrap();
                let dir = Path::new("/s");
                let ph = Placeholders {
                    events_file: Path::new("/s/events.jsonl"),
                    input_file: Path::new("/s/input.jsonl"),
                    session_dir: dir,
                    work_dir: Path::new("/s/work"),
                    session_id: SessionId::new(),
                    cols: 80,
                    rows: 24,
                    claude_settings: "{}",
                    codex_remote: "unix:///s/codex.sock",
                    agent_session_id: "a",
                };
                p.spawn_options(&ph, false);
                if p.can_resume() {
                    p.spawn_options(&ph, true);
                }
                p.channel_info();
            }
        }
    }
    Ok(())
}

const PLACEHOLDERS: &[&str] = &[
    "{events_file}",
    "{input_file}",
    "{session_dir}",
    "{work_dir}",
    "{session_id}",
    "{cols}",
    "{rows}",
    "{duet}",
    "{claude_settings}",
    "{agent_session_id}",
    "{nope}",
    "{",
    "}",
    "{{",
    "--json-file",
    "",
];

/// A TOML string value made of placeholders and text.
fn word() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => prop::sample::select(PLACEHOLDERS).prop_map(str::to_string),
            1 => super::string(),
        ],
        0..3,
    )
    .prop_map(|parts| parts.concat())
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// One `[[profile]]` built from the real keys, some left out, some
/// mistyped or unknown.
fn profile() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        3 => prop::sample::select(&["demo", "qwen", "a.b-c_1", "x"][..]).prop_map(str::to_string),
        1 => super::string(),
    ];
    let line = prop_oneof![
        word().prop_map(|w| format!("command = {}", quoted(&w))),
        prop::collection::vec(word(), 0..5).prop_map(|ws| format!(
            "args = [{}]",
            ws.iter().map(|w| quoted(w)).collect::<Vec<_>>().join(", ")
        )),
        prop::collection::vec(word(), 0..3).prop_map(|ws| format!(
            "resume_args = [{}]",
            ws.iter().map(|w| quoted(w)).collect::<Vec<_>>().join(", ")
        )),
        word().prop_map(|w| format!("cwd = {}", quoted(&w))),
        word().prop_map(|w| format!("ready_text = {}", quoted(&w))),
        word().prop_map(|w| format!("description = {}", quoted(&w))),
        (word(), word()).prop_map(|(k, v)| format!("env = {{ {} = {} }}", quoted(&k), quoted(&v))),
        prop::sample::select(&["none", "dual_output", "claude", "acp", ""][..])
            .prop_map(|c| format!("channel = {}", quoted(c))),
        Just("shell = true".to_string()),
        Just("args = 3".to_string()),
    ];
    (name, prop::collection::vec(line, 0..7), any::<bool>()).prop_map(|(name, lines, named)| {
        let mut s = String::from("[[profile]]\n");
        if named {
            s.push_str(&format!("name = {}\n", quoted(&name)));
        }
        // A key given twice is a TOML error: keep the first of each.
        let mut seen = std::collections::HashSet::new();
        for l in lines {
            let key = l.split(' ').next().unwrap_or_default().to_string();
            if seen.insert(key) {
                s.push_str(&l);
                s.push('\n');
            }
        }
        s
    })
}

fn config_text() -> impl Strategy<Value = String> {
    (
        prop::option::of(prop::sample::select(&["demo", "qwen", "x", ""][..])),
        prop::collection::vec(profile(), 0..4),
    )
        .prop_map(|(default, profiles)| {
            let mut s = String::new();
            if let Some(d) = default {
                s.push_str(&format!("default_profile = {}\n", quoted(d)));
            }
            for p in profiles {
                s.push_str(&p);
            }
            s
        })
}

#[test]
fn configs_load_or_are_refused_with_a_message() {
    proptest!(super::config(), |(text in config_text())| {
        check(&text)?;
    });
}

#[test]
fn arbitrary_toml_never_panics() {
    let text = prop_oneof![any::<String>(), "[\\[\\]{}=\"'a-z_ \n.,0-9#]{0,60}",];
    proptest!(super::config(), |(text in text)| {
        check(&text)?;
    });
}
