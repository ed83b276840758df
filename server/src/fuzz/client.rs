//! Client WebSocket messages (`ws::recv::parse`): never panics; a message
//! it accepts has only the fields its type declares; an error answers the
//! client's `id` whenever the client gave one.

use duet_protocol::ws::{ClientMessage, ServerMessage};
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::ws::recv::parse;

const TYPES: &[&str] = &[
    "submit", "approve", "discard", "resize", "cancel", "pause", "resume", "ping", "Submit",
    "hello", "",
];

/// The fields each client message type may carry (besides `type`).
fn fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "submit" => &["text", "id"],
        "approve" => &["request_id", "allowed", "option", "id"],
        "discard" => &["prompt", "id"],
        "resize" => &["cols", "rows", "id"],
        _ => &["id"],
    }
}

const KEYS: &[&str] = &[
    "type",
    "id",
    "text",
    "request_id",
    "allowed",
    "option",
    "prompt",
    "cols",
    "rows",
    "extra",
];

fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => super::string().prop_map(Value::String),
        1 => any::<bool>().prop_map(Value::Bool),
        2 => (0u64..70_000).prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => super::json_value(KEYS),
    ]
}

/// Objects shaped like client messages: a type, some of its fields and
/// maybe others.
fn message() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            4 => prop::sample::select(TYPES).prop_map(|t| Some(Value::from(t))),
            1 => Just(None),
            1 => field_value().prop_map(Some),
        ],
        prop::collection::vec((super::key(KEYS), field_value()), 0..6),
    )
        .prop_map(|(kind, kv)| {
            let mut obj: Map<String, Value> = kv.into_iter().collect();
            if let Some(kind) = kind {
                obj.insert("type".into(), kind);
            }
            Value::Object(obj)
        })
}

/// Checks one text against the properties.
fn check(text: &str) -> Result<(), TestCaseError> {
    let result = parse(text);
    let value: Option<Value> = serde_json::from_str(text).ok();
    let obj = value.as_ref().and_then(Value::as_object);
    match result {
        Ok(msg) => {
            let obj = obj.expect("accepted a message that is not a JSON object");
            let kind = obj["type"].as_str().unwrap();
            for key in obj.keys() {
                prop_assert!(
                    key == "type" || fields(kind).contains(&key.as_str()),
                    "accepted unknown field {:?} in {}",
                    key,
                    text
                );
            }
            // What was accepted is what was sent (an explicit null is an
            // absent optional field).
            let back = serde_json::to_value(&msg).unwrap();
            for (k, v) in obj {
                prop_assert!(
                    back.get(k) == Some(v) || (v.is_null() && back.get(k).is_none()),
                    "field {:?} changed: {} -> {}",
                    k,
                    text,
                    back
                );
            }
        }
        Err(reply) => {
            let ServerMessage::Error { message, id, .. } = *reply else {
                return Err(TestCaseError::fail("parse failed without an error message"));
            };
            prop_assert!(!message.is_empty());
            let sent_id = obj.and_then(|o| o.get("id")).and_then(Value::as_str);
            prop_assert_eq!(id.as_deref(), sent_id, "error lost the client id: {}", text);
        }
    }
    Ok(())
}

#[test]
fn client_messages_parse_strictly_and_answer_with_the_id() {
    proptest!(super::config(), |(v in message())| {
        check(&v.to_string())?;
    });
}

#[test]
fn arbitrary_text_never_panics() {
    let text = prop_oneof![any::<String>(), "[{}\\[\\]\":,a-z0-9 ]{0,40}"];
    proptest!(super::config(), |(text in text)| {
        check(&text)?;
    });
}

#[test]
fn unknown_fields_are_rejected_with_the_id() {
    let known = prop::sample::select(&TYPES[..8]);
    proptest!(super::config(), |(kind in known, extra in "[a-z_]{1,10}", v in field_value())| {
        prop_assume!(extra != "type" && !fields(kind).contains(&extra.as_str()));
        let mut obj = Map::new();
        obj.insert("type".into(), kind.into());
        obj.insert("id".into(), "c1".into());
        obj.insert(extra, v);
        let reply = parse(&Value::Object(obj).to_string());
        let Err(reply) = reply else {
            return Err(TestCaseError::fail("accepted an unknown field"));
        };
        let answered = matches!(*reply, ServerMessage::Error { id: Some(ref id), .. } if id == "c1");
        prop_assert!(answered, "the error lost the id");
    });
    // A valid message of each type still parses.
    for text in [
        r#"{"type":"submit","text":"hi","id":"1"}"#,
        r#"{"type":"approve","request_id":"r","allowed":true}"#,
        r#"{"type":"resize","cols":80,"rows":24}"#,
        r#"{"type":"ping"}"#,
    ] {
        assert!(parse(text).is_ok(), "{text}");
    }
    let _ = ClientMessage::Ping { id: None };
}
