"""The self-signed serving certificate made at start: a CA of its own and the certificate
it signs, in memory (kube-scheduler makes one the same way when given none).

# k8s.io/client-go/util/cert GenerateSelfSignedCertKey
Uses ``cryptography`` (a well-kept library); imported only when a server needs one.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["self_signed_chain"]


def self_signed_chain(
    host: str, alternate: Iterable[str], validity: datetime.timedelta
) -> tuple[bytes, bytes]:
    """The PEM chain (serving certificate, then its CA) and the serving key (PKCS#8 PEM)."""
    now = datetime.datetime.now(datetime.UTC)
    stamp = int(now.timestamp())
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}-ca@{stamp}")])
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key(), now, validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{stamp}")])
    leaf = (
        _builder(name, ca_name, key.public_key(), now, validity)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(x509.SubjectAlternativeName(_names([host, *alternate])), False)
        .sign(ca_key, hashes.SHA256())
    )
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (leaf, ca))
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return chain, key_pem


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    public: ec.EllipticCurvePublicKey,
    now: datetime.datetime,
    validity: datetime.timedelta,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))  # clocks a little behind
        .not_valid_after(now + validity)
    )


def _key_usage(*, sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=not sign,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=sign,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def _names(hosts: Iterable[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(h for h in hosts if h):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names
