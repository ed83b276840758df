//! What is worth a push, found by comparing each board with the last (the
//! same rules as the page's hidden-tab notifications, `web/src/notify/
//! attention.ts`, and the same tags): an approval waiting (the session's
//! name, the tool and its input), a turn that finished after running
//! longer than the threshold, the program exiting (with its status); and
//! an approval decided or abandoned, which withdraws its notification.

use std::collections::{HashMap, HashSet};

use duet_protocol::board::{Board, BoardEntry};
use duet_protocol::ids::SessionId;
use duet_protocol::push::{PushKind, PushShow};
use duet_protocol::rest::{SessionInfo, SessionStatus};
use serde_json::Value;

/// Characters of a tool's input shown in a notification.
const BODY_CHARS: usize = 200;

/// One change to tell devices about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change {
    Show(PushShow),
    /// Withdraw the notification with this tag, for the session.
    Close {
        tag: String,
        session: SessionId,
    },
}

/// The tag of an approval's notification (as the page's).
pub(crate) fn approval_tag(session: SessionId, request_id: &str) -> String {
    format!("duet-approval-{session}-{request_id}")
}

/// The app's address of a session, at an approval when given (as the page's).
fn session_url(session: SessionId, request_id: Option<&str>) -> String {
    let base = format!("./#/session/{}", percent(&session.to_string()));
    match request_id {
        Some(r) => format!("{base}/approval/{}", percent(r)),
        None => base,
    }
}

/// `encodeURIComponent` for the characters request ids may hold.
fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The session's name, else its terminal title, else its profile.
fn label(s: &SessionInfo) -> &str {
    [
        s.name.as_deref(),
        s.prompt_name.as_deref(),
        s.title.as_deref(),
    ]
    .into_iter()
    .flatten()
    .find(|n| !n.is_empty())
    .unwrap_or(&s.profile)
}

/// Lines in `s`, as an editor counts them.
fn lines(s: &str) -> usize {
    s.lines().count().max(usize::from(!s.is_empty()))
}

/// How big a file tool's change is: lines replaced by lines (an edit), or
/// the lines of what is written.
fn change_size(input: &Value) -> Option<String> {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if let (Some(old), Some(new)) = (s("old_string"), s("new_string")) {
        let (o, n) = (lines(old), lines(new));
        return Some(format!("−{o} +{n} line{}", plural(n.max(o))));
    }
    let content = s("content").or(s("new_source"))?;
    let n = lines(content);
    Some(format!("{n} line{}, {} bytes", plural(n), content.len()))
}

/// A line about a tool's input: the command, the file (and the size of
/// the change), or the JSON.
fn summary(input: &Value) -> String {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let text = if let Some(path) = s("file_path")
        .or(s("path"))
        .or(s("absolute_path"))
        .or(s("notebook_path"))
    {
        let name = path
            .rsplit(['/', '\\'])
            .find(|p| !p.is_empty())
            .unwrap_or(path);
        match change_size(input) {
            Some(size) => format!("{name} ({size})"),
            None => name.to_string(),
        }
    } else if let Some(cmd) = s("command").or(s("cmd")) {
        cmd.lines().next().unwrap_or("").to_string()
    } else {
        input.to_string()
    };
    text.chars().take(BODY_CHARS).collect()
}

fn approvals(e: &BoardEntry) -> impl Iterator<Item = PushShow> + '_ {
    let id = e.session.id;
    e.pending.iter().map(move |a| PushShow {
        tag: approval_tag(id, &a.request_id),
        title: format!("{}: allow {}?", label(&e.session), a.tool_name),
        body: summary(&a.input),
        url: session_url(id, Some(&a.request_id)),
        kind: PushKind::Approval,
        session: id,
        request_id: Some(a.request_id.clone()),
        actions: Vec::new(),
        decide: None,
    })
}

/// A duration as the board writes it (`45 s`, `3 min`, `1 h 5 min`).
fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if s < 60 {
        return format!("{s} s");
    }
    let m = s / 60;
    if m < 60 {
        return format!("{m} min");
    }
    match m % 60 {
        0 => format!("{} h", m / 60),
        r => format!("{} h {r} min", m / 60),
    }
}

/// What changed from `prev` to `next` (`now`: when `next` was taken, Unix
/// ms; a turn notifies when it ran at least `long_turn_ms`).
pub(crate) fn changes(prev: &Board, next: &Board, long_turn_ms: u64, now: u64) -> Vec<Change> {
    let mut out = Vec::new();
    let before: HashMap<SessionId, &BoardEntry> =
        prev.sessions.iter().map(|e| (e.session.id, e)).collect();
    let next_tags: HashSet<String> = next
        .sessions
        .iter()
        .flat_map(|e| approvals(e).map(|a| a.tag))
        .collect();
    for e in &prev.sessions {
        for a in approvals(e) {
            if !next_tags.contains(&a.tag) {
                out.push(Change::Close {
                    tag: a.tag,
                    session: e.session.id,
                });
            }
        }
    }
    for e in &next.sessions {
        let old = before.get(&e.session.id);
        let shown: HashSet<String> = old
            .map(|o| approvals(o).map(|a| a.tag).collect())
            .unwrap_or_default();
        out.extend(
            approvals(e)
                .filter(|a| !shown.contains(&a.tag))
                .map(Change::Show),
        );
        let Some(old) = old else { continue };
        let id = e.session.id;
        let name = label(&e.session);
        if let Some(began) = old.busy_since {
            let took = now.saturating_sub(began);
            if e.busy_since != Some(began)
                && e.session.status == SessionStatus::Running
                && took >= long_turn_ms
            {
                out.push(Change::Show(PushShow {
                    tag: format!("duet-turn-{id}"),
                    title: format!("{name}: turn finished"),
                    body: format!("The agent finished after {}.", duration(took)),
                    url: session_url(id, None),
                    kind: PushKind::Turn,
                    session: id,
                    request_id: None,
                    actions: Vec::new(),
                    decide: None,
                }));
            }
        }
        if old.session.status == SessionStatus::Running && e.session.status == SessionStatus::Exited
        {
            let x = e.session.exit.as_ref();
            let how = match (x.and_then(|x| x.code), x.and_then(|x| x.signal.as_deref())) {
                // Its status is the shutdown's SIGTERM, not a crash.
                _ if x.is_some_and(|x| x.server_stopped) => "ended when the server stopped".into(),
                // Someone ended it on purpose: its 143 is no failure.
                _ if x.is_some_and(|x| x.ended_by.is_some()) => format!(
                    "was ended by {}",
                    x.and_then(|x| x.ended_by.as_deref()).unwrap_or_default()
                ),
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(sig)) => format!("was ended by {sig}"),
                (None, None) => "ended".into(),
            };
            let verb = if x.is_some_and(|x| x.success) {
                "finished"
            } else {
                "stopped"
            };
            out.push(Change::Show(PushShow {
                tag: format!("duet-exit-{id}"),
                title: format!("{name} {verb}"),
                body: format!("The program {how}."),
                url: session_url(id, None),
                kind: PushKind::Exit,
                session: id,
                request_id: None,
                actions: Vec::new(),
                decide: None,
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use duet_protocol::rest::{Approval, ApprovalState, ExitInfo};

    fn entry(id: SessionId, busy_since: Option<u64>, pending: &[&str]) -> BoardEntry {
        let mut e = crate::board::tests::entry(0, SessionStatus::Running, pending.len() as u32);
        e.session.id = id;
        e.session.name = Some("nightly".into());
        e.busy_since = busy_since;
        e.pending = pending
                .iter()
                .map(|r| Approval {
                    request_id: r.to_string(),
                    tool_name: "edit".into(),
                    tool_use_id: None,
                    input: serde_json::json!({"file_path": "/src/a b.rs", "old_string": "x", "new_string": "y"}),
                    state: ApprovalState::Pending,
                    decided_by: None,
                    decided_by_name: None,
                    reason: None,
                    options: vec![],
                    chosen: None,
                    confirmed: false,
                    seq: 0,
                })
                .collect();
        e
    }

    fn board(entries: Vec<BoardEntry>) -> Board {
        Board { sessions: entries }
    }

    #[test]
    fn new_approvals_show_decided_ones_close_long_turns_and_exits_notify() {
        let id = SessionId::new();
        let prev = board(vec![entry(id, Some(1_000), &["r1"])]);
        let next = board(vec![entry(id, Some(1_000), &["r2/x"])]);
        let c = changes(&prev, &next, 30_000, 5_000);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0],
            Change::Close {
                tag: approval_tag(id, "r1"),
                session: id
            }
        );
        let Change::Show(s) = &c[1] else { panic!() };
        assert_eq!(s.title, "nightly: allow edit?");
        assert_eq!(s.body, "a b.rs (−1 +1 line)");
        assert_eq!(
            summary(&serde_json::json!({"file_path": "n.txt", "content": "a\nb\n"})),
            "n.txt (2 lines, 4 bytes)"
        );
        assert_eq!(
            summary(&serde_json::json!({"command": "make test\nmake lint"})),
            "make test"
        );
        assert_eq!(s.url, format!("./#/session/{id}/approval/r2%2Fx"));

        // A short turn ends quietly; a long one notifies.
        let idle = board(vec![entry(id, None, &[])]);
        let short = changes(
            &board(vec![entry(id, Some(1_000), &[])]),
            &idle,
            30_000,
            5_000,
        );
        assert!(short.is_empty(), "{short:?}");
        let long = changes(
            &board(vec![entry(id, Some(1_000), &[])]),
            &idle,
            30_000,
            200_000,
        );
        let Change::Show(s) = &long[0] else { panic!() };
        assert_eq!(
            (s.kind, s.body.as_str()),
            (PushKind::Turn, "The agent finished after 3 min.")
        );

        let mut ended = entry(id, None, &[]);
        ended.session.status = SessionStatus::Exited;
        ended.session.exit = Some(ExitInfo {
            code: Some(2),
            signal: None,
            success: false,
            server_stopped: false,
            ended_by: None,
        });
        let c = changes(&idle, &board(vec![ended.clone()]), 30_000, 0);
        let Change::Show(s) = &c[0] else { panic!() };
        assert_eq!(s.title, "nightly stopped");
        assert_eq!(s.body, "The program exited with status 2.");
        // Ended by duet's own shutdown: no crash status to alarm anyone.
        let mut stopped = ended;
        stopped.session.exit = Some(ExitInfo {
            code: Some(143),
            signal: None,
            success: false,
            server_stopped: true,
            ended_by: None,
        });
        let c = changes(&idle, &board(vec![stopped]), 30_000, 0);
        let Change::Show(s) = &c[0] else { panic!() };
        assert_eq!(s.body, "The program ended when the server stopped.");
        assert_eq!(duration(3_725_000), "1 h 2 min");
    }
}
