"""usdview plugin container: the Grippers menu of usdgrip.

usdview finds this module through Plug (``plugInfo.json`` beside this
package declares ``usdGripUsdview.GrippersPluginContainer`` deriving from
``pxr.Usdviewq.plugin.PluginContainer``), imports it by name (so its parent
directory must be on PYTHONPATH; ``usdgrip env`` prints the lines) and calls
``registerPlugins`` then ``configureView``. Commands import usdgrip lazily,
on first use, through ``deferredImport`` of :data:`COMMANDS_MODULE` (the usdview
host, :mod:`usdgrip.hosts.usdview.usdview_commands`), so usdview starts as fast as
before.
"""

from __future__ import annotations

from pxr import Tf
from pxr.Usdviewq.plugin import PluginContainer

MENU = "Grippers"
#: objectName of the checkable QAction (the command reads its state from it).
OVERLAYS_VISIBLE_ACTION = "usdgripOverlaysVisible"

#: The module holding the commands: ``validate_stage(usdviewApi)`` for ``validateStage`` ...
COMMANDS_MODULE = "usdgrip.hosts.usdview.usdview_commands"
#: (callback, menu label, tooltip, separator before). Registered as "Grippers.<callback>"
#: (usdview refuses ALL plugins on a duplicate name); runs COMMANDS_MODULE's function of
#: the same name in snake_case.
COMMANDS = (
    ("validateStage", "Validate Stage", "Run the usdgrip rules on the whole stage", False),
    ("validateSelection", "Validate Selection", "Run the rules on the selected prims", False),
    ("showSlots", "Show Slots", "Overlay the grasp slots of the selected objects", True),
    ("sampleSlotGrasps", "Sample Slot Grasps…", "Sample grasp poses from the slots", False),
    ("planGrasps", "Plan Grasps…", "Plan grasp candidates for the selected object", False),
    ("loadGrasps", "Load Grasps…", "Show an Isaac-Grasp file of any writer", False),
    ("exportGrasps", "Export Grasps…", "Write the shown grasps as Isaac-Grasp YAML", False),
    ("addSlot", "Add Slot…", "Add a grasp slot to the selected object (checked, previewed)", True),
    ("editSlot", "Edit Slot…", "Edit the selected object's slot (checked, previewed)", False),
    ("addGripperSite", "Add Gripper Site…", "Author a gripper site (checked, previewed)", False),
    ("addGraspLine", "Add Grasp Line…", "Add a SimReady grasp line (checked, previewed)", False),
    ("removeAuthored", "Remove…", "Remove the site, a slot or a grasp line of the prim", False),
    ("discardSessionEdits", "Discard Session Edits", "Drop what was authored to try", False),
    ("suggestSlots", "Suggest Slots…", "Suggest physics-proven slots, previewed first", False),
    ("clearOverlays", "Clear Overlays", "Remove every usdgrip overlay (session layer)", True),
    ("toggleOverlays", "Overlays visible", "Show or hide the usdgrip overlays", False),
)


def command_function(callback: str) -> str:
    """The function behind a callback: ``validateStage`` -> ``validate_stage``."""
    return "".join("_" + c.lower() if c.isupper() else c for c in callback)


class GrippersPluginContainer(PluginContainer):
    """Registers the Grippers commands and builds their menu."""

    def registerPlugins(self, plugRegistry, usdviewApi):
        """Register one command plugin per entry of :data:`COMMANDS`."""
        commands = self.deferredImport(COMMANDS_MODULE)
        self._commands = [
            plugRegistry.registerCommandPlugin(
                f"{MENU}.{name}", label, getattr(commands, command_function(name)), description
            )
            for name, label, description, _ in COMMANDS
        ]

    def configureView(self, plugRegistry, plugUIBuilder):
        """Build the one Grippers menu from :data:`COMMANDS`."""
        menu = plugUIBuilder.findOrCreateMenu(MENU)
        # Nothing here may raise (an exception in configureView stops usdview from
        # starting), and some hosts still run Python 3.9 (no zip(strict=...)).
        for index, (name, _, _, separator) in enumerate(COMMANDS):
            if separator:
                menu.addSeparator()
            action = menu.addItem(self._commands[index])
            # usdview before 23.02 returns None: the entry then toggles without a check mark.
            if name == "toggleOverlays" and action is not None:
                action.setObjectName(OVERLAYS_VISIBLE_ACTION)
                action.setCheckable(True)
                action.setChecked(True)


Tf.Type.Define(GrippersPluginContainer)
