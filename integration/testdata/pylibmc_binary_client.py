"""Drives pylibmc (libmemcached) in binary mode, where a server that does not
speak the binary protocol makes calls fail silently (gets miss, flush
reports success): every result is asserted. Usage: HOST PORT [USER PASSWORD]
Prints "ok N checks"."""
import sys

import pylibmc

host, port = sys.argv[1], sys.argv[2]
kw = {"binary": True, "behaviors": {"cas": True}}
if len(sys.argv) > 4:
    kw["username"], kw["password"] = sys.argv[3], sys.argv[4]
mc = pylibmc.Client(["%s:%s" % (host, port)], **kw)
checks = 0


def check(name, got, want):
    global checks
    checks += 1
    if got != want:
        sys.exit("check %d %s: got %r, want %r" % (checks, name, got, want))


check("flush", mc.flush_all(), True)
check("set", mc.set("a", b"1"), True)
check("get", mc.get("a"), b"1")
check("get miss", mc.get("missing"), None)
check("add existing", mc.add("a", b"x"), False)
check("add new", mc.add("b", b"2"), True)
check("replace", mc.replace("b", b"22"), True)
try:
    mc.replace("missing", b"x")
    check("replace miss raises", False, True)
except pylibmc.NotFound:
    check("replace miss raises", True, True)
check("get_multi", mc.get_multi(["a", "b", "missing"]), {"a": b"1", "b": b"22"})
check("set_multi", mc.set_multi({"m1": b"x", "m2": b"y"}), [])
check("delete_multi", mc.delete_multi(["m1", "m2"]), True)
check("incr", mc.set("n", b"10") and mc.incr("n", 5), 15)
check("decr", mc.decr("n", 20), 0)
check("append", mc.append("a", b"2"), True)
check("prepend", mc.prepend("a", b"0"), True)
check("after append", mc.get("a"), b"012")
value, cas = mc.gets("a")
check("gets", value, b"012")
check("cas ok", mc.cas("a", b"new", cas), True)
check("cas stale", mc.cas("a", b"newer", cas), False)
check("touch", mc.touch("a", 100), True)
check("delete", mc.delete("b"), True)
check("delete miss", mc.delete("b"), False)
big = b"z" * 300000
check("large", mc.set("big", big) and mc.get("big"), big)
stats = mc.get_stats()
check("stats", len(stats) == 1 and b"curr_items" in stats[0][1] or "curr_items" in stats[0][1], True)
check("flush_all", mc.flush_all(), True)
check("after flush", mc.get("a"), None)
print("ok %d checks" % checks)
