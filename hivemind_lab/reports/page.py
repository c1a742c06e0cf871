"""What run and sweep report pages share: the Jinja environment (autoescaped: every value is
escaped unless it is a figure plotly wrote) and figures with their titles as HTML captions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

if TYPE_CHECKING:
    import plotly.graph_objects as go

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("hivemind_lab", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)

PRINT_WIDTH_PX = 660
"""Charts in a printed page: an A4 column at 96 dpi, so nothing is drawn beyond the margin."""
PRINT_HEIGHT_PX = 280
"""At most a quarter of an A4 page (with its caption under 30 %): a chart that does not fit
below the text moves to the next page, and leaves less than a third of a page blank."""


@dataclass(frozen=True)
class Figure:
    """A chart as a page shows it: its title as a caption (HTML text wraps where a plotly title
    is clipped), a note on what it is drawn from, and plotly's own HTML."""

    caption: str
    note: str
    html: Markup


def _plain(text: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", text).split())


def figure(fig: go.Figure, *, embed_js: bool, print_width: bool = False) -> Figure:
    """One figure for a page; ``embed_js`` carries plotly.js (once per page: works offline)."""
    title = str(fig.layout.title.text or "")
    caption, _, note = title.partition("<br>")
    fig = fig.update_layout(title=None, margin={"t": 30})
    if print_width:
        height = min(fig.layout.height or PRINT_HEIGHT_PX, PRINT_HEIGHT_PX)
        fig = fig.update_layout(width=PRINT_WIDTH_PX, height=height)
    html = fig.to_html(
        full_html=False,
        include_plotlyjs="inline" if embed_js else False,
        config={"displaylogo": False, "responsive": not print_width},
    )
    return Figure(_plain(caption), _plain(note), Markup(html))  # plotly wrote this HTML


def figure_list(figs: list[go.Figure], *, print_width: bool = False) -> list[Figure]:
    """Figures for one page, the first carrying plotly.js."""
    return [figure(f, embed_js=i == 0, print_width=print_width) for i, f in enumerate(figs)]


def figures(figs: list[go.Figure], *, first: bool) -> str:
    """Figures as one HTML fragment (for a notebook's iframe); ``first`` embeds plotly.js."""
    parts = [
        f.to_html(
            full_html=False,
            include_plotlyjs="inline" if first and i == 0 else False,
            config={"displaylogo": False, "responsive": True},
        )
        for i, f in enumerate(figs)
    ]
    return "\n".join(parts)


def render(template: str, **context: Any) -> str:
    """Render a page template; every value is escaped by the template."""
    return _ENV.get_template(template).render(**context)
