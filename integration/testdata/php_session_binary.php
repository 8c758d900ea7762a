<?php
// PHP's memcached session handler in binary mode (the extension's default
// for sessions): write a session in one process, read it back in another.
// Usage: php php_session_binary.php HOST:PORT write|read; read prints the
// session as JSON and destroys it.
ini_set("session.save_handler", "memcached");
ini_set("session.save_path", $argv[1]);
ini_set("memcached.sess_binary_protocol", "1");
if ($argv[2] === "write") {
    session_id("gocachedtestsession1");
    session_start();
    $_SESSION["user"] = 42;
    $_SESSION["cart"] = ["a", "b"];
    session_write_close();
    echo "written\n";
} else {
    session_id("gocachedtestsession1");
    session_start();
    echo json_encode($_SESSION), "\n";
    session_destroy();
}
