<?php
// php-memcache's session handler ("memcache", text protocol, with its lock
// item): write a session in one process, read it back in another.
// Usage: php php_memcache_session.php HOST:PORT write|read; read prints the
// session as JSON and destroys it.
ini_set("session.save_handler", "memcache");
ini_set("session.save_path", "tcp://" . $argv[1]);
session_id("gocachedtestsession2");
session_start();
if ($argv[2] === "write") {
    $_SESSION["user"] = 42;
    $_SESSION["cart"] = ["a", "b"];
    session_write_close();
    echo "written\n";
} else {
    echo json_encode($_SESSION), "\n";
    session_destroy();
}
