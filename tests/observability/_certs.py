"""Certificates for the tests: a CA, serving and client certificates it signs (files in a
test's tmp_path: test fixtures, not ksched's own keys)."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import attrs
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@attrs.frozen
class Pair:
    cert: Path
    key: Path

    @property
    def cert_pem(self) -> bytes:
        return self.cert.read_bytes()

    @property
    def key_pem(self) -> bytes:
        return self.key.read_bytes()


@attrs.define
class CertAuthority:
    """A CA in ``folder``; ``serving()`` and ``client()`` issue certificates."""

    folder: Path
    name: str = "ksched-test-ca"
    _key: ec.EllipticCurvePrivateKey = attrs.field(init=False)
    _cert: x509.Certificate = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, self.name)])
        self._cert = (
            self._builder(subject, self._key.public_key())
            .issuer_name(subject)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.path.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))

    @property
    def path(self) -> Path:
        return self.folder / f"{self.name}.crt"

    @property
    def pem(self) -> bytes:
        return self.path.read_bytes()

    @staticmethod
    def _builder(subject: x509.Name, public: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        now = datetime.datetime.now(datetime.UTC)
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
        )

    def _issue(self, stem: str, subject: x509.Name, usage: x509.ObjectIdentifier,
               sans: list[x509.GeneralName]) -> Pair:  # fmt: skip
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            self._builder(subject, key.public_key())
            .issuer_name(self._cert.subject)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        pair = Pair(self.folder / f"{stem}.crt", self.folder / f"{stem}.key")
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        pair.key.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return pair

    def serving(self, stem: str = "serving") -> Pair:
        """A serving certificate for 127.0.0.1 and localhost."""
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
        sans: list[x509.GeneralName] = [
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.DNSName("localhost"),
        ]
        return self._issue(stem, name, ExtendedKeyUsageOID.SERVER_AUTH, sans)

    def client(self, user: str, *groups: str) -> Pair:
        """A client certificate: CN the user, one O per group."""
        attrs_ = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        name = x509.Name([*attrs_, x509.NameAttribute(NameOID.COMMON_NAME, user)])
        return self._issue(f"client-{user}", name, ExtendedKeyUsageOID.CLIENT_AUTH, [])
