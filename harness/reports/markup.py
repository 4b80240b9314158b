"""Text made safe to show: control characters made visible, Markdown and HTML escaped, long text
clipped; the head of a self-contained HTML page."""

from __future__ import annotations

import html
import re

from .model import JSONL

__all__ = [
    "FORBIDDEN",
    "clip",
    "h",
    "md",
    "md_block",
    "md_code",
    "page_head",
    "visible",
]


FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def visible(text: str) -> str:
    """Text safe for XML 1.0, HTML and Markdown: CRLF becomes LF, and every other control
    character, lone surrogate or non-character is shown as its escape (``\\x00``)."""
    return FORBIDDEN.sub(_escape, text.replace("\r\n", "\n"))


def _escape(match: re.Match[str]) -> str:
    """The escape ``repr`` would show: ``\\r``, ``\\x00``, ``\\ud800``."""
    return repr(match.group())[1:-1]


def clip(text: str, max_lines: int, max_chars: int) -> str:
    """Keep the head and the tail of a long repro: the first chunks and what was released."""
    lines = text.split("\n")
    if len(lines) > max_lines:
        half = max_lines // 2
        cut = len(lines) - 2 * half
        lines = [*lines[:half], f"… {cut} lines cut (full repro in {JSONL}) …", *lines[-half:]]
        text = "\n".join(lines)
    if len(text) > max_chars:
        half = max_chars // 2
        cut = len(text) - 2 * half
        text = f"{text[:half]}\n… {cut} characters cut (full repro in {JSONL}) …\n{text[-half:]}"
    return text


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#!])")


def md(text: str) -> str:
    """Text for a Markdown line or table cell: one line, special characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", visible(text).replace("\n", " "))


def md_code(text: str) -> str:
    """An inline code span that holds any text (the fence outgrows its backticks)."""
    text = visible(text).replace("\n", " ")
    ticks = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_block(text: str, language: str = "text") -> str:
    """A fenced code block that holds any text."""
    fence = "`" * max(3, max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def h(value: object) -> str:
    """Text for HTML, escaped and with control characters made visible."""
    return html.escape(visible(str(value)), quote=True)


_CSS = """
:root { --line: #d0d7de; --muted: #57606a; --code-bg: #f6f8fa; }
.passed { --c: #1a7f37; --bg: #dafbe1; }
.failed { --c: #cf222e; --bg: #ffebe9; }
.not_applicable, .unsupported { --c: #57606a; --bg: #eaeef2; }
.not_observable { --c: #0969da; --bg: #ddf4ff; }
.errored { --c: #8250df; --bg: #fbefff; }
.hole { --c: #9a6700; --bg: #fff8c5; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1f2328; background: #fff; }
header, main, footer { max-width: 1280px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 20px; }
h1 { font-size: 26px; margin: 0 0 4px; overflow-wrap: anywhere; }
h1 .impl { font-weight: 400; }
h2 { font-size: 20px; margin: 32px 0 8px; padding-bottom: 4px;
  border-bottom: 1px solid var(--line); }
code, pre, .cell, .lines { font-family: ui-monospace, "SF Mono", Menlo, Consolas,
  "DejaVu Sans Mono", monospace; }
code { font-size: 13px; }
.verdict { font-size: 18px; font-weight: 600; margin: 4px 0 12px; color: var(--c); }
.tiles { display: flex; gap: 12px; flex-wrap: wrap; margin: 12px 0; }
.tile { padding: 8px 16px; border-radius: 8px; min-width: 130px; border: 1px solid var(--c);
  color: var(--c); background: var(--bg); }
.tile b { display: block; font-size: 26px; line-height: 1.2; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0;
  font-size: 13px; color: var(--muted); }
.meta dt { font-weight: 600; }
.meta dd { margin: 0; overflow-wrap: anywhere; }
.legend { font-size: 13px; color: var(--muted); }
.filter { position: sticky; top: 0; z-index: 1; background: #fff; padding: 8px 0;
  display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: center;
  border-bottom: 1px solid var(--line); }
.filter input { flex: 1 1 18em; min-width: 0; font: inherit; padding: 4px 8px;
  border: 1px solid var(--line); border-radius: 6px; }
.filter output { font-size: 13px; color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px;
  border-bottom: 1px solid var(--line); }
td { overflow-wrap: break-word; }
td:last-child { overflow-wrap: anywhere; }
thead th { font-size: 13px; color: var(--muted); border-bottom: 2px solid var(--line); }
.n { text-align: right; font-variant-numeric: tabular-nums; width: 3.5em; }
td.n { color: var(--c, inherit); }
td.n.zero { color: #8c959f; }
.matrix th[scope=row] { white-space: nowrap; }
.matrix .sym { width: 1.5em; text-align: center; font-weight: 700; color: var(--c); }
.matrix .title { width: 17em; }
.matrix tr.hole > * { background: var(--bg); color: var(--c); }
.cells { line-height: 1.9; }
.cell { display: inline-block; font-size: 12px; line-height: 1.4; padding: 1px 6px; margin: 1px 0;
  border: 1px solid var(--c); border-radius: 4px; color: var(--c); background: var(--bg);
  text-decoration: none; white-space: nowrap; }
a.cell:hover { text-decoration: underline; }
details.group { border: 1px solid var(--line); border-left: 4px solid var(--c);
  border-radius: 6px; margin: 8px 0; }
details.case { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; }
details > summary { cursor: pointer; padding: 6px 12px; overflow-wrap: anywhere; }
details > summary .sym { font-weight: 700; color: var(--c); }
details[open] > summary { border-bottom: 1px solid var(--line); background: var(--bg); }
.cases { padding: 4px 12px 8px; }
.problem { margin: 6px 0; overflow-wrap: anywhere; }
.rerun { margin: 6px 0; font-size: 13px; color: var(--muted); }
.rerun code { color: #1f2328; user-select: all; overflow-wrap: anywhere; }
.where { color: var(--muted); margin-left: 8px; font-size: 13px; white-space: nowrap; }
.checknames { margin-left: 8px; font-size: 12px; white-space: nowrap; color: var(--c);
  font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.body { padding: 8px 12px 12px; }
.body h4 { margin: 12px 0 4px; font-size: 13px; color: var(--muted); }
pre { background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 12px; font-size: 12.5px; line-height: 1.45; overflow-x: auto; white-space: pre;
  margin: 0; }
.lines { background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 12px; font-size: 12.5px; line-height: 1.45; }
.lines > div { white-space: pre-wrap; overflow-wrap: anywhere; min-height: 1.45em;
  padding-left: 8ch; text-indent: -8ch; }
.lines .at { color: var(--muted); }
.lines .cut { color: #cf222e; font-weight: 700; }
.lines .mark { color: #8250df; font-weight: 600; }
.facts { font-size: 13px; color: var(--muted); margin: 8px 0 0; }
button { font: inherit; font-size: 13px; padding: 2px 10px; border: 1px solid var(--line);
  border-radius: 6px; background: var(--code-bg); cursor: pointer; }
footer { color: var(--muted); font-size: 12px; padding: 32px 24px; }
@media (max-width: 640px) {
  header, main, footer { padding-left: 10px; padding-right: 10px; }
  h1 { font-size: 21px; }
  .tiles { gap: 6px; }
  .tile { min-width: 0; flex: 1 1 30%; padding: 4px 8px; font-size: 13px; }
  .tile b { font-size: 20px; }
  .meta { grid-template-columns: 1fr; }
  .meta dd { margin-bottom: 4px; }
  .matrix .title, .matrix .n { display: none; }
  th, td { padding: 4px; }
  .cell { white-space: normal; overflow-wrap: anywhere; }
  .where, .checknames { display: block; margin-left: 0; white-space: normal; }
  details > summary, .cases, .body { padding-left: 6px; padding-right: 6px; }
  .lines { padding: 6px; font-size: 12px; }
  .lines > div { padding-left: 4ch; text-indent: -4ch; }
}
"""


def page_head(title: str, css: str = "") -> list[str]:
    """The opening of every HTML page callstream writes (report, matrix, certificate), up to
    and with ``</head>``: one style sheet, ``css`` added to it."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{h(title)}</title>",
        f"<style>{_CSS}{css}</style>",
        "</head>",
    ]
