#!/usr/bin/env python3
"""Exercise every method of pymemcache.client.base.Client against HOST PORT.

Run by integration/clients_pymemcache_test.go. Each check raises AssertionError with a
message; the script exits nonzero on the first failure and prints "ok N
checks" on success.
"""
import socket
import sys
import time

from pymemcache.client.base import Client
from pymemcache import exceptions

checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        raise AssertionError(what)


def eq(got, want, what):
    check(got == want, "%s: got %r, want %r" % (what, got, want))


def raises(exc, fn, what):
    global checks
    checks += 1
    try:
        fn()
    except exc:
        return
    raise AssertionError("%s: did not raise %s" % (what, exc.__name__))


def raw(req, until):
    """Send req on a fresh socket and read until the reply ends with until."""
    s = socket.create_connection((HOST, PORT), timeout=5)
    try:
        s.sendall(req)
        buf = b""
        while not buf.endswith(until):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return buf
    finally:
        s.close()


def storage(c):
    eq(c.set("k", b"v1", noreply=False), True, "set")
    eq(c.get("k"), b"v1", "get after set")
    eq(c.set("k", b"v2", noreply=True), True, "set noreply")
    eq(c.get("k"), b"v2", "get after set noreply")
    eq(c.set("f", b"x", flags=0xFFFFFFFF, noreply=False), True, "set flags")
    eq(c.get("f"), b"x", "get flagged")
    eq(raw(b"get f\r\n", b"END\r\n"), b"VALUE f 4294967295 1\r\nx\r\nEND\r\n", "32-bit flags on the wire")

    eq(c.add("k", b"nope", noreply=False), False, "add existing")
    eq(c.add("a", b"added", noreply=False), True, "add new")
    eq(c.add("an", b"added-nr", noreply=True), True, "add noreply")
    eq(c.get("an"), b"added-nr", "get after add noreply")
    eq(c.add("an", b"again", noreply=True), True, "add noreply existing")
    eq(c.get("an"), b"added-nr", "add noreply existing changed nothing")

    eq(c.replace("absent", b"x", noreply=False), False, "replace absent")
    eq(c.replace("k", b"v3", noreply=False), True, "replace")
    eq(c.replace("k", b"v4", noreply=True), True, "replace noreply")
    eq(c.get("k"), b"v4", "get after replace noreply")
    eq(c.get("absent"), None, "replace absent stored nothing")

    eq(c.append("k", b"-tail", noreply=False), True, "append")
    eq(c.prepend("k", b"head-", noreply=False), True, "prepend")
    eq(c.get("k"), b"head-v4-tail", "get after append/prepend")
    eq(c.append("k", b"!", noreply=True), True, "append noreply")
    eq(c.prepend("k", b"^", noreply=True), True, "prepend noreply")
    eq(c.get("k"), b"^head-v4-tail!", "get after noreply append/prepend")
    eq(c.append("absent", b"x", noreply=False), False, "append absent")
    eq(c.prepend("absent", b"x", noreply=False), False, "prepend absent")

    big = bytes(range(256)) * 2000  # 512000 bytes, every byte value
    eq(c.set("big", big, noreply=False), True, "set big")
    eq(c.get("big"), big, "get big")
    eq(c.set("empty", b"", noreply=False), True, "set empty")
    eq(c.get("empty"), b"", "get empty")


def many(c):
    values = {"m%d" % i: ("val%d" % i).encode() for i in range(50)}
    eq(c.set_many(values, noreply=False), [], "set_many failed keys")
    got = c.get_many(list(values) + ["missing"])
    eq(got, values, "get_many")
    eq(c.get_many([]), {}, "get_many empty")
    eq(c.set_many({"n1": b"1", "n2": b"2"}, noreply=True), [], "set_many noreply")
    eq(c.get_many(["n1", "n2"]), {"n1": b"1", "n2": b"2"}, "get_many after set_many noreply")
    gm = c.gets_many(["m1", "m2", "missing"])
    eq(sorted(gm), ["m1", "m2"], "gets_many keys")
    eq(gm["m1"][0], b"val1", "gets_many value")
    check(gm["m1"][1] != gm["m2"][1], "gets_many distinct cas uniques")
    eq(c.delete_many(["m1", "m2", "missing"], noreply=False), True, "delete_many")
    eq(c.get_many(["m1", "m2"]), {}, "deleted by delete_many")
    eq(c.delete_many(["m3", "m4"], noreply=True), True, "delete_many noreply")
    eq(c.get_many(["m3", "m4", "m5"]), {"m5": b"val5"}, "after delete_many noreply")
    # A get line past -I (1 MiB): 4,500 keys of 240 bytes, as a batch
    # loader sends it; memcached reads such a line whatever its length.
    long_keys = ["%0240d" % i for i in range(4500)]
    eq(c.set_many({k: b"L" for k in long_keys[::100]}, noreply=False), [], "set_many long keys")
    eq(c.get_many(long_keys), {k: b"L" for k in long_keys[::100]}, "get_many of a 1.1 MB line")
    eq(c.get_many(["m5"]), {"m5": b"val5"}, "get_many after the long line")


def cas(c):
    c.set("c", b"one", noreply=False)
    value, token = c.gets("c")
    eq(value, b"one", "gets value")
    check(int(token) > 0, "gets cas unique positive: %r" % token)
    eq(c.gets("absent"), (None, None), "gets miss")
    eq(c.gets("absent", default=b"d", cas_default=b"0"), (b"d", b"0"), "gets miss defaults")
    eq(c.cas("c", b"two", token, noreply=False), True, "cas matching")
    eq(c.cas("c", b"three", token, noreply=False), False, "cas stale")
    eq(c.get("c"), b"two", "value after stale cas")
    eq(c.cas("absent", b"x", token, noreply=False), None, "cas absent")
    _, token = c.gets("c")
    eq(c.cas("c", b"four", token, noreply=True), True, "cas noreply")
    eq(c.get("c"), b"four", "value after cas noreply")
    _, token2 = c.gets("c")
    check(token2 != token, "cas unique changes on store")


def delete(c):
    c.set("d", b"x", noreply=False)
    eq(c.delete("d", noreply=False), True, "delete")
    eq(c.delete("d", noreply=False), False, "delete absent")
    c.set("d", b"x", noreply=False)
    eq(c.delete("d", noreply=True), True, "delete noreply")
    eq(c.get("d"), None, "get after delete noreply")


def arithmetic(c):
    eq(c.incr("absent", 1), None, "incr absent")
    eq(c.decr("absent", 1), None, "decr absent")
    c.set("n", b"10", noreply=False)
    eq(c.incr("n", 5), 15, "incr")
    eq(c.decr("n", 3), 12, "decr")
    eq(c.decr("n", 1000), 0, "decr floors at 0")
    eq(c.incr("n", 2 ** 64 - 1), 2 ** 64 - 1, "incr to max")
    eq(c.incr("n", 1), 0, "incr wraps")
    eq(c.incr("n", 7, noreply=True), None, "incr noreply")
    eq(c.decr("n", 2, noreply=True), None, "decr noreply")
    # protocol.txt lets a shrinking decr/incr result keep its length,
    # space-padded (memcached does so in place), so trailing spaces are allowed.
    eq(c.get("n").rstrip(b" "), b"5", "after noreply incr/decr")
    c.set("len", b"99", noreply=False)
    eq(c.incr("len", 1), 100, "incr grows length")
    eq(c.get("len"), b"100", "incr grown value")
    c.set("s", b"abc", noreply=False)
    raises(exceptions.MemcacheClientError, lambda: c.incr("s", 1), "incr non-numeric")
    raises(exceptions.MemcacheClientError, lambda: c.decr("s", 1), "decr non-numeric")
    eq(c.get("s"), b"abc", "non-numeric unchanged and stream in sync")


def touch(c):
    eq(c.touch("absent", 10, noreply=False), False, "touch absent")
    # memcached's clock ticks each second: an N s expiry lands in (N-1, N] s.
    c.set("t", b"x", expire=2, noreply=False)
    eq(c.touch("t", 100, noreply=False), True, "touch")
    c.set("t2", b"x", expire=2, noreply=False)
    eq(c.touch("t2", 100, noreply=True), True, "touch noreply")
    c.set("gone", b"x", expire=2, noreply=False)
    time.sleep(2.1)
    eq(c.get("t"), b"x", "touched item outlived its first expiry")
    eq(c.get("t2"), b"x", "touched (noreply) item outlived its first expiry")
    eq(c.get("gone"), None, "untouched item expired")


def misc(c):
    st = {k.decode(): v for k, v in c.stats().items()}
    for field in ("pid", "uptime", "time", "version", "curr_items", "total_items",
                  "bytes", "curr_connections", "total_connections", "cmd_get",
                  "cmd_set", "get_hits", "get_misses", "evictions", "limit_maxbytes",
                  "threads", "rusage_user", "rusage_system"):
        check(field in st, "stats has %s" % field)
    check(st["cmd_get"] > 0 and st["get_hits"] > 0, "stats counted gets: %r" % st["cmd_get"])
    eq(st["limit_maxbytes"], 64 * 1024 * 1024, "limit_maxbytes with default -m")
    settings = {k.decode(): v for k, v in c.stats("settings").items()}
    eq(settings.get("maxconns"), 1024, "stats settings maxconns")
    eq(settings.get("item_size_max"), 1024 * 1024, "stats settings item_size_max")
    v = c.version()
    check(isinstance(v, bytes) and len(v) > 0 and b" " not in v, "version: %r" % v)

    c.set("x", b"1", noreply=False)
    eq(c.flush_all(noreply=False), True, "flush_all")
    eq(c.get("x"), None, "get after flush_all")
    c.set("x", b"1", noreply=False)
    eq(c.flush_all(noreply=True), True, "flush_all noreply")
    eq(c.get("x"), None, "get after flush_all noreply")
    c.set("y", b"1", noreply=False)
    eq(c.flush_all(delay=3, noreply=False), True, "flush_all delayed")
    eq(c.get("y"), b"1", "item survives until the flush delay")
    # A second of margin past the delay: servers keep a coarse clock, and a
    # set in the flush's own second would be flushed too.
    time.sleep(4.1)
    eq(c.get("y"), None, "item gone after the flush delay")
    c.set("z", b"1", noreply=False)
    eq(c.get("z"), b"1", "items stored after a past flush are valid")


def errors(c):
    raises(exceptions.MemcacheIllegalInputError, lambda: c.set("bad key", b"x"), "key with space")
    raises(exceptions.MemcacheIllegalInputError, lambda: c.get("k" * 251), "251-byte key")
    eq(c.set("k" * 250, b"long", noreply=False), True, "250-byte key")
    eq(c.get("k" * 250), b"long", "get 250-byte key")
    eq(raw(b"bogus\r\nversion\r\n", b"\r\n")[:6], b"ERROR\r", "unknown command")
    raises(exceptions.MemcacheServerError,
           lambda: c.set("huge", b"x" * (2 * 1024 * 1024), noreply=False), "value over -I")
    eq(c.get("k" * 250), b"long", "connection in sync after too-large value")


def quit_(host, port):
    c = Client((host, port), connect_timeout=5, timeout=5)
    c.set("q", b"1", noreply=False)
    c.quit()
    eq(c.sock, None, "quit drops the socket")
    # quit must make the server close: check on a raw socket.
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"quit\r\n")
    eq(s.recv(100), b"", "server closes after quit")
    s.close()
    eq(c.get("q"), b"1", "client reconnects after quit")
    c.close()


HOST, PORT = "", 0


def main():
    global HOST, PORT
    host, port = HOST, PORT = sys.argv[1], int(sys.argv[2])
    c = Client((host, port), connect_timeout=5, timeout=10)
    # Suites use distinct keys on a fresh server; no flush_all between them,
    # so a flush bug shows up in misc alone instead of everywhere.
    for suite in (storage, many, cas, delete, arithmetic, touch, errors, misc):
        try:
            suite(c)
        except Exception as e:
            print("FAIL %s: %s: %s" % (suite.__name__, type(e).__name__, e))
            sys.exit(1)
    try:
        quit_(host, port)
    except Exception as e:
        print("FAIL quit: %s: %s" % (type(e).__name__, e))
        sys.exit(1)
    c.close()
    print("ok %d checks" % checks)


if __name__ == "__main__":
    main()
