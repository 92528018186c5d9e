//! From a URL to a connected byte stream, each failure typed: the URL
//! ([`RemoteErrorKind::InvalidUrl`]), name resolution (`Dns`), TCP
//! (`Refused`, `Timeout`), TLS (`Tls`).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::{ClientOptions, RemoteError, RemoteErrorKind, RemoteKind, tls};

/// A parsed remote URL.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) kind: RemoteKind,
    pub(crate) tls: bool,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) url: url::Url,
}

impl Target {
    pub(crate) fn parse(text: &str) -> Result<Self, RemoteError> {
        let invalid = |why: String| RemoteError::new(RemoteErrorKind::InvalidUrl, why);
        let url = url::Url::parse(text).map_err(|e| invalid(format!("`{text}`: {e}")))?;
        let (kind, tls) = match url.scheme() {
            "ws" => (RemoteKind::WebSocket, false),
            "wss" => (RemoteKind::WebSocket, true),
            "http" => (RemoteKind::StreamableHttp, false),
            "https" => (RemoteKind::StreamableHttp, true),
            other => {
                return Err(invalid(format!(
                    "`{text}`: the scheme `{other}` is not ws, wss, http or https"
                )));
            }
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_owned(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => a.to_string(),
            None => return Err(invalid(format!("`{text}` names no host"))),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| invalid(format!("`{text}` names no port")))?;
        Ok(Self {
            kind,
            tls,
            host,
            port,
            url,
        })
    }

    /// The same endpoint as a WebSocket URL (`http` to `ws`, `https` to
    /// `wss`).
    pub(crate) fn as_websocket(&self) -> Self {
        let mut url = self.url.clone();
        let _ = url.set_scheme(if self.tls { "wss" } else { "ws" });
        Self {
            kind: RemoteKind::WebSocket,
            url,
            ..self.clone()
        }
    }

    /// `host:port` as the `Host` header wants it (IPv6 in brackets).
    pub(crate) fn authority(&self) -> String {
        match self.url.host() {
            Some(url::Host::Ipv6(a)) => format!("[{a}]:{}", self.port),
            _ => format!("{}:{}", self.host, self.port),
        }
    }

    /// The path and query to request.
    pub(crate) fn path_and_query(&self) -> String {
        match self.url.query() {
            Some(q) => format!("{}?{q}", self.url.path()),
            None => self.url.path().to_owned(),
        }
    }
}

/// A connected stream, plain or TLS.
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Stream {
    /// Whether TLS negotiated HTTP/2 (ALPN `h2`).
    pub(crate) fn alpn_h2(&self) -> bool {
        match self {
            Self::Plain(_) => false,
            Self::Tls(s) => s.get_ref().1.alpn_protocol() == Some(b"h2"),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write(cx, data),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_flush(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Resolves and connects to `target` (within the connect timeout), then
/// makes the TLS handshake offering `alpn` when the scheme asks for TLS
/// (within the handshake timeout).
pub(crate) async fn dial(
    target: &Target,
    options: &ClientOptions,
    alpn: &[&[u8]],
) -> Result<Stream, RemoteError> {
    let where_ = target.authority();
    let tcp = tokio::time::timeout(options.connect_timeout, connect_tcp(target))
        .await
        .map_err(|_| {
            RemoteError::new(
                RemoteErrorKind::Timeout,
                format!(
                    "connecting to {where_} took longer than {:?}",
                    options.connect_timeout
                ),
            )
        })??;
    let _ = tcp.set_nodelay(true);
    if !target.tls {
        return Ok(Stream::Plain(tcp));
    }
    let config = tls::client_config(options.ca_file.as_deref(), alpn)?;
    let name = ServerName::try_from(target.host.clone()).map_err(|e| {
        RemoteError::new(
            RemoteErrorKind::InvalidUrl,
            format!("`{}` is not a TLS server name: {e}", target.host),
        )
    })?;
    let handshake = tokio_rustls::TlsConnector::from(config).connect(name, tcp);
    match tokio::time::timeout(options.handshake_timeout, handshake).await {
        Err(_) => Err(RemoteError::new(
            RemoteErrorKind::Timeout,
            format!(
                "the TLS handshake with {where_} took longer than {:?}",
                options.handshake_timeout
            ),
        )),
        Ok(Err(e)) => Err(RemoteError::new(
            RemoteErrorKind::Tls,
            format!("TLS handshake with {where_} failed: {e}"),
        )),
        Ok(Ok(stream)) => Ok(Stream::Tls(Box::new(stream))),
    }
}

async fn connect_tcp(target: &Target) -> Result<TcpStream, RemoteError> {
    let where_ = target.authority();
    let addrs: Vec<_> = tokio::net::lookup_host((target.host.as_str(), target.port))
        .await
        .map_err(|e| {
            RemoteError::new(
                RemoteErrorKind::Dns,
                format!("cannot resolve `{}`: {e}", target.host),
            )
        })?
        .collect();
    if addrs.is_empty() {
        return Err(RemoteError::new(
            RemoteErrorKind::Dns,
            format!("`{}` resolves to no address", target.host),
        ));
    }
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    let e = last.map(|e| e.to_string()).unwrap_or_default();
    Err(RemoteError::new(
        RemoteErrorKind::Refused,
        format!("cannot connect to {where_}: {e}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_picks_the_transport() {
        let t = Target::parse("wss://example.test/acp").expect("valid");
        assert_eq!((t.kind, t.tls, t.port), (RemoteKind::WebSocket, true, 443));
        let t = Target::parse("http://[::1]:8080/acp?x=1").expect("valid");
        assert_eq!((t.kind, t.tls), (RemoteKind::StreamableHttp, false));
        assert_eq!(t.authority(), "[::1]:8080");
        assert_eq!(t.path_and_query(), "/acp?x=1");
        assert_eq!(t.as_websocket().url.as_str(), "ws://[::1]:8080/acp?x=1");
        let e = Target::parse("ftp://x/acp").expect_err("not a remote scheme");
        assert_eq!(e.kind, RemoteErrorKind::InvalidUrl);
        assert!(e.message.contains("ftp"), "{e}");
    }
}
