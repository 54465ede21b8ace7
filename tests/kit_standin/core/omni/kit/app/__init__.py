"""Stand-in of ``omni.kit.app``: an extension manager that honours ``extension.toml``.

What it copies from Kit (extension docs: "Extension dependencies", "[core] order",
"[[python.module]]"): enabling an extension first enables its dependencies
(optional ones only when some folder has them); among the extensions ready to start,
the lowest ``[core] order`` starts first (ties by name); each extension's folder (and
each ``[[python.module]] path``) goes to the FRONT of ``sys.path`` before its modules
are imported; every ``omni.ext.IExt`` subclass found in a module is instantiated and
its ``on_startup(ext_id)`` called.

It also watches for the trap of the schema issue: a schema plugin (plugInfo with
``schemaKind`` types) registered after ``omni.usd`` started (and so after the USD
schema registry was built) is recorded in :attr:`ExtensionManager.late_schema_plugins`.
"""

from __future__ import annotations

import heapq
import importlib
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class _Extension:
    name: str
    folder: Path
    config: dict[str, Any]
    instances: list[Any] = field(default_factory=list)

    @property
    def version(self) -> str:
        return str(self.config.get("package", {}).get("version", ""))

    @property
    def order(self) -> int:
        return int(self.config.get("core", {}).get("order", 0))

    @property
    def dependencies(self) -> dict[str, dict]:
        return dict(self.config.get("dependencies", {}))

    @property
    def ext_id(self) -> str:
        return f"{self.name}-{self.version}"


def _schema_plugins() -> set[str]:
    from pxr import Plug

    names = set()
    for plugin in Plug.Registry().GetAllPlugins():
        types = plugin.metadata.get("Types", {})
        if any(isinstance(t, dict) and "schemaKind" in t for t in types.values()):
            names.add(plugin.name)
    return names


class ExtensionManager:
    """Enables extensions found in the folders given to :meth:`add_path`."""

    def __init__(self) -> None:
        self.extensions: dict[str, _Extension] = {}
        self.startup_order: list[str] = []
        """Names of the started extensions, in start order."""
        self.late_schema_plugins: list[str] = []
        """``"<extension>: <plugin>"`` for schema plugins registered after omni.usd started."""
        self.errors: list[str] = []
        """``"<extension>: <exception>"`` for extensions that failed to start."""

    def add_path(self, folder: str | Path) -> None:
        """Make every ``<folder>/<name>/config/extension.toml`` known."""
        for toml in sorted(Path(folder).glob("*/config/extension.toml")):
            ext_dir = toml.parent.parent
            with open(toml, "rb") as stream:
                config = tomllib.load(stream)
            self.extensions.setdefault(ext_dir.name, _Extension(ext_dir.name, ext_dir, config))

    def is_extension_enabled(self, name: str) -> bool:
        return name in self.startup_order

    def get_extension_path(self, name: str) -> str:
        return str(self.extensions[name].folder)

    def set_extension_enabled_immediate(self, name: str, enabled: bool = True) -> bool:
        """Enable ``name`` and its dependencies (disable: shut it down); False on failure."""
        if not enabled:
            ext = self.extensions[name]
            for instance in ext.instances:
                instance.on_shutdown()
            ext.instances.clear()
            if name in self.startup_order:
                self.startup_order.remove(name)
            return True
        return self.enable_at_startup([name])

    def enable_at_startup(self, names: list[str]) -> bool:
        """Enable ``names`` together, as ``--enable A --enable B`` on Kit's command line does."""
        try:
            plan = self._resolve(names)
        except KeyError as exc:
            self.errors.append(f"{', '.join(names)}: cannot resolve dependency {exc}")
            return False
        return all(self._start(ext) for ext in plan)  # stops at the first failure

    def _resolve(self, names: list[str]) -> list[_Extension]:
        """The not-yet-started closure of ``names``: dependencies first, then lowest order."""
        needed: dict[str, _Extension] = {}

        def visit(ext_name: str, optional: bool) -> None:
            if ext_name in needed or ext_name in self.startup_order:
                return
            ext = self.extensions.get(ext_name)
            if ext is None:
                if optional:
                    return
                raise KeyError(ext_name)
            needed[ext_name] = ext
            for dep, spec in ext.dependencies.items():
                visit(dep, bool(spec.get("optional", False)))

        for name in names:
            visit(name, False)
        waiting = {
            n: {d for d in e.dependencies if d in needed and d != n} for n, e in needed.items()
        }
        ready = [(e.order, n) for n, e in needed.items() if not waiting[n]]
        heapq.heapify(ready)
        plan: list[_Extension] = []
        while ready:
            _, ext_name = heapq.heappop(ready)
            plan.append(needed[ext_name])
            for other, deps in waiting.items():
                if ext_name in deps:
                    deps.discard(ext_name)
                    if not deps:
                        heapq.heappush(ready, (needed[other].order, other))
        if len(plan) != len(needed):
            raise KeyError(f"dependency cycle among {sorted(set(needed) - {e.name for e in plan})}")
        return plan

    def _start(self, ext: _Extension) -> bool:
        import omni.ext

        before = _schema_plugins()
        settings = ext.config.get("settings", {})
        _seed_settings(settings)
        try:
            for entry in ext.config.get("python", {}).get("module", []):
                folder = (ext.folder / entry.get("path", ".")).resolve()
                if str(folder) not in sys.path:
                    sys.path.insert(0, str(folder))
                if "name" not in entry:
                    continue
                module = importlib.import_module(entry["name"])
                for value in list(vars(module).values()):
                    if (
                        isinstance(value, type)
                        and issubclass(value, omni.ext.IExt)
                        and value is not omni.ext.IExt
                    ):
                        instance = value()
                        instance.on_startup(ext.ext_id)
                        ext.instances.append(instance)
        except Exception as exc:  # Kit logs the failure and leaves the extension disabled
            self.errors.append(f"{ext.name}: {type(exc).__name__}: {exc}")
            return False
        if "omni.usd" in self.startup_order:
            for plugin in sorted(_schema_plugins() - before):
                self.late_schema_plugins.append(f"{ext.name}: {plugin}")
        self.startup_order.append(ext.name)
        return True


def _seed_settings(settings: dict[str, Any], prefix: str = "") -> None:
    import carb.settings

    store = carb.settings.get_settings()
    for key, value in settings.items():
        path = f"{prefix}/{key}"
        if isinstance(value, dict):
            _seed_settings(value, path)
        elif store.get(path) is None:
            store.set(path, value)


class App:
    def __init__(self) -> None:
        self._manager = ExtensionManager()

    def get_extension_manager(self) -> ExtensionManager:
        return self._manager


_APP = App()


def get_app() -> App:
    return _APP
