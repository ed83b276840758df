//! An accepted connection's socket: it holds a connection permit while it is
//! open, and it closes lingering, so a client that is still sending gets
//! what was sent to it rather than a reset.
//!
//! Closing a TCP socket whose receive queue holds unread bytes, or that
//! gets more after the close, makes the kernel answer with a reset (RFC
//! 1122 4.2.2.13), and a reset can destroy what the peer has not read yet.
//! That is how a client sending a 16 MiB WebSocket message (the limit is
//! 4 MiB) lost the 1009 close frame that says why: the server closed while
//! 12 MiB were still on their way, Node's `ws` saw its write fail with
//! ECONNRESET and reported 1006 (13 runs in 15). So, like HTTP servers
//! (Apache's lingering close, nginx's `lingering_close`), a socket whose
//! peer has not finished sending is shut down for writing, which sends
//! what is queued and then a FIN, and is read and discarded until the
//! peer closes too, within [`LINGER`]'s bounds, before it is closed.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tracing::debug;

/// How long and how much a closing socket reads before it gives up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Linger {
    /// The longest it lingers in all: a hostile client that keeps sending
    /// holds its socket and permit for this long at the most.
    pub(crate) total: Duration,
    /// The longest gap between two reads: a peer that neither sends nor
    /// closes has stopped, and waiting longer would not help it.
    pub(crate) idle: Duration,
    /// The most it discards. Reading costs no memory beyond one buffer,
    /// only the peer's bandwidth and a little CPU.
    pub(crate) bytes: u64,
}

/// The bounds every connection's close uses. 10 s carry the rest of a
/// 16 MiB message over a 20 Mbit/s uplink; 64 MiB is 16 times the default
/// WebSocket message limit (a 64 MiB message took 0.5 s end to end over
/// loopback, debug build).
pub(crate) const LINGER: Linger = Linger {
    total: Duration::from_secs(10),
    idle: Duration::from_secs(2),
    bytes: 64 << 20,
};

/// Why a lingering close ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lingered {
    /// The peer closed its side: the clean end.
    PeerClosed,
    /// The peer sent nothing for [`Linger::idle`].
    Idle,
    /// The peer was still sending after [`Linger::total`].
    TooLong,
    /// The peer sent more than [`Linger::bytes`].
    TooMuch,
    /// The socket failed (a reset from the peer, say).
    Failed,
}

/// An accepted socket with its connection permit. The permit goes when the
/// socket is closed, also after a WebSocket upgrade took the socket over,
/// and only once a lingering close is over.
pub(crate) struct Socket {
    /// `None` only while it is being dropped.
    open: Option<Open>,
    /// A read returned end of file: the peer sends nothing more, so
    /// nothing can be left unread and the socket closes at once.
    peer_done: bool,
}

struct Open {
    tcp: TcpStream,
    permit: OwnedSemaphorePermit,
}

impl Socket {
    pub(crate) fn new(tcp: TcpStream, permit: OwnedSemaphorePermit) -> Self {
        Self {
            open: Some(Open { tcp, permit }),
            peer_done: false,
        }
    }

    fn tcp(&mut self) -> std::io::Result<Pin<&mut TcpStream>> {
        match &mut self.open {
            Some(open) => Ok(Pin::new(&mut open.tcp)),
            None => Err(std::io::ErrorKind::NotConnected.into()),
        }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        let Some(Open { tcp, permit }) = self.open.take() else {
            return;
        };
        if self.peer_done {
            return;
        }
        // Dropped outside a runtime (not in duet, where every connection
        // lives on a task): a plain close is all that is possible.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let ended = linger(tcp, LINGER).await;
            debug!(?ended, "closed lingering");
            drop(permit);
        });
    }
}

/// Shuts `tcp` down for writing, then reads and discards until the peer
/// closes or a bound of `bounds` is reached; the caller closes it.
pub(crate) async fn linger(mut tcp: TcpStream, bounds: Linger) -> Lingered {
    // Sends what is still queued (a close frame, a response), then a FIN:
    // a client library takes that as the end and closes its side.
    if tcp.shutdown().await.is_err() {
        return Lingered::Failed;
    }
    // On the heap, and only while lingering: 16 KiB a read keeps the
    // number of reads for a large rest small.
    let mut buf = vec![0u8; 16 << 10];
    let mut left = bounds.bytes;
    let drain = async {
        loop {
            match tokio::time::timeout(bounds.idle, tcp.read(&mut buf)).await {
                Ok(Ok(0)) => return Lingered::PeerClosed,
                Ok(Ok(n)) => {
                    left = left.saturating_sub(n as u64);
                    if left == 0 {
                        return Lingered::TooMuch;
                    }
                }
                Ok(Err(_)) => return Lingered::Failed,
                Err(_) => return Lingered::Idle,
            }
        }
    };
    tokio::time::timeout(bounds.total, drain)
        .await
        .unwrap_or(Lingered::TooLong)
}

impl AsyncRead for Socket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let (room, before) = (buf.remaining(), buf.filled().len());
        let polled = self.tcp()?.poll_read(cx, buf);
        // Nothing read into room for something: end of file.
        if matches!(polled, Poll::Ready(Ok(()))) && room > 0 && buf.filled().len() == before {
            self.peer_done = true;
        }
        polled
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.tcp()?.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.tcp()?.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.open
            .as_ref()
            .is_some_and(|o| o.tcp.is_write_vectored())
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.tcp()?.poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.tcp()?.poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A connected pair: (the server's end, the client's end).
    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (server, client)
    }

    const SHORT: Linger = Linger {
        total: Duration::from_secs(5),
        idle: Duration::from_secs(5),
        bytes: 1 << 20,
    };

    #[tokio::test]
    async fn a_peer_that_sends_the_rest_and_closes_gets_everything_sent_to_it() {
        let (mut server, mut client) = pair().await;
        server.write_all(b"bye").await.unwrap();
        let rest = tokio::spawn(async move {
            // Still sending when the server closes (as a 16 MiB message's
            // rest would be); nothing has read any of it.
            client.write_all(&vec![7u8; 512 << 10]).await.unwrap();
            let mut got = Vec::new();
            client.read_to_end(&mut got).await.map(|_| got)
        });
        assert_eq!(linger(server, SHORT).await, Lingered::PeerClosed);
        assert_eq!(rest.await.unwrap().unwrap(), b"bye");
    }

    #[tokio::test]
    async fn a_dropped_socket_keeps_its_permit_until_the_peer_has_closed() {
        let (server, mut client) = pair().await;
        let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(1));
        let socket = Socket::new(server, permits.clone().try_acquire_owned().unwrap());
        client.write_all(&[1u8; 64 << 10]).await.unwrap();
        drop(socket);
        // The client sees the end of the stream, not a reset...
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.unwrap();
        assert!(got.is_empty());
        // ...and the slot stays taken until it closes its side too.
        assert_eq!(permits.available_permits(), 0);
        drop(client);
        tokio::time::timeout(Duration::from_secs(5), permits.acquire())
            .await
            .expect("the permit comes back once the peer has closed")
            .unwrap()
            .forget();
    }

    #[tokio::test]
    async fn a_peer_that_never_stops_is_cut_off_after_the_bytes() {
        let (server, mut client) = pair().await;
        let flood = tokio::spawn(async move {
            let chunk = vec![0u8; 64 << 10];
            while client.write_all(&chunk).await.is_ok() {}
        });
        let bounds = Linger {
            bytes: 256 << 10,
            ..SHORT
        };
        assert_eq!(linger(server, bounds).await, Lingered::TooMuch);
        // The close resets the flood: the client's writes fail and it ends.
        tokio::time::timeout(Duration::from_secs(5), flood)
            .await
            .expect("the flood ends once the socket is closed")
            .unwrap();
    }

    #[tokio::test]
    async fn a_peer_that_never_stops_is_cut_off_after_the_time() {
        let (server, mut client) = pair().await;
        let _flood = tokio::spawn(async move {
            // A trickle, so the byte bound is never reached.
            while client.write_all(b"x").await.is_ok() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        let bounds = Linger {
            total: Duration::from_millis(200),
            ..SHORT
        };
        assert_eq!(linger(server, bounds).await, Lingered::TooLong);
    }

    #[tokio::test]
    async fn a_silent_peer_is_given_up_on_after_the_idle_gap() {
        let (server, _client) = pair().await;
        let bounds = Linger {
            idle: Duration::from_millis(100),
            ..SHORT
        };
        assert_eq!(linger(server, bounds).await, Lingered::Idle);
    }
}
