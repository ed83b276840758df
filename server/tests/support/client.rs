//! A WebSocket client of one session, as a browser tab is: it keeps every
//! message it was sent, and waits (within `DEADLINE`) for the ones a test
//! expects.

use duet_protocol::ws::{ClientMessage, ServerMessage};
use futures_util::{SinkExt, Stream, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::*;

/// A WebSocket client that renders terminal output into a screen and keeps
/// every JSON message it saw.
pub(crate) struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    pub screen: vt100::Parser,
    /// Every JSON message received, in order.
    pub texts: Vec<ServerMessage>,
    /// Received but not yet taken by `next`/`until` (a mailbox: each
    /// message is matched at most once, and none is lost by a wait for
    /// another).
    pub pending: std::collections::VecDeque<ServerMessage>,
    pub term_bytes: u64,
    /// The approvals `pending_approval` returned: a request is news once,
    /// though the server may tell it again while pending (its options
    /// read from the agent's screen a moment later).
    pub asked: std::collections::HashSet<String>,
}

impl Client {
    /// Connects to the WebSocket at `url` (a duet of its own, as a
    /// separate process) with `token`; the hello is in `texts[0]`.
    pub(crate) async fn connect(url: &str, token: &str) -> Client {
        let mut req = url.into_client_request().unwrap();
        req.headers_mut().insert(
            "authorization",
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        let mut client = Client {
            ws,
            screen: vt100::Parser::new(30, 100, 1000),
            texts: Vec::new(),
            pending: Default::default(),
            term_bytes: 0,
            asked: Default::default(),
        };
        match client.next().await {
            ServerMessage::Hello(_) => {}
            other => panic!("expected hello, got {other:?}"),
        }
        client
    }

    /// Reads until the server closes the socket: the close frame's code and
    /// reason, or `None` for a connection dropped without one.
    pub(crate) async fn closed(&mut self) -> Option<(u16, String)> {
        tokio::time::timeout(DEADLINE, close_of(&mut self.ws))
            .await
            .expect("the server closes the socket")
            .ok()
    }

    /// The next approval request that is still pending.
    pub(crate) async fn pending_approval(&mut self) -> duet_protocol::rest::Approval {
        let asked = std::mem::take(&mut self.asked);
        let found = self
            .until(|m| {
                matches!(m, ServerMessage::Approval(a)
                    if a.state == duet_protocol::rest::ApprovalState::Pending
                        && !asked.contains(&a.request_id))
            })
            .await;
        self.asked = asked;
        match found {
            ServerMessage::Approval(a) => {
                self.asked.insert(a.request_id.clone());
                a
            }
            _ => unreachable!(),
        }
    }

    /// Answers approval `a` with its option of `kind` (the agent's own
    /// choice, by its id).
    pub(crate) async fn choose(
        &mut self,
        a: &duet_protocol::rest::Approval,
        kind: duet_protocol::rest::ApprovalOptionKind,
    ) {
        let option = a
            .options
            .iter()
            .find(|o| o.kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?} option in {:?}", a.options))
            .id
            .clone();
        self.send(&ClientMessage::Approve {
            request_id: a.request_id.clone(),
            allowed: None,
            option: Some(option),
            id: None,
        })
        .await;
    }

    /// Approval `request_id` once it is decided and the agent confirmed it.
    pub(crate) async fn settled(&mut self, request_id: &str) -> duet_protocol::rest::Approval {
        match self
            .until(|m| {
                matches!(m, ServerMessage::Approval(a)
                    if a.request_id == request_id
                        && a.state != duet_protocol::rest::ApprovalState::Pending
                        && a.confirmed)
            })
            .await
        {
            ServerMessage::Approval(a) => a,
            _ => unreachable!(),
        }
    }

    /// The session's `exit` message, once its program ended.
    pub(crate) async fn exited(&mut self) -> duet_protocol::rest::ExitInfo {
        match self.until(|m| matches!(m, ServerMessage::Exit(_))).await {
            ServerMessage::Exit(e) => e,
            _ => unreachable!(),
        }
    }

    /// The next JSON message (terminal bytes go to the screen meanwhile).
    pub(crate) async fn next(&mut self) -> ServerMessage {
        if let Some(m) = self.pending.pop_front() {
            return m;
        }
        self.receive().await
    }

    async fn receive(&mut self) -> ServerMessage {
        tokio::time::timeout(DEADLINE, async {
            loop {
                match self.ws.next().await {
                    Some(Ok(Message::Text(t))) => {
                        let msg: ServerMessage = serde_json::from_str(&t)
                            .unwrap_or_else(|e| panic!("bad server message {t}: {e}"));
                        if let ServerMessage::Resync { cols, rows, .. } = &msg {
                            self.screen = vt100::Parser::new(*rows, *cols, 1000);
                        }
                        self.texts.push(msg.clone());
                        return msg;
                    }
                    Some(Ok(Message::Binary(b))) => {
                        self.term_bytes += b.len() as u64;
                        self.screen.process(&b);
                    }
                    Some(Ok(_)) => {}
                    other => panic!("socket ended: {other:?}"),
                }
            }
        })
        .await
        .unwrap_or_else(|_| {
            let recent: Vec<String> = self
                .texts
                .iter()
                .rev()
                .take(12)
                .rev()
                .map(|m| {
                    serde_json::to_string(m)
                        .unwrap()
                        .chars()
                        .take(300)
                        .collect()
                })
                .collect();
            panic!(
                "no server message within {DEADLINE:?}; the last ones were:\n{}\nscreen:\n{}",
                recent.join("\n"),
                self.screen.screen().contents()
            )
        })
    }

    /// The first message matching `pred`, from the mailbox or the socket.
    pub(crate) async fn until(
        &mut self,
        mut pred: impl FnMut(&ServerMessage) -> bool,
    ) -> ServerMessage {
        if let Some(i) = self.pending.iter().position(&mut pred) {
            return self.pending.remove(i).unwrap();
        }
        loop {
            let m = self.receive().await;
            if pred(&m) {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    /// The agent's modes once they match `pred`: as this client knows them
    /// already (its hello's, or the latest `modes` message), or the next
    /// `modes` message that matches.
    pub(crate) async fn until_modes(
        &mut self,
        pred: impl Fn(&duet_protocol::rest::AgentModes) -> bool,
    ) -> duet_protocol::rest::AgentModes {
        let known = self.texts.iter().rev().find_map(|m| match m {
            ServerMessage::Modes(modes) => Some(Some(modes)),
            ServerMessage::Hello(h) => Some(h.modes.as_ref()),
            _ => None,
        });
        if let Some(modes) = known.flatten().filter(|m| pred(m)) {
            return modes.clone();
        }
        match self
            .until(|m| matches!(m, ServerMessage::Modes(modes) if pred(modes)))
            .await
        {
            ServerMessage::Modes(modes) => modes,
            _ => unreachable!(),
        }
    }

    /// The first event matching `pred`; returns (seq, event).
    pub(crate) async fn until_event(
        &mut self,
        mut pred: impl FnMut(&Value) -> bool,
    ) -> (u64, Value) {
        match self
            .until(|m| matches!(m, ServerMessage::Event { event, .. } if pred(event)))
            .await
        {
            ServerMessage::Event { seq, event, .. } => (seq, event),
            _ => unreachable!(),
        }
    }

    /// Reads (processing terminal bytes) until the screen contains `text`.
    pub(crate) async fn until_screen(&mut self, text: &str) {
        self.until_screen_any(&[text]).await;
    }

    /// Waits until the screen shows one of `texts`; returns which.
    pub(crate) async fn until_screen_any(&mut self, texts: &[&str]) -> usize {
        tokio::time::timeout(DEADLINE, async {
            loop {
                let shown = self.screen.screen().contents();
                if let Some(i) = texts.iter().position(|t| shown.contains(t)) {
                    return i;
                }
                match self.ws.next().await {
                    Some(Ok(Message::Binary(b))) => {
                        self.term_bytes += b.len() as u64;
                        self.screen.process(&b);
                    }
                    Some(Ok(Message::Text(t))) => {
                        let msg: ServerMessage = serde_json::from_str(&t).unwrap();
                        if let ServerMessage::Resync { cols, rows, .. } = &msg {
                            self.screen = vt100::Parser::new(*rows, *cols, 1000);
                        }
                        self.texts.push(msg.clone());
                        self.pending.push_back(msg);
                    }
                    Some(Ok(_)) => {}
                    other => panic!("socket ended: {other:?}"),
                }
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "screen never showed {texts:?}; it shows:\n{}",
                self.screen.screen().contents()
            )
        })
    }

    pub(crate) async fn send(&mut self, msg: &ClientMessage) {
        self.ws
            .send(Message::Text(serde_json::to_string(msg).unwrap().into()))
            .await
            .unwrap();
    }

    pub(crate) async fn send_raw(&mut self, text: &str) {
        self.ws.send(Message::Text(text.into())).await.unwrap();
    }

    pub(crate) async fn keys(&mut self, bytes: &[u8]) {
        self.ws
            .send(Message::Binary(bytes.to_vec().into()))
            .await
            .unwrap();
    }

    pub(crate) async fn submit(&mut self, text: &str) -> ServerMessage {
        let id = format!("s-{}", uuid::Uuid::new_v4());
        self.send(&ClientMessage::Submit {
            text: text.into(),
            id: Some(id.clone()),
        })
        .await;
        self.until(|m| matches!(m, ServerMessage::Ack { id: i, .. } | ServerMessage::Error { id: Some(i), .. } if *i == id))
            .await
    }

    /// What the terminal shows, as far as this client has read it.
    pub(crate) fn screen_text(&self) -> String {
        self.screen.screen().contents()
    }

    /// The seqs of all `event` messages seen so far.
    pub(crate) fn seqs(&self) -> Vec<u64> {
        self.texts
            .iter()
            .filter_map(|m| match m {
                ServerMessage::Event { seq, .. } => Some(*seq),
                _ => None,
            })
            .collect()
    }
}

/// A close frame's code and reason, or what ended the stream instead.
pub(crate) type Closed = Result<(u16, String), String>;

/// Reads `stream` up to the server's close frame.
pub(crate) async fn close_of(
    mut stream: impl Stream<Item = Result<Message, WsError>> + Unpin,
) -> Closed {
    loop {
        match stream.next().await {
            Some(Ok(Message::Close(Some(f)))) => return Ok((f.code.into(), f.reason.to_string())),
            Some(Ok(Message::Close(None))) => return Err("a close frame without a code".into()),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(format!("error: {e}")),
            None => return Err("ended without a close frame".into()),
        }
    }
}
