"""Stand-in of Kit's ``carb`` (only ``carb.settings``)."""
