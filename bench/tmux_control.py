"""A tmux control-mode client (`tmux -C attach`): commands answered over one connection, the pane's writes signalled.

Why: a `tmux` process per command (`send-keys` for each key, `capture-pane` polled while waiting for the screen
to change) costs a CPU's time that, on a machine of two cores, is taken from the app being measured and from tmux
drawing what the app wrote, and inflates every figure. Here a command costs tmux a line read on its socket, and
the screen is read again only when the pane has written.

The control protocol (tmux(1), CONTROL MODE): each command's output comes between `%begin` and `%end` (or
`%error`) lines; notifications are lines of their own between blocks, `%output %PANE DATA` among them, sent as
tmux reads what the pane's program wrote (tmux has parsed it into the screen by then). Every line is read, to
the end, whatever the bench does with it: a control client that stops reading stalls the tmux server.
"""

from __future__ import annotations

import contextlib
import queue
import shlex
import subprocess
import threading

__all__ = ["Control", "ControlError"]

ANSWER_TIMEOUT_S = 10.0
"""How long a command may go unanswered: tmux answers at once, unless it is stuck."""


class ControlError(RuntimeError):
    """tmux refused a command, or never answered it."""


class Control:
    """One control client attached to `session`, for as long as the session lives."""

    def __init__(self, session: str) -> None:
        self._process = subprocess.Popen(
            ["tmux", "-C", "attach-session", "-t", session],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._answers: queue.Queue[tuple[bool, list[str]]] = queue.Queue()
        self.output = threading.Event()
        """Set each time the pane writes: cleared by whoever waits for the next write."""
        self._reader = threading.Thread(target=self._read, name="tmux-control", daemon=True)
        self._reader.start()

    def command(self, *args: str) -> str:
        """Run a tmux command; its output."""
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write((shlex.join(args) + "\n").encode())
        stdin.flush()
        try:
            ok, lines = self._answers.get(timeout=ANSWER_TIMEOUT_S)
        except queue.Empty:
            raise ControlError(f"tmux did not answer {shlex.join(args)}") from None
        if not ok:
            raise ControlError(f"tmux {shlex.join(args)}: {' '.join(lines)}")
        return "".join(line + "\n" for line in lines)

    def close(self) -> None:
        """Detach (tmux ends a control client at the end of its input) and wait for the reader to see the end."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):  # the session, and the client with it, already gone
                self._process.stdin.close()
        self._process.wait(timeout=ANSWER_TIMEOUT_S)
        self._reader.join(timeout=ANSWER_TIMEOUT_S)

    def _read(self) -> None:
        """In its own thread: every line tmux sends, to the end: answers queued, the pane's writes signalled."""
        stdout = self._process.stdout
        assert stdout is not None
        block: list[str] | None = None
        ours = False
        for raw in stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")  # a write's bytes may end mid-character
            if block is not None:
                if line.startswith(("%end ", "%error ")):
                    if ours:
                        self._answers.put((line.startswith("%end "), block))
                    block = None
                else:
                    block.append(line)
            elif line.startswith("%begin "):
                block = []
                ours = line.split()[-1] == "1"  # sent by this client (0: the attach's own, at the start)
            elif line.startswith("%output "):
                self.output.set()
