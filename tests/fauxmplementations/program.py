"""A fauxmplementation run as a program over the pipe protocol (``cmd:``): the reference
assembler behind a minimal protocol loop, misbehaving on the stream that offers the ``TRIGGER``
tool as its first argument says::

    python tests/fauxmplementations/program.py MODE [--pids FILE]

- ``crash``: writes a traceback to stderr and exits with code 3.
- ``segfault``: dies of SIGSEGV.
- ``hang``: never answers.
- ``garbage``: answers with a line that is not JSON.
- ``error``: answers with an ``error`` of its own.
- ``wrong-seq``: answers with another stream's seq.
- ``extra-line``: answers twice (both lines in one write).
- ``bad-result``: answers with a result that breaks the protocol's schema (status ``done``).
- ``noisy``: behaves, but writes to stderr on every request.
- ``well``: behaves.

``--pids FILE`` appends the program's process id to FILE when it starts, so a test can count
restarts and check that none outlives the harness.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from callstream.reference import Assembler, CallResult, Limits, Tool

TRIGGER = "misbehave"


def main() -> None:
    mode = sys.argv[1]
    if "--pids" in sys.argv:
        with open(sys.argv[sys.argv.index("--pids") + 1], "a") as pids:
            pids.write(f"{os.getpid()}\n")
    assembler: Any = None
    triggered = False
    for line in sys.stdin:
        request = json.loads(line)
        cmd, seq = request["cmd"], request.get("seq")
        if mode == "noisy":
            print(f"faux: got {cmd}", file=sys.stderr, flush=True)
        if cmd == "start":
            implementation = {
                "name": f"faux-{mode}",
                "version": "1.0",
                "language": "python",
                "dialects": ["openai-chat"],
                "profile": "lenient",
            }
            answer: dict[str, Any] = {"version": 1, "implementation": implementation}
        elif cmd == "run":
            tools = [Tool(tool["name"], tool["parameters"]) for tool in request["tools"]]
            triggered = any(tool.name == TRIGGER for tool in tools)
            assembler = Assembler(tools, limits=Limits(**request["limits"]))
            answer = {"seq": seq, "ok": True}
        elif cmd == "feed":
            released = assembler.feed(base64.b64decode(request["data"]))
            answer = {"seq": seq, "results": [contract(result) for result in released]}
            if triggered:
                answer = misbehave(mode, answer)
        elif cmd == "close":
            answer = {"seq": seq, "results": [contract(r) for r in assembler.close()]}
        else:
            return
        lines = [answer["twice"]] * 2 if "twice" in answer else [answer]
        print("\n".join(map(json.dumps, lines)), flush=True)  # one write


def contract(result: CallResult) -> dict[str, Any]:
    """A result as the pipe carries it, saying whether its id was made up even when it was not
    (``to_dict`` leaves a false ``synthetic_id`` out), so a stream over the pipe is observed as
    in process."""
    return result.to_dict() | {"synthetic_id": result.synthetic_id}


def misbehave(mode: str, answer: dict[str, Any]) -> dict[str, Any]:
    """What to answer a feed of the trigger stream with, as ``mode`` says."""
    seq = answer["seq"]
    if mode == "crash":
        print("Traceback (most recent call last):", file=sys.stderr)
        print("RuntimeError: faux: the program blew up", file=sys.stderr, flush=True)
        sys.exit(3)
    elif mode == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "hang":
        while True:
            time.sleep(60)
    elif mode == "garbage":
        print("faux: this is not JSON", flush=True)
    elif mode == "error":
        return {"seq": seq, "error": {"message": "faux: cannot feed", "traceback": "at feed"}}
    elif mode == "wrong-seq":
        return {"seq": -1, "results": []}
    elif mode == "extra-line":
        answer = {"twice": answer}
    elif mode == "bad-result":
        result = {
            "choice": 0,
            "index": 0,
            "id": "call_1",
            "name": TRIGGER,
            "arguments_text": '{"x": 1}',
            "arguments": {"x": 1},
            "status": "done",
            "reason": None,
        }
        return {"seq": seq, "results": [result]}
    return answer


if __name__ == "__main__":
    main()
