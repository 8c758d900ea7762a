#!/usr/bin/perl
# Drives Perl's Cache::Memcached::Fast (Debian libcache-memcached-fast-perl,
# a C client speaking the text protocol). Usage: perl perl_memcached_fast.pl HOST:PORT
# Every check prints "name: result" (canonical JSON) so the Go test can
# compare the transcript with memcached's; the last line is "ok N checks".
use strict;
use warnings;
use Cache::Memcached::Fast;
use JSON::PP;

my $addr = $ARGV[0] or die "usage: $0 HOST:PORT\n";
my $json = JSON::PP->new->canonical->allow_nonref;
my $n = 0;

sub check {
    my ($name, $got, $want) = @_;
    $n++;
    my ($g, $w) = ($json->encode($got), $json->encode($want));
    print "$name: $g\n";
    if ($g ne $w) {
        print STDERR "check $n $name: got $g, want $w\n";
        exit 1;
    }
}

# Booleans from the client are 1, "" or undef (an error); b() keeps the
# three apart in the transcript.
sub b { my $v = shift; return defined $v ? ($v ? 1 : 0) : "undef" }

my $m = Cache::Memcached::Fast->new({
    servers         => [$addr],
    connect_timeout => 2,
    io_timeout      => 5,
    close_on_error  => 1,
    compress_threshold => 10_000,
});

check("flush_all", $m->flush_all, { $addr => 1 });
my $versions = $m->server_versions;
check("server_versions", [keys %$versions], [$addr]);
# The bare release number, as memcached answers it (1.6.18 on PATH,
# 1.6.45 from gocached): clients parse it strictly.
check("version is 1.6.N", $versions->{$addr} =~ /^1\.6\.\d+$/ ? 1 : 0, 1);

check("set", b($m->set("a", "1")), 1);
check("get", $m->get("a"), "1");
check("get miss", $m->get("missing"), undef);
check("add existing", b($m->add("a", "x")), 0);
check("add new", b($m->add("b", "2")), 1);
check("replace", b($m->replace("b", "22")), 1);
check("replace miss", b($m->replace("nope", "x")), 0);
check("get_multi", $m->get_multi("a", "b", "missing"), { a => "1", b => "22" });
check("append", b($m->append("a", "2")), 1);
check("prepend", b($m->prepend("a", "0")), 1);
check("after append/prepend", $m->get("a"), "012");
check("append miss", b($m->append("nope", "x")), 0);

# gets + cas: the CAS is opaque, only its use is checked.
my $cv = $m->gets("a");
check("gets value", $cv->[1], "012");
check("cas ok", b($m->cas("a", $cv->[0], "new")), 1);
check("cas stale", b($m->cas("a", $cv->[0], "newer")), 0);
check("cas miss", b($m->cas("nope", $cv->[0], "x")), 0);
check("after cas", $m->get("a"), "new");
my $gm = $m->gets_multi("a", "b");
check("gets_multi", [map { $gm->{$_}[1] } sort keys %$gm], ["new", "22"]);

check("set counter", b($m->set("n", 10)), 1);
check("incr", $m->incr("n", 5), "15");
check("incr default 1", $m->incr("n"), "16");
check("decr", $m->decr("n", 6), "10");
check("decr floor is 0E0", $m->decr("n", 100), "0E0");
check("incr miss", b($m->incr("nocounter")), 0);
check("incr non-number", b($m->incr("a")), "undef");
check("incr wrap", [b($m->set("w", "18446744073709551615")), $m->incr("w", 2)], [1, "1"]);
check("incr_multi", [$m->incr_multi(["n", 3], "nocounter")], ["3", ""]);

check("set_multi", [$m->set_multi(["m1", "v1"], ["m2", "v2", 300])], [1, 1]);
check("delete_multi", [$m->delete_multi("m1", "m2", "m3")], [1, 1, ""]);

# Serialised and compressed values (the client's flags) round-trip.
check("set ref", b($m->set("ref", { x => [1, 2] })), 1);
check("get ref", $m->get("ref"), { x => [1, 2] });
my $big = "compress me please " x 5000;
check("set compressed", b($m->set("z", $big)), 1);
check("get compressed", $m->get("z") eq $big ? 1 : 0, 1);
my $huge = join "", map { chr(int(rand(256))) } 1 .. 600_000;
check("set 600k", b($m->set("huge", $huge)), 1);
check("get 600k", $m->get("huge") eq $huge ? 1 : 0, 1);

check("touch", b($m->touch("a", 1)), 1);
check("touch miss", b($m->touch("nope", 100)), 0);
check("gat", $m->gat(100, "b"), "22");
my $gats = $m->gats(100, "b");
check("gats value", $gats->[1], "22");
check("delete", b($m->delete("b")), 1);
check("delete miss", b($m->delete("b")), 0);
sleep 2;
check("touched key expired", $m->get("a"), undef);

# noreply: commands in void context ask the server for no reply; a later
# plain read through the same connection must see their effects in order.
my $q = Cache::Memcached::Fast->new({ servers => [{ address => $addr, noreply => 1 }], io_timeout => 5 });
$q->set("q1", "one");
$q->set("q2", "two");
$q->add("q1", "ignored");
$q->append("q2", "+");
$q->incr("n", 7);
$q->delete("q3");
$q->touch("q1", 100);
check("noreply results", $q->get_multi("q1", "q2", "n"), { q1 => "one", q2 => "two+", n => "10" });
# nowait: replies are read later, on the next call that needs one.
my $w = Cache::Memcached::Fast->new({ servers => [$addr], nowait => 1, io_timeout => 5 });
$w->set("w$_", $_) for 1 .. 50;
$w->nowait_push;
check("nowait results", scalar(keys %{ $m->get_multi(map { "w$_" } 1 .. 50) }), 50);

# A namespace is a key prefix on the wire.
my $ns = Cache::Memcached::Fast->new({ servers => [$addr], namespace => "ns:" });
check("namespace set", b($ns->set("k", "v")), 1);
check("namespace raw key", $m->get("ns:k"), "v");

# memcached 1.6.45 keeps an item used in the flush's own second when its
# flush walk does not reach it (n, just incremented in place): let its
# clock turn past every use first (it ticks once a second).
select(undef, undef, undef, 2.2);
check("flush_all again", $m->flush_all, { $addr => 1 });
check("get_multi after flush", $m->get_multi("n", "z", "q1", "ns:k"), {});
print "ok $n checks\n";
