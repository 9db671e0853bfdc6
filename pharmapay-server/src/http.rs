//! Request and response plumbing: the request a handler sees, the reply it returns, body and
//! query decoding within limits, trace ids, and CORS.
//!
//! Nothing here knows the domain: handlers turn a [`Req`] into engine calls and engine results
//! into a [`Reply`]. Every way a request can be malformed ends as an [`ApiError`], which
//! [`crate::problem`] renders as problem details.

use bytes::Bytes;
use hyper::Method;
use hyper::header::{self, HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;

use crate::decode;
use crate::problem::ApiError;

pub use crate::reply::{Body, Reply, TraceId, full};

/// Largest request body accepted: 1 MiB (D7).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// A request as handlers see it: routed, with its body read.
pub struct Req {
    /// The method.
    pub method: Method,
    /// The path, without the query.
    pub path: String,
    /// Query parameters, percent-decoded, in order. [`crate::app::App::dispatch`] fills them
    /// in only once the caller's access is checked, so a malformed query never answers before a
    /// missing permission does.
    pub query: Vec<(String, String)>,
    /// Request headers.
    pub headers: HeaderMap,
    /// The body (at most [`MAX_BODY_BYTES`]); empty once [`Req::json`] has read it.
    pub body: Bytes,
    /// Path parameters by name.
    pub params: Vec<(String, String)>,
    /// This request's trace id.
    pub trace_id: TraceId,
}

impl Req {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// The bearer token of the `Authorization` header, if it has one.
    pub fn bearer_token(&self) -> Option<&str> {
        let value = self.header("authorization")?.trim();
        let (scheme, token) = value.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|token| !token.is_empty())
    }

    /// A positive integer path parameter.
    ///
    /// # Errors
    /// A 400 naming the parameter when it is not a positive integer.
    pub fn id(&self, name: &str) -> Result<i64, ApiError> {
        let value = self.param(name);
        match value.parse::<i64>() {
            Ok(id) if id >= 1 => Ok(id),
            _ => Err(ApiError::invalid(name, "must be a positive integer")),
        }
    }

    /// A path parameter as text.
    pub fn param(&self, name: &str) -> &str {
        self.params.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str()).unwrap_or("")
    }

    fn is_json(&self) -> bool {
        let Some(content_type) = self.header("content-type") else { return false };
        let mime = content_type.split(';').next().unwrap_or("").trim();
        mime.eq_ignore_ascii_case("application/json")
            || (mime.len() > 5 && mime[..mime.len() - 5].ends_with('+') && mime.ends_with("json"))
    }

    /// The JSON body as `B`, which must be present (D7). The body's bytes are released once
    /// read, so they are not held while the request is served.
    ///
    /// # Errors
    /// 415 without a JSON content type; 400 for an empty, malformed or too deeply nested body,
    /// or one that is not an object.
    pub fn json<B: DeserializeOwned>(&mut self) -> Result<B, ApiError> {
        self.optional_json()?.ok_or_else(|| ApiError::malformed("a JSON body is required"))
    }

    /// The JSON body as `B`, or `None` when the request has no body (optional delete reasons).
    ///
    /// # Errors
    /// As for [`Req::json`] when a body is present.
    pub fn optional_json<B: DeserializeOwned>(&mut self) -> Result<Option<B>, ApiError> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        if !self.is_json() {
            return Err(ApiError::UnsupportedMediaType);
        }
        let body = std::mem::take(&mut self.body);
        decode::parse(&body).map(Some)
    }
}

/// Decodes a query string (`a=1&b=x%20y`, `+` as space).
///
/// # Errors
/// A 400 when a value is not valid percent-encoded UTF-8.
pub fn parse_query(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    let mut pairs = Vec::new();
    for part in query.split('&').filter(|part| !part.is_empty()) {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        let name = percent_decode(name).ok_or_else(|| ApiError::malformed("the query string is not valid UTF-8"))?;
        let value =
            percent_decode(value).ok_or_else(|| ApiError::invalid(&name, "is not valid percent-encoded UTF-8"))?;
        pairs.push((name, value));
    }
    Ok(pairs)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes.get(index + 1..index + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                index += 2;
            }
            byte => out.push(byte),
        }
        index += 1;
    }
    String::from_utf8(out).ok()
}

/// Cross-origin rules: which origins may call the API from a browser.
#[derive(Clone, Debug, Default)]
pub struct Cors {
    origins: Vec<String>,
}

impl Cors {
    /// Allows the given origins (`*` allows any).
    pub fn new(origins: Vec<String>) -> Self {
        Self { origins: origins.into_iter().map(|origin| origin.trim().trim_end_matches('/').to_owned()).collect() }
    }

    fn allowed<'a>(&self, origin: Option<&'a str>) -> Option<&'a str> {
        let origin = origin?;
        self.origins.iter().any(|allowed| allowed == "*" || allowed.eq_ignore_ascii_case(origin)).then_some(origin)
    }

    /// The answer to a preflight request, if this is one from an allowed origin.
    pub fn preflight(&self, method: &Method, headers: &HeaderMap) -> Option<Reply> {
        if method != Method::OPTIONS || !headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD) {
            return None;
        }
        let origin = self.allowed(headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()))?;
        let reply = Reply::no_content()
            .with_header(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin)
            .with_header(header::ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, PUT, DELETE, OPTIONS")
            .with_header(header::ACCESS_CONTROL_ALLOW_HEADERS, "authorization, content-type, idempotency-key")
            .with_header(header::ACCESS_CONTROL_MAX_AGE, "600")
            .with_header(header::VARY, "Origin");
        Some(reply)
    }

    /// Adds the response headers a browser needs to read an answer to an allowed origin, given
    /// the request's `Origin` header.
    pub fn decorate(&self, origin: Option<&HeaderValue>, reply: &mut Reply) {
        let origin = origin.and_then(|v| v.to_str().ok());
        if let Some(origin) = self.allowed(origin)
            && let Ok(value) = HeaderValue::from_str(origin)
        {
            reply.headers.push((header::ACCESS_CONTROL_ALLOW_ORIGIN, value));
            reply.headers.push((header::VARY, HeaderValue::from_static("Origin")));
            reply.headers.push((
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static("Location, Retry-After, Content-Disposition, Idempotent-Replayed"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_are_percent_decoded() {
        let pairs = parse_query("search=a%20b+c&page=2&flag").unwrap();
        assert_eq!(
            pairs,
            [("search".into(), "a b c".into()), ("page".into(), "2".into()), ("flag".into(), String::new())]
        );
        assert!(parse_query("search=%ff").is_err());
        assert!(parse_query("search=%zz").is_err());
    }

    #[test]
    fn trace_ids_are_unique_hex() {
        let (a, b) = (TraceId::next(), TraceId::next());
        assert_ne!(a, b);
        assert_eq!(a.to_string().len(), 32);
    }
}
