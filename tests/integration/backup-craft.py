"""tests/integration/backup-craft.py - backup files as an attacker crafts them, for backup.sh.

  backup-craft.py MODE IN OUT

Reads the backup IN (magic line, manifest line, key line, gzip payload, end marker; see
core/store/backup.h) and writes OUT, changed by MODE, with the end marker's checksum
recomputed as anyone can: BLAKE2b-256, unkeyed.
  newer-schema  the database inside gets a schema_migrations row newer than any known,
                the manifest's schemaVersion left as it was
  zeros         the payload is 16 MiB of zeros, the manifest's size set to match
  kdf-limits    the key line says the state key is sealed, with Argon2id limits far out of
                range (2^40 passes, 2^50 bytes)
  payload       a byte of the database changed (a keyed file stays keyed: its checksum no
                longer matches what the passphrase derives)
  downgrade     a keyed file (format 2) rewritten as format 1, unkeyed, database unchanged
"""
import gzip
import hashlib
import json
import os
import sqlite3
import sys
import tempfile

mode, src, dst = sys.argv[1:4]
data = open(src, "rb").read()
body, end = data[:-92], data[-92:]
magic, manifest, keyline, payload = body.split(b"\n", 3)
manifest = json.loads(manifest)
keyline = json.loads(keyline)
db = gzip.decompress(payload)

if mode == "newer-schema":
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.db")
        open(path, "wb").write(db)
        c = sqlite3.connect(path)
        c.execute("PRAGMA journal_mode=DELETE")
        c.execute("INSERT INTO schema_migrations (version, name, applied_at) "
                  "VALUES ((SELECT max(version) + 100 FROM schema_migrations), 'from the "
                  "future', '2099-01-01T00:00:00Z')")
        c.commit()
        c.close()
        db = open(path, "rb").read()
elif mode == "zeros":
    db = bytes(16 << 20)
elif mode == "kdf-limits":
    keyline = {"included": True, "kdf": "argon2id13", "opslimit": 1 << 40,
               "memlimit": 1 << 50, "salt": "AAAAAAAAAAAAAAAAAAAAAA==",
               "nonce": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
               "sealed": "A" * 64}
elif mode == "payload":
    db = db[:4096] + bytes([db[4096] ^ 1]) + db[4097:]
elif mode == "downgrade":
    magic = b"RZBACKUP 1"
    manifest["format"] = 1
    keyline.pop("checksum", None)
else:
    sys.exit("unknown mode " + mode)

manifest["database"]["bytes"] = len(db)
payload = gzip.compress(db, 6)
head = (magic + b"\n" + json.dumps(manifest, separators=(",", ":"), sort_keys=True).encode()
        + b"\n" + json.dumps(keyline, separators=(",", ":"), sort_keys=True).encode() + b"\n")
whole = head + payload
sumhex = hashlib.blake2b(whole, digest_size=32).hexdigest()
with open(dst, "wb") as f:
    f.write(whole + ("RZEND %020d %s\n" % (len(payload), sumhex)).encode())
