"""The HTML page shared by run and sweep reports: template, sections and embedded figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import jinja2

if TYPE_CHECKING:
    import plotly.graph_objects as go

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("hivemind_lab", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
)


@dataclass(frozen=True)
class Block:
    """One section of a report page (its HTML is already escaped)."""

    heading: str
    html: str
    css_class: str = ""


@dataclass(frozen=True)
class Banner:
    """A full-width notice above the header: ``danger`` (audit failed) or ``notice``."""

    kind: str
    html: str


def figures(figs: list[go.Figure], *, first: bool) -> str:
    """Figures as HTML; the first figure of a page embeds plotly.js so the page works offline."""
    parts = []
    for i, fig in enumerate(figs):
        parts.append(
            fig.to_html(
                full_html=False,
                include_plotlyjs="inline" if first and i == 0 else False,
                config={"displaylogo": False, "responsive": True},
            )
        )
    return "\n".join(parts)


def page(
    *,
    title: str,
    header_lines: list[str],
    blocks: list[Block],
    banners: list[Banner] | None = None,
    expand: bool = False,
) -> str:
    """Render the report template; ``expand`` opens every folded section (the PDF variant)."""
    return _ENV.get_template("report.html.j2").render(
        title=title,
        header_lines=header_lines,
        blocks=blocks,
        banners=banners or [],
        expand=expand,
    )
