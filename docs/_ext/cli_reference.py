"""The ``sparseset-cli`` directive: the command line's reference, from its parser.

It walks :func:`sparseset.cli.commands.build_parser` at build time and
writes one ``.. program::`` section per subcommand with an ``.. option::``
entry per argument, so the page cannot drift from ``--help``.
"""

from __future__ import annotations

import argparse
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


def _usage(parser: argparse.ArgumentParser) -> list[str]:
    usage = parser.format_usage().strip().removeprefix("usage: ")
    return ["::", "", *("   " + line for line in usage.splitlines()), ""]


def _option_lines(action: argparse.Action) -> list[str]:
    if action.option_strings:
        metavar = action.metavar or action.dest.upper()
        takes = "" if action.nargs == 0 else f" {metavar}"
        names = ", ".join(f"{flag}{takes}" for flag in action.option_strings)
    else:
        names = action.metavar or action.dest
    text = (action.help or "").replace("%(default)s", str(action.default))
    return [f".. option:: {names}", "", f"   {text}", ""]


def cli_lines(parser: argparse.ArgumentParser) -> list[str]:
    """reStructuredText for ``parser`` and each of its subcommands."""
    lines = [f".. program:: {parser.prog}", "", *_usage(parser)]
    lines += [parser.description or "", ""]
    commands: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands.update(action.choices)
        elif not isinstance(action, argparse._HelpAction):
            lines += _option_lines(action)
    for sub in commands.values():
        title = f"``{sub.prog}``"
        lines += [title, "-" * len(title), "", f".. program:: {sub.prog}", ""]
        lines += [*_usage(sub), sub.description or "", ""]
        for action in sub._actions:
            if not isinstance(action, argparse._HelpAction):
                lines += _option_lines(action)
    return lines


class CliReference(SphinxDirective):
    """``.. sparseset-cli::``: the reference of ``python -m sparseset``."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from sparseset.cli.commands import build_parser

        container = nodes.section()
        container.document = self.state.document
        source = StringList(cli_lines(build_parser()), source="build_parser()")
        nested_parse_with_titles(self.state, source, container, self.content_offset)
        return list(container.children)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("sparseset-cli", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
