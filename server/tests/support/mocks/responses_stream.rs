//! The Responses API's output as the OpenAI Responses mock writes it: the
//! `response` object, its one output item (a message or a function call),
//! and the named, numbered events of a streamed reply (listed in
//! `openai_responses.rs`).

use serde_json::{json, Value};

use super::sse::Event;
use super::Reply;

/// A `response` object.
pub(super) fn response(n: usize, model: &str, status: &str, output: Vec<Value>) -> Value {
    let mut r = json!({"id": format!("resp_mock_{n}"), "object": "response", "created_at": 0,
        "status": status, "model": model, "output": output});
    if status == "completed" {
        r["usage"] = json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15});
    }
    r
}

/// The reply's one output item, `in_progress` (empty) or `completed`.
pub(super) fn item(n: usize, reply: &Reply, status: &str) -> Value {
    let done = status == "completed";
    match reply {
        Reply::Text(pieces) => {
            let content = if done {
                json!([text_part(&pieces.concat())])
            } else {
                json!([])
            };
            json!({"id": format!("msg_mock_{n}"), "type": "message", "status": status,
                "role": "assistant", "content": content})
        }
        Reply::Tool { name, input } => json!({"id": format!("fc_mock_{n}"),
            "type": "function_call", "status": status, "name": name,
            "call_id": format!("call_mock_{n}"), "arguments": if done { input.to_string() } else { String::new() }}),
    }
}

fn text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": []})
}

/// The events of a streamed reply, each named by its `type` and numbered.
pub(super) fn events(n: usize, model: &str, reply: &Reply) -> Vec<Event> {
    let start = response(n, model, "in_progress", vec![]);
    let mut data = vec![
        json!({"type": "response.created", "response": start}),
        json!({"type": "response.in_progress", "response": start}),
        json!({"type": "response.output_item.added", "output_index": 0,
            "item": item(n, reply, "in_progress")}),
    ];
    let at = |id: &str| json!({"item_id": id, "output_index": 0});
    match reply {
        Reply::Text(pieces) => {
            let id = format!("msg_mock_{n}");
            let part = |t: &str| {
                let mut e = at(&id);
                e["content_index"] = json!(0);
                e["part"] = text_part(t);
                e
            };
            data.push(merge("response.content_part.added", part("")));
            for piece in pieces {
                let mut e = at(&id);
                e["content_index"] = json!(0);
                e["delta"] = json!(piece);
                e["logprobs"] = json!([]);
                data.push(merge("response.output_text.delta", e));
            }
            let mut e = at(&id);
            e["content_index"] = json!(0);
            e["text"] = json!(pieces.concat());
            e["logprobs"] = json!([]);
            data.push(merge("response.output_text.done", e));
            data.push(merge("response.content_part.done", part(&pieces.concat())));
        }
        Reply::Tool { input, .. } => {
            // The arguments, a JSON string, in two deltas.
            let arguments = input.to_string();
            let id = format!("fc_mock_{n}");
            let (head, tail) = arguments.split_at(arguments.len() / 2);
            for piece in [head, tail] {
                let mut e = at(&id);
                e["delta"] = json!(piece);
                data.push(merge("response.function_call_arguments.delta", e));
            }
            let mut e = at(&id);
            e["arguments"] = json!(arguments);
            data.push(merge("response.function_call_arguments.done", e));
        }
    }
    data.push(
        json!({"type": "response.output_item.done", "output_index": 0,
        "item": item(n, reply, "completed")}),
    );
    data.push(json!({"type": "response.completed",
        "response": response(n, model, "completed", vec![item(n, reply, "completed")])}));
    data.into_iter()
        .enumerate()
        .map(|(i, mut d)| {
            d["sequence_number"] = json!(i);
            let name = d["type"].as_str().unwrap_or_default().to_string();
            Event::named(&name, d)
        })
        .collect()
}

/// `fields` with its `type`.
fn merge(kind: &str, mut fields: Value) -> Value {
    fields["type"] = json!(kind);
    fields
}
