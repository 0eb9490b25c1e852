"""Reads the pixels of a PNG screenshot, for the browser tests to judge what Chromium showed.

Only what Chromium writes: 8-bit RGB or RGBA, not interlaced, no palette. Anything else is
refused with the file and the field that is not supported. Pure Python (zlib), so the tests
need no imaging package.
"""
import struct
import zlib

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SIDE_MAX_PX = 20000  # a screenshot larger than this is not one the tests take


class Image:
    """Width and height in pixels, and rows of (r, g, b) tuples, top to bottom."""

    def __init__(self, width, height, rows):
        self.width, self.height, self.rows = width, height, rows

    def pixel(self, x, y):
        return self.rows[y][x]


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(raw, width, height, channels, path):
    stride = width * channels
    rows, previous, at = [], bytearray(stride), 0
    for y in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
            elif kind != 0:
                raise ValueError("%s: row %d has filter type %d" % (path, y, kind))
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return rows


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != PNG_MAGIC:
        raise ValueError("%s: not a PNG file" % path)
    pos, chunks, head = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
    if head is None:
        raise ValueError("%s: no IHDR chunk" % path)
    width, height, depth, colour, _, _, interlace = head
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace != 0:
        raise ValueError("%s: unsupported PNG (bit depth %d, colour type %d, interlace %d)"
                         % (path, depth, colour, interlace))
    if not 0 < width <= SIDE_MAX_PX or not 0 < height <= SIDE_MAX_PX:
        raise ValueError("%s: size %dx%d out of range" % (path, width, height))
    raw = zlib.decompress(b"".join(chunks))
    if len(raw) != height * (1 + width * channels):
        raise ValueError("%s: %d bytes of pixel data for %dx%d" % (path, len(raw), width, height))
    return Image(width, height, _unfilter(raw, width, height, channels, path))
