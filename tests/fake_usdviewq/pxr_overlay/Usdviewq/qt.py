"""Stand-in ``pxr.Usdviewq.qt``: usdview's Qt binding, here PySide6."""

from PySide6 import QtCore, QtGui, QtWidgets

__all__ = ["QtCore", "QtGui", "QtWidgets"]
