"""TLS for the ports ksched serves: the serving certificate and the server's SSL context.

# k8s.io/apiserver pkg/server/options/serving.go (MaybeDefaultWithSelfSignedCerts: with
# no --tls-cert-file a self-signed certificate for localhost and 127.0.0.1 is made at
# start), client-go util/cert GenerateSelfSignedCertKey (a CA of its own signs the
# serving certificate, one year), secure_serving.go (TLS 1.2 at least; client
# certificates requested, not required, and checked against --client-ca-file).
Certificates are made with ``cryptography``; keys are ECDSA P-256 (quick to make at each
start; upstream makes RSA 2048, which clients treat alike). No private key is written to
disk: the stdlib's ``ssl`` loads keys from paths only, so an in-memory key is handed to it
through an anonymous memory file (``memfd_create``, read at ``/proc/self/fd/N``) that is
closed right after loading.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import ssl
import sys
from collections.abc import Iterable

import attrs

from .._errors import ConfigError

__all__ = ["ServingCertificate", "server_context"]

VALIDITY = datetime.timedelta(days=365)


@attrs.frozen(repr=False)
class ServingCertificate:
    """A certificate chain and its key, PEM-encoded, held in memory only."""

    chain_pem: bytes
    """The serving certificate, then the CA that signed it (when self-signed)."""
    key_pem: bytes

    def __repr__(self) -> str:  # never the key
        return f"ServingCertificate(sha256={self.fingerprint})"

    @property
    def certificate_pem(self) -> bytes:
        """The serving certificate alone (what a client can pin or trust)."""
        end = b"-----END CERTIFICATE-----"
        return self.chain_pem[: self.chain_pem.index(end) + len(end)] + b"\n"

    @property
    def ca_pem(self) -> bytes:
        """The last certificate of the chain: the CA clients trust (``--cacert``)."""
        begin = b"-----BEGIN CERTIFICATE-----"
        return self.chain_pem[self.chain_pem.rindex(begin) :]

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the serving certificate (DER), as ``openssl x509 -fingerprint``."""
        der = ssl.PEM_cert_to_DER_cert(self.certificate_pem.decode("ascii"))
        return hashlib.sha256(der).hexdigest()

    @classmethod
    def self_signed(cls, host: str, alternate: Iterable[str] = ()) -> ServingCertificate:
        """A CA of its own and the serving certificate it signs for ``host`` and
        ``alternate`` names (IP addresses become IP SANs), valid for a year."""
        from ._self_signed import self_signed_chain  # cryptography, only when serving

        chain, key_pem = self_signed_chain(host, alternate, VALIDITY)
        return cls(chain, key_pem)


def server_context(
    *,
    certificate: ServingCertificate | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    client_ca_file: str | None = None,
) -> ssl.SSLContext:
    """The server's SSL context: TLS 1.2 or later, HTTP/1.1, the serving certificate
    from ``certificate`` (in memory) or the files, client certificates checked against
    ``client_ca_file`` when given. ConfigError naming the flag when a file is unusable."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    if certificate is not None:
        _load_from_memory(context, certificate)
    else:
        assert cert_file and key_file
        try:
            context.load_cert_chain(cert_file, key_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                f"--tls-cert-file {cert_file}, --tls-private-key-file {key_file}: {exc}"
            ) from exc
    if client_ca_file:
        try:
            context.load_verify_locations(cafile=client_ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"--client-ca-file {client_ca_file}: {exc}") from exc
        context.verify_mode = ssl.CERT_OPTIONAL
    return context


def _load_from_memory(context: ssl.SSLContext, certificate: ServingCertificate) -> None:
    if not sys.platform.startswith("linux"):
        raise ConfigError(
            "a generated serving certificate needs Linux (memfd_create); give "
            "--tls-cert-file and --tls-private-key-file"
        )
    fd = os.memfd_create("ksched-serving", os.MFD_CLOEXEC)
    try:
        os.write(fd, certificate.chain_pem + certificate.key_pem)
        path = f"/proc/self/fd/{fd}"
        context.load_cert_chain(path, path)
    finally:
        os.close(fd)
