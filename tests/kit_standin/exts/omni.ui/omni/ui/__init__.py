"""Stand-in of ``omni.ui``: widgets that record the tree built under ``with`` blocks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_STACK: list[Widget] = []
#: Every Window created, in order.
WINDOWS: list[Window] = []


class Widget:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.children: list[Widget] = []
        if _STACK:
            _STACK[-1].children.append(self)

    def __enter__(self) -> Widget:
        self.children.clear()
        _STACK.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _STACK.pop()

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


class Frame(Widget):
    def clear(self) -> None:
        self.children.clear()


class ScrollingFrame(Widget):
    pass


class VStack(Widget):
    pass


class HStack(Widget):
    pass


class Label(Widget):
    def __init__(self, text: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = text


class Button(Widget):
    def __init__(
        self, text: str = "", clicked_fn: Callable[[], Any] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.text = text
        self.clicked_fn = clicked_fn

    def click(self) -> Any:
        return self.clicked_fn() if self.clicked_fn is not None else None


class Window:
    def __init__(self, title: str, **kwargs: Any) -> None:
        self.title = title
        self.kwargs = kwargs
        self.frame = Frame()
        self.visible = False
        WINDOWS.append(self)
