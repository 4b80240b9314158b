"""The reference on each dialect's wire against the same floor, in one run.

The same three calls (the realistic arguments of ``bench_assembler``: a source file, a batch of
records, an e-mail, each about SIZE bytes of JSON cut into 1–8-character fragments) are planned
once and sent in every dialect the harness renders (``callstream.core.dialects``): chat chunks,
Anthropic's ``input_json_delta`` events, Responses' ``function_call_arguments.delta`` events.
For each stream, fed in 4 KiB reads, the table gives the floor (split lines, ``json.loads`` of
every ``data:`` payload), the reference (``Assembler(dialect=…)``: decode, route, buffer, parse
and validate against the tools' schemas), their ratio, and the reference's time per MB at two
sizes, whose ratio shows whether the cost is linear in the stream's size. Times are the best
process (CPU) time of several runs, the figure least disturbed by other load on the machine.

A second table puts a dialect's contenders (``CONTENDERS``: a library's own fold of that wire,
behind the floor's line splitting and ``json.loads``) beside the reference on the same stream,
where the library is installed and the calls are at most ``--contender-max-size`` bytes (a
contender may be quadratic); each must hand back the planned calls too.

    python -m bench.bench_dialects [--sizes 20000,200000] [--repeat 5] [--contender-max-size N]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from callstream.core.dialects import DIALECTS
from callstream.core.rendering import render
from callstream.core.spec import CallPlan, StreamSpec
from callstream.reference import Assembler, CallResult

from .bench_assembler import (
    MB,
    SEED,
    TOOLS,
    TRANSPORT_CHUNK,
    Timing,
    _email_args,
    _fragments,
    _records_args,
    _write_file_args,
    measure,
    run_floor,
    transport_chunks,
)

_ARGUMENTS = (_write_file_args, _records_args, _email_args)


def plan(size: int, seed: int = SEED) -> StreamSpec:
    """Three sequential calls of about ``size`` bytes of arguments each, in openai-chat."""
    rng = random.Random(seed)
    calls = []
    for number, (tool, arguments) in enumerate(zip(TOOLS, _ARGUMENTS, strict=True)):
        text = json.dumps(arguments(rng, size), ensure_ascii=False)
        calls.append(
            CallPlan(
                name=tool.name,
                arguments=text,
                fragments=tuple(_fragments(rng, text)),
                id=f"call_{number:04d}",
            )
        )
    return StreamSpec(tools=TOOLS, calls=tuple(calls))


def cpu(timing: Timing) -> float:
    """A timing's best CPU time (its best wall time where none was taken)."""
    return timing.cpu_best if timing.cpu_best is not None else timing.best


def run_reference(dialect: str, chunks: Sequence[bytes]) -> list[CallResult]:
    """The reference reading ``dialect``: every chunk fed, then closed."""
    assembler = Assembler(tools=TOOLS, dialect=dialect)
    results: list[CallResult] = []
    for chunk in chunks:
        results += assembler.feed(chunk)
    results += assembler.close()
    return results


Contender = Callable[[Sequence[bytes]], list[tuple[str, Any]]]
"""A library's fold of one dialect's stream: (name, arguments) of each call it hands back, the
arguments as the library hands them (text, or its parse)."""


def data_payloads(chunks: Sequence[bytes]) -> Iterator[Any]:
    """The floor's work, for a contender: each ``data:`` payload of the stream, loaded."""
    loads = json.loads
    tail = b""
    for chunk in chunks:
        lines = (tail + chunk).split(b"\n")
        tail = lines.pop()
        for line in lines:
            if line.startswith(b"data: "):
                payload = line[6:]
                if payload != b"[DONE]":
                    yield loads(payload)


def anthropic_accumulator() -> tuple[Contender | None, str]:
    """The anthropic SDK's own fold of the Messages events, ``accumulate_event``, each event
    built as the SDK's stream builds it (``construct_type``, no validation). It re-parses a
    block's whole input buffer on every ``input_json_delta`` (jiter, partial mode)."""
    try:
        import anthropic
        from anthropic._models import construct_type
        from anthropic.lib.streaming._messages import accumulate_event
        from anthropic.types import RawMessageStreamEvent
    except ImportError as exc:
        return None, f"anthropic not importable ({exc})"

    def run(chunks: Sequence[bytes]) -> list[tuple[str, Any]]:
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for payload in data_payloads(chunks):
            event: Any = construct_type(type_=RawMessageStreamEvent, value=payload)
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        return [(b.name, b.input) for b in snapshot.content if b.type == "tool_use"]

    return run, f"anthropic {anthropic.__version__} accumulate_event"


def responses_state() -> tuple[Contender | None, str]:
    """openai-python's Responses accumulator (``ResponseStreamState``, which its
    ``responses.stream()`` helper folds every event with), each event built as the SDK's
    ``Stream`` builds it (``construct_type``, no validation); the calls are the function calls
    of the response its ``response.completed`` event carries."""
    try:
        import openai
        from openai._models import construct_type
        from openai.lib.streaming.responses import ResponseStreamState
        from openai.types.responses import ResponseStreamEvent
    except ImportError as exc:
        return None, f"openai not importable ({exc})"
    offered: Any = [
        {"type": "function", "name": tool.name, "parameters": dict(tool.parameters or {})}
        for tool in TOOLS
    ]

    def run(chunks: Sequence[bytes]) -> list[tuple[str, Any]]:
        state: Any = ResponseStreamState(input_tools=offered, text_format=openai.omit)
        final: Any = None
        for payload in data_payloads(chunks):
            event = construct_type(type_=ResponseStreamEvent, value=payload)
            for fired in state.handle_event(event):
                if fired.type == "response.completed":
                    final = fired.response
        output = final.output if final is not None else []
        return [(item.name, item.arguments) for item in output if item.type == "function_call"]

    return run, f"openai {openai.__version__} ResponseStreamState"


CONTENDERS: dict[str, Callable[[], tuple[Contender | None, str]]] = {
    "anthropic-messages": anthropic_accumulator,
    "openai-responses": responses_state,
}
"""Each dialect's contenders' factories: (the run or None, a note naming it or why not)."""


def planned(spec: StreamSpec, parsed: bool) -> list[tuple[str, Any]]:
    """(name, arguments) of each planned call: the text, or its parse (``parsed``)."""
    return [(c.name, json.loads(c.arguments) if parsed else c.arguments) for c in spec.calls]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20000,200000", help="argument bytes per call")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (the best counts)")
    parser.add_argument(
        "--contender-max-size",
        type=int,
        default=20000,
        help="largest argument bytes per call a contender is run on",
    )
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    contenders = {dialect: made() for dialect, made in CONTENDERS.items()}
    contended: list[str] = []
    print("| dialect | per call | stream | floor | reference | × floor | reference ms/MB |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    per_mb: dict[str, list[float]] = {}
    for size in sizes:
        base = plan(size)
        for dialect in DIALECTS:
            spec = replace(base, dialect=dialect)
            body = render(spec).data
            chunks = transport_chunks(body, TRANSPORT_CHUNK)
            floor, _ = measure(partial(run_floor, chunks), args.repeat, 30.0)
            timing, results = measure(partial(run_reference, dialect, chunks), args.repeat, 30.0)
            plans = base.calls
            if [(r.name, r.arguments_text, r.ready) for r in results] != [
                (p.name, p.arguments, True) for p in plans
            ]:
                print(
                    f"{dialect}: the reference did not hand back the planned calls", file=sys.stderr
                )
                return 1
            mb = len(body) / MB
            run_contender, note = contenders.get(dialect, (None, ""))
            if run_contender is not None and size <= args.contender_max_size:
                contender, calls = measure(partial(run_contender, chunks), args.repeat, 30.0)
                parsed = any(not isinstance(arguments, str) for _, arguments in calls)
                if calls != planned(base, parsed):
                    print(f"{note}: did not hand back the planned calls", file=sys.stderr)
                    return 1
                contended.append(
                    f"| {note} | {dialect} | {size:,} B | {cpu(contender) * 1000:.1f} ms"
                    f" | {cpu(contender) / cpu(timing):.2f} | {cpu(contender) * 1000 / mb:.0f} |"
                )
            per_mb.setdefault(dialect, []).append(cpu(timing) * 1000 / mb)
            print(
                f"| {dialect} | {size:,} B | {len(body) / 1e6:.2f} MB | {cpu(floor) * 1000:.1f} ms"
                f" | {cpu(timing) * 1000:.1f} ms | {cpu(timing) / cpu(floor):.2f}"
                f" | {cpu(timing) * 1000 / mb:.0f} |"
            )
    if contended:
        print()
        print("| contender | dialect | per call | contender | × reference | contender ms/MB |")
        print("|---|---|--:|--:|--:|--:|")
        print("\n".join(contended))
    for dialect, (run_contender, note) in contenders.items():
        if run_contender is None:
            print(f"{dialect}: contender not run: {note}")
    if len(sizes) > 1:
        print()
        for dialect, figures in per_mb.items():
            print(
                f"{dialect}: ms/MB at {sizes[-1]:,} B over {sizes[0]:,} B per call: "
                f"{figures[-1] / figures[0]:.2f} (1.00 is linear)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
