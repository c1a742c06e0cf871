"""The immutable, exportable audit trail: an append-only, hash-chained JSON-lines log."""

from hivemind_lab.audit.log import (
    AuditLog,
    AuditRecord,
    VerifyReport,
    export_log,
    read_records,
    verify_log,
)

__all__ = ["AuditLog", "AuditRecord", "VerifyReport", "export_log", "read_records", "verify_log"]
