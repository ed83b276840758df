//! The send half of a client connection: one drain loop that interleaves
//! replies, control news, events and terminal output, each pulled from its
//! source with this client's own cursor. Each round runs the steps below in
//! order; when none of them may have more at once, it waits for a source
//! to change.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Message;
use bytes::Bytes;
use duet_protocol::ids::ClientId;
use duet_protocol::rest::ConnectedClient;
use duet_protocol::ws::{ResyncReason, ServerMessage};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Interval;
use tracing::debug;

use super::send::{Closed, Sender};
use super::Outgoing;
use crate::auth::Principal;
use crate::session::terminal::flow::Reader;
use crate::session::ReadResult;
use crate::session::{Control, Session};

/// Largest terminal frame sent at once.
const MAX_TERMINAL_FRAME: usize = 256 << 10;
/// Terminal bytes in one round after which the task yields (see `run`).
const HEAVY_OUTPUT: usize = 16 << 10;
/// Events sent per batch before output gets a turn.
const EVENT_BATCH: usize = 256;
/// Protocol-level keepalive.
const PING_EVERY: Duration = Duration::from_secs(30);
/// Batches of the last events a client gets when the server stops.
const LAST_BATCHES: usize = 64;

/// What the send half reads besides the session.
pub(super) struct Inputs {
    /// The session's control news (approvals, resizes, warnings, ...).
    pub(super) control: broadcast::Receiver<Control>,
    /// What the receive half hands over.
    pub(super) replies: mpsc::Receiver<Outgoing>,
    /// The client asked for a pause (`pause`/`resume`).
    pub(super) paused: watch::Receiver<bool>,
    /// Turns true when the server stops.
    pub(super) stop: watch::Receiver<bool>,
    pub(super) client: ClientId,
    /// Who this client is (announced in `hello`).
    pub(super) who: Principal,
    /// The client has every event up to this seq (`?from=`).
    pub(super) from: u64,
}

/// Sends the hello and the first snapshot, then drains every source until
/// the connection ends.
pub(super) async fn run(out: Sender, inputs: Inputs) {
    if let Ok(mut drain) = Drain::start(out, inputs).await {
        if drain.run().await.is_err() {
            drain.answer_close().await;
        }
    }
}

/// The program's exit, announced once and only after the output and the
/// events before it.
#[derive(Default)]
struct ExitNews {
    /// The program exited and this client has not been told.
    pending: bool,
    /// Told: the exit is learnt from the control news and from the exited
    /// watch, and announced once.
    sent: bool,
}

impl ExitNews {
    fn waiting(&self) -> bool {
        self.pending && !self.sent
    }
}

/// What one round did.
#[derive(Default)]
struct Round {
    /// Something was sent.
    progressed: bool,
    /// The round moved a lot: then other tasks get a turn.
    heavy: bool,
    /// A source may have more at once that no wake-up announces (a full
    /// batch, output past one frame, a snapshot to continue from): the
    /// next round starts without waiting.
    again: bool,
}

/// What ended a wait.
enum Woken {
    Stop,
    Removed,
    Reply(Option<Outgoing>),
    Control(Result<Control, u64>),
    /// The program exited.
    Exited,
    /// `false`: the receive half is gone.
    Paused(bool),
    Ping,
    /// New output or events: the next round reads them.
    Source,
}

/// The send half's state between rounds.
struct Drain {
    out: Sender,
    session: Arc<Session>,
    control: broadcast::Receiver<Control>,
    replies: mpsc::Receiver<Outgoing>,
    paused: watch::Receiver<bool>,
    stop: watch::Receiver<bool>,
    /// Flow control: while this client keeps reading, the program waits
    /// for it rather than letting it fall out of the window.
    flow: Arc<Reader>,
    /// The pause flow control was last told.
    flow_paused: bool,
    /// The pause the client asked for, as of this round.
    pause: bool,
    term_cursor: u64,
    event_cursor: u64,
    exit: ExitNews,
    /// A resize was announced: this client's terminal redraws from a
    /// snapshot at the new size before more output.
    resize_pending: bool,
    /// The newest client list not sent yet.
    clients: Option<Vec<ConnectedClient>>,
    output_rx: watch::Receiver<u64>,
    events_rx: watch::Receiver<u64>,
    exited_rx: watch::Receiver<bool>,
    removed: watch::Receiver<bool>,
    ping: Interval,
}

impl Drain {
    /// The hello, the first snapshot and the warnings so far.
    async fn start(mut out: Sender, inputs: Inputs) -> Result<Self, Closed> {
        let s = out.session.clone();
        let exited = out.hello(inputs.client, &inputs.who).await?;
        // Registered before the first snapshot, so the ring keeps what
        // follows it while this client is still busy with the hello.
        let flow = s.terminal.output.pinned_reader();
        let term_cursor = out.resync(ResyncReason::Attach).await?;
        out.earlier_warnings().await?;
        out.flush().await?;
        flow.resynced(term_cursor);
        flow.set_paused(false);
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        Ok(Self {
            control: inputs.control,
            replies: inputs.replies,
            paused: inputs.paused,
            stop: inputs.stop,
            flow,
            flow_paused: false,
            pause: false,
            term_cursor,
            event_cursor: inputs.from,
            exit: ExitNews {
                pending: exited,
                sent: false,
            },
            resize_pending: false,
            clients: None,
            output_rx: s.terminal.output.subscribe(),
            events_rx: s.events().subscribe(),
            exited_rx: s.exited(),
            removed: s.removed(),
            ping,
            session: s,
            out,
        })
    }

    async fn run(&mut self) -> Result<(), Closed> {
        loop {
            let mut round = Round::default();
            self.take_replies(&mut round).await?;
            self.pause_or_resume();
            self.catch_up_control_news(&mut round).await?;
            self.forward_events(&mut round).await?;
            let drained = self.forward_output(&mut round).await?;
            self.out.flush().await?;
            self.announce_exit(drained).await?;
            // An exit waits for a round that finds the output drained.
            round.again |= round.progressed && self.exit.waiting();
            if round.again {
                // After a round that moved a lot, let other clients' tasks
                // (and this client's keys) run. Not after an echo or a few
                // events: a yield puts the task at the back of the queue
                // and wakes the other worker to steal it, a futex call and
                // a thread switch per echoed key (profiled,
                // docs/benchmarks.md).
                if round.heavy {
                    tokio::task::yield_now().await;
                }
                continue;
            }
            // Otherwise wait: whatever came during this round has marked its
            // source changed, and the wait returns at once. (Going round
            // once more to find nothing, as before, cost every echo a
            // second pass over every source.)
            let woken = self.wait().await;
            self.woken(woken).await?;
        }
    }

    /// Sends what the receive half handed over.
    async fn take_replies(&mut self, round: &mut Round) -> Result<(), Closed> {
        while let Ok(out) = self.replies.try_recv() {
            self.out.outgoing(out).await?;
            round.progressed = true;
        }
        Ok(())
    }

    /// After the replies: the receive half sets a pause before it queues
    /// its ack, so once the ack is out the pause holds here.
    fn pause_or_resume(&mut self) {
        self.pause = *self.paused.borrow_and_update();
        if self.pause != self.flow_paused {
            self.flow.set_paused(self.pause);
            self.flow_paused = self.pause;
        }
    }

    /// Takes the control news that came since the last round, then sends
    /// the newest client list.
    async fn catch_up_control_news(&mut self, round: &mut Round) -> Result<(), Closed> {
        loop {
            let news = match self.control.try_recv() {
                Ok(c) => Ok(c),
                Err(broadcast::error::TryRecvError::Lagged(missed)) => Err(missed),
                Err(_) => break,
            };
            round.progressed |= self.control_news(news).await?;
        }
        // Each list is the whole list: only the newest of those that came
        // since the last round is sent. A hundred clients attaching would
        // otherwise queue a hundred lists, each longer than the last, for
        // every client, and the socket's write buffer keeps the capacity
        // of its largest burst (measured: +12 KiB per client with 100 on a
        // session).
        if let Some(list) = self.clients.take() {
            self.out
                .text(&ServerMessage::Clients { clients: list })
                .await?;
        }
        Ok(())
    }

    /// Takes one piece of control news, or `Err(missed)` when this client
    /// fell behind them; returns whether it sent (or will send) something.
    async fn control_news(&mut self, news: Result<Control, u64>) -> Result<bool, Closed> {
        match news {
            Ok(Control::Exit(_)) => {
                self.exit.pending = true;
                Ok(false)
            }
            // Sent by the next round, with any newer list.
            Ok(Control::Clients(list)) => {
                self.clients = Some(list);
                Ok(true)
            }
            Ok(c) => {
                self.resize_pending |= matches!(c, Control::Resize { .. });
                if let Some(msg) = self.out.control_message(c) {
                    self.out.text(&msg).await?;
                }
                Ok(true)
            }
            Err(missed) => {
                debug!(missed, "control lagged; sending current state");
                self.clients = None;
                self.out.catch_up_control().await?;
                self.exit.pending |= self.session.is_exited();
                self.resize_pending = true;
                Ok(true)
            }
        }
    }

    /// Sends the next batch of events.
    async fn forward_events(&mut self, round: &mut Round) -> Result<(), Closed> {
        let (events, upto) = self
            .session
            .events()
            .read_after_async(self.event_cursor, EVENT_BATCH)
            .await;
        self.out.relay(&events).await?;
        round.progressed |= !events.is_empty();
        round.heavy |= events.len() >= EVENT_BATCH;
        self.event_cursor = upto.max(self.event_cursor);
        // More is there at once whenever the cursor is short of the newest
        // event: after a full batch, and after a batch read back from the
        // file that stopped where the in-memory tail starts (no wake-up
        // announces events that are already there).
        round.again |= self.event_cursor < self.session.events().last_seq();
        Ok(())
    }

    /// Redraws after a resize, or sends the next terminal output (a
    /// snapshot when this client fell out of the window). Returns whether
    /// the output was found drained.
    async fn forward_output(&mut self, round: &mut Round) -> Result<bool, Closed> {
        if self.resize_pending {
            // The size policy (README): one PTY size for all clients; after
            // a resize every client redraws from the server's screen at the
            // new size, so each one shows exactly what a reload would.
            self.resize_pending = false;
            self.resync(ResyncReason::Resize, round).await?;
            return Ok(false);
        }
        if self.pause {
            return Ok(true);
        }
        let output = &self.session.terminal.output;
        match output.read(self.term_cursor, MAX_TERMINAL_FRAME) {
            ReadResult::Data(bytes, next) => {
                let m = &self.session.observe.metrics;
                m.sent_terminal.inc_by(bytes.len() as u64);
                round.heavy |= bytes.len() >= HEAVY_OUTPUT;
                self.out.feed(Message::Binary(bytes)).await?;
                self.term_cursor = next;
                self.flow.advance(next);
                round.progressed = true;
                round.again |= next < *self.output_rx.borrow();
                Ok(false)
            }
            ReadResult::Lagged => {
                debug!("terminal lagged; resyncing from a snapshot");
                self.resync(ResyncReason::Lagged, round).await?;
                Ok(false)
            }
            ReadResult::UpToDate => Ok(true),
        }
    }

    /// Resets the client's terminal to a snapshot and continues from it.
    async fn resync(&mut self, reason: ResyncReason, round: &mut Round) -> Result<(), Closed> {
        self.term_cursor = self.out.resync(reason).await?;
        self.flow.resynced(self.term_cursor);
        round.progressed = true;
        round.again = true;
        Ok(())
    }

    /// Announces the exit once the output and the events before it are
    /// out. `exit.pending` is only set once the exit is recorded, which
    /// happens after the final read of the events file.
    async fn announce_exit(&mut self, output_drained: bool) -> Result<(), Closed> {
        let events_drained = self.event_cursor >= self.session.events().last_seq();
        if !(self.exit.waiting() && output_drained && events_drained) {
            return Ok(());
        }
        self.exit = ExitNews {
            pending: false,
            sent: true,
        };
        if let Some(exit) = self.session.exit_info() {
            self.out.text(&ServerMessage::Exit(exit)).await?;
            self.out.flush().await?;
        }
        Ok(())
    }

    /// The last step after a write failed. Once the socket has read the
    /// client's close it refuses every write and keeps its answer queued,
    /// and the receive half hands the close over as it returns: a replay
    /// under way stopped at its next event, and quitting there left the
    /// answer unsent, the client with 1006 (4 closes in 6 during a replay
    /// of 3,000 events). Whatever ended the connection, what the receive
    /// half asked for goes out now; without that, a flush still sends
    /// what the socket has queued. (The connection's task bounds this.)
    async fn answer_close(&mut self) {
        while let Ok(out) = self.replies.try_recv() {
            if let Outgoing::Close(_) = out {
                let _ = self.out.outgoing(out).await;
                return;
            }
        }
        let _ = self.out.flush_queued().await;
    }

    /// Waits for any source to change.
    async fn wait(&mut self) -> Woken {
        let pause = self.pause;
        tokio::select! {
            biased;
            _ = self.stop.changed() => Woken::Stop,
            Ok(()) = self.removed.changed() => Woken::Removed,
            out = self.replies.recv() => Woken::Reply(out),
            c = self.control.recv() => match c {
                Ok(c) => Woken::Control(Ok(c)),
                Err(broadcast::error::RecvError::Lagged(missed)) => Woken::Control(Err(missed)),
                Err(broadcast::error::RecvError::Closed) => Woken::Source,
            },
            _ = self.events_rx.changed() => Woken::Source,
            _ = self.output_rx.changed(), if !pause => Woken::Source,
            _ = self.exited_rx.changed() => Woken::Exited,
            changed = self.paused.changed() => Woken::Paused(changed.is_ok()),
            _ = self.ping.tick() => Woken::Ping,
        }
    }

    /// Acts on what ended a wait.
    async fn woken(&mut self, woken: Woken) -> Result<(), Closed> {
        match woken {
            Woken::Stop => Err(self.close_for_shutdown().await),
            // Purged or past its retention: nothing is left to show, and
            // this client must not keep the session alive.
            Woken::Removed => Err(self.out.close(1000, "the session was removed").await),
            Woken::Reply(Some(out)) => self.out.outgoing(out).await,
            Woken::Reply(None) | Woken::Paused(false) => Err(Closed),
            Woken::Control(news) => self.control_news(news).await.map(drop),
            Woken::Exited => {
                self.exit.pending |= self.session.is_exited();
                Ok(())
            }
            Woken::Ping => self.out.feed(Message::Ping(Bytes::new())).await,
            Woken::Paused(true) | Woken::Source => Ok(()),
        }
    }

    /// The server ends every program before it stops: this client sees the
    /// last events and the exit, then the close that says why.
    async fn close_for_shutdown(&mut self) -> Closed {
        if self.session.is_exited() && !self.exit.sent {
            if let Err(closed) = self.last_events().await {
                return closed;
            }
        }
        self.out.close(1001, "duet is shutting down").await
    }

    async fn last_events(&mut self) -> Result<(), Closed> {
        let log = self.session.events();
        for _ in 0..LAST_BATCHES {
            let (events, upto) = log.read_after_async(self.event_cursor, EVENT_BATCH).await;
            self.out.relay(&events).await?;
            self.event_cursor = upto.max(self.event_cursor);
            if events.is_empty() {
                break;
            }
        }
        if let Some(exit) = self.session.exit_info() {
            self.out.text(&ServerMessage::Exit(exit)).await?;
        }
        Ok(())
    }
}
