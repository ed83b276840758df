//! Malformed and unknown client messages get an `error` frame; the
//! connection stays up.

mod support;

use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_messages_get_errors_and_the_socket_stays_up() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    let cases = [
        ("not json at all", ErrorCode::BadMessage),
        ("[1,2,3]", ErrorCode::BadMessage),
        ("{\"no_type\":1}", ErrorCode::BadMessage),
        (
            "{\"type\":\"launch_missiles\",\"id\":\"x\"}",
            ErrorCode::UnknownType,
        ),
        ("{\"type\":\"submit\"}", ErrorCode::BadMessage),
        (
            "{\"type\":\"approve\",\"request_id\":5,\"allowed\":true}",
            ErrorCode::BadMessage,
        ),
        (
            "{\"type\":\"resize\",\"cols\":-1,\"rows\":10}",
            ErrorCode::BadMessage,
        ),
        (
            "{\"type\":\"resize\",\"cols\":0,\"rows\":10}",
            ErrorCode::BadMessage,
        ),
        (
            "{\"type\":\"submit\",\"text\":\"x\",\"command\":\"sh\"}",
            ErrorCode::BadMessage,
        ),
    ];
    for (text, want) in cases {
        c.send_raw(text).await;
        match c.until(|m| matches!(m, ServerMessage::Error { .. })).await {
            ServerMessage::Error { code, message, .. } => {
                assert_eq!(code, want, "{text}: {message}");
                assert!(!message.is_empty());
            }
            _ => unreachable!(),
        }
    }
    c.send(&ClientMessage::Ping {
        id: Some("still-here".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Pong { id: Some(i) } if i == "still-here"))
        .await;
    // And the session still works.
    c.keys(b"alive").await;
    c.until_screen("alive").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_messages_close_only_that_connection() {
    let server = TestServer::start_with(|o| o.max_ws_message = 64 << 10).await;
    let s = server.create("fake").await;
    let mut big = server.connect(s.id, None).await;
    let mut other = server.connect(s.id, None).await;
    let _ = futures_util::SinkExt::send(
        &mut big.ws,
        tokio_tungstenite::tungstenite::Message::Text("x".repeat(200 << 10).into()),
    )
    .await;
    // The server closes that client with 1009 Message Too Big and says why...
    let closed = tokio::time::timeout(DEADLINE, async {
        loop {
            match futures_util::StreamExt::next(&mut big.ws).await {
                None | Some(Err(_)) => return None,
                Some(Ok(tokio_tungstenite::tungstenite::Message::Close(frame))) => return frame,
                Some(Ok(_)) => {}
            }
        }
    })
    .await
    .expect("closed");
    let frame = closed.expect("a close frame, not a dropped connection");
    assert_eq!(u16::from(frame.code), 1009);
    assert!(frame.reason.contains("65536"), "{}", frame.reason);
    // ...and everyone else carries on.
    other.keys(b"unaffected").await;
    other.until_screen("unaffected").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_close_is_answered() {
    use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode, CloseFrame};
    use tokio_tungstenite::tungstenite::Message;
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    futures_util::SinkExt::send(
        &mut c.ws,
        Message::Close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "bye".into(),
        })),
    )
    .await
    .unwrap();
    // RFC 6455 5.5.1: the server answers with a Close of its own (the
    // client's library then ends the stream cleanly, not with 1006).
    let answer = tokio::time::timeout(DEADLINE, async {
        loop {
            match futures_util::StreamExt::next(&mut c.ws).await {
                Some(Ok(Message::Close(frame))) => return Ok(frame),
                Some(Ok(_)) => {}
                other => return Err(format!("{other:?}")),
            }
        }
    })
    .await
    .expect("an answer within the deadline");
    let frame = answer.expect("a close frame").expect("with a code");
    assert_eq!(frame.code, CloseCode::Normal);
}
