//! The state directory: made private when missing, refused when unsafe
//! (never chmod-ed), and only what duet made is ever swept from it.

mod support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use support::*;

/// Starts a server on `state_dir`; the error message if it refuses.
async fn start_on(state_dir: &Path) -> Result<TestServer, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut opts = duet_server::ServerOptions::new(profiles(), Some(TOKEN.into()));
    opts.state_dir = state_dir.to_path_buf();
    // The state directory is checked before the server serves: a refusal is
    // the outcome of the first poll, a good directory leaves it waiting for
    // connections.
    let mut run = Box::pin(duet_server::run(listener, opts, std::future::pending()));
    match futures_util::FutureExt::now_or_never(&mut run) {
        Some(Err(e)) => Err(format!("{e:#}")),
        Some(Ok(())) => panic!("the server stopped by itself"),
        None => {
            drop(run);
            Ok(TestServer::start_with(|o| o.state_dir = state_dir.to_path_buf()).await)
        }
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn dir_with_mode(parent: &Path, name: &str, mode: u32) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_directory_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    // Like /tmp: world-writable and sticky, with someone else's session-like
    // directory in it.
    let shared = dir_with_mode(tmp.path(), "shared", 0o1777);
    let theirs = shared.join(uuid::Uuid::new_v4().to_string());
    std::fs::create_dir(&theirs).unwrap();
    let err = start_on(&shared).await.err().expect("refused");
    assert!(err.contains("state directory"), "{err}");
    assert!(err.contains(&shared.display().to_string()), "{err}");
    assert_eq!(mode(&shared), 0o1777, "the mode was changed");
    assert!(theirs.exists());
    for m in [0o750, 0o705, 0o770, 0o711] {
        let dir = dir_with_mode(tmp.path(), &format!("m{m:o}"), m);
        let err = start_on(&dir).await.err().expect("refused");
        assert!(err.contains("state directory"), "{m:o}: {err}");
        assert_eq!(mode(&dir), m, "the mode was changed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let real = dir_with_mode(tmp.path(), "real", 0o700);
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = start_on(&link).await.err().expect("refused");
    assert!(err.contains("symlink"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_owned_by_someone_else_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = dir_with_mode(tmp.path(), "theirs", 0o700);
    let me = nix::unistd::geteuid().as_raw();
    let other = if me == 65534 { 65533 } else { 65534 };
    if std::os::unix::fs::chown(&dir, Some(other), None).is_err() {
        // Only root can give a directory away; nothing to test otherwise.
        eprintln!("not root: cannot make a directory owned by someone else; skipped");
        return;
    }
    let err = start_on(&dir).await.err().expect("refused");
    assert!(err.contains("owned by"), "{err}");
    assert_eq!(std::fs::metadata(&dir).unwrap().uid(), other);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_directory_is_created_private() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a").join("state");
    let server = start_on(&dir).await.expect("starts");
    assert_eq!(mode(&dir), 0o700);
    // And it is accepted as it is on the next start (once the first has
    // stopped: one duet per state directory).
    server.shutdown().await;
    let again = start_on(&dir).await.expect("starts again");
    drop(again);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_directories_duet_made_are_swept() {
    let tmp = tempfile::tempdir().unwrap();
    let state = dir_with_mode(tmp.path(), "state", 0o700);
    // A session directory of an earlier run, made by duet (it has the marker
    // a session directory gets at creation), and a foreign one with a
    // session-like name; both long untouched.
    let server = TestServer::start_with(|o| o.state_dir = state.clone()).await;
    let s = server.create("plain").await;
    let ours = state.join(s.id.to_string());
    server.shutdown().await;
    let foreign = state.join(uuid::Uuid::new_v4().to_string());
    std::fs::create_dir_all(foreign.join("work")).unwrap();
    std::fs::write(foreign.join("events.jsonl"), "{}\n").unwrap();
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    for dir in [&ours, &foreign] {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let _ = std::fs::File::open(entry.path()).and_then(|f| f.set_modified(hour_ago));
        }
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }
    let server = TestServer::start_with(|o| {
        o.state_dir = state.clone();
        o.retain = Duration::from_secs(60);
    })
    .await;
    // The server is up once it answers; the sweep ran before that.
    server.json::<serde_json::Value>("/api/sessions").await;
    assert!(!ours.exists(), "duet's own leftover was not swept");
    assert!(foreign.exists(), "a directory duet did not make was swept");
    assert!(foreign.join("events.jsonl").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_directory_removed_while_running_is_made_again() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let server = TestServer::start_with(|o| o.state_dir = state.clone()).await;
    // The server is up (and made the directory) once it answers.
    server.json::<serde_json::Value>("/api/sessions").await;
    // A tmp cleaner removed it (systemd-tmpfiles ages out /tmp/duet-<uid>).
    std::fs::remove_dir_all(&state).unwrap();
    let s = server.create("plain").await;
    assert_eq!(mode(&state), 0o700);
    assert!(state.join(s.id.to_string()).is_dir());
}

#[test]
fn the_binary_refuses_before_it_prints_a_start_url() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = dir_with_mode(tmp.path(), "shared", 0o1777);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_duet"))
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(&shared)
        .env_remove("DUET_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("duet is ready"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("state directory"), "{stderr}");
}
