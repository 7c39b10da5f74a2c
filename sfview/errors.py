"""`InputError`, the exception for a bad input file, and how it names the place.

Bad input is the normal case for a debugging tool: every problem with a file
becomes an `InputError` that says which file, which byte and what is wrong, and
the command line turns it into one line on stderr and exit status 2.
"""

from __future__ import annotations

from collections.abc import Callable


class InputError(Exception):
    """A problem with an input file, located as precisely as it is known."""

    def __init__(
        self, message: str, *, offset: int | None = None, path: str | None = None, where: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        """Section offset of the offending byte, when the problem is inside the section."""
        self.path = path
        self.where = where
        """How to name `offset` for a person (set by the loader, e.g. a file offset too)."""

    def __reduce__(self) -> tuple:
        """Pickle with its position and file (the keyword arguments the default pickling drops)."""
        return (self.__class__, (self.message,), self.__dict__)

    def located(self, path: str, where: str | None = None) -> InputError:
        """The same error, attributed to a file (and a readable position)."""
        return InputError(self.message, offset=self.offset, path=path, where=where or self.where)

    def __str__(self) -> str:
        parts = [self.path or "''"] if self.path is not None else []  # an empty name, shown as one
        if self.where:
            parts.append(self.where)
        elif self.offset is not None:
            parts.append(f"section offset {self.offset:#x}")
        parts.append(self.message)
        return ": ".join(parts)


class Problems(list[InputError]):
    """The problems a pass over a section meets, kept as a command's last line says them: the first one
    held (`problems[0]`), the others counted (`len`); iterating gives the first alone. A section of a million
    damaged functions meets a million, each some 300 bytes held until the pass ends."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def append(self, error: InputError) -> None:
        if not self.count:
            super().append(error)
        self.count += 1

    def __len__(self) -> int:
        return self.count

    def add(self, make: Callable[[], InputError]) -> None:
        """A problem worded by `make` only when it is the first, the one said: the others are counted (a
        section of damaged functions words each function's own problem in some 10 microseconds)."""
        if self.count:
            self.count += 1
        else:
            self.append(make())
