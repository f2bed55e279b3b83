"""Root test configuration: offline model hubs, and the shared fixtures of ``tests/support.py``.

Helpers are imported from that module by name (``from support import synthetic_ckf_rows``); its
fixtures (``sample_dir``, ``synthetic_sample_dir``, ``ui_env``) reach every test through
``pytest_plugins``.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest_plugins = ("support",)
