//! `duet attach`: one session in this terminal, as a browser tab has it.
//!
//! The terminal goes to raw mode; the session's screen is drawn from the
//! snapshot every client gets at attach (`draw.rs`), then live output is
//! written as it comes, unbuffered; keys go to the program as typed, but
//! for the detach key (`keys.rs`); the window's size follows the browser's
//! rule (`size.rs`). A dropped connection is opened again (the local duet
//! found again in its state directory, in case it was restarted), with a
//! note on the screen meanwhile; the snapshot after it redraws the screen,
//! so nothing is lost or shown twice. The terminal is always given back:
//! the raw mode guard is dropped on every way out of [`Attach::run`] (and
//! the panic hook of `tty.rs` covers the rest).

use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use duet_protocol::rest::{ExitInfo, SessionInfo};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use futures_util::{SinkExt, StreamExt};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use super::api::Api;
use super::draw::{ends_at_line_start, Drawer};
use super::keys::{DetachKey, Matcher, HOLD};
use super::size::SizePolicy;
use super::tty::{self, AltScreen};

/// Window changes wait this long for the window to settle (as the
/// browser's fit does).
const RESIZE_DEBOUNCE: Duration = Duration::from_millis(120);
/// duet pings every 30 s; this long without a word means the connection
/// is gone even if the kernel has not noticed.
const SILENCE: Duration = Duration::from_secs(75);
/// Longest wait between two attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How an attach ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The program exited.
    Exited(ExitInfo),
    /// The user detached; the session runs on.
    Detached,
    /// The session was deleted while attached.
    Removed,
    /// This client was told to stop (SIGTERM, SIGHUP, SIGINT): its number.
    Signalled(i32),
}

/// One attach, before it runs.
pub(crate) struct Attach {
    pub(crate) api: Api,
    pub(crate) session: SessionInfo,
    /// The session was started here, at this window's size (`duet run`).
    pub(crate) driver: bool,
    pub(crate) detach: Option<DetachKey>,
    /// What this client calls itself to others ("terminal on HOST").
    pub(crate) device: String,
}

/// What the terminal shows and has been asked, across reconnections.
struct Local {
    policy: SizePolicy,
    drawer: Drawer,
    matcher: Matcher,
    alt: AltScreen,
    /// The last bytes written (does the output end a line?).
    tail: Vec<u8>,
    /// A window change waits for the window to settle until then.
    resize_at: Option<Instant>,
    /// A partial detach sequence goes to the program then.
    hold_until: Option<Instant>,
}

/// Signals this client answers.
struct Signals {
    winch: Signal,
    term: Signal,
    hup: Signal,
    int: Signal,
}

/// What a signal or a key asked for.
enum Event {
    Outcome(Outcome),
    /// Keys for the program.
    Keys(Vec<u8>),
    WindowChanged,
    Nothing,
}

/// Why a connection was not opened.
enum ConnectError {
    /// duet said no (a bad token, no such session): trying again is no use.
    Refused(anyhow::Error),
    /// It could not be reached: it may be back soon.
    Failed(anyhow::Error),
}

impl ConnectError {
    fn into_inner(self) -> anyhow::Error {
        match self {
            ConnectError::Refused(e) | ConnectError::Failed(e) => e,
        }
    }
}

/// How one connection ended.
enum Ended {
    Done(Outcome),
    Dropped,
}

impl Attach {
    /// Attaches until the program exits, the user detaches or a signal
    /// comes, with the terminal in raw mode; then gives the terminal back,
    /// whatever happened (an error included): its own settings, and off
    /// what the program may have switched on, so a shell can follow.
    pub(crate) async fn run(mut self) -> Result<Outcome> {
        let mut signals = Signals {
            winch: signal(SignalKind::window_change())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        };
        let raw = tty::RawMode::enter()?;
        let mut local = Local {
            policy: SizePolicy::new(self.driver),
            drawer: Drawer::new(self.driver),
            matcher: Matcher::new(self.detach.clone()),
            alt: AltScreen::default(),
            tail: Vec::new(),
            resize_at: None,
            hold_until: None,
        };
        let outcome = match tty::spawn_reader() {
            Ok(mut keys) => self.attached(&mut local, &mut keys, &mut signals).await,
            Err(e) => Err(e.into()),
        };
        let mut restore = Vec::new();
        if local.alt.on {
            restore.extend_from_slice(tty::LEAVE_ALTERNATE);
        }
        restore.extend_from_slice(tty::RESTORE_MODES);
        if local.alt.on || !ends_at_line_start(&local.tail) {
            restore.extend_from_slice(b"\r\n");
        }
        let _ = tty::write_all(&restore);
        drop(raw);
        outcome
    }

    async fn attached(
        &mut self,
        local: &mut Local,
        keys: &mut mpsc::Receiver<Vec<u8>>,
        signals: &mut Signals,
    ) -> Result<Outcome> {
        // The first connection's failure is an error; later ones are
        // waited out, but for a refusal (a bad token, no such session).
        let mut ws = self.connect().await.map_err(ConnectError::into_inner)?;
        loop {
            match self.serve(ws, local, keys, signals).await? {
                Ended::Done(outcome) => return Ok(outcome),
                Ended::Dropped => {}
            }
            let note = format!(
                "\r\n\x1b[7m duet: the connection to {} was lost; reconnecting…{} \x1b[m\r\n",
                self.api.server.base,
                self.detach
                    .as_ref()
                    .map(|d| format!(" ({} detaches)", d.describe()))
                    .unwrap_or_default()
            );
            write(local, note.as_bytes())?;
            match self.reconnect(local, keys, signals).await? {
                Ok(next) => ws = next,
                Err(outcome) => return Ok(outcome),
            }
        }
    }

    async fn connect(&self) -> Result<Ws, ConnectError> {
        let url = self.api.ws_url(self.session.id, &self.device);
        let mut req = url
            .into_client_request()
            .map_err(|e| ConnectError::Refused(e.into()))?;
        if let Some(t) = &self.api.server.token {
            let value = HeaderValue::from_str(&format!("Bearer {t}"))
                .map_err(|e| ConnectError::Refused(e.into()))?;
            req.headers_mut().insert("authorization", value);
        }
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default();
        // No Nagle: keys are single bytes, and each must go at once.
        let connected = tokio_tungstenite::connect_async_with_config(req, Some(config), true).await;
        match connected {
            Ok((ws, _)) => Ok(ws),
            Err(WsError::Http(resp)) if resp.status() == StatusCode::UNAUTHORIZED => Err(
                ConnectError::Refused(anyhow!("{} refused the token (401)", self.api.server.base)),
            ),
            Err(WsError::Http(resp)) if resp.status() == StatusCode::NOT_FOUND => {
                Err(ConnectError::Refused(anyhow!(
                    "no session {} any more; `duet ls` lists them",
                    self.session.id
                )))
            }
            Err(e) => Err(ConnectError::Failed(anyhow!(
                "connecting to {}: {e}",
                self.api.server.base
            ))),
        }
    }

    /// Connects again, finding a restarted local duet anew; keys typed
    /// meanwhile are dropped but for the detach key.
    async fn reconnect(
        &mut self,
        local: &mut Local,
        keys: &mut mpsc::Receiver<Vec<u8>>,
        signals: &mut Signals,
    ) -> Result<Result<Ws, Outcome>> {
        let mut backoff = Duration::from_millis(100);
        loop {
            let wait = tokio::time::sleep(backoff);
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    () = &mut wait => break,
                    // Keys cannot reach the program now; that the user
                    // acted still makes this client the one that sets the
                    // size once it is back.
                    event = next_event(local, keys, signals) => match event {
                        Event::Outcome(o) => return Ok(Err(o)),
                        Event::Keys(_) | Event::WindowChanged => {
                            local.policy.typed(None);
                        }
                        Event::Nothing => {}
                    },
                }
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            if let Some(dir) = &self.api.server.state_dir {
                if let Some(found) = super::find::local(dir, &self.api.http).await {
                    self.api.server = found;
                }
            }
            match self.connect().await {
                Ok(ws) => return Ok(Ok(ws)),
                Err(ConnectError::Refused(e)) => return Err(e),
                Err(ConnectError::Failed(_)) => {}
            }
        }
    }

    /// One connection, until it ends or drops.
    async fn serve(
        &self,
        ws: Ws,
        local: &mut Local,
        keys: &mut mpsc::Receiver<Vec<u8>>,
        signals: &mut Signals,
    ) -> Result<Ended> {
        let (mut sink, mut stream) = ws.split();
        // The next binary frame is a snapshot of this size.
        let mut snapshot_of: Option<super::size::Size> = None;
        let mut heard = Instant::now();
        loop {
            let silence = tokio::time::sleep_until(heard + SILENCE);
            let mut out: Vec<Message> = Vec::new();
            tokio::select! {
                biased;
                event = next_event(local, keys, signals) => match event {
                    Event::Outcome(o) => return Ok(Ended::Done(o)),
                    Event::Keys(k) => {
                        // A driver already asked for its size (the window's
                        // changes come as signals): no ioctl per key.
                        if !local.policy.drives() {
                            if let Some((cols, rows)) = local.policy.typed(tty::window_size()) {
                                out.push(resize(cols, rows));
                            }
                        }
                        out.push(Message::Binary(k.into()));
                    }
                    Event::WindowChanged => {
                        if let Some((cols, rows)) = local.policy.window_changed(tty::window_size()) {
                            out.push(resize(cols, rows));
                        }
                    }
                    Event::Nothing => {}
                },
                msg = stream.next() => {
                    heard = Instant::now();
                    match msg {
                        Some(Ok(Message::Binary(bytes))) => {
                            let bytes: &[u8] = &bytes;
                            match snapshot_of.take() {
                                Some(size) => {
                                    let rows = tty::window_size().map_or(size.1, |s| s.1);
                                    let drawn = local.drawer.snapshot(bytes, size, rows);
                                    local.alt.on = drawn.alt;
                                    write(local, &drawn.bytes)?;
                                }
                                None => {
                                    local.alt.scan(bytes);
                                    write(local, bytes)?;
                                }
                            }
                        }
                        Some(Ok(Message::Text(text))) => match serde_json::from_str::<ServerMessage>(&text).ok() {
                            Some(ServerMessage::Hello(h)) => {
                                if let Some((cols, rows)) =
                                    local.policy.connected((h.cols, h.rows), tty::window_size())
                                {
                                    out.push(resize(cols, rows));
                                }
                            }
                            Some(ServerMessage::Resync { cols, rows, .. }) => {
                                local.policy.resynced((cols, rows));
                                snapshot_of = Some((cols, rows));
                            }
                            Some(ServerMessage::Resize { cols, rows }) => {
                                local.policy.resized((cols, rows));
                            }
                            Some(ServerMessage::Exit(e)) => return Ok(Ended::Done(Outcome::Exited(e))),
                            _ => {}
                        },
                        Some(Ok(Message::Close(frame))) => {
                            let removed = frame.as_ref().is_some_and(|f| {
                                f.code == CloseCode::Normal && f.reason.contains("removed")
                            });
                            if removed {
                                return Ok(Ended::Done(Outcome::Removed));
                            }
                            if let Some(f) = frame.filter(|f| f.code == CloseCode::Policy) {
                                bail!("duet closed the connection: {}", f.reason);
                            }
                            return Ok(Ended::Dropped);
                        }
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => return Ok(Ended::Dropped),
                    }
                },
                () = silence => return Ok(Ended::Dropped),
            }
            for m in out {
                if sink.feed(m).await.is_err() {
                    return Ok(Ended::Dropped);
                }
            }
            if sink.flush().await.is_err() {
                return Ok(Ended::Dropped);
            }
        }
    }
}

fn resize(cols: u16, rows: u16) -> Message {
    let msg = ClientMessage::Resize {
        cols,
        rows,
        id: None,
    };
    Message::Text(serde_json::to_string(&msg).unwrap_or_default().into())
}

/// Writes terminal output, keeping its last bytes.
fn write(local: &mut Local, bytes: &[u8]) -> Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    tty::write_all(bytes)?;
    const KEEP: usize = 64;
    if bytes.len() >= KEEP {
        local.tail.clear();
        local.tail.extend_from_slice(&bytes[bytes.len() - KEEP..]);
    } else {
        local.tail.extend_from_slice(bytes);
        let excess = local.tail.len().saturating_sub(KEEP);
        local.tail.drain(..excess);
    }
    Ok(())
}

/// The next thing from the user's side: keys (the detach key taken out),
/// a window change that has settled, or a signal.
async fn next_event(
    local: &mut Local,
    keys: &mut mpsc::Receiver<Vec<u8>>,
    signals: &mut Signals,
) -> Event {
    let hold = local.hold_until;
    let resize_at = local.resize_at;
    tokio::select! {
        biased;
        _ = signals.term.recv() => Event::Outcome(Outcome::Signalled(15)),
        _ = signals.hup.recv() => Event::Outcome(Outcome::Signalled(1)),
        _ = signals.int.recv() => Event::Outcome(Outcome::Signalled(2)),
        typed = keys.recv() => match typed {
            // The terminal is gone (hung up): the session runs on.
            None => Event::Outcome(Outcome::Detached),
            Some(bytes) => {
                let typed = local.matcher.feed(&bytes);
                local.hold_until = local.matcher.holding().then(|| Instant::now() + HOLD);
                if typed.detach {
                    Event::Outcome(Outcome::Detached)
                } else if typed.keys.is_empty() {
                    Event::Nothing
                } else {
                    Event::Keys(typed.keys)
                }
            }
        },
        () = sleep_until(hold) => {
            local.hold_until = None;
            Event::Keys(local.matcher.flush())
        }
        _ = signals.winch.recv() => {
            local.resize_at = Some(Instant::now() + RESIZE_DEBOUNCE);
            Event::Nothing
        }
        () = sleep_until(resize_at) => {
            local.resize_at = None;
            Event::WindowChanged
        }
    }
}

/// Sleeps until `at`, or forever.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
