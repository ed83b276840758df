//! The few fields duet reads of every event line, and the check that a
//! line is one JSON object.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The few fields duet looks at in every event; parsing only these (and
/// skipping the rest) also validates that the line is one JSON object.
/// They are taken raw and read afterwards, so that an odd `type` or
/// `event` (a number, an array) leaves the event unmodelled instead of
/// rejecting a valid object (found by fuzzing: `{"type":"system",
/// "event":[]}` was dropped as "not a JSON object").
#[derive(Deserialize)]
pub(super) struct Peek<'a> {
    #[serde(rename = "type", borrow, default)]
    pub(super) kind: Option<&'a RawValue>,
    /// The inner event of a `stream_event`.
    #[serde(borrow, default)]
    pub(super) event: Option<&'a RawValue>,
}

#[derive(Deserialize)]
pub(super) struct PeekInner<'a> {
    #[serde(rename = "type", borrow, default)]
    pub(super) kind: Option<&'a RawValue>,
}

/// A raw field's text, when it is a string.
pub(super) fn string_of(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str(raw?.get()).ok()
}

/// Checks that `line` is one JSON object; the error says why not.
pub(crate) fn validate(line: &str) -> Result<(), String> {
    peek(line).map(drop)
}

pub(super) fn peek(line: &str) -> Result<Peek<'_>, String> {
    if !line.trim_start().starts_with('{') {
        return Err("not an object".into());
    }
    serde_json::from_str::<Peek<'_>>(line).map_err(|e| e.to_string())
}
