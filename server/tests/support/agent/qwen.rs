//! Real Qwen Code under test: where its executable is, and the private HOME
//! and environment that make it run offline against the mock LLM (the
//! settings of docs/qwen-code.md §1): its dual-output profile (`program`),
//! the documented one, and its headless ones (stream-json and ACP).

use std::path::{Path, PathBuf};

use duet_server::config::{ChannelKind, Profile};
use serde_json::json;

use super::Setup;
use crate::mocks::chat_completions::{MockLlm, MODEL};
use crate::support::installed::{cache_dir, node24_dir};

/// The Qwen Code releases every scenario runs against: the last one on
/// Node 20 and the latest (Node 24), installed by scripts/install-qwen.sh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QwenVersion {
    /// 0.15.10 on the system's Node 20, through its `qwen` bin.
    V0_15,
    /// 0.24.4 on Node 24 (scripts/install-node.sh), `cli.js` run directly
    /// (docs/qwen-code.md §8).
    V0_24,
}

impl QwenVersion {
    /// `session_start.data.version`, and the folder install-qwen.sh uses.
    pub(crate) fn version(self) -> &'static str {
        match self {
            Self::V0_15 => "0.15.10",
            Self::V0_24 => "0.24.4",
        }
    }

    /// `session_start.data.protocol_version`.
    pub(crate) fn protocol_version(self) -> u64 {
        match self {
            Self::V0_15 => 1,
            Self::V0_24 => 2,
        }
    }
}

/// How to start one installed Qwen Code.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub version: QwenVersion,
    /// The executable: `qwen`, or Node 24's `node`.
    pub command: PathBuf,
    /// Arguments before Qwen's own (`--expose-gc cli.js` for 0.24).
    pub args: Vec<String>,
    /// A directory to put first on Qwen's PATH (Node 24's, for 0.24).
    pub path_first: Option<PathBuf>,
}

/// Where `version` is installed: for 0.15 `DUET_QWEN_BIN`, else the
/// executable scripts/install-qwen.sh installs (under `DUET_CACHE_DIR`,
/// default `<repo>/.cache`); for 0.24 its `cli.js` and Node 24 there.
/// `None` means: skip, because `DUET_SKIP_QWEN=1`. Missing otherwise is a
/// failure, so a machine without Qwen cannot pass these tests by accident.
pub(crate) fn launch(version: QwenVersion) -> Option<Launch> {
    let cache = cache_dir();
    let prefix = cache.join(format!("qwen-code-{}", version.version()));
    let (found, missing) = match version {
        QwenVersion::V0_15 => {
            let bin = match std::env::var_os("DUET_QWEN_BIN").filter(|p| !p.is_empty()) {
                Some(p) => PathBuf::from(p),
                None => prefix.join("node_modules/.bin/qwen"),
            };
            let found = bin.is_file().then(|| Launch {
                version,
                command: bin.clone(),
                args: Vec::new(),
                path_first: None,
            });
            (found, bin.display().to_string())
        }
        QwenVersion::V0_24 => {
            let cli = prefix.join("node_modules/@qwen-code/qwen-code/cli.js");
            let node = node24_dir(&cache);
            let found = match (&node, cli.is_file()) {
                (Some(dir), true) => Some(Launch {
                    version,
                    command: dir.join("node"),
                    // What its `qwen` wrapper would run, minus the wrapper
                    // process (a SIGTERM to it alone orphans the TUI; §8.1).
                    args: vec!["--expose-gc".into(), cli.to_string_lossy().into_owned()],
                    path_first: Some(dir.clone()),
                }),
                _ => None,
            };
            let missing = format!(
                "{} (with Node 24 in {}/node24: {})",
                cli.display(),
                cache.display(),
                if node.is_some() { "found" } else { "missing" }
            );
            (found, missing)
        }
    };
    if found.is_some() {
        return found;
    }
    if std::env::var("DUET_SKIP_QWEN").as_deref() == Ok("1") {
        eprintln!(
            "SKIPPED: Qwen Code {} not found at {missing} and DUET_SKIP_QWEN=1; this test ran nothing",
            version.version()
        );
        return None;
    }
    panic!(
        "Qwen Code {} not found at {missing}.\n\
         Install it with scripts/install-qwen.sh {} (or, for 0.15.10, point DUET_QWEN_BIN at a qwen \
         executable), or set DUET_SKIP_QWEN=1 to skip the Qwen end-to-end tests.",
        version.version(),
        version.version(),
    );
}

/// Writes `$home/.qwen/settings.json` for an unattended, offline run.
pub(crate) fn write_settings(home: &Path, version: QwenVersion) {
    let dir = home.join(".qwen");
    std::fs::create_dir_all(&dir).unwrap();
    let mut settings = json!({
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
    if version == QwenVersion::V0_24 {
        // docs/qwen-code.md §8.1: a follow-up suggestion request with all
        // tools goes out after every turn; and a second background memory
        // agent. (The approval mode comes from the profile's arguments, as
        // in the built-in profile.)
        settings["ui"]["enableFollowupSuggestions"] = json!(false);
        settings["memory"]["enableManagedAutoDream"] = json!(false);
    }
    std::fs::write(
        dir.join("settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
}

/// What every Qwen run here has in its environment: its own HOME, the
/// mock as its model, one process (no relauncher, so SIGTERM reaches Qwen
/// itself), no preconnect.
fn offline_env(home: &Path, mock: &MockLlm) -> Vec<(&'static str, String)> {
    vec![
        ("HOME", home.to_string_lossy().into_owned()),
        ("OPENAI_API_KEY", "sk-mock".into()),
        ("OPENAI_BASE_URL", mock.base_url.clone()),
        ("OPENAI_MODEL", MODEL.into()),
        ("QWEN_CODE_NO_RELAUNCH", "1".into()),
        ("QWEN_CODE_DISABLE_PRECONNECT", "1".into()),
    ]
}

/// Qwen Code 0.24 headless on `channel` (stream-json or ACP), run with
/// `args` after its `cli.js`, against a fresh mock; resumed as duet
/// resumes it (stream-json: `--resume <id>`; ACP: the same command, then
/// `session/load`). Its handshake may take a minute: it takes 7-10 s to
/// start on 2 busy cores. `None`: skip, as for [`launch`].
pub(crate) async fn headless(channel: ChannelKind, args: &[&str]) -> Option<Setup<MockLlm>> {
    let launch = launch(QwenVersion::V0_24)?;
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    write_settings(home.path(), QwenVersion::V0_24);
    let mock = MockLlm::start().await;
    let args: Vec<String> = launch
        .args
        .iter()
        .cloned()
        .chain(args.iter().map(|a| a.to_string()))
        .collect();
    let mut resume = args.clone();
    if channel == ChannelKind::StreamJson {
        resume.extend(["--resume".into(), "{agent_session_id}".into()]);
    }
    let profile = Profile {
        extra_args: false,
        name: "qwen".into(),
        description: None,
        command: launch.command.to_string_lossy().into_owned(),
        args,
        env: offline_env(home.path(), &mock)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        cwd: Some(workspace.path().to_string_lossy().into_owned()),
        ready_text: None,
        channel: Some(channel),
        resume_args: Some(resume),
    };
    let mut setup = Setup::new(profile, workspace, home, mock);
    setup.patience = std::time::Duration::from_secs(60);
    Some(setup)
}

/// The duet profile: Qwen with dual output, its own HOME, the mock as its
/// model, one process (no relauncher, so SIGTERM reaches the TUI itself).
pub(crate) fn profile(launch: &Launch, home: &Path, workspace: &Path, mock: &MockLlm) -> Profile {
    let mut env = offline_env(home, mock);
    env.extend([
        // Keeps ~/.qwen/debug/ (with the [REMOTE_INPUT] lines) in 0.24,
        // where it is off by default (§8.6).
        ("QWEN_DEBUG_LOG_FILE", "1".into()),
    ]);
    if let Some(dir) = &launch.path_first {
        // Qwen runs `node` itself (hooks, skills), and tools may.
        let path = std::env::var("PATH").unwrap_or_default();
        env.push(("PATH", format!("{}:{path}", dir.display())));
    }
    let mut args = launch.args.clone();
    args.extend(duet_server::config::QWEN_MODE_ARGS.map(String::from));
    args.extend(
        [
            "--json-file",
            "{events_file}",
            "--input-file",
            "{input_file}",
        ]
        .map(String::from),
    );
    // As the built-in profile: the conversation Qwen named in session_start.
    let resume_args = args
        .iter()
        .cloned()
        .chain(["--resume".into(), "{agent_session_id}".into()])
        .collect();
    Profile {
        extra_args: false,
        name: "qwen".into(),
        description: Some("Qwen Code with dual output".into()),
        command: launch.command.to_string_lossy().into_owned(),
        args,
        env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        cwd: Some(workspace.to_string_lossy().into_owned()),
        // 0.15 announces session_start ~1 s before it can answer a prompt
        // (§3.18) and shows "? for shortcuts" once it can. 0.24 never shows
        // that text (§8.2), and keeps what is written after session_start
        // until it is ready: no text to wait for.
        ready_text: match launch.version {
            QwenVersion::V0_15 => Some(duet_server::config::QWEN_READY_TEXT.into()),
            QwenVersion::V0_24 => None,
        },
        channel: None,
        resume_args: Some(resume_args),
    }
}

/// The telling lines of Qwen's debug log (`~/.qwen/debug/latest`): remote
/// input (the only trace of input it dropped or rejected), startup
/// milestones, errors.
pub(crate) fn debug_log_summary(home: &Path) -> String {
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
/// here: the installed Qwen (for 0.24 its `cli.js` on Node 24, as in
/// [`profile`]), the mock as the endpoint, the settings file written to
/// `dir`. Everything else, `ready_text` included, is as documented.
pub(crate) fn documented_profile(launch: &Launch, mock: &MockLlm, dir: &Path) -> Profile {
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
    profile.command = launch.command.to_string_lossy().into_owned();
    profile.args = launch.args.iter().cloned().chain(profile.args).collect();
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
    if let Some(dir) = &launch.path_first {
        let path = std::env::var("PATH").unwrap_or_default();
        env.insert("PATH".into(), format!("{}:{path}", dir.display()));
        // 0.24 writes no debug log without it (§8.6), and the test looks
        // for it to know Qwen's HOME.
        env.insert("QWEN_DEBUG_LOG_FILE".into(), "1".into());
    }
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
