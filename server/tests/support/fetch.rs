//! Requests to a server a test reaches by its URL (a `duet serve` process
//! of its own, a mock API) rather than through a `TestServer`.

/// Sends `req` and decodes the JSON body of the answer, whatever its status
/// (as `.send().await.unwrap().json().await.unwrap()` did); when that fails,
/// the test fails naming the URL, the status and the body.
pub(crate) async fn json<T: serde::de::DeserializeOwned>(req: reqwest::RequestBuilder) -> T {
    let resp = req.send().await.unwrap();
    let (url, status) = (resp.url().clone(), resp.status());
    let body = resp.bytes().await.unwrap();
    serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "{url}: {status}: not the JSON expected ({e}): {}",
            String::from_utf8_lossy(&body)
        )
    })
}
