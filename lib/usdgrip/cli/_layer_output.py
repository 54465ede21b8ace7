"""Where a command that rewrites a USD layer writes it (``migrate``, ``author``)."""

from __future__ import annotations

from pathlib import Path


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
