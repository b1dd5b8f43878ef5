"""The MILBlob v2 writer the example generators share (`*/generate.py`): the weight file
coremltools writes beside a `model.mil`, which the MIL text points into with BLOBFILE.

A 64-byte header (blob count, version 2), then per blob a 64-byte record (sentinel
0xDEADBEEF, data type 1 = fp16, byte size, data offset) and its data, each 64-byte
aligned.
"""

import struct

import numpy as np


class BlobWriter:
    """Collects fp16 arrays; `add` returns the offset BLOBFILE names, `finish` the file."""

    def __init__(self):
        self.blobs = []
        self.data = bytearray(64)

    def add(self, array):
        data = np.ascontiguousarray(array, dtype=np.float16).tobytes()
        record = len(self.data)
        start = record + 64
        self.data += struct.pack("<IIQQQ", 0xDEADBEEF, 1, len(data), start, 0).ljust(64, b"\0")
        self.data += data
        self.data += b"\0" * (-len(self.data) % 64)
        self.blobs.append(record)
        return record

    def finish(self):
        self.data[0:8] = struct.pack("<II", len(self.blobs), 2)
        return bytes(self.data)
