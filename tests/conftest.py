import os

os.environ.setdefault("SYMPY_GROUND_TYPES", "python")

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
