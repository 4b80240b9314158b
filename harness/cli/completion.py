"""Shell completion for ``callstream``, written from the argument parser itself, so it never
drifts from the commands: ``eval "$(callstream completion bash)"`` (or ``zsh``)."""

from __future__ import annotations

import argparse
import shlex

__all__ = ["SHELLS", "completion_script"]

SHELLS = ("bash", "zsh")


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """A script that completes the commands of ``parser`` and each command's options in
    ``shell`` (bash, or zsh through its bash compatibility); other words complete as files."""
    if shell not in SHELLS:
        raise ValueError(f"no completion for {shell!r}; known: {', '.join(SHELLS)}")
    commands = _commands(parser)
    cases = "".join(
        f"    {name}) opts={shlex.quote(' '.join(options))} ;;\n"
        for name, options in commands.items()
    )
    nested = "".join(
        f'    {name}) COMPREPLY=($(compgen -W {shlex.quote(" ".join(subcommands))} -- "$cur"))'
        " ; return ;;\n"
        for name, subcommands in _nested(parser).items()
    )
    top = " ".join([*commands, *_options(parser)])
    script = f"""_callstream() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W {shlex.quote(top)} -- "$cur"))
    return
  fi
  if [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then
    case "${{COMP_WORDS[1]}}" in
{nested}    esac
  fi
  case "${{COMP_WORDS[1]}}" in
{cases}  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F _callstream callstream
"""
    if shell == "zsh":
        script = "autoload -U +X bashcompinit && bashcompinit\n" + script
    return script


def _commands(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Each command of ``parser`` and its option strings, in the parser's order."""
    for action in parser._actions:  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            return {name: _options(sub) for name, sub in action.choices.items()}
    return {}


def _nested(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """The commands that have commands of their own (``report merge``), and those."""
    nested = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = _commands(sub)
                if inner:
                    nested[name] = list(inner)
    return nested


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings]
