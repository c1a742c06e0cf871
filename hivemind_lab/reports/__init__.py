"""Executive reports: a self-contained HTML page per run (plotly embedded, works offline), a
Markdown twin, a sweep report comparing calibrations and strategies, and PDF via Chromium.

A run whose audit trail fails verification is not reported as if sound: `write_report` refuses
it (naming the first bad record) unless forced, and a forced report carries a red banner.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from hivemind_lab.errors import AuditIntegrityError, InputError
from hivemind_lab.reports.evidence import RunEvidence, gather
from hivemind_lab.reports.markdown import render_run_markdown
from hivemind_lab.reports.run_html import render_run_html
from hivemind_lab.reports.sweep import render_sweep_html
from hivemind_lab.runs.atomic import write_bytes_atomic, write_text_atomic

__all__ = [
    "RunEvidence",
    "chromium",
    "gather",
    "print_pdf",
    "render_html",
    "render_markdown",
    "render_sweep_html",
    "write_report",
]


def render_html(run_dir: str | Path, *, expand: bool = False) -> str:
    """The executive HTML report of one run (rendered even when its audit fails)."""
    return render_run_html(gather(run_dir), expand=expand)


def render_markdown(run_dir: str | Path) -> str:
    """The report of one run as Markdown."""
    return render_run_markdown(gather(run_dir))


def write_report(
    target: str | Path, out: str | Path | None = None, *, pdf: bool = False, force: bool = False
) -> Path:
    """Write the HTML report of a run (and report.md beside it) or of a sweep folder.

    Raises:
        AuditIntegrityError: the run's audit trail fails verification and ``force`` is false;
            nothing is written.
        InputError: the target is neither a run nor a sweep folder.
    """
    from hivemind_lab.runs.rundir import RunDir

    target = Path(target)
    path = Path(out) if out else target / "report.html"
    run = RunDir(target)
    if run.finished:
        evidence = gather(target)
        a = evidence.audit
        if not a.ok and not force:
            raise AuditIntegrityError(
                a.first_bad or 0,
                f"{run.audit_path} fails verification ({a.reason}; record "
                f"{a.first_bad} of {a.total}); no report written (--force renders it with a "
                "warning banner)",
            )
        text = render_run_html(evidence)
        printable = render_run_html(evidence, expand=True) if pdf else text
        write_text_atomic(target / "report.md", render_run_markdown(evidence))
    elif target.is_dir():
        text = printable = render_sweep_html(target)
    else:
        raise InputError("run_dir", f"{str(target)!r} is neither a run nor a sweep folder")
    write_text_atomic(path, text)  # whole or absent, even if the process dies mid-write
    if pdf:
        with tempfile.TemporaryDirectory() as tmp:
            # The printed page opens every folded section; the screen page keeps them folded.
            source = Path(tmp) / "print.html"
            source.write_text(printable, encoding="utf-8")
            printed = print_pdf(source, Path(tmp) / "report.pdf")
            write_bytes_atomic(path.with_suffix(".pdf"), printed.read_bytes())
    return path


def chromium() -> str:
    """The headless browser used for PDF export and page tests."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise InputError("pdf", "no Chromium found", allowed="install Debian's chromium (make browser)")


def print_pdf(html_path: Path, pdf_path: Path) -> Path:
    """Print a report to PDF with headless Chromium (print styles apply)."""
    subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--print-to-pdf={pdf_path.resolve()}",
            "--no-pdf-header-footer",
            html_path.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return pdf_path
