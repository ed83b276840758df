//! A reader of the live board (`GET /api/sessions/watch`, server-sent
//! events), for tests that check what the board shows.

use std::pin::Pin;

use bytes::Bytes;
use duet_protocol::board::Board;
use futures_util::{Stream, StreamExt};

use super::{TestServer, DEADLINE};

/// A reader of the board's event stream.
pub(crate) struct Watch {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    buf: String,
}

impl Watch {
    pub(crate) async fn open(server: &TestServer, token: &str) -> Watch {
        let resp = server
            .http
            .get(server.url("/api/sessions/watch"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(
            resp.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Watch {
            body: Box::pin(resp.bytes_stream()),
            buf: String::new(),
        }
    }

    /// The next `sessions` event; `None` when the stream ends.
    pub(crate) async fn next(&mut self) -> Option<Board> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                let mut event = None;
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(e) = line.strip_prefix("event:") {
                        event = Some(e.trim().to_string());
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.strip_prefix(' ').unwrap_or(d));
                    }
                }
                match event.as_deref() {
                    Some("sessions") => return Some(serde_json::from_str(&data).unwrap()),
                    _ => continue, // a keep-alive comment
                }
            }
            let chunk = tokio::time::timeout(DEADLINE, self.body.next())
                .await
                .expect("a board event in time")?;
            self.buf
                .push_str(std::str::from_utf8(&chunk.ok()?).unwrap());
        }
    }

    /// Reads boards until one satisfies `pred`.
    pub(crate) async fn until(&mut self, mut pred: impl FnMut(&Board) -> bool) -> Board {
        loop {
            let board = self.next().await.expect("the stream stays open");
            if pred(&board) {
                return board;
            }
        }
    }
}
