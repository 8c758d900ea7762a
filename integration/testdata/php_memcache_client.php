<?php
// Drives PHP's older Memcache class (Debian php-memcache, text protocol).
// Usage: php php_memcache_client.php HOST PORT
// Every check prints "name: result" so the Go test can compare the whole
// transcript with memcached's; the last line is "ok N checks". Values that
// legitimately differ between servers (pid, uptime, version, byte counts)
// are reduced to their type before printing.
ini_set("memcache.protocol", "ascii");
$host = $argv[1];
$port = (int)$argv[2];
$m = new Memcache();
if (!$m->connect($host, $port, 5)) {
    fwrite(STDERR, "connect failed\n");
    exit(1);
}
// No automatic compression: the compressed checks below ask for it.
$m->setCompressThreshold(0);
$n = 0;
function check($name, $got, $want) {
    global $n;
    $n++;
    echo "$name: " . json_encode($got) . "\n";
    if ($got !== $want) {
        fwrite(STDERR, "check $n $name: got " . var_export($got, true) . ", want " . var_export($want, true) . "\n");
        exit(1);
    }
}
// shape replaces each stats value by its kind, so the key list and types
// compare across servers while the values (pid, time) may differ.
function shape($stats) {
    $out = [];
    foreach ($stats as $k => $v) {
        $out[$k] = is_numeric($v) ? "num" : "str";
    }
    return $out;
}

check("flush", $m->flush(), true);
check("version is a string", is_string($m->getVersion()), true);
check("set", $m->set("a", "1"), true);
check("get", $m->get("a"), "1");
check("get miss", $m->get("missing"), false);
check("add existing", $m->add("a", "x"), false);
check("add new", $m->add("b", "2"), true);
check("replace", $m->replace("b", "22"), true);
check("replace miss", $m->replace("nope", "x"), false);
check("multi-get", $m->get(["a", "b", "missing"]), ["a" => "1", "b" => "22"]);
$flags = null;
check("set with flags", $m->set("f", "v", 0, 300), true);
check("get flags", [$m->get("f", $flags), $flags], ["v", 0]);
check("append", $m->append("a", "2"), true);
check("prepend", $m->prepend("a", "0"), true);
check("after append/prepend", $m->get("a"), "012");
check("append miss", $m->append("nope", "x"), false);
$cas = null;
$m->get("a", $flags, $cas);
check("gets cas", is_int($cas) && $cas > 0, true);
check("cas ok", $m->cas("a", "new", 0, 0, $cas), true);
check("cas stale", $m->cas("a", "newer", 0, 0, $cas), false);
check("after cas", $m->get("a"), "new");

// Counters: incr/decr return the new value, decr floors at 0, incr on a
// missing key is false (no default given).
check("set counter", $m->set("n", "10"), true);
check("increment", $m->increment("n", 5), 15);
check("decrement", $m->decrement("n", 3), 12);
check("decrement floor", $m->decrement("n", 100), 0);
check("increment miss", $m->increment("nocounter", 1), false);
check("increment wrap", [$m->set("w", "18446744073709551615"), $m->increment("w", 2)], [true, 1]);

// Typed values go through the client's own serialisation flags.
check("set int", $m->set("i", 42), true);
check("get int", $m->get("i"), 42);
check("set array", $m->set("arr", ["x" => [1, 2], "y" => true]), true);
check("get array", $m->get("arr"), ["x" => [1, 2], "y" => true]);

// MEMCACHE_COMPRESSED: zlib on the client; the server stores opaque bytes
// and the flags, which must come back unchanged.
$big = str_repeat("compress me please ", 5000);
check("set compressed", $m->set("z", $big, MEMCACHE_COMPRESSED), true);
$zf = null;
check("get compressed", $m->get("z", $zf) === $big, true);
check("compressed flag", ($zf & MEMCACHE_COMPRESSED) !== 0, true);
check("multi-get compressed", $m->get(["z", "a"]) === ["z" => $big, "a" => "new"], true);

// A value of 512 KiB (several of the client's 32 KiB chunks) round-trips.
$huge = random_bytes(512 * 1024);
check("set 512k", $m->set("huge", $huge), true);
check("get 512k", $m->get("huge") === $huge, true);

check("delete", $m->delete("b"), true);
check("delete miss", $m->delete("b"), false);
check("get deleted", $m->get("b"), false);

// Expiry through the client's exptime argument.
check("set expiring", $m->set("exp", "soon", 0, 1), true);
sleep(2);
check("expired", $m->get("exp"), false);

// Statistics: the same names in the same order and kinds, and the
// counters this script moved, which are exact on both servers.
$st = $m->getStats();
check("stats has counters", isset($st["cmd_get"], $st["curr_items"]), true);
echo "stats shape: " . json_encode(shape($st)) . "\n";
foreach (["cmd_get", "cmd_set", "get_hits", "get_misses", "cmd_touch", "delete_hits", "delete_misses",
          "incr_hits", "incr_misses", "decr_hits", "decr_misses", "cas_hits", "cas_badval", "cas_misses",
          "curr_items"] as $k) {
    echo "stat $k: $st[$k]\n";
}
$ext = $m->getExtendedStats();
check("extended stats keyed by server", array_keys($ext), ["$host:$port"]);
check("extended stats same names", array_keys($ext["$host:$port"]) === array_keys($st), true);
check("server status", $m->getServerStatus($host, $port), 1);

check("flush all", $m->flush(), true);
check("get after flush", $m->get(["a", "f", "n", "z"]), []);
echo "ok $n checks\n";
