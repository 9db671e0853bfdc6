//! The HTTP client webhook deliveries are posted with (D47): hyper's client over rustls, whose
//! resolver refuses internal addresses (`pharmapay_core::webhooks::rules::is_internal`) unless
//! the server allows them, so the address checked is the address connected to. Whatever goes
//! wrong is told as one of the fixed `DeliveryFailure`s (D51), never as a resolver's or a
//! connector's own text, so a delivery's `lastError` reveals nothing of the server's network.

use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::{TokioExecutor, TokioIo};
use pharmapay_core::webhooks::DeliveryFailure;
use pharmapay_core::webhooks::rules::is_internal;
use tokio::net::TcpStream;

/// How long a try may take, from connecting to the answer's status (D47).
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// How long a name may take to resolve; a lookup still going then is a name that did not
/// resolve, not a receiver that did not answer.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The most of an answer's body read before the connection is let go.
const ANSWER_BYTES: usize = 64 * 1024;

/// An error that carries `failure` through the connectors to [`failure_in`].
fn carrying(failure: DeliveryFailure) -> io::Error {
    io::Error::other(failure)
}

/// The [`DeliveryFailure`] carried anywhere in `error`'s chain, inside `io::Error`s too.
fn failure_in(error: &(dyn StdError + 'static)) -> Option<DeliveryFailure> {
    if let Some(failure) = error.downcast_ref::<DeliveryFailure>() {
        return Some(*failure);
    }
    // An `io::Error`'s `source` skips the error it wraps: look into that one first.
    if let Some(inner) = error.downcast_ref::<io::Error>().and_then(io::Error::get_ref)
        && let Some(failure) = failure_in(inner)
    {
        return Some(failure);
    }
    error.source().and_then(failure_in)
}

/// What a failed request is told as: what the resolver or the TCP connector carried; else, a
/// failure while connecting happened past TCP, in the TLS handshake; else the connection
/// failed or closed before an answer.
fn failure_of(error: &hyper_util::client::legacy::Error) -> DeliveryFailure {
    failure_in(error).unwrap_or(if error.is_connect() { DeliveryFailure::Tls } else { DeliveryFailure::NotConnected })
}

/// Resolves names as the system does, keeping only the addresses deliveries may reach: a name
/// that does not resolve (or resolves to no address) fails as
/// [`DeliveryFailure::Unresolved`], one that resolves only to refused addresses as
/// [`DeliveryFailure::RefusedInternal`].
#[derive(Clone, Copy, Debug)]
pub struct GuardedResolver {
    allow_internal: bool,
}

impl tower_service::Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let allow_internal = self.allow_internal;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let lookup = tokio::task::spawn_blocking(move || (host.as_str(), 0).to_socket_addrs());
            let found: Vec<SocketAddr> = match tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await {
                Ok(Ok(Ok(found))) => found.collect(),
                _ => return Err(carrying(DeliveryFailure::Unresolved)),
            };
            if found.is_empty() {
                return Err(carrying(DeliveryFailure::Unresolved));
            }
            let allowed: Vec<SocketAddr> =
                found.into_iter().filter(|address| allow_internal || !is_internal(address.ip())).collect();
            if allowed.is_empty() {
                return Err(carrying(DeliveryFailure::RefusedInternal));
            }
            Ok(allowed.into_iter())
        })
    }
}

/// The TCP connector, telling each of its failures as a [`DeliveryFailure`]: the resolver's
/// own, or [`DeliveryFailure::NotConnected`]; so a failure past it is the TLS handshake's.
#[derive(Clone, Debug)]
pub struct TcpConnector(HttpConnector<GuardedResolver>);

impl tower_service::Service<Uri> for TcpConnector {
    type Response = TokioIo<TcpStream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.poll_ready(cx).map_err(|_| carrying(DeliveryFailure::NotConnected))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move {
            connecting.await.map_err(|error| carrying(failure_in(&error).unwrap_or(DeliveryFailure::NotConnected)))
        })
    }
}

/// What a try got: the answer's status, or why there was none.
pub type Outcome = Result<u16, DeliveryFailure>;

/// The client deliveries are posted with.
#[derive(Clone, Debug)]
pub struct Deliverer {
    client: Client<HttpsConnector<TcpConnector>, Full<Bytes>>,
    allow_internal: bool,
    timeout: Duration,
}

impl Deliverer {
    /// A client; `allow_internal` lets deliveries reach internal addresses
    /// (`PHARMAPAY_WEBHOOK_ALLOW_PRIVATE`).
    pub fn new(allow_internal: bool) -> Self {
        let mut http = HttpConnector::new_with_resolver(GuardedResolver { allow_internal });
        http.enforce_http(false);
        http.set_connect_timeout(Some(TIMEOUT));
        http.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(TcpConnector(http));
        let client = Client::builder(TokioExecutor::new()).pool_idle_timeout(Duration::from_secs(30)).build(https);
        Self { client, allow_internal, timeout: TIMEOUT }
    }

    /// Posts `body` to `url` with `headers`, within [`TIMEOUT`].
    pub async fn post(&self, url: &str, headers: &[(&str, String)], body: Bytes) -> Outcome {
        // A URL hyper cannot read (a host of letters beyond ASCII, say) names no host it finds.
        let uri: Uri = url.parse().map_err(|_| DeliveryFailure::Unresolved)?;
        // An address written in the URL is connected to without the resolver: check it here.
        if let Some(host) = uri.host()
            && let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>()
            && !self.allow_internal
            && is_internal(ip)
        {
            return Err(DeliveryFailure::RefusedInternal);
        }
        let mut request =
            Request::post(uri).header("content-type", "application/json").header("user-agent", "pharmapay");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let request = request.body(Full::new(body)).map_err(|_| DeliveryFailure::NotConnected)?;
        let answer = async {
            let response = self.client.request(request).await.map_err(|error| failure_of(&error))?;
            let status = response.status().as_u16();
            // Read a little of the answer so the connection can be kept; its content is not used.
            let mut body = response.into_body();
            let mut read = 0;
            while read < ANSWER_BYTES {
                match body.frame().await {
                    Some(Ok(frame)) => read += frame.data_ref().map_or(0, Bytes::len),
                    _ => break,
                }
            }
            Ok(status)
        };
        tokio::time::timeout(self.timeout, answer).await.unwrap_or(Err(DeliveryFailure::NoAnswer))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    async fn post(deliverer: &Deliverer, url: &str) -> Outcome {
        deliverer.post(url, &[], Bytes::from_static(b"{}")).await
    }

    /// A listener on 127.0.0.1 that answers each connection with `reply` (nothing, when empty)
    /// and keeps it open.
    async fn listener(reply: &'static [u8]) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut request = [0; 4096];
                let _ = stream.read(&mut request).await;
                if !reply.is_empty() {
                    let _ = stream.write_all(reply).await;
                }
                open.push(stream);
            }
        });
        port
    }

    #[test]
    fn a_failure_is_found_wherever_it_is_carried() {
        let carried = carrying(DeliveryFailure::Unresolved);
        assert_eq!(failure_in(&carried), Some(DeliveryFailure::Unresolved));
        let wrapped = io::Error::other(carrying(DeliveryFailure::RefusedInternal));
        assert_eq!(failure_in(&wrapped), Some(DeliveryFailure::RefusedInternal));
        let system = io::Error::new(io::ErrorKind::NotFound, "Name or service not known");
        assert_eq!(failure_in(&system), None, "a system's text is never passed on");
    }

    #[tokio::test]
    async fn internal_addresses_are_refused_and_never_connected_to() {
        let deliverer = Deliverer::new(false);
        for url in
            ["http://127.0.0.1:9/hook", "http://[::1]:9/hook", "http://[::ffff:10.0.0.1]/", "http://localhost:9/"]
        {
            assert_eq!(post(&deliverer, url).await, Err(DeliveryFailure::RefusedInternal), "{url}");
        }
    }

    #[tokio::test]
    async fn a_name_that_does_not_resolve_is_told_so() {
        for allow in [false, true] {
            let outcome = post(&Deliverer::new(allow), "https://no-such-host.invalid/hooks").await;
            assert_eq!(outcome, Err(DeliveryFailure::Unresolved));
        }
    }

    #[tokio::test]
    async fn a_closed_port_a_broken_handshake_a_silent_receiver_and_an_answer_are_told_apart() {
        let deliverer = Deliverer { timeout: Duration::from_secs(1), ..Deliverer::new(true) };
        let closed = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
        assert_eq!(post(&deliverer, &format!("http://127.0.0.1:{closed}/")).await, Err(DeliveryFailure::NotConnected));
        let plain = listener(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n").await;
        assert_eq!(post(&deliverer, &format!("https://127.0.0.1:{plain}/")).await, Err(DeliveryFailure::Tls));
        assert_eq!(post(&deliverer, &format!("http://127.0.0.1:{plain}/")).await, Ok(204));
        let silent = listener(b"").await;
        assert_eq!(post(&deliverer, &format!("http://127.0.0.1:{silent}/")).await, Err(DeliveryFailure::NoAnswer));
        let garbled = listener(b"not an answer\r\n\r\n").await;
        assert_eq!(post(&deliverer, &format!("http://127.0.0.1:{garbled}/")).await, Err(DeliveryFailure::NotConnected));
    }
}
