"""The commands' files: an input read with an error that names the file and what is wrong
with it, and an output path checked before any work, so that a long run never ends in a
traceback because its result cannot be written.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Any


class FileArgError(ValueError):
    """An input file that cannot be read, or an output path that cannot be written."""


def nonempty(text: str) -> str:
    """An argparse ``type`` for paths and specs: an empty value is an error, not a default."""
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a value, not an empty string")
    return text


#: The largest input file read whole (records, tables and resumed runs are a few MiB).
MAX_READ_BYTES = 256 * 2**20


def read_text(path: str, what: str, limit: int = MAX_READ_BYTES) -> str:
    """The UTF-8 text of the file ``path`` (``what``: the option or argument naming it), of
    at most ``limit`` bytes (``/dev/zero`` is refused, not read until memory runs out)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise FileArgError(f"{what} {path}: larger than {limit:,} bytes")
        return data.decode("utf-8-sig")  # a byte-order mark (Windows editors) is not text
    except IsADirectoryError:
        raise FileArgError(f"{what} {path}: is a folder, not a file") from None
    except OSError as exc:
        raise FileArgError(f"{what} {path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise FileArgError(f"{what} {path}: not a text (UTF-8) file") from None


def read_stdin(what: str, limit: int | None = None) -> str:
    """The UTF-8 text of standard input (``what``: the option that named it, as ``-``), of at
    most ``limit`` bytes, as :func:`read_text` reads a file (``yes | heka ...`` is refused, not
    read until memory runs out; ``limit`` defaults to :data:`MAX_READ_BYTES`)."""
    limit = MAX_READ_BYTES if limit is None else limit
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise FileArgError(f"{what} -: standard input is larger than {limit:,} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FileArgError(f"{what} -: standard input is not text (UTF-8)") from None


def read_json(path: str, what: str) -> Any:
    """The JSON document of the file ``path`` (:func:`read_text`)."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # malformed, a number too long, nested too deeply
        raise FileArgError(f"{what} {path}: not JSON ({json_problem(exc)})") from None


def json_problem(exc: BaseException) -> str:
    """What :func:`json.loads` found wrong, in words: its message, or for a document nested
    deeper than the parser's recursion allows, that."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if "integer string conversion" in str(exc):  # Python's cap on the digits of an int
        return "a number too long to read"
    return str(exc)


def check_writable(path: str, what: str) -> None:
    """Refuse, before any work, an output path that cannot be written: empty, a folder, not a
    regular file (a device, pipe or socket), below a file, or where this process may not
    write. Missing folders are fine (they are made); a link to a file writes the file."""
    if not path.strip():
        raise FileArgError(f"{what} needs a path")
    target = Path(path).absolute()
    if target.is_symlink() and not target.exists():
        # Written through, it would make a file wherever the link points.
        raise FileArgError(f"cannot write {what} {path}: a link to a missing file ({os.readlink(target)})")
    if target.is_dir():
        raise FileArgError(f"cannot write {what} {path}: it is a folder")
    if target.exists() and not stat.S_ISREG(target.stat().st_mode):
        # A device, pipe or socket: the results are written to a temporary file renamed over
        # the path (which would replace a device node, or lose a pipe's output), and a FIFO
        # would block the probe below.
        raise FileArgError(f"cannot write {what} {path}: not a regular file (a device, pipe or socket)")
    folder = target.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise FileArgError(f"cannot write {what} {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FileArgError(f"cannot write {what} {path}: no permission to write in {folder}")
    if target.exists() and not os.access(target, os.W_OK):
        raise FileArgError(f"cannot write {what} {path}: no permission to write it")
    # A probe where the checks above cannot tell (a read-only or virtual file system; root,
    # whom os.access always allows): make the folders, create the file, remove both again (a
    # run refused later leaves nothing behind; the output's writer makes the folders).
    existed = target.exists()
    made = [p for p in target.parents if p != folder and folder in p.parents]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a", encoding="utf-8"):
            pass
        if not existed:
            target.unlink()
    except OSError as exc:
        raise FileArgError(f"cannot write {what} {path}: {exc.strerror}") from None
    finally:
        for made_folder in made:  # the deepest first
            try:
                made_folder.rmdir()
            except OSError:
                break


def same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file: the same path once links are followed,
    or, both existing, the same file (hard links, bind mounts)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def check_distinct(paths: list[tuple[str, str]]) -> None:
    """Refuse, before any work, two of ``paths`` (each ``(what, path)``: a command's inputs
    and outputs; an empty path or ``-``, standard input or output, is left out) that name one
    file: an output written over an input destroys it (the state keys, a record, a table
    being checked), one written over another output loses that one."""
    named = [(what, path) for what, path in paths if path and path != "-"]
    for i, (what, path) in enumerate(named):
        for other_what, other in named[:i]:
            if same_file(path, other):
                raise FileArgError(
                    f"{what} {path} is the same file as {other_what} {other}: give each its own path"
                )


def exclusive_temporary(path: str) -> tuple[int, str]:
    """A new file beside ``path`` to write before renaming it over ``path``: a name no other
    file has (created exclusively, with the umask's permissions), never ``PATH.tmp``, which
    may be the user's. Returns its descriptor, open for writing, and its name."""
    directory, base = os.path.split(path)
    while True:
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path``, making its folders first (OSError when it cannot)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
