//! Server-sent events as the mock model APIs stream them: one `data:` line
//! per event (after an `event:` line when the API names its events), a
//! blank line after each, written one event per network read with a short
//! pause between, so the agent streams for real. Dropping the response (the
//! agent cancelled) stops the writer.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use serde_json::Value;
use tokio::sync::mpsc;

/// Pause between events: long enough that each event is its own network
/// read, short enough to keep turns well under a second.
pub(crate) const EVENT_DELAY: Duration = Duration::from_millis(15);

/// Events in flight between the writer task and the response body.
const QUEUE: usize = 16;

/// One event: its name (`event:`), if the API names them, and its data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub name: Option<String>,
    pub data: Value,
}

impl Event {
    /// An unnamed event (Gemini's stream).
    pub(crate) fn data(data: Value) -> Self {
        Self { name: None, data }
    }

    /// A named event (OpenAI's Responses stream names each by its `type`).
    pub(crate) fn named(name: &str, data: Value) -> Self {
        Self {
            name: Some(name.to_string()),
            data,
        }
    }

    /// The event as written on the wire.
    pub(crate) fn frame(&self) -> String {
        match &self.name {
            Some(name) => format!("event: {name}\ndata: {}\n\n", self.data),
            None => format!("data: {}\n\n", self.data),
        }
    }
}

/// A `text/event-stream` response that writes `events` in order,
/// [`EVENT_DELAY`] apart.
pub(crate) fn response(events: Vec<Event>) -> Response {
    frames(events.iter().map(Event::frame).collect())
}

/// A `text/event-stream` response that writes `frames` (each a whole frame
/// as on the wire, such as OpenAI's closing `data: [DONE]`) in order,
/// [`EVENT_DELAY`] apart.
pub(crate) fn frames(frames: Vec<String>) -> Response {
    let (tx, rx) = mpsc::channel::<Bytes>(QUEUE);
    tokio::spawn(async move {
        let last = frames.len();
        for (i, frame) in frames.into_iter().enumerate() {
            if tx.send(Bytes::from(frame)).await.is_err() {
                return; // The agent closed the stream.
            }
            if i + 1 < last {
                tokio::time::sleep(EVENT_DELAY).await;
            }
        }
    });
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok::<_, Infallible>(chunk), rx))
    }));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap()
}

/// Reads a whole stream back into events (for the mocks' own tests).
/// Panics on a frame that is not `[event: NAME\n]data: JSON`.
pub(crate) fn parse(stream: &str) -> Vec<Event> {
    stream
        .split("\n\n")
        .filter(|frame| !frame.trim().is_empty())
        .map(|frame| {
            let (name, data) = match frame.strip_prefix("event: ") {
                Some(rest) => {
                    let (name, data) = rest.split_once('\n').expect("an event line, then data");
                    (Some(name.to_string()), data)
                }
                None => (None, frame),
            };
            let data = data
                .strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not a data line: {frame:?}"));
            Event {
                name,
                data: serde_json::from_str(data).unwrap(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_read_back_as_written() {
        let events = vec![
            Event::data(json!({"a": 1})),
            Event::named("response.created", json!({"type": "response.created"})),
        ];
        let wire: String = events.iter().map(Event::frame).collect();
        assert_eq!(
            wire,
            "data: {\"a\":1}\n\nevent: response.created\ndata: {\"type\":\"response.created\"}\n\n"
        );
        assert_eq!(parse(&wire), events);
    }
}
