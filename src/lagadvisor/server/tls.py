"""TLS to a server with the MySQL client's ``--ssl-mode`` semantics.

The modes and their defaults follow the client (``sql-common/client.cc``, ``SSL_MODE_*``):
``--ssl-ca`` without ``--ssl-mode`` means VERIFY_CA, nothing means PREFERRED. REQUIRED and
stricter modes are enforced after the handshake too (the session's ``Ssl_cipher`` must be
set), so a driver that silently falls back to plain text cannot weaken them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError

SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")


@dataclass(frozen=True, slots=True)
class Tls:
    """What TLS a connection needs (``mode``) and with which files."""

    mode: str = "PREFERRED"
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    @classmethod
    def from_options(cls, mode: str | None, ca: str | None = None, cert: str | None = None,
                     key: str | None = None) -> "Tls":
        """Validate the client options (one-line :class:`ConfigError` on a bad combination)."""
        m = (mode or ("VERIFY_CA" if ca else "PREFERRED")).strip().upper()
        if m not in SSL_MODES:
            raise ConfigError(f"--ssl-mode: expected one of {', '.join(SSL_MODES)}, got {mode!r}")
        if m in ("VERIFY_CA", "VERIFY_IDENTITY") and not ca:
            raise ConfigError(f"--ssl-mode {m} needs --ssl-ca (the CA that signed the server's certificate)")
        if m == "DISABLED" and (ca or cert or key):
            raise ConfigError("--ssl-mode DISABLED conflicts with --ssl-ca/--ssl-cert/--ssl-key")
        if bool(cert) != bool(key):
            raise ConfigError("--ssl-cert and --ssl-key go together")
        return cls(m, ca, cert, key)

    @property
    def required(self) -> bool:
        return self.mode in ("REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")

    def describe(self) -> str:
        return f"--ssl-mode {self.mode}" + (f", --ssl-ca {self.ca}" if self.ca else "")

    def pymysql_kwargs(self) -> dict:
        """Keyword arguments for PyMySQL (plain data, so the settings stay picklable for --jobs)."""
        if self.mode == "DISABLED":
            return {"ssl_disabled": True}
        if self.mode == "PREFERRED" and not self.cert:
            return {}  # PyMySQL's own default: TLS when the server offers it
        verify = self.mode in ("VERIFY_CA", "VERIFY_IDENTITY")
        sslp: dict = {"check_hostname": self.mode == "VERIFY_IDENTITY", "verify_mode": verify}
        if self.ca and verify:
            sslp["ca"] = self.ca
        if self.cert:
            sslp["cert"], sslp["key"] = self.cert, self.key
        return {"ssl": sslp}

    def connector_kwargs(self) -> dict:
        """Keyword arguments for mysql-connector-python."""
        if self.mode == "DISABLED":
            return {"ssl_disabled": True}
        kw: dict = {}
        for name, value in (("ssl_ca", self.ca), ("ssl_cert", self.cert), ("ssl_key", self.key)):
            if value:
                kw[name] = value
        if self.mode in ("VERIFY_CA", "VERIFY_IDENTITY"):
            kw["ssl_verify_cert"] = True
        if self.mode == "VERIFY_IDENTITY":
            kw["ssl_verify_identity"] = True
        return kw

    def check_session(self, cipher: str | None, where: str) -> None:
        """After connecting: REQUIRED and stricter modes need an encrypted session."""
        if self.required and not cipher:
            raise ConfigError(f"{where}: the connection is not encrypted, but {self.describe()} requires TLS")


def one_line(text: object) -> str:
    """A driver's error message on one line (TLS errors often carry newlines)."""
    return " ".join(str(text).split())
