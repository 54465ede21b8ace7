"""Host integrations that compose views/ (menus, overlays) with adapters/ (validators): Kit."""
