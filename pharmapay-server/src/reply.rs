//! The reply a handler returns, the body types it is sent with, and the trace id every answer
//! carries.

use std::convert::Infallible;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::StatusCode;
use hyper::header::{self, HeaderName, HeaderValue};
use serde::Serialize;

/// The body of every response.
pub type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// A whole body from bytes.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never: Infallible| match never {}).boxed_unsync()
}

/// A request identifier, returned in problem details and written to the request's log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceId(u64, u64);

impl TraceId {
    /// A fresh id: a random per-process prefix and a counter, so ids never repeat.
    pub fn next() -> Self {
        static PREFIX: OnceLock<u64> = OnceLock::new();
        static COUNTER: AtomicU64 = AtomicU64::new(1);
        let prefix = *PREFIX.get_or_init(|| {
            let mut bytes = [0u8; 8];
            // Without randomness the ids stay unique within the process, which is what matters.
            let _ = getrandom::fill(&mut bytes);
            u64::from_le_bytes(bytes)
        });
        TraceId(prefix, COUNTER.fetch_add(1, Ordering::Relaxed))
    }

    /// The id as the value of the `x-trace-id` header: the same 32 hex digits as `Display`,
    /// written without a `String` on the way.
    pub fn header_value(self) -> HeaderValue {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 32];
        for (half, value) in [self.0, self.1].into_iter().enumerate() {
            for (digit, place) in text[half * 16..(half + 1) * 16].iter_mut().enumerate() {
                // A masked nibble, 0 to 15.
                *place = HEX[((value >> (60 - 4 * digit)) & 0xf) as usize];
            }
        }
        HeaderValue::from_bytes(&text).expect("hex digits are valid header text")
    }
}

impl std::fmt::Display for TraceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}{:016x}", self.0, self.1)
    }
}

/// A response under construction.
pub struct Reply {
    /// Status code.
    pub status: StatusCode,
    /// Headers beyond the defaults.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The body.
    pub body: Body,
}

impl Reply {
    /// A JSON reply.
    pub fn json(status: StatusCode, value: &impl Serialize) -> Self {
        // Serialising our own DTOs cannot fail: every map key is a string and every number is
        // already a valid JSON number.
        let bytes = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
        Self::json_bytes(status, bytes)
    }

    /// A JSON reply from already encoded bytes.
    pub fn json_bytes(status: StatusCode, bytes: Vec<u8>) -> Self {
        Self::bytes(status, "application/json", bytes)
    }

    /// A reply with a body of the given content type.
    pub fn bytes(status: StatusCode, content_type: &'static str, bytes: impl Into<Bytes>) -> Self {
        Self {
            status,
            headers: vec![(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
            body: full(bytes),
        }
    }

    /// A reply with a streamed body.
    pub fn stream(status: StatusCode, content_type: &'static str, body: Body) -> Self {
        Self { status, headers: vec![(header::CONTENT_TYPE, HeaderValue::from_static(content_type))], body }
    }

    /// 204 with no body.
    pub fn no_content() -> Self {
        Self { status: StatusCode::NO_CONTENT, headers: Vec::new(), body: full(Bytes::new()) }
    }

    /// Adds a header; values that are not valid header text are dropped.
    pub fn with_header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(value) = HeaderValue::from_str(value) {
            self.headers.push((name, value));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_ids_header_is_its_display() {
        for id in [TraceId(0, 1), TraceId(u64::MAX, 0x0123_4567_89ab_cdef), TraceId(0xfedc_ba98_7654_3210, 42)] {
            assert_eq!(id.header_value().to_str().unwrap(), id.to_string());
        }
        assert_eq!(TraceId(0xa, 0xb).header_value().to_str().unwrap(), "000000000000000a000000000000000b");
    }
}
