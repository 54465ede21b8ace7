"""Where a command that rewrites a USD layer writes it (``migrate``, ``author``, ``suggest``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def resolve_layer_output(
    source: str | Path,
    output: str | Path | None,
    in_place: bool,
    *,
    verb: str = "edit",
    suffix: str = "edited",
) -> Path:
    """The file a rewritten root layer goes to: ``source`` itself, or ``output``.

    Refuses, before any work: a ``.usdz`` package, a name that is not USD (unless the
    output is streamed: ``-``, a pipe, a device), ``-o`` naming the input itself, and
    what :func:`usdgrip.fileio.check_output` refuses (a folder, a missing folder, a
    read-only file). ``verb`` and ``suffix`` word the usdz advice (``migrate``,
    ``FILE.migrated.usda``).

    Raises:
        ValueError, OSError: naming the path and what to do instead.
    """
    from usdgrip.fileio import check_output, check_output_path, is_streamed
    from usdgrip.usd.names import USD_SUFFIXES

    source = Path(source)
    target = source if in_place or output is None else Path(output)
    if target.suffix.lower() == ".usdz":
        raise ValueError(
            f"{target}: usdz packages cannot be written; {verb} the package's source layer, "
            f"or write the result with -o {source.stem}.{suffix}.usda"
        )
    streamed = not in_place and is_streamed(target)
    if target.suffix.lower() not in USD_SUFFIXES and not streamed:
        raise ValueError(
            f"{target}: not a USD file name (suffix {target.suffix or 'none'!r}); the "
            "layer is written as USD: name it .usda or .usdc (or -o - for standard output)"
        )
    if not in_place:
        try:
            check_output_path(target, [source])
        except ValueError as exc:
            raise ValueError(f"{exc}; --in-place rewrites FILE itself") from None
        check_output(output if output is not None else target)
    return target


class LayerTarget:
    """Where a command's edits go (``author``, ``suggest``): stage, layer, and how.

    ``args`` has ``file``, ``output``, ``in_place``, ``layer`` and ``dry_run``; refusals
    come before any work.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        from usdgrip.cli import open_input, take_snapshot
        from usdgrip.cli._layer_output import resolve_layer_output
        from usdgrip.fileio import check_output, find_usda_comments

        self.args = args
        self.snapshot = None
        self.created = False
        if args.layer is not None:
            from usdgrip.authoring.edit_layers import (
                check_edits_path,
                create_edits_layer,
                describe_foreign_edits,
                find_asset_sublayer,
            )

            exists = check_edits_path(args.file, args.layer)
            if not args.dry_run:
                check_output(args.layer)
            asset = open_input(args.file, args.layer)
            self.path = Path(args.layer)
            if exists:
                self.snapshot = take_snapshot(args.layer)
                self.comments = find_usda_comments(args.layer)
                self.stage = open_input(args.layer)
                if find_asset_sublayer(self.stage.GetRootLayer(), args.file) is None:
                    raise ValueError(
                        describe_foreign_edits(self.stage.GetRootLayer(), args.file, args.layer)
                    )
            else:
                from pxr import Usd

                self.created = True
                self.comments = None
                layer = create_edits_layer(asset.GetRootLayer(), args.file)
                self.stage = Usd.Stage.Open(layer)
            return
        target = resolve_layer_output(args.file, args.output, args.in_place)
        self.path = target
        if args.in_place:
            if not args.dry_run:
                check_output(args.file)  # read-only: refused before any work
            self.snapshot = take_snapshot(args.file)
        self.stage = open_input(args.file, None if args.in_place else target)
        self.comments = find_usda_comments(args.file)

    def layer_to_write(self) -> tuple[Any, list[str]]:
        """The layer to export and the relative paths it re-anchored (``-o`` elsewhere)."""
        root = self.stage.GetRootLayer()
        args = self.args
        if args.layer is not None:
            if self.created:
                from usdgrip.authoring.edit_layers import export_edits_layer

                return export_edits_layer(root, args.file, args.layer), []
            return root, []
        if args.in_place:
            return root, []
        from usdgrip.fileio import is_streamed
        from usdgrip.migration import compute_layer_for

        anchor = Path(args.file) if is_streamed(self.path) else self.path
        return compute_layer_for(root, anchor)

    def write(self, layer: Any) -> None:
        """Export ``layer`` to the target with the CLI's write rules, and print its notes."""
        from usdgrip.cli import print_notes
        from usdgrip.usd.layer_files import export_layer

        notes = export_layer(layer, self.path, unchanged=self.snapshot, comments=self.comments)
        print_notes(self.path, notes)

    @staticmethod
    def print_moved(moved: list[str], stream: Any) -> None:
        """Say which relative asset paths ``-o`` re-anchored."""
        for line in moved:
            print(
                f"moved:   {line} (relative asset path re-anchored to the output's folder)",
                file=stream,
            )
