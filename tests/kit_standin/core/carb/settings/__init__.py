"""Stand-in of ``carb.settings``: one flat dictionary of ``/path/to/setting`` -> value."""

from __future__ import annotations

from typing import Any


class Settings:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def get(self, path: str) -> Any:
        return self.values.get(path)

    def set(self, path: str, value: Any) -> None:
        self.values[path] = value


_SETTINGS = Settings()


def get_settings() -> Settings:
    return _SETTINGS
