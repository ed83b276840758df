//! The program's life as a process: waiting for its exit and recording it,
//! and ending it (its whole process group) on request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use duet_protocol::rest::ExitInfo;
use nix::sys::signal::Signal;
use tracing::{info, warn};

use super::terminal::program;
use super::{Control, Session};
use crate::clock::now_ms;
use crate::sync::lock;

/// The program's pid, which is also its process group's id: it leads a
/// session of its own.
pub(crate) struct Process {
    pid: u32,
    /// The program was waited for: its pid may belong to someone else now.
    reaped: AtomicBool,
    /// Not this duet's child (a session recovered from an earlier run):
    /// never signalled.
    foreign: bool,
    /// duet is ending the program because duet itself stops: its exit is
    /// the shutdown's doing, not the program's.
    server_stopping: AtomicBool,
    /// The principal that asked for the end (`DELETE`), if one did.
    ended_by: std::sync::Mutex<Option<String>>,
}

impl Process {
    pub(crate) fn new(pid: u32) -> Self {
        Self {
            pid,
            reaped: AtomicBool::new(false),
            foreign: false,
            server_stopping: AtomicBool::new(false),
            ended_by: std::sync::Mutex::new(None),
        }
    }

    /// A program an earlier duet ran, long gone or ended at start-up.
    pub(crate) fn foreign(pid: u32) -> Self {
        Self {
            pid,
            reaped: AtomicBool::new(true),
            foreign: true,
            server_stopping: AtomicBool::new(false),
            ended_by: std::sync::Mutex::new(None),
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends `signal` to the program's whole group.
    pub(crate) fn signal_group(&self, signal: Signal) {
        // Not ours, or no process of the session's own (one per turn, see
        // `channel/stream_json/per_turn.rs`): never signal group 0, duet's.
        if self.foreign || self.pid == 0 {
            return;
        }
        let pid = nix::unistd::Pid::from_raw(self.pid as i32);
        let sent = match nix::sys::signal::killpg(pid, signal) {
            // In the first moments the child is still `setsid`, before it
            // made the group: signal the process itself.
            Err(nix::errno::Errno::ESRCH) if !self.reaped.load(Ordering::Acquire) => {
                nix::sys::signal::kill(pid, signal)
            }
            r => r,
        };
        if let Err(e) = sent {
            if e != nix::errno::Errno::ESRCH {
                warn!(?e, ?signal, "signalling the process group");
            }
        }
    }
}

impl Session {
    /// Waits for the program to exit, then winds the session down: the
    /// last output and events are taken in, and the exit is recorded and
    /// announced. Meanwhile it ticks the conversation (prompt redelivery).
    pub(crate) async fn lifecycle(
        self: Arc<Self>,
        mut exit: futures_util::future::BoxFuture<
            'static,
            std::io::Result<std::process::ExitStatus>,
        >,
    ) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let status = loop {
            tokio::select! {
                status = &mut exit => {
                    self.process.reaped.store(true, Ordering::Release);
                    break status;
                }
                _ = tick.tick() => self.conversation.tick(),
            }
        };
        let mut exit = match status {
            Ok(s) => program::exit_info(s),
            Err(e) => {
                warn!(?e, "waiting for the program failed");
                ExitInfo {
                    code: None,
                    signal: None,
                    success: false,
                    server_stopped: false,
                    ended_by: None,
                }
            }
        };
        // Clients (and this session once recovered after a restart) say the
        // server stopped, rather than show the SIGTERM's 143 as a crash.
        exit.server_stopped = self.process.server_stopping.load(Ordering::Acquire);
        // Someone asked for this end: its 143 is no failure of the program.
        if !exit.server_stopped {
            exit.ended_by = lock(&self.process.ended_by).clone();
        }
        // Anything the program left behind in its group goes with it.
        self.process.signal_group(Signal::SIGHUP);
        // Let the last output drain; a leftover grandchild holding the PTY
        // open must not keep the session from ending.
        let output = &self.terminal.output;
        let mut head = output.subscribe();
        let _ = tokio::time::timeout(Duration::from_millis(500), async {
            while !output.is_closed() {
                if head.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
        self.terminal.close_pty();
        // The screen (and the recording, which the parser thread writes
        // out) has everything before the exit is announced.
        let _ = tokio::time::timeout(Duration::from_secs(2), output.settle()).await;
        if let Some(channel) = &self.channel {
            channel.finish().await;
        }
        self.conversation.close();
        {
            let mut st = lock(&self.state);
            st.exit = Some(exit.clone());
            st.ended_at = Some(now_ms());
        }
        self.save_record();
        info!(code = ?exit.code, signal = ?exit.signal, "exited");
        self.observe.ended(&exit);
        let _ = self.control.send(Control::Exit(exit));
        self.exited.send_replace(true);
    }

    /// Ends the program: SIGTERM to its process group, SIGHUP a third of the
    /// grace period later (unless it announced itself or its end on its
    /// side channel), SIGKILL when the grace period is over.
    pub(crate) fn terminate(self: &Arc<Self>) {
        if self.is_exited() {
            return;
        }
        let _enter = self.span.enter();
        info!("terminating");
        // SIGTERM alone first: Qwen Code writes its session_end on SIGTERM
        // but not on SIGHUP, and a pending SIGHUP is delivered before a
        // pending SIGTERM. Interactive shells ignore SIGTERM, hence SIGHUP.
        self.process.signal_group(Signal::SIGTERM);
        if let Some(channel) = &self.channel {
            channel.stop();
        }
        let session = self.clone();
        tokio::spawn(async move {
            let mut exited = session.exited.subscribe();
            let grace = session.limits.kill_grace;
            let hup_after = grace / 3;
            if tokio::time::timeout(hup_after, exited.wait_for(|e| *e))
                .await
                .is_ok()
            {
                return;
            }
            // SIGHUP is for programs that ignore SIGTERM (shells). One that
            // announced itself on its side channel ends on SIGTERM, and
            // Qwen Code writes its session_end only then: on a loaded
            // machine it may take longer than this to get to it (both
            // versions, at a load of 12 on 2 cores), and a SIGHUP loses the
            // session_end. Once written, Qwen 0.24 takes 0.2-0.6 s more to
            // exit, and a SIGHUP would only cut that short. Either way the
            // SIGKILL below still comes.
            let c = &session.conversation;
            if c.handshake().is_none() && !c.ended() {
                session.process.signal_group(Signal::SIGHUP);
            }
            if tokio::time::timeout(grace - hup_after, exited.wait_for(|e| *e))
                .await
                .is_err()
            {
                warn!(id = %session.id, "still running after {grace:?}; killing");
                session.process.signal_group(Signal::SIGKILL);
            }
        });
    }

    /// Ends the program because principal `by` asked (`DELETE`): as
    /// [`Self::terminate`], and its exit names who ended it. The first
    /// to ask is named.
    pub(crate) fn terminate_by(self: &Arc<Self>, by: &str) {
        if !self.is_exited() {
            lock(&self.process.ended_by).get_or_insert_with(|| by.to_string());
        }
        self.terminate();
    }

    /// Ends the program because duet is shutting down: as [`Self::terminate`],
    /// and its exit says so.
    pub(crate) fn terminate_for_shutdown(self: &Arc<Self>) {
        self.process.server_stopping.store(true, Ordering::Release);
        self.terminate();
    }

    /// Waits until the program has exited and its exit is recorded.
    pub(crate) async fn wait_exited(&self) {
        let mut rx = self.exited.subscribe();
        let _ = rx.wait_for(|e| *e).await;
    }

    /// Whether the program has exited.
    pub(crate) fn is_exited(&self) -> bool {
        *self.exited.borrow()
    }

    /// A receiver that turns true when the exit is recorded.
    pub(crate) fn exited(&self) -> tokio::sync::watch::Receiver<bool> {
        self.exited.subscribe()
    }
}
