"""The colour of each grasp candidate in a picture, and the legend saying what it means (pure).

The ramps are the usdview overlays' (:mod:`usdgrip.views.glyphs`), so a picture and the
viewer colour a candidate alike.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.views.glyphs import (
    GROUP_PALETTE,
    NEUTRAL_COLOR,
    compute_confidence_colors,
    compute_success_colors,
)

#: Candidates named in a one-colour-per-candidate legend (the rest are "…").
LEGEND_CANDIDATES = 6


def compute_grasp_colors(
    count: int,
    confidences: ArrayLike | None,
    success_rates: ArrayLike | None,
    color_by: str | None,
    name: str = "the grasps",
) -> tuple[NDArray[np.float64], str, tuple[tuple[str, tuple[float, float, float]], ...]]:
    """One colour per candidate, what it shows, and the legend entries that say so.

    ``color_by`` ``None`` picks ``success`` when success rates were measured (``usdgrip
    evaluate``), else ``confidence`` when the file has confidences, else one colour per
    candidate (``usdgrip sample`` output). Success rates are a fixed 0 → 1 ramp (red →
    green); confidences are ranked within the set (red lowest, green highest); a candidate
    without the value is grey.

    Raises:
        ValueError: ``color_by`` asks for a value the grasps do not have.
    """
    rates = None if success_rates is None else np.asarray(success_rates, np.float64).reshape(count)
    scores = None if confidences is None else np.asarray(confidences, np.float64).reshape(count)
    has_scores = scores is not None and bool(np.isfinite(scores).any())
    if color_by is None:
        color_by = "success" if rates is not None else "confidence" if has_scores else "candidate"
    grey = tuple(float(v) for v in NEUTRAL_COLOR)
    if color_by == "success":
        if rates is None:
            raise ValueError(
                f"--color-by success: {name} has no measured success rates (`usdgrip "
                "evaluate` measures them: --grasps for a grasp file, --targets for samples)"
            )
        ramp = compute_success_colors(np.array([0.0, 0.5, 1.0]), 3)
        legend = [(f"{p} held", _rgb(c)) for p, c in zip(("0%", "50%", "100%"), ramp, strict=True)]
        if not np.isfinite(rates).all():
            legend.append(("not evaluated", grey))
        return compute_success_colors(rates, count), "success", tuple(legend)
    if color_by == "confidence":
        if not has_scores:
            raise ValueError(
                f"--color-by confidence: {name} has no confidences (samples and their "
                "evaluation have none); colour by success, or leave --color-by out"
            )
        finite = np.isfinite(scores)
        colors = np.tile(np.asarray(NEUTRAL_COLOR, dtype=np.float64), (count, 1))
        colors[finite] = compute_confidence_colors(scores[finite], int(finite.sum()))
        low, high = float(scores[finite].min()), float(scores[finite].max())
        ramp = compute_success_colors(np.array([0.0, 1.0]), 2)
        legend = (
            [(f"confidence {high:.3g} (all)", _rgb(ramp[1]))]
            if low == high
            else [
                (f"lowest confidence {low:.3g}", _rgb(ramp[0])),
                (f"highest {high:.3g}", _rgb(ramp[1])),
            ]
        )
        if not finite.all():
            legend.append(("no confidence", grey))
        return colors, "confidence", tuple(legend)
    if color_by != "candidate":
        raise ValueError(f"--color-by {color_by!r}: expected confidence or success")
    palette = np.asarray(GROUP_PALETTE, dtype=np.float64)
    colors = palette[np.arange(count) % len(palette)]
    legend = [(f"candidate {i}", _rgb(colors[i])) for i in range(min(count, LEGEND_CANDIDATES))]
    if count > LEGEND_CANDIDATES:
        legend.append((f"… {count - LEGEND_CANDIDATES} more (colours repeat)", grey))
    return colors, "candidate", tuple(legend)


def _rgb(color: ArrayLike) -> tuple[float, float, float]:
    r, g, b = (float(v) for v in np.asarray(color).reshape(3))
    return (r, g, b)
