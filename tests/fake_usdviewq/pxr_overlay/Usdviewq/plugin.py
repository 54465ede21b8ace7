"""Stand-in ``pxr.Usdviewq.plugin``: the public plugin API of usdview, written for tests.

Same names, signatures and loading order as usdview's module
(``pxr/usdImaging/usdviewq/plugin.py``): containers are found with
``Plug.Registry.GetAllDerivedTypes`` of the ``PluginContainer`` Tf type, each
owning plugin is ``Load()``-ed, ``containerType.pythonClass()`` builds the
container, then ``registerPlugins`` and ``configureView`` run. Menus are real
QMenus on the main window given to :func:`loadPlugins`, so a test can read
them back. Every call is also recorded in :data:`CALLS`.
"""

from __future__ import annotations

import importlib

from pxr import Plug, Tf

from .qt import QtGui, QtWidgets

#: ("loadPlugin" | "container" | "registerCommandPlugin" | ..., details) in call order.
CALLS: list[tuple] = []


class DuplicateCommandPlugin(Exception):
    """Two command plugins share a name (usdview then loads no plugin at all)."""

    def __init__(self, name):
        super().__init__(f"A command plugin with the name '{name}' has already been registered.")
        self.name = name


class DeferredImport:
    """Import ``moduleName`` (relative to ``packageName``) when an attribute is first called."""

    def __init__(self, moduleName, packageName=None):
        self._moduleName = moduleName
        self._packageName = packageName
        self._module = None

    def __getattr__(self, attr):
        def call(*args, **kwargs):
            if self._module is None:
                self._module = importlib.import_module(self._moduleName, self._packageName)
            return getattr(self._module, attr)(*args, **kwargs)

        return call


class PluginContainer:
    """Base class of plugin containers, registered as a Tf type like usdview's."""

    def deferredImport(self, moduleName):
        return DeferredImport(moduleName, self.__module__)

    def registerPlugins(self, plugRegistry, plugCtx):
        raise NotImplementedError

    def configureView(self, plugRegistry, plugUIBuilder):
        raise NotImplementedError


PluginContainerTfType = Tf.Type.Define(PluginContainer)


class CommandPlugin:
    """A named command whose callback receives the usdviewApi."""

    def __init__(self, name, displayName, callback, description, usdviewApi):
        self.name = name
        self.displayName = displayName
        self.description = description
        self._callback = callback
        self._usdviewApi = usdviewApi

    def run(self):
        CALLS.append(("run", self.name))
        self._callback(self._usdviewApi)


class PluginMenu:
    """Adds command plugins to a QMenu."""

    def __init__(self, qMenu):
        self._qMenu = qMenu
        self._submenus = {}

    def addItem(self, commandPlugin, shortcut=None):
        CALLS.append(("addItem", self._qMenu.title(), commandPlugin.name))
        action = self._qMenu.addAction(commandPlugin.displayName)
        action.triggered.connect(lambda *_: commandPlugin.run())
        action.setToolTip(commandPlugin.description)
        if shortcut is not None:
            action.setShortcut(QtGui.QKeySequence(shortcut))
        return action

    def findOrCreateSubmenu(self, menuName):
        if menuName not in self._submenus:
            self._submenus[menuName] = PluginMenu(self._qMenu.addMenu(menuName))
        return self._submenus[menuName]

    def addSeparator(self):
        CALLS.append(("addSeparator", self._qMenu.title()))
        self._qMenu.addSeparator()


class PluginRegistry:
    """Holds the registered command plugins by name."""

    def __init__(self, usdviewApi):
        self._usdviewApi = usdviewApi
        self._commandPlugins = {}

    def registerCommandPlugin(self, name, displayName, callback, description=""):
        CALLS.append(("registerCommandPlugin", name, displayName))
        if name in self._commandPlugins:
            raise DuplicateCommandPlugin(name)
        plugin = CommandPlugin(name, displayName, callback, description, self._usdviewApi)
        self._commandPlugins[name] = plugin
        return plugin

    def getCommandPlugin(self, name):
        return self._commandPlugins.get(name)


class PluginUIBuilder:
    """Creates menus on the main window's menu bar (one per title)."""

    def __init__(self, mainWindow):
        self._mainWindow = mainWindow
        self._menus = {}
        for child in mainWindow.menuBar().children():
            if isinstance(child, QtWidgets.QMenu):
                self._menus[child.title().replace("&", "")] = PluginMenu(child)

    def findOrCreateMenu(self, menuName):
        CALLS.append(("findOrCreateMenu", menuName))
        if menuName not in self._menus:
            self._menus[menuName] = PluginMenu(self._mainWindow.menuBar().addMenu(menuName))
        return self._menus[menuName]


def loadPlugins(usdviewApi, mainWindow):
    """Find, load and configure every plugin container, as usdview does at start-up."""
    byPlugin = {}
    for containerType in Plug.Registry.GetAllDerivedTypes(PluginContainerTfType):
        plugin = Plug.Registry().GetPluginForType(containerType)
        byPlugin.setdefault(plugin, []).append(containerType)

    containers = []
    for plugin in sorted(byPlugin, key=lambda p: p.name):
        CALLS.append(("loadPlugin", plugin.name))
        plugin.Load()
        for containerType in sorted(byPlugin[plugin], key=lambda t: t.typeName):
            if containerType.pythonClass is None:
                CALLS.append(("missingPythonClass", containerType.typeName))
                continue
            CALLS.append(("container", containerType.typeName))
            containers.append(containerType.pythonClass())
    if not containers:
        return None

    registry = PluginRegistry(usdviewApi)
    for container in containers:
        try:
            container.registerPlugins(registry, usdviewApi)
        except DuplicateCommandPlugin as exc:
            CALLS.append(("duplicate", exc.name))
            return None
    builder = PluginUIBuilder(mainWindow)
    for container in containers:
        container.configureView(registry, builder)
    return registry
