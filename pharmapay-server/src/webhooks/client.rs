//! The HTTP client webhook deliveries are posted with (D47): hyper's client over rustls, whose
//! resolver refuses loopback, private and link-local addresses unless the server allows them,
//! so the address checked is the address connected to.

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
use hyper_util::rt::TokioExecutor;

/// How long a try may take, from connecting to the answer's status (D47).
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The most of an answer's body read before the connection is let go.
const ANSWER_BYTES: usize = 64 * 1024;

/// Whether `ip` is an address deliveries must not reach without
/// `PHARMAPAY_WEBHOOK_ALLOW_PRIVATE`: loopback, private (RFC 1918, unique-local), link-local,
/// unspecified, shared (carrier-grade NAT), broadcast or documentation ranges, and the IPv4
/// forms of those inside IPv6.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || (a == 100 && (64..128).contains(&b))
                || a == 0
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first & 0xffc0) == 0xfec0
        }
    }
}

/// Resolves names as the system does, keeping only the addresses deliveries may reach.
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
            let found = tokio::task::spawn_blocking(move || (host.as_str(), 0).to_socket_addrs())
                .await
                .map_err(io::Error::other)??;
            let allowed: Vec<SocketAddr> =
                found.filter(|address| allow_internal || !is_internal(address.ip())).collect();
            if allowed.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} resolves to no public address", name.as_str()),
                ));
            }
            Ok(allowed.into_iter())
        })
    }
}

/// What a try got: the answer's status, or why there was none.
pub type Outcome = Result<u16, String>;

/// The client deliveries are posted with.
#[derive(Clone, Debug)]
pub struct Deliverer {
    client: Client<HttpsConnector<HttpConnector<GuardedResolver>>, Full<Bytes>>,
    allow_internal: bool,
}

impl Deliverer {
    /// A client; `allow_internal` lets deliveries reach loopback, private and link-local
    /// addresses (`PHARMAPAY_WEBHOOK_ALLOW_PRIVATE`).
    pub fn new(allow_internal: bool) -> Self {
        let mut http = HttpConnector::new_with_resolver(GuardedResolver { allow_internal });
        http.enforce_http(false);
        http.set_connect_timeout(Some(TIMEOUT));
        http.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).pool_idle_timeout(Duration::from_secs(30)).build(https);
        Self { client, allow_internal }
    }

    /// Posts `body` to `url` with `headers`, within [`TIMEOUT`].
    pub async fn post(&self, url: &str, headers: &[(&str, String)], body: Bytes) -> Outcome {
        let uri: Uri = url.parse().map_err(|_| "the URL cannot be read".to_owned())?;
        // An address written in the URL is connected to without the resolver: check it here.
        if let Some(host) = uri.host()
            && let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>()
            && !self.allow_internal
            && is_internal(ip)
        {
            return Err(format!("{ip} is a loopback, private or link-local address"));
        }
        let mut request =
            Request::post(uri).header("content-type", "application/json").header("user-agent", "pharmapay");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let request = request.body(Full::new(body)).map_err(|error| error.to_string())?;
        let answer = async {
            let response = self.client.request(request).await.map_err(|error| describe(&error))?;
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
        tokio::time::timeout(TIMEOUT, answer).await.unwrap_or_else(|_| Err("no answer within 10 s".to_owned()))
    }
}

/// A client error with its causes, short enough for a delivery's `lastError`.
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars().take(500).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_told_from_public_ones() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "100.128.0.1"] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn a_refused_address_is_never_connected_to() {
        let deliverer = Deliverer::new(false);
        let outcome = deliverer.post("http://127.0.0.1:9/hook", &[], Bytes::from_static(b"{}")).await;
        assert!(outcome.as_ref().is_err_and(|error| error.contains("loopback")), "{outcome:?}");
        let outcome = deliverer.post("http://localhost:9/hook", &[], Bytes::from_static(b"{}")).await;
        assert!(outcome.as_ref().is_err_and(|error| error.contains("no public address")), "{outcome:?}");
    }
}
