//! Which session `duet attach [SESSION]` means: an id, a unique prefix of
//! one, or a session's name; with none given, the one running session.

use duet_protocol::rest::{SessionInfo, SessionStatus};

/// Why no one session was picked: the message says how to choose.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum PickError {
    #[error("no session is running; `duet run [PROFILE]` starts one")]
    NoneRunning,
    #[error("{count} sessions are running; name one: `duet attach ID` (an id, a unique start of one, or a name)\n{table}")]
    Several { count: usize, table: String },
    #[error("no session {0:?}; `duet ls` lists them")]
    Unknown(String),
    #[error("{query:?} could be any of these; give more of the id:\n{table}")]
    Ambiguous { query: String, table: String },
}

/// The session `query` names among `sessions` (or the only running one).
pub(crate) fn pick(
    sessions: &[SessionInfo],
    query: Option<&str>,
) -> Result<SessionInfo, PickError> {
    let Some(query) = query.map(str::trim) else {
        let running: Vec<&SessionInfo> = sessions
            .iter()
            .filter(|s| s.status == SessionStatus::Running)
            .collect();
        return match running.as_slice() {
            [] => Err(PickError::NoneRunning),
            [one] => Ok((*one).clone()),
            many => Err(PickError::Several {
                count: many.len(),
                table: super::ls::table(many),
            }),
        };
    };
    if let Some(s) = sessions.iter().find(|s| s.id.to_string() == query) {
        return Ok(s.clone());
    }
    // A name, then the start of an id; a running session wins over ended
    // ones of the same name (names outlive their sessions).
    let named: Vec<&SessionInfo> = sessions
        .iter()
        .filter(|s| s.name.as_deref() == Some(query))
        .collect();
    let by_prefix: Vec<&SessionInfo> = if query.is_empty() {
        Vec::new()
    } else {
        sessions
            .iter()
            .filter(|s| s.id.to_string().starts_with(&query.to_ascii_lowercase()))
            .collect()
    };
    let candidates = if named.is_empty() { by_prefix } else { named };
    let running: Vec<&SessionInfo> = candidates
        .iter()
        .copied()
        .filter(|s| s.status == SessionStatus::Running)
        .collect();
    match (candidates.as_slice(), running.as_slice()) {
        ([], _) => Err(PickError::Unknown(query.to_string())),
        ([one], _) | (_, [one]) => Ok((*one).clone()),
        (many, _) => Err(PickError::Ambiguous {
            query: query.to_string(),
            table: super::ls::table(many),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use duet_protocol::ids::SessionId;

    fn session(id: &str, name: Option<&str>, running: bool) -> SessionInfo {
        let status = if running {
            SessionStatus::Running
        } else {
            SessionStatus::Exited
        };
        let mut s = crate::board::tests::entry(0, status, 0).session;
        s.id = id.parse::<SessionId>().unwrap();
        s.name = name.map(String::from);
        s
    }

    const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
    const B: &str = "aaaabbbb-0000-4000-8000-000000000002";
    const C: &str = "cccccccc-0000-4000-8000-000000000003";

    #[test]
    fn ids_prefixes_and_names() {
        let all = [
            session(A, Some("api"), true),
            session(B, None, false),
            session(C, Some("api"), false),
        ];
        let id = |r: Result<SessionInfo, PickError>| r.unwrap().id.to_string();
        assert_eq!(id(pick(&all, Some(C))), C);
        assert_eq!(id(pick(&all, Some("cc"))), C);
        assert_eq!(id(pick(&all, Some("AAAAB"))), B);
        // Two named "api": the running one.
        assert_eq!(id(pick(&all, Some("api"))), A);
        assert!(matches!(
            pick(&all, Some("aaaa")),
            Ok(s) if s.id.to_string() == A
        ));
        assert_eq!(
            pick(&all, Some("zz")).unwrap_err(),
            PickError::Unknown("zz".into())
        );
        // The only running one, with none named.
        assert_eq!(id(pick(&all, None)), A);
    }

    #[test]
    fn none_or_several_running_say_how_to_choose() {
        assert_eq!(
            pick(&[session(B, None, false)], None).unwrap_err(),
            PickError::NoneRunning
        );
        let two = [session(A, None, true), session(C, None, true)];
        let err = pick(&two, None).unwrap_err().to_string();
        assert!(
            err.contains("duet attach ID") && err.contains("aaaaaaaa") && err.contains("cccccccc"),
            "{err}"
        );
        let both_ended = [session(A, None, false), session(B, None, false)];
        assert!(matches!(
            pick(&both_ended, Some("aaaa")),
            Err(PickError::Ambiguous { .. })
        ));
    }
}
