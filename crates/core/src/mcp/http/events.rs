//! Answers as server-sent events: each message one `message` event, the stream open until its
//! sender is dropped.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Response, header};
use http_body_util::{BodyExt as _, StreamBody};
use hyper::body::Frame;
use tokio::sync::mpsc;

use super::{Body, limits};

/// A response that streams `messages` as server-sent events until their sender is dropped;
/// `held` (a call's permits) is released when the stream ends.
pub(super) fn sse(messages: mpsc::Receiver<String>, held: limits::Held) -> Response<Body> {
    let events =
        futures_util::stream::unfold((messages, held), |(mut messages, held)| async move {
            let message = messages.recv().await?;
            let event = format!("event: message\ndata: {message}\n\n");
            Some((
                Ok::<_, Infallible>(Frame::data(Bytes::from(event))),
                (messages, held),
            ))
        });
    let mut response = Response::new(StreamBody::new(events).boxed());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_message_is_one_event_and_the_stream_ends_with_its_sender() {
        let (send, messages) = mpsc::channel(4);
        send.send("{\"id\":1}".to_owned()).await.unwrap();
        send.send("{\"id\":2}".to_owned()).await.unwrap();
        drop(send);
        let response = sse(messages, limits::Held::default());
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/event-stream"
        );
        assert_eq!(response.headers()[header::CACHE_CONTROL], "no-cache");
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(
            body,
            "event: message\ndata: {\"id\":1}\n\nevent: message\ndata: {\"id\":2}\n\n"
        );
    }
}
