<?php
// Drives PHP's memcached extension with OPT_BINARY_PROTOCOL, the mode its
// session handler uses by default. Usage: php php_memcached_binary.php HOST PORT
// Prints "ok N checks".
$m = new Memcached();
$m->setOption(Memcached::OPT_BINARY_PROTOCOL, true);
$m->setOption(Memcached::OPT_COMPRESSION, false);
$m->addServer($argv[1], (int)$argv[2]);
$n = 0;
function check($name, $got, $want) {
    global $n;
    $n++;
    if ($got !== $want) {
        fwrite(STDERR, "check $n $name: got " . var_export($got, true) . ", want " . var_export($want, true) . "\n");
        exit(1);
    }
}
check("flush", $m->flush(), true);
check("set", $m->set("a", "1"), true);
check("get", $m->get("a"), "1");
check("get miss", $m->get("missing"), false);
check("miss code", $m->getResultCode(), Memcached::RES_NOTFOUND);
check("add existing", $m->add("a", "x"), false);
check("add new", $m->add("b", "2"), true);
check("replace", $m->replace("b", "22"), true);
check("getMulti", $m->getMulti(["a", "b", "missing"]), ["a" => "1", "b" => "22"]);
check("increment", $m->set("n", 10) && true, true);
check("increment value", $m->increment("n", 5), 15);
check("decrement", $m->decrement("n", 20), 0);
check("append", $m->append("a", "2"), true);
check("after append", $m->get("a"), "12");
$r = $m->get("a", null, Memcached::GET_EXTENDED);
check("cas ok", $m->cas($r["cas"], "a", "new"), true);
check("cas stale", $m->cas($r["cas"], "a", "newer"), false);
check("touch", $m->touch("a", 100), true);
check("delete", $m->delete("b"), true);
check("delete miss", $m->delete("b"), false);
check("session-like", $m->set("sess_abc", serialize(["user" => 7]), 1440) && unserialize($m->get("sess_abc")) === ["user" => 7], true);
check("flush all", $m->flush() && $m->get("a") === false, true);
echo "ok $n checks\n";
