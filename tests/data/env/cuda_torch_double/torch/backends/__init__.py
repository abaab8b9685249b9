"""torch.backends of the stand-in (see torch/__init__.py)."""

import types

cudnn = types.SimpleNamespace(is_available=lambda: True, version=lambda: 91900, enabled=True)
