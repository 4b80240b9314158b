"""StreamSpec: what a stream means, and how it is torn apart on the wire.

One model for both front-ends: YAML scenarios (``callstream.corpus.scenario``) and Hypothesis
strategies build StreamSpecs; the renderer, the oracle, the checks and the reports take it from
there. A spec is a *plan*: the true calls with their exact argument text and fragments, how their
metadata travels, the interleaving, the noise around them, how the stream ends, and the
transport. A spec may instead carry literal events or literal SSE bytes, for what a plan cannot
express; then its expectation must be written out (``Expected``), since no oracle can derive it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from callstream.reference import CallKind, Limits, Tool

from ..rules import QuirkId, RuleId

__all__ = [
    "CallPlan",
    "Ending",
    "Expected",
    "ExpectedCall",
    "Noise",
    "Oddity",
    "Scenario",
    "Splitting",
    "StreamSpec",
    "Transport",
]

IdPolicy = Literal["once", "every", "changing", "omit", "empty", "numeric"]
"""How a call's id travels: on its first delta only (OpenAI), on every delta (LiteLLM, quirk C4),
a new one on every delta (LM Studio, C3), never, as ``""`` (Gemini), or as a number (C7)."""
NamePolicy = Literal["once", "every", "late", "omit"]
"""How the function name travels: first delta only, every delta (C5), on the second delta (C6),
never."""
Schedule = Literal["sequential", "interleaved", "whole", "together"]
Oddity = Literal[
    "after_done",
    "delta_missing",
    "text_with_call",
    "null_fields",
    "unknown_event",
    "unknown_delta",
    "stray_delta",
    "after_stop",
    "event_mismatch",
    "done_line",
    "no_created",
    "sequence_gap",
    "sequence_repeat",
    "late_name",
    "text_data",
    "error_text",
    "no_block_stop",
    "no_item_id",
    "added_twice",
    "untyped_event",
    "no_event_item_id",
    "null_created",
    "empty_name",
    "no_item_done",
    "restated_otherwise",
    "string_data",
    "untyped_error",
    "created_late",
    "choice_not_object",
    "kind_changes",
    "name_changes",
    "null_message",
    "string_error",
    "server_tool",
    "empty_item_id",
]
"""One corner of the wire format a plan's other knobs do not reach, sent once in the stream:

- ``after_done`` (openai-chat): a chunk finishing choice 0 after ``[DONE]``, which is final (T4,
  quirk C20);
- ``delta_missing`` (openai-chat): a choice without ``delta`` after the first chunk with
  choices (quirk C22);
- ``text_with_call`` (openai-chat): text content in the delta that opens the first tool call;
- ``null_fields`` (openai-chat): ``"id": null`` and ``"name": null`` on every tool-call delta
  without them (A4);
- ``unknown_event`` (anthropic-messages): an event of an undocumented type after
  ``message_start`` (quirk A4);
- ``unknown_delta`` (anthropic-messages): a delta of an undocumented type in the first call's
  block (quirk A4);
- ``stray_delta`` (anthropic-messages): an ``input_json_delta`` for a block never started, just
  before the last call's ``content_block_stop``: it fails the stream (quirk A3);
- ``after_stop`` (anthropic-messages): a whole tool_use block after ``message_stop``, which is
  never read (D35);
- ``event_mismatch`` (anthropic-messages, openai-responses): one event under another event's
  name (``ping``; ``response.in_progress``): the first that carries argument text (Anthropic)
  or adds a call item (Responses), else the first (quirk T8);
- ``done_line`` (anthropic-messages, openai-responses): ``data: [DONE]`` after the last event
  (ignored; quirk openai-responses/R5);
- ``error_text`` (openai-chat, anthropic-messages): the ``event: error`` of an error ending
  (``ending.error: event``) with plain text for data, not JSON (T4);
- ``no_created`` (openai-responses): no ``response.created`` (quirk R12);
- ``sequence_gap`` (openai-responses): ``sequence_number`` skips one at the event after the last
  call's ``output_item.added`` (quirk R4, D51);
- ``late_name`` (openai-responses): the first call item added without its ``name``, which its
  ``.done`` and ``output_item.done`` restate: set there (R3, A4);
- ``sequence_repeat`` (openai-responses): the same place as ``sequence_gap``, where the number
  repeats the one before instead (R4, D51: out of order either way);
- ``no_block_stop`` (anthropic-messages): the last tool_use block never gets its
  ``content_block_stop``: the stop reason is its only boundary (C5, D24);
- ``no_item_id`` (openai-responses): the first call item comes without an ``id`` and its events
  without ``item_id``, routed by ``output_index`` (quirk R8, D40);
- ``added_twice`` (openai-responses): the first call's ``output_item.added`` again, after the
  last call's: the same item added twice fails the stream there (A5, V6);
- ``untyped_event`` (openai-responses): a Chat Completions chunk (an object without ``type``,
  no ``event:`` line) after the last call's ``output_item.added``: no Responses event, it fails
  the stream there (T3, V6);
- ``no_event_item_id`` (openai-responses): the first call item keeps its ``id``, but its
  deltas and ``.done`` come with its ``output_index`` alone, no ``item_id``: routed by the index
  (quirk R8, D40; or-m-deltas-without-item-id);
- ``null_created`` (openai-responses): ``response.created`` with ``"response": null``, which
  changes nothing (A4, V6; or-m-created-with-a-null-response).
- ``empty_name`` (anthropic-messages): the first tool_use block's ``content_block_start``
  carries ``"name": ""``, which is no name (A4): the call never receives one (V4,
  ``missing_name``);
- ``no_item_done`` (openai-responses): the last call item never gets its ``.done`` nor its
  ``output_item.done``: the terminal event is its only boundary (``response.completed``
  completes it, D47; C5, D59);
- ``restated_otherwise`` (openai-responses): the first call's ``output_item.done`` restates
  another text than its ``.done`` (that text, a space and ``x``: no JSON reader takes it for
  the same value): two restatements that disagree reject the call ``protocol_error`` in both
  profiles (D42; or-m-restatements-disagree-second-sorts-after);
- ``string_data`` (openai-responses, anthropic-messages): a ``data:`` line holding a JSON string
  (a proxy's error line), after the last call's ``output_item.added`` (Responses) or, under
  ``event: content_block_delta``, just before the last block's stop (Anthropic): JSON, but no
  event, it fails the stream there ``protocol_error`` (T4, V6; or-m-plain-text-data,
  or-m-null-data, am-m-delta-whose-data-is-a-json-string);
- ``untyped_error`` (anthropic-messages, openai-chat): the ``event: error`` of an error ending
  carries the error object without the payload's ``type`` (Anthropic) or alone, neither nested
  under ``error`` nor marked ``object: error`` (Chat Completions), a gateway's shape: its
  ``event:`` line alone makes it the provider's error, a stream error all the same (T4);
- ``created_late`` (openai-chat): the first chunk with choices comes without ``created``, the
  others with it: the chunk metadata changed between chunks, recorded (quirk C30;
  oc-m-first-chunk-without-id-then-with-one);
- ``choice_not_object`` (openai-chat): in the place of an error ending's event, a chunk whose
  choice is a string (the finishing choice JSON-encoded twice, as a gateway that serialises
  twice sends it): no choice, it fails the stream there ``protocol_error`` (A7, V6;
  oc-m-choice-is-not-an-object);
- ``kind_changes`` (openai-chat): one call's last delta in the other kind's object
  (``custom.input`` for a function call, ``function.arguments`` for a custom one): the call
  changed kind, rejected ``protocol_error`` in both profiles (D90;
  oc-m-function-fragment-for-a-custom-call);
- ``name_changes`` (openai-chat): one function call's last delta names another offered function
  tool (the first in sorted order): rejected, or run under the last name, never under the first
  (D12: the drawn scenario is ``impl-defined``; oc-q-name-changed-at-same-index);
- ``text_data`` (anthropic-messages, openai-responses): ``data: keep-alive``, under
  ``event: ping`` just before the last block's stop (Anthropic), or with no ``event:`` line
  after the last call's ``output_item.added`` (Responses): no JSON, and no error event, it fails
  the stream there ``protocol_error`` (T4);
- ``null_message`` (anthropic-messages): ``message_start`` with ``"message": null``, which
  changes nothing (A4, V6);
- ``string_error`` (anthropic-messages): the error event of an error ending carries its error
  as text (``"error": "Overloaded"``), not an object: a stream error all the same (T4, V6);
- ``null_fields`` in anthropic-messages: an ``input_json_delta`` whose ``partial_json`` is null
  right after the first call's ``content_block_start``, which changes nothing (A4);
- ``server_tool`` (anthropic-messages): before the stop reason, a web search Anthropic runs
  itself: a ``server_tool_use`` block streamed as a call's input is, then its
  ``web_search_tool_result`` block; neither is a call a client runs (E1, V3: D21);
- ``empty_item_id`` (openai-responses): the first call item's id is ``""``, in its items and
  its events' ``item_id``: an empty id is no id (A4), so its events are routed by
  ``output_index`` and R8 recorded, as ``no_item_id``.

A dialect refuses an oddity it does not name (:class:`~callstream.errors.PlanError`)."""
"""Sequential calls (OpenAI); fragments round-robin across calls (C15); each call whole in one
delta (Groq, Ollama: C8); all calls whole in one delta (Mistral)."""


@dataclass(frozen=True, slots=True)
class CallPlan:
    """One true call and how it is sent."""

    name: str | None
    arguments: str
    """The exact argument text the model produced; for a custom call, its input text."""
    fragments: tuple[str, ...]
    """How ``arguments`` is cut; their concatenation is ``arguments`` (unless ``snapshots``)."""
    kind: CallKind = "function"
    """``function`` (``function.arguments`` deltas) or ``custom`` (a Chat Completions custom
    tool call: ``type: custom`` and ``custom.input`` deltas)."""
    id: str | None = None
    choice: int = 0
    index: int | None = None
    """The tool-call index on the wire; None means "its position" (see ``omit_index``)."""
    omit_index: bool = False
    """Send no ``index`` at all (Gemini's OpenAI endpoint, quirk C1)."""
    late_index: bool = False
    """Send no ``index`` on the call's first delta, its position on the later ones (quirk C1:
    a fragment naming an index no call holds continues the one call that has none yet)."""
    id_policy: IdPolicy = "once"
    name_policy: NamePolicy = "once"
    type_every: bool = False
    """Repeat ``type: function`` on every delta (OpenRouter, quirk C4)."""
    blank_type: bool = False
    """With ``type_every``, the repeated ``type`` is ``""`` (Novita, vercel/ai#7255): a
    function call's, read as no kind at all (A4)."""
    header_arguments: bool = False
    """The first fragment rides in the header delta (llama.cpp, quirk C9)."""
    arguments_as_value: bool = False
    """Send the parsed arguments object instead of a string (quirk C32)."""
    snapshots: bool = False
    """Each delta repeats everything so far (cumulative snapshots, quirk C10)."""
    legacy: bool = False
    """Send as the legacy ``delta.function_call`` (quirk C27)."""
    extra_content: Mapping[str, Any] | None = None
    """Provider data on the call (Gemini's ``extra_content``, quirk C28)."""
    bare_start: bool = False
    """anthropic-messages: the tool_use block's ``content_block_start`` has no ``input`` field,
    its input streamed (A4: the absent field changes nothing)."""


@dataclass(frozen=True, slots=True)
class Noise:
    """What surrounds the calls."""

    role: bool = True
    """A first delta with ``role: assistant``."""
    role_every: bool = False
    """``role`` repeated on every delta (OpenRouter, quirk C29)."""
    content: str | None = None
    """Text content before the calls."""
    usage: bool = False
    """A final usage chunk with ``choices: []`` (``stream_options.include_usage``)."""
    usage_every: bool = False
    """``usage`` on every chunk (vLLM, quirk C23)."""
    empty_first: bool = False
    """Azure's first chunk: ``choices: []``, blank id and no usage (quirk C21)."""
    keepalive: int = 0
    """Comment lines (``: keep-alive``) between events."""


@dataclass(frozen=True, slots=True)
class Ending:
    """How each choice, and then the stream, ends."""

    finish: str | None = "tool_calls"
    """The finish reason of every choice; None sends none."""
    finish_with_last: bool = False
    """The finish reason rides in the same chunk as the last deltas (Mistral, quirk C19)."""
    after_finish: tuple[str, ...] = ()
    """Chunks after the finish (quirk C20): ``usage_chunk`` (OpenRouter's usage chunk with a
    choice and no finish), ``duplicate_finish``, ``late_delta`` (a tool delta after finish)."""
    error: Literal["nested", "flat", "openrouter", "event", "failed"] | None = None
    """An in-band error ends the stream after the calls' fragments (quirk C26); ``failed``
    (openai-responses): ``response.failed`` alone, its error in the response, no ``error``
    event before it."""
    done: bool = True
    """``data: [DONE]`` at the end."""
    cut: bool = False
    """The stream stops inside its last event, with no blank line (quirk T9)."""


@dataclass(frozen=True, slots=True)
class Transport:
    """How events become bytes."""

    newline: Literal["lf", "crlf", "cr", "mixed"] = "lf"
    space: bool = True
    """``data: x`` (True) or ``data:x``."""
    bom: bool = False
    event_lines: bool = False
    """Precede each data line with ``event: message``."""
    multiline: bool = False
    """Send each payload over several ``data:`` lines (quirk T5): pretty-printed, or broken once
    after its opening bracket (see ``callstream.core.wire``)."""
    unnamed: bool = False
    """Send no ``event:`` lines, even for the events a dialect names (third-party Anthropic
    proxies, quirk T7); for the dialects that name their events."""
    empty_data: bool = False
    """Send an event whose data is empty (``data:`` alone) first (proxies, quirk T6)."""
    bare_event: bool = False
    """Send an ``event:`` block with no ``data:`` line first, which dispatches nothing (CDNs,
    quirk T6)."""
    trailing_space: bool = False
    """Write spaces around each JSON payload: two after it (Anthropic's captures, quirk T12) and
    one before it, past the one a ``data: `` line loses (JSON allows whitespace on both sides)."""
    id_lines: bool = False
    """Give each event an ``id:`` line (its number) after its ``event:`` line, and the first a
    ``retry:`` line: fields a reader understands, which dispatch nothing and name no event (T3;
    the event-stream specification, as sse-starlette writes them); the first an unknown field,
    ``Event: error``, which a reader ignores (T3: field names are case-sensitive); and each a
    field whose name is ``data`` after a tab, ``\tdata: [DONE]``, ignored too (T3: a field's
    name is all before its colon; a reader that strips lines reads it)."""
    invalid_utf8: bool = False
    """Send bytes that are not UTF-8 (quirk T11): a comment line with a Latin-1 byte before the
    first event; or, in a stream cut inside its last event (``Ending.cut``), instead, the first
    two bytes of a three-byte character at its very end (the connection dropped mid-character).
    Each becomes U+FFFD, recorded once."""


@dataclass(frozen=True, slots=True)
class Splitting:
    """How the SSE bytes are cut into transport chunks."""

    kind: Literal["whole", "bytes", "pairs", "random", "offsets"]
    seed: int = 0
    offsets: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        """A short name for reports: ``whole``, ``bytes``, ``pairs``, ``random-3``, ``at-5,9``."""
        if self.kind == "random":
            return f"random-{self.seed}"
        if self.kind == "offsets":
            return "at-" + ",".join(map(str, self.offsets))
        return self.kind


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """What one call must become. ``None`` fields are not checked."""

    status: Literal["ready", "rejected"]
    reason: str | None = None
    choice: int = 0
    index: int = 0
    id: str | None = None
    name: str | None = None
    arguments_text: str | None = None
    arguments: Any = None
    check_arguments: bool = False
    """True when ``arguments`` is to be compared (it may legitimately be None)."""
    synthetic_id: bool = False
    """The id is made up by the implementation: any non-empty string is accepted."""
    release_offset: int | None = None
    """The stream byte whose arrival may first release the call (C4); None: not checked."""
    wire_index: int | None = None
    """The tool-call index the call had on the wire, where it differs from ``index`` (compacted
    indices, quirk C14); None: not checked."""
    not_validated: bool = False
    """A custom call whose format (a lark grammar) the oracle does not check: it is expected
    ready, since the provider constrains the model with the grammar, and an implementation that
    reports validation (as the reference's ``not_validated``) should say it was not checked."""


@dataclass(frozen=True, slots=True)
class Expected:
    """What the whole stream must become under one profile."""

    calls: tuple[ExpectedCall, ...]
    findings: frozenset[QuirkId] = frozenset()
    """Quirk ids a finding-reporting implementation should record (lenient profile)."""
    _by_key: dict[tuple[int, int], ExpectedCall] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Indexed once: the checks look every result up, and a stream may hold 258 calls.
        by_key: dict[tuple[int, int], ExpectedCall] = {}
        for call in self.calls:
            by_key.setdefault((call.choice, call.index), call)
        object.__setattr__(self, "_by_key", by_key)

    def call_at(self, key: tuple[Any, Any]) -> ExpectedCall | None:
        """The (first) expected call at ``key``, a result's (choice, index), if any."""
        return self._by_key.get(key)


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """A scenario's stream: a plan, literal events, or literal SSE bytes, and its tearing."""

    tools: tuple[Tool, ...]
    calls: tuple[CallPlan, ...] = ()
    choices: int = 1
    schedule: Schedule = "sequential"
    noise: Noise = field(default_factory=Noise)
    ending: Ending = field(default_factory=Ending)
    transport: Transport = field(default_factory=Transport)
    limits: Limits = field(default_factory=Limits)
    literal_events: tuple[Any, ...] | None = None
    """Chunk payloads (dicts), ``"[DONE]"``, or ``{"event": name, "data": text}``."""
    literal_sse: bytes | None = None
    expected: Mapping[str, Expected] | None = None
    """Written-out expectations per profile; required for literal streams."""
    dialect: str = "openai-chat"
    """The wire format the stream is sent in (``callstream.core.dialects``)."""
    oddity: Oddity | None = None
    """A corner of the wire format the stream shows once (:data:`Oddity`); None: none."""

    @property
    def literal(self) -> bool:
        """True when the stream is given as events or bytes rather than planned."""
        return self.literal_events is not None or self.literal_sse is not None


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario of the corpus: a stream, what it certifies, and how to run it."""

    id: str
    """Stable and never reused: reports and regressions refer to it."""
    title: str
    rules: tuple[RuleId, ...]
    spec: StreamSpec
    tags: tuple[str, ...] = ()
    quirks: tuple[QuirkId, ...] = ()
    """Quirk ids of research/wire_formats.md §7 the stream reproduces, qualified by dialect."""
    provenance: tuple[str, ...] = ()
    """Links to the public bugs it reproduces."""
    kind: Literal["must", "must-not", "impl-defined"] = "must"
    profiles: tuple[str, ...] = ("lenient", "strict")
    splittings: tuple[Splitting, ...] = ()
    """Empty means the default set (whole, bytes, pairs, 5 random)."""
    opt_ins: frozenset[str] = frozenset()
    """The per-route opt-ins (rule A2: ``snapshots``, ``repair_json``) of the route the stream
    is read on; it runs only on an implementation that declares exactly these (D74)."""
    source: str = ""
    """``path:line`` where the scenario is defined."""
