"""Copying: OSC 52 (Textual's `copy_to_clipboard`), and inside tmux its paste buffer too.

tmux's default `set-clipboard external` drops the OSC 52 an application inside
it writes: `c` said "Copied" and nothing was anywhere. Inside tmux (`$TMUX`) the
text also goes into tmux's paste buffer (`tmux load-buffer -w -`: `prefix ]`
pastes it, and tmux passes it on to the outer terminal's clipboard where it
may), which works whatever `set-clipboard` says.
"""

from __future__ import annotations

import os
import shutil
import subprocess

__all__ = ["to_tmux_buffer"]

TMUX_TIMEOUT_S = 2.0
"""How long `tmux load-buffer` may take: it answers at once, unless the server is stuck."""


def to_tmux_buffer(text: str) -> bool:
    """`text` put into tmux's paste buffer when running inside tmux; whether it was."""
    tmux = shutil.which("tmux")
    if not os.environ.get("TMUX") or tmux is None:
        return False
    try:
        done = subprocess.run(
            [tmux, "load-buffer", "-w", "-"],
            input=text.encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=TMUX_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
