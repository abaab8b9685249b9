"""Is a shared library file whole? A cheap structural check of ELF files (standard library only).

A truncated or overwritten copy of a library is worse than a missing one: the loader maps it,
and the process dies with SIGBUS (a page beyond the end of the file) or SIGSEGV when it touches
the damaged part, with no message. This reads only the ELF header, the program headers and the
section header table of each file (a few KiB, three reads) and checks that:

- the file starts with the ELF magic, is a shared object for this machine's class and byte order;
- every loadable segment (PT_LOAD) and every section with file contents lies inside the file,
  and the section header table itself does too (a truncated file fails here: the loader would
  map pages that do not exist);
- the dynamic segment names a SONAME the loader can read (a damaged string table fails here);
- where a wheel's RECORD lists the file, its size is the size pip installed.

Imported by the quick probe (`scan`); run by path it prints `{path: problem}` for its arguments.
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.env.probe.shapes import Damaged, Libraries


ELF_MAGIC = b"\x7fELF"
ET_DYN = 3
PT_LOAD, PT_DYNAMIC = 1, 2
SHT_NOBITS = 8
DT_NULL, DT_STRTAB, DT_SONAME, DT_STRSZ = 0, 5, 14, 10
# e_machine values of the machines a CUDA stack runs on.
MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "ppc64le": 21}
MAX_HEADERS = 1 << 16  # a real library has at most a few thousand sections
# Libraries a PyTorch/CUDA process loads by name from the search path (checked even in system
# folders, where checking every file would cost too much).
STACK_LIB = re.compile(
    r"^lib(cudnn\w*|cublas\w*|cudart|nccl|cuda|nvrtc\w*|nvJitLink|cufft\w*|cusparse\w*|curand"
    r"|cusolver\w*|nvToolsExt|cupti|nvidia-\w+|torch\w*|c10\w*|gomp|cufile\w*|nvshmem\w*)\.so"
)
SYSTEM_DIRS = frozenset(
    os.path.realpath(p)
    for p in (
        "/lib",
        "/lib64",
        "/usr/lib",
        "/usr/lib64",
        "/usr/local/lib",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
    )
)
LINKER_SCRIPT = re.compile(rb"^\s*(/\*|GROUP\s*\(|INPUT\s*\(|OUTPUT_FORMAT)")
MAX_FILES = 3000
MAX_SECONDS = 1.5


def _machine() -> int | None:
    import platform

    return MACHINES.get(platform.machine().lower())


def check_file(path: str, expected_size: int | None = None) -> str | None:
    """None when `path` looks like a whole shared library, else a sentence on what is wrong."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if expected_size is not None and size != expected_size:
                return (
                    f"its size is {size:,} bytes but the wheel that installed it recorded "
                    f"{expected_size:,} (the file was cut short or replaced)"
                )
            return _check_elf(fh, size)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"


def _check_elf(fh: Any, size: int) -> str | None:
    ident = fh.read(64)
    if len(ident) < 16 or ident[:4] != ELF_MAGIC:
        if size == 0:
            return "it is empty (0 bytes)"
        if LINKER_SCRIPT.search(ident):
            return None  # a linker script (libc.so): the linker reads it, the loader never does
        return "it is not an ELF file (no ELF magic at the start: overwritten or not a library)"
    if ident[4] not in (1, 2) or ident[5] not in (1, 2):
        return "its ELF header is corrupt (unknown class or byte order)"
    elf = _Elf(fh, size, wide=ident[4] == 2, order="<" if ident[5] == 1 else ">")
    return (
        elf.header_problem(ident)
        or elf.segments_problem()
        or elf.sections_problem()
        or elf.table_problem()
    )


def _truncated(size: int, needed: int, what: str, mapped: bool = True) -> str:
    said = f"it is truncated: the file has {size:,} bytes but {what} ends at byte {needed:,}"
    if mapped:
        return said + "; a process that maps it dies with SIGBUS when it touches the missing part"
    return said + " (the part the loader maps is whole, but this is not the file installed)"


class _Elf:
    """One open ELF file: its header fields and checks of the tables they point to."""

    def __init__(self, fh: Any, size: int, wide: bool, order: str) -> None:
        self.fh, self.size, self.wide, self.order = fh, size, wide, order
        self.phoff = self.shoff = self.phentsize = self.phnum = self.shentsize = self.shnum = 0
        self.segments: list[tuple[int, int, int, int]] = []  # type, offset, vaddr, filesz

    def header_problem(self, ident: bytes) -> str | None:
        if (sys.maxsize > 2**32) != self.wide:
            return "it is a 32-bit library in a 64-bit process (or the reverse)"
        fmt = self.order + ("HHIQQQIHHHHHH" if self.wide else "HHIIIIIHHHHHH")
        if len(ident) < 16 + struct.calcsize(fmt):
            return f"it is only {self.size} bytes long: the ELF header is cut off"
        header = struct.unpack_from(fmt, ident, 16)
        e_type, e_machine, self.phoff, self.shoff = header[0], header[1], header[4], header[5]
        self.phentsize, self.phnum, self.shentsize, self.shnum = header[8:12]
        machine = _machine()
        if e_type != ET_DYN:
            return f"it is not a shared library (ELF type {e_type}, a shared object is {ET_DYN})"
        if machine is not None and e_machine != machine:
            return f"it is built for another machine (ELF machine {e_machine}, here {machine})"
        if self.phnum > MAX_HEADERS or self.shnum > MAX_HEADERS:
            return "its ELF header is corrupt (impossible header counts)"
        return None

    def table_problem(self) -> str | None:
        """The section header table (at the end of the file) cut off."""
        end = self.shoff + self.shnum * self.shentsize
        if self.shnum and end > self.size:
            return _truncated(self.size, end, "its section table", mapped=False)
        return None

    def segments_problem(self) -> str | None:
        """Program headers out of the file, a loadable segment past the end, a bad SONAME."""
        if not self.phnum:
            return "it has no program headers (the loader cannot map it)"
        end = self.phoff + self.phentsize * self.phnum
        if end > self.size:
            return _truncated(self.size, end, "its program headers")
        fmt = self.order + ("IIQQQQQQ" if self.wide else "IIIIIIII")
        headers = self._headers(self.phoff, self.phentsize, self.phnum, fmt)
        if headers is None:
            return "its ELF header is corrupt (program header size too small)"
        for f in headers:
            # 64-bit: type, flags, offset, vaddr, paddr, filesz; 32-bit: type, offset, vaddr, ..
            entry = (f[0], f[2], f[3], f[5]) if self.wide else (f[0], f[1], f[2], f[4])
            self.segments.append(entry)
            if entry[0] == PT_LOAD and entry[1] + entry[3] > self.size:
                return _truncated(self.size, entry[1] + entry[3], "a loadable segment")
        dynamic = next((s for s in self.segments if s[0] == PT_DYNAMIC), None)
        return self._soname_problem(dynamic[1], dynamic[3]) if dynamic else None

    def sections_problem(self) -> str | None:
        """A section whose contents lie past the end of the file."""
        if not self.shnum or not self.shoff or self.shoff + self.shnum * self.shentsize > self.size:
            return None
        fmt = self.order + ("IIQQQQIIQQ" if self.wide else "IIIIIIIIII")
        headers = self._headers(self.shoff, self.shentsize, self.shnum, fmt)
        if headers is None:
            return "its ELF header is corrupt (section header size too small)"
        for i, fields in enumerate(headers):
            kind, offset, length = fields[1], fields[4], fields[5]
            if kind != SHT_NOBITS and length and offset + length > self.size:
                return _truncated(self.size, offset + length, f"section {i}", mapped=False)
        return None

    def _headers(
        self, offset: int, size: int, count: int, fmt: str
    ) -> list[tuple[int, ...]] | None:
        """`count` header entries of `size` bytes at `offset`, each unpacked by `fmt` (None
        when an entry is smaller than `fmt`)."""
        if size < struct.calcsize(fmt):
            return None
        self.fh.seek(offset)
        raw = self.fh.read(size * count)
        return [struct.unpack_from(fmt, raw, i * size) for i in range(count)]

    def _soname_problem(self, offset: int, length: int) -> str | None:
        """None when the dynamic segment's DT_SONAME string is readable (or there is none)."""
        self.fh.seek(offset)
        raw = self.fh.read(min(length, 1 << 20))
        fmt = self.order + ("qQ" if self.wide else "iI")
        step = struct.calcsize(fmt)
        tags: dict[int, int] = {}
        for pos in range(0, len(raw) - step + 1, step):
            tag, value = struct.unpack_from(fmt, raw, pos)
            if tag == DT_NULL:
                break
            tags.setdefault(tag, value)
        if DT_SONAME not in tags:
            return None
        strtab = self._file_offset(tags.get(DT_STRTAB))
        if strtab is None or strtab + tags[DT_SONAME] >= self.size:
            return "its dynamic string table lies outside the file (corrupt or truncated)"
        self.fh.seek(strtab + tags[DT_SONAME])
        name = self.fh.read(256).split(b"\0", 1)[0]
        if not name or not re.fullmatch(rb"[\w.+-]+", name):
            return "its SONAME is unreadable (the dynamic string table is corrupt)"
        return None

    def _file_offset(self, address: int | None) -> int | None:
        """The file offset of virtual `address`, from the loadable segments' address ranges."""
        for kind, offset, vaddr, filesz in self.segments:
            if address is not None and kind == PT_LOAD and vaddr <= address < vaddr + filesz:
                return offset + address - vaddr
        return None


def scan(
    folders: list[tuple[str, str]],
    record_sizes: dict[str, int] | None = None,
    max_files: int = MAX_FILES,
    max_seconds: float = MAX_SECONDS,
) -> Libraries:
    """Check the libraries each (folder, how it is searched) supplies; bounded in files and time.

    In system folders only the CUDA stack's own libraries are checked; in any other folder
    (one a user put on LD_LIBRARY_PATH, a wheel's lib folder) every `lib*.so*` file is.
    """
    started = time.perf_counter()
    sizes = record_sizes or {}
    damaged: list[Damaged] = []
    seen: set[str] = set()
    checked = 0
    complete = True
    for folder, source in folders:
        real = os.path.realpath(folder)
        try:
            names = sorted(os.listdir(real))
        except OSError:
            continue
        system = real in SYSTEM_DIRS
        for name in names:
            if not name.startswith("lib") or ".so" not in name:
                continue
            if system and not STACK_LIB.match(name):
                continue
            path = os.path.join(real, name)
            target = os.path.realpath(path)
            if target in seen or not os.path.isfile(target):
                continue
            if checked >= max_files or time.perf_counter() - started > max_seconds:
                complete = False
                break
            seen.add(target)
            checked += 1
            problem = check_file(target, sizes.get(target))
            if problem:
                damaged.append(
                    {
                        "path": path,
                        "file": target,
                        "folder": real,
                        "source": source,
                        "problem": problem,
                    }
                )
    return {
        "checked": checked,
        "complete": complete,
        "damaged": damaged,
        "seconds": round(time.perf_counter() - started, 4),
    }


def wheel_record_sizes(site_dirs: list[str], prefixes: tuple[str, ...]) -> dict[str, int]:
    """{real path: size} of the shared libraries the RECORD files of matching wheels list."""
    out: dict[str, int] = {}
    for site in site_dirs:
        try:
            entries = os.listdir(site)
        except OSError:
            continue
        for entry in entries:
            if not entry.endswith(".dist-info") or not entry.lower().startswith(prefixes):
                continue
            try:
                with open(os.path.join(site, entry, "RECORD"), encoding="utf-8") as fh:
                    lines = fh.read(8 << 20).splitlines()
            except OSError:
                continue
            for line in lines:
                parts = line.rsplit(",", 2)
                if len(parts) == 3 and ".so" in parts[0] and parts[2].isdigit():
                    out[os.path.realpath(os.path.join(site, parts[0]))] = int(parts[2])
    return out


def main(paths: list[str]) -> int:
    """Print {path: problem or null} for each argument."""
    sys.stdout.write(json.dumps({p: check_file(p) for p in paths}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
