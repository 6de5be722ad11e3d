"""Packs a fuzz corpus folder into one gzipped file, and back (scripts/fuzz.sh keep / run).

The file is the inputs in name order, each as a 4-byte little-endian length and its bytes,
gzipped: thousands of small inputs as one file in the repository, which
fuzz/tests/regressions.rs reads directly.

    python3 scripts/fuzz_corpus.py pack DIR fuzz/corpus/TARGET.gz
    python3 scripts/fuzz_corpus.py unpack fuzz/corpus/TARGET.gz DIR
"""
import gzip, os, struct, sys


def pack(src, dst):
    names = sorted(n for n in os.listdir(src) if os.path.isfile(os.path.join(src, n)))
    with gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as out:
        for n in names:
            data = open(os.path.join(src, n), "rb").read()
            out.write(struct.pack("<I", len(data)))
            out.write(data)
    print(f"{dst}: {len(names)} inputs, {os.path.getsize(dst)} bytes")


def unpack(src, dst):
    os.makedirs(dst, exist_ok=True)
    with gzip.open(src, "rb") as f:
        blob = f.read()
    i = n = 0
    while i < len(blob):
        (size,) = struct.unpack_from("<I", blob, i)
        i += 4
        with open(os.path.join(dst, f"corpus_{n:06d}"), "wb") as out:
            out.write(blob[i : i + size])
        i += size
        n += 1


if __name__ == "__main__":
    cmd, a, b = sys.argv[1:4]
    {"pack": pack, "unpack": unpack}[cmd](a, b)
