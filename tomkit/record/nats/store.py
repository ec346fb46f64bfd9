"""Read a JetStream replica from its file store: the messages of a stream in sequence
order, as the server wrote them to its message blocks.

nats-server 2.9's file store (``server/filestore.go``) keeps a stream's messages in
``<store_dir>/jetstream/<account>/streams/<stream>/msgs/<n>.blk``, blocks numbered in
order. A record: its length ``rl`` (4 bytes, little endian; bit 31 set when the message
has headers), the sequence (8 bytes; bit 63 set when the message was erased), the
time stamp (8), the subject's length (2), the subject, with headers their length (4)
and the headers, then the payload and an 8-byte checksum; ``rl`` counts the whole
record. A block may end in a record that was being written when the server was
killed: it is reported, not read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = ["StoredMsg", "read_stream", "stream_folder"]

_HBIT = 1 << 31
_EBIT = 1 << 63
_HDR = struct.Struct("<IQqH")  # rl, seq, ts, subject length
_CHECKSUM = 8


@dataclass(frozen=True)
class StoredMsg:
    seq: int
    subject: str
    payload: bytes
    block: str


def stream_folder(store_dir: Path, stream: str, account: str = "$G") -> Path:
    return store_dir / "jetstream" / account / "streams" / stream


def read_stream(folder: Path) -> tuple[list[StoredMsg], list[str]]:
    """The stream's stored messages in block and record order (erased ones left out),
    and the problems met (a torn last record, a length out of bounds), each naming its
    file and offset."""
    msgs: list[StoredMsg] = []
    problems: list[str] = []
    blocks = sorted((folder / "msgs").glob("*.blk"), key=lambda p: int(p.stem))
    for path in blocks:
        data = path.read_bytes()
        off = 0
        while off < len(data):
            if len(data) - off < _HDR.size:
                problems.append(f"{path}: offset {off}: {len(data) - off} bytes left, "
                                "less than a record header (torn write)")
                break
            rl, seq, _ts, slen = _HDR.unpack_from(data, off)
            has_headers = bool(rl & _HBIT)
            rl &= ~_HBIT
            if rl < _HDR.size + slen + _CHECKSUM or off + rl > len(data):
                problems.append(f"{path}: offset {off}: record length {rl} does not fit "
                                f"the {len(data) - off} bytes left (torn write)")
                break
            rec = data[off:off + rl]
            pos = _HDR.size
            subject = rec[pos:pos + slen].decode(errors="replace")
            pos += slen
            if has_headers:
                (hlen,) = struct.unpack_from("<I", rec, pos)
                pos += 4 + hlen
            payload = rec[pos:rl - _CHECKSUM]
            if not seq & _EBIT and seq != 0:
                msgs.append(StoredMsg(seq, subject, payload, path.name))
            off += rl
    return msgs, problems
