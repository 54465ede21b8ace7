"""Draw an object, its gripper sites, slots and grasp candidates to a PNG (no usdview).

A USD-edge room (reads the stage with :mod:`usdgrip.usd`) that draws with
matplotlib's Agg backend, so it runs headless: for docs, CI artefacts and people
without a viewer. Slots and grippers use the same line geometry as the usdview
overlays (:mod:`usdgrip.views.glyphs`), so the picture matches the viewer.

:func:`render_view` runs four steps, one module each: read the stage and the grasps
(:mod:`.render_inputs`; each candidate's colour from :mod:`.grasp_colors`), build the line
sets (:mod:`.line_sets`: the mesh's outline and creases, slots, grippers), draw them
(:mod:`.drawing`) and write the PNG (:mod:`.view`).

Conventions: everything is drawn in world metres; a ``Y``-up stage is turned
to show Y up (matplotlib's vertical axis is Z). The PNG is written by
:func:`usdgrip.fileio.write_output`: atomically over a regular file (temporary file in
the same folder, then renamed), streamed into a device or named pipe.
"""

from usdgrip.render.view import (
    MAX_DPI,
    MAX_PIXELS_PER_SIDE,
    RenderSummary,
    check_view_options,
    render_view,
)

__all__ = ["MAX_DPI", "MAX_PIXELS_PER_SIDE", "RenderSummary", "check_view_options", "render_view"]
