"""The IANA time zone database of the pinned `tzdata` package
(requirements.txt), held in memory.

componentize-py runs a component's module-level code when it builds it, on
the build machine, and snapshots the result; at run time the component has no
files at all (not even tzdata's). So this module reads every file under
tzdata/zoneinfo/ and tzdata's list of zones while the component is built, and
`install()` replaces `zoneinfo._common.load_tzdata` (the loader `ZoneInfo`
calls when no TZPATH directory holds a key) with one that serves them from
memory. It fails as the original loader (importlib.resources over the tzdata
package) does, so that `ZoneInfo` raises the same errors for every bad key:
a missing key, a directory, a file that is not TZif, a NUL byte, a
name longer than a Linux file name may be.
"""

import io
import os
import zoneinfo
import zoneinfo._common
from zoneinfo import ZoneInfoNotFoundError

import tzdata
import tzdata.zoneinfo

# The path a directory error names: the original names its host's
# site-packages; the component names the package's folder as a module path.
ROOT_NAME = "tzdata/zoneinfo"
# The longest file name Linux filesystems take, in bytes.
NAME_MAX = 255


def read_tree(root: str) -> tuple[dict[str, bytes], frozenset[str]]:
    """Every file under `root` by its relative key ('America/New_York'), and
    every folder ('' for `root` itself)."""
    files: dict[str, bytes] = {}
    folders: set[str] = set()
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        relative = os.path.relpath(folder, root).replace(os.sep, "/")
        relative = "" if relative == "." else relative
        folders.add(relative)
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                files[f"{relative}/{name}" if relative else name] = f.read()
    return files, frozenset(folders)


_PACKAGE = os.path.dirname(tzdata.__file__)
FILES, FOLDERS = read_tree(os.path.join(_PACKAGE, "zoneinfo"))
with open(os.path.join(_PACKAGE, "zones"), encoding="utf-8") as _zones:
    # What zoneinfo.available_timezones() reads from tzdata.
    ZONES = frozenset(line.strip() for line in _zones if line.strip())
VERSION = tzdata.IANA_VERSION


def load_tzdata(key: str):
    """`zoneinfo._common.load_tzdata(key)`, from memory: the package part
    ('America.Argentina' in 'America.Argentina/Salta') names a folder as an
    import would, the last part a file in it."""
    components = key.split("/")
    package = ".".join(components[:-1])
    resource = components[-1]
    not_found = ZoneInfoNotFoundError(f"No time zone found with key {key}")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise not_found from None
    parts = package.split(".") if package else []
    if any(not part or "\0" in part for part in parts):
        raise not_found
    folder = "/".join(parts)
    if folder not in FOLDERS:
        raise not_found
    if "\0" in resource:
        raise ValueError("embedded null byte")
    path = f"{folder}/{resource}" if folder else resource
    if len(resource.encode("utf-8")) > NAME_MAX:
        # The original opens a file by that name, which Linux refuses.
        raise OSError(36, "File name too long", f"{ROOT_NAME}/{path}")
    if path in FILES:
        return io.BytesIO(FILES[path])
    if path in FOLDERS:
        raise IsADirectoryError(21, "Is a directory", f"{ROOT_NAME}/{path}")
    raise not_found


def available_timezones() -> frozenset[str]:
    return ZONES


def install() -> None:
    """Only the bundled database: no TZPATH folders (the component has none),
    and tzdata served from memory."""
    zoneinfo.reset_tzpath([])
    zoneinfo._common.load_tzdata = load_tzdata
