"""Stand-in of ``omni.kit.menu.utils``: menus as lists of MenuItemDescription."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Top-level menu name -> the item lists added to it.
MENUS: dict[str, list[list[MenuItemDescription]]] = {}


@dataclass
class MenuItemDescription:
    name: str = ""
    onclick_fn: Callable[..., Any] | None = None
    onclick_action: tuple[str, str] | None = None
    sub_menu: list[MenuItemDescription] | None = None
    glyph: str = ""
    appear_after: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def add_menu_items(menu_list: list[MenuItemDescription], name: str, menu_index: int = 0, **_: Any):
    del menu_index
    if not isinstance(menu_list, list) or not all(
        isinstance(i, MenuItemDescription) for i in menu_list
    ):
        raise TypeError("add_menu_items expects a list of MenuItemDescription")
    MENUS.setdefault(name, []).append(menu_list)
    return menu_list


def remove_menu_items(menu_list: list[MenuItemDescription], name: str) -> None:
    lists = MENUS.get(name, [])
    if menu_list in lists:
        lists.remove(menu_list)
    if not lists:
        MENUS.pop(name, None)


def find_menu_item(menu: str, label: str) -> MenuItemDescription | None:
    """Test helper (not Kit API): the item ``label`` of top-level ``menu``."""
    for items in MENUS.get(menu, []):
        for item in items:
            if item.name == label:
                return item
    return None
