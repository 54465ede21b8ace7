"""The Qt binding: usdview's own when running inside usdview, else PySide6 (then PySide2).

Inside usdview, ``pxr.Usdviewq.qt`` names the binding usdview was built with;
using it avoids loading a second Qt into the process.
"""

from __future__ import annotations

try:
    from pxr.Usdviewq.qt import QtCore, QtGui, QtWidgets
except ImportError:
    try:
        from PySide6 import QtCore, QtGui, QtWidgets
    except ImportError:  # older usdview / DCC builds
        try:
            from PySide2 import QtCore, QtGui, QtWidgets  # type: ignore[no-redef]
        except ImportError:
            from usdgrip.extras import MissingExtraError

            raise MissingExtraError("PySide6", "qt") from None

Signal = QtCore.Signal
#: QAction moved from QtWidgets (Qt 5) to QtGui (Qt 6).
QAction = getattr(QtGui, "QAction", None) or QtWidgets.QAction

__all__ = ["QAction", "QtCore", "QtGui", "QtWidgets", "Signal"]
