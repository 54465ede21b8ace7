"""Registers the PeerAPI codeless schema at import."""

from pathlib import Path

from pxr import Plug

Plug.Registry().RegisterPlugins(str(Path(__file__).resolve().parent / "resources"))
