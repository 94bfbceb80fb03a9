"""The Python scripts' one file writer, with the rules of attnbench's own (src/core/file_writer.hpp).

A regular (or missing) target is replaced atomically: a private temporary file beside it (mkstemp: O_EXCL,
mode 0600 until the final mode is set), write, fsync, rename, fsync of the directory; a symbolic link to a
regular file keeps pointing at it (its target is replaced). A target that is not a regular file (a pipe, a
device, /dev/stdout) is written in place and never replaced. A read-only target is refused.
"""
import os
import stat
import tempfile


class WriteError(Exception):
    """'cannot write PATH: why'; the target is untouched."""


def write_atomic(path, write):
    """Calls write(binary_file) for the contents of `path` and puts them there as above."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    if os.path.islink(path) and not os.path.exists(target):
        raise WriteError(f"cannot write '{path}': it is a link to nothing")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise WriteError(f"cannot write '{path}': it is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(target, "wb") as f:  # a pipe, a device: written in place, never replaced
            write(f)
        return
    # access() lets root write anything; a file with no write bit at all is read-only for everyone.
    if st is not None and (not os.access(target, os.W_OK) or st.st_mode & 0o222 == 0):
        raise WriteError(f"cannot write '{path}': it is read-only")
    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=directory)
    except OSError as e:
        raise WriteError(f"cannot write '{path}': {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~current_umask())
        os.replace(tmp, target)
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
