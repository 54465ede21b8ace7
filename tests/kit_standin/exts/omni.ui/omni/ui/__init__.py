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
        self.enabled = kwargs.get("enabled", True)

    def click(self) -> Any:
        """Test helper: a click (a disabled button does nothing, as in Kit)."""
        if not self.enabled:
            return None
        return self.clicked_fn() if self.clicked_fn is not None else None


class SimpleStringModel:
    """``ui.SimpleStringModel``: a text value and its value-changed callbacks."""

    def __init__(self, value: str = "") -> None:
        self._value = str(value)
        self._changed: list[Callable[[SimpleStringModel], Any]] = []

    def get_value_as_string(self) -> str:
        return self._value

    def get_value_as_float(self) -> float:
        return float(self._value)

    def set_value(self, value: Any) -> None:
        self._value = str(value)
        for fn in list(self._changed):
            fn(self)

    def add_value_changed_fn(self, fn: Callable[[SimpleStringModel], Any]) -> int:
        self._changed.append(fn)
        return len(self._changed)


class StringField(Widget):
    """``ui.StringField(model=...)``: an editable text line."""

    def __init__(self, model: SimpleStringModel | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = model if model is not None else SimpleStringModel()


class Window:
    def __init__(self, title: str, **kwargs: Any) -> None:
        self.title = title
        self.kwargs = kwargs
        self.frame = Frame()
        self.visible = False
        WINDOWS.append(self)
