//! Real Qwen Code under test: where its executable is, and the private HOME
//! and environment that make it run offline against the mock LLM (the
//! settings of docs/qwen-code.md §1).

use std::path::{Path, PathBuf};

use duet_server::config::Profile;
use serde_json::json;

use super::mock_llm::{MockLlm, MODEL};

/// The version scripts/install-qwen.sh installs and these tests expect.
pub const VERSION: &str = "0.15.10";

/// `DUET_QWEN_BIN`, else the executable scripts/install-qwen.sh installs
/// (under `DUET_CACHE_DIR`, default `<repo>/.cache`). `None` means: skip,
/// because `DUET_SKIP_QWEN=1`. Missing otherwise is a failure, so a machine
/// without Qwen cannot pass these tests by accident.
pub fn executable() -> Option<PathBuf> {
    let path = match std::env::var_os("DUET_QWEN_BIN").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => std::env::var_os("DUET_CACHE_DIR")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache"))
            .join(format!("qwen-code-{VERSION}/node_modules/.bin/qwen")),
    };
    if path.is_file() {
        return Some(path);
    }
    if std::env::var("DUET_SKIP_QWEN").as_deref() == Ok("1") {
        eprintln!(
            "SKIPPED: Qwen Code not found at {} and DUET_SKIP_QWEN=1; this test ran nothing",
            path.display()
        );
        return None;
    }
    panic!(
        "Qwen Code {VERSION} not found at {}.\n\
         Install it with scripts/install-qwen.sh (or point DUET_QWEN_BIN at a qwen executable), \
         or set DUET_SKIP_QWEN=1 to skip the Qwen end-to-end tests.",
        path.display()
    );
}

/// Writes `$home/.qwen/settings.json` for an unattended, offline run.
pub fn write_settings(home: &Path) {
    let dir = home.join(".qwen");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        // No update check, no telemetry, no usage statistics.
        "general": {"enableAutoUpdate": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        // OpenAI-compatible auth; the key, URL and model come from the env.
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": MODEL},
        "ide": {"enabled": false, "hasSeenNudge": true},
        // Otherwise every turn is followed by a background "memory
        // extraction" request that a keyword-driven mock could answer with
        // a tool call.
        "memory": {"enableManagedAutoMemory": false},
        "ui": {"enableUserFeedback": false},
    });
    std::fs::write(
        dir.join("settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
}

/// The duet profile: Qwen with dual output, its own HOME, the mock as its
/// model, one process (no relauncher, so SIGTERM reaches the TUI itself).
pub fn profile(bin: &Path, home: &Path, workspace: &Path, mock: &MockLlm) -> Profile {
    let env = [
        ("HOME", home.to_string_lossy().into_owned()),
        ("OPENAI_API_KEY", "sk-mock".into()),
        ("OPENAI_BASE_URL", mock.base_url.clone()),
        ("OPENAI_MODEL", MODEL.into()),
        ("QWEN_CODE_NO_RELAUNCH", "1".into()),
        ("QWEN_CODE_DISABLE_PRECONNECT", "1".into()),
    ];
    Profile {
        name: "qwen".into(),
        description: Some("Qwen Code with dual output".into()),
        command: bin.to_string_lossy().into_owned(),
        args: [
            "--json-file",
            "{events_file}",
            "--input-file",
            "{input_file}",
        ]
        .map(String::from)
        .to_vec(),
        env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        cwd: Some(workspace.to_string_lossy().into_owned()),
        ready_text: Some(duet_server::config::QWEN_READY_TEXT.into()),
        channel: None,
        resume_args: None,
    }
}

/// The telling lines of Qwen's debug log (`~/.qwen/debug/latest`): remote
/// input (the only trace of input it dropped or rejected), startup
/// milestones, errors.
pub fn debug_log_summary(home: &Path) -> String {
    const TELLING: &[&str] = &[
        "REMOTE_INPUT",
        "Config initialization completed",
        "[ERROR]",
        "DualOutput",
    ];
    let text = std::fs::read_to_string(home.join(".qwen/debug/latest")).unwrap_or_default();
    text.lines()
        .filter(|l| TELLING.iter().any(|t| l.contains(t)))
        .take(60)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The profile and shared settings file of docs/qwen-profile.md, made to run
/// here: the installed `qwen`, the mock as the endpoint, the settings file
/// written to `dir`. Everything else is as documented.
pub fn documented_profile(bin: &Path, mock: &MockLlm, dir: &Path) -> Profile {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/qwen-profile.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let toml_text = fenced_block(&doc, "toml", "[[profile]]");
    let config: duet_server::config::ConfigFile =
        toml::from_str(&toml_text).expect("the documented profile parses");
    assert_eq!(config.profiles.len(), 1, "{toml_text}");
    let mut profile = config.profiles.into_iter().next().unwrap();
    let settings = fenced_block(&doc, "json", "\"$version\"");
    serde_json::from_str::<serde_json::Value>(&settings).expect("the documented settings parse");
    let settings_path = dir.join("qwen-settings.json");
    std::fs::write(&settings_path, &settings).unwrap();

    profile.name = "agent".into();
    profile.command = bin.to_string_lossy().into_owned();
    for key in [
        "HOME",
        "QWEN_CODE_SYSTEM_SETTINGS_PATH",
        "QWEN_CODE_NO_RELAUNCH",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
    ] {
        assert!(profile.env.contains_key(key), "the profile sets no {key}");
    }
    let env = &mut profile.env;
    env.insert(
        "QWEN_CODE_SYSTEM_SETTINGS_PATH".into(),
        settings_path.to_string_lossy().into_owned(),
    );
    env.insert("OPENAI_BASE_URL".into(), mock.base_url.clone());
    env.insert("OPENAI_MODEL".into(), MODEL.into());
    // The doc takes the key from duet's environment; a test must not change
    // its process environment, so it goes into the profile.
    env.insert("OPENAI_API_KEY".into(), "sk-mock".into());
    profile
}

/// The first fenced code block of `lang` in `doc` that contains `marker`.
fn fenced_block(doc: &str, lang: &str, marker: &str) -> String {
    let fence = format!("```{lang}\n");
    doc.split(fence.as_str())
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .find(|block| block.contains(marker))
        .unwrap_or_else(|| panic!("no ```{lang} block with {marker:?} in the doc"))
        .to_string()
}
