"""Stand-in ``pxr.Usdviewq``: only the plugin API the Grippers container uses."""
