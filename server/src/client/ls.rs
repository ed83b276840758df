//! `duet ls`: the sessions as a table (or JSON, for scripts).

use duet_protocol::rest::{SessionInfo, SessionStatus};

/// The sessions as a table, newest last; one line each.
pub(crate) fn table(sessions: &[&SessionInfo]) -> String {
    let mut sessions = sessions.to_vec();
    sessions.sort_by_key(|s| s.created_at);
    let home = std::env::var("HOME").ok().filter(|h| h.len() > 1);
    let mut rows = vec![[
        "ID".to_string(),
        "NAME".into(),
        "PROFILE".into(),
        "STATUS".into(),
        "APPROVALS".into(),
        "CLIENTS".into(),
        "DIRECTORY".into(),
    ]];
    for s in sessions {
        let dir = s.work_dir.clone().unwrap_or_default();
        let dir = match &home {
            Some(h) if dir == *h => "~".to_string(),
            Some(h) => match dir.strip_prefix(h.as_str()) {
                Some(rest) if rest.starts_with('/') => format!("~{rest}"),
                _ => dir,
            },
            None => dir,
        };
        rows.push([
            s.id.to_string()[..8].to_string(),
            s.name.clone().unwrap_or_else(|| "-".into()),
            s.profile.clone(),
            status(s),
            s.pending_approvals.to_string(),
            s.clients.to_string(),
            dir,
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect();
            line.join("  ").trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `running`, or how the program ended.
pub(crate) fn status(s: &SessionInfo) -> String {
    match (&s.status, &s.exit) {
        (SessionStatus::Running, _) => "running".into(),
        (SessionStatus::Exited, Some(e)) => match (&e.code, &e.signal) {
            (_, Some(sig)) => format!("ended ({sig})"),
            (Some(code), None) => format!("exited {code}"),
            (None, None) => "ended".into(),
        },
        (SessionStatus::Exited, None) => "ended".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_and_home_is_shortened() {
        let mut a: SessionInfo = serde_json::from_value(serde_json::json!({
            "id": "aaaaaaaa-0000-4000-8000-000000000001", "profile": "claude",
            "status": "running", "created_at": 1, "cols": 80, "rows": 24, "last_seq": 0,
            "pending_approvals": 2, "clients": 1, "connected": [], "resumable": false,
            "channel": {"kind": "claude", "events": true, "submit": true, "approve": true},
            "work_dir": format!("{}/src/duet", std::env::var("HOME").unwrap_or_default()),
        }))
        .unwrap();
        let mut b = a.clone();
        b.id = "bbbbbbbb-0000-4000-8000-000000000002".parse().unwrap();
        b.name = Some("long name here".into());
        b.status = SessionStatus::Exited;
        b.exit = Some(duet_protocol::rest::ExitInfo {
            code: Some(3),
            signal: None,
            success: false,
            server_stopped: false,
            ended_by: None,
        });
        b.created_at = 0;
        a.work_dir = Some("/srv/x".into());
        let t = table(&[&a, &b]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[1].starts_with("bbbbbbbb  long name here  claude   exited 3"),
            "{t}"
        );
        assert!(
            lines[2].starts_with("aaaaaaaa  -               claude   running "),
            "{t}"
        );
        assert!(lines[2].ends_with("/srv/x"), "{t}");
        let col = lines[0].find("DIRECTORY").unwrap();
        assert_eq!(lines[2].find("/srv/x"), Some(col));
    }
}
