//! rustls configurations: a client trusting the platform's roots plus an
//! optional CA file, a server from certificate and key files. Both offer
//! HTTP/2 and HTTP/1.1 by ALPN (a WebSocket client offers HTTP/1.1 only:
//! the upgrade is an HTTP/1.1 mechanism). The crypto provider is *ring*.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::{RemoteError, RemoteErrorKind};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The platform's roots, read once per process (reading them walks the
/// system's certificate directories). Certificates that fail to load are
/// skipped, as browsers do.
fn platform_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        let _ = roots.add_parsable_certificates(found.certs);
        roots
    })
}

/// The certificates of a PEM file.
fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .collect();
    let certs = certs.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// A client configuration offering `alpn`, trusting the platform's roots and
/// the certificates of `ca_file`.
pub(crate) fn client_config(
    ca_file: Option<&Path>,
    alpn: &[&[u8]],
) -> Result<Arc<rustls::ClientConfig>, RemoteError> {
    let mut roots = platform_roots().clone();
    if let Some(path) = ca_file {
        let certs = certificates(path).map_err(|e| RemoteError::new(RemoteErrorKind::Tls, e))?;
        for cert in certs {
            roots.add(cert).map_err(|e| {
                RemoteError::new(
                    RemoteErrorKind::Tls,
                    format!("{}: not a usable CA certificate: {e}", path.display()),
                )
            })?;
        }
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| RemoteError::new(RemoteErrorKind::Tls, e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// A server configuration from a PEM certificate chain and a PEM private
/// key (PKCS#8, PKCS#1 or SEC1), offering HTTP/2 and HTTP/1.1 by ALPN.
pub(crate) fn server_config(cert: &Path, key: &Path) -> std::io::Result<Arc<rustls::ServerConfig>> {
    let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
    let chain = certificates(cert).map_err(invalid)?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        invalid(format!(
            "cannot read the private key {}: {e}",
            key.display()
        ))
    })?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| {
            invalid(format!(
                "the certificate and key do not make a TLS identity: {e}"
            ))
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
