"""Stand-in package of Kit's Asset Validator (only ``.core``)."""
