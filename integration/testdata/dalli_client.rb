# Drives Dalli (Debian's ruby-dalli 3.0.6, binary protocol only) through
# every call Rails' cache store and typical applications use, asserting each
# result. Usage: ruby dalli_client.rb HOST:PORT [USER PASSWORD]
# Prints "ok N steps" on success; exits 1 with the failing step otherwise.
require "dalli"

addr = ARGV[0]
opts = { socket_timeout: 5, socket_max_failures: 1, down_retry_delay: 60 }
opts[:username], opts[:password] = ARGV[1], ARGV[2] if ARGV[1]
dc = Dalli::Client.new(addr, opts)
steps = 0
check = lambda do |name, got, want|
  steps += 1
  unless got == want
    warn "step #{steps} #{name}: got #{got.inspect}, want #{want.inspect}"
    exit 1
  end
end

check.call("flush", dc.flush.is_a?(Array), true)
check.call("set", dc.set("k1", "v1").is_a?(Integer), true)
check.call("get", dc.get("k1"), "v1")
check.call("get miss", dc.get("nope"), nil)
check.call("add existing", dc.add("k1", "x"), false)
check.call("add new", dc.add("k2", "v2").is_a?(Integer), true)
check.call("replace", dc.replace("k2", "v2b").is_a?(Integer), true)
check.call("replace miss", [false, 0, nil].include?(dc.replace("nope", "x")), true)
check.call("get_multi", dc.get_multi("k1", "k2", "nope"), { "k1" => "v1", "k2" => "v2b" })
check.call("marshal", dc.set("obj", { a: [1, 2] }).is_a?(Integer) && dc.get("obj"), { a: [1, 2] })
check.call("incr create", dc.incr("n", 1, nil, 10), 10)
check.call("incr", dc.incr("n", 5), 15)
check.call("decr", dc.decr("n", 20), 0)
check.call("incr miss", dc.incr("nope", 1), nil)
dc.set("raw", "ab", nil, raw: true)
check.call("append", dc.append("raw", "cd"), true)
check.call("prepend", dc.prepend("raw", "__"), true)
check.call("raw get", dc.get("raw", raw: true), "__abcd")
v, cas = dc.get_cas("k1")
check.call("get_cas", v, "v1")
check.call("set_cas ok", dc.set_cas("k1", "v1b", cas).is_a?(Integer), true)
check.call("set_cas stale", dc.set_cas("k1", "v1c", cas), false)
check.call("cas block", dc.cas("k1") { |old| old + "!" }.is_a?(Integer), true)
check.call("after cas", dc.get("k1"), "v1b!")
check.call("touch", dc.touch("k1", 100), true)
check.call("gat", dc.gat("k1", 100), "v1b!")
check.call("fetch miss", dc.fetch("f") { "computed" }, "computed")
check.call("fetch hit", dc.fetch("f") { "again" }, "computed")
check.call("multi quiet", dc.multi { dc.set("q1", "a"); dc.set("q2", "b"); dc.delete("q1") }, nil) rescue check.call("multi quiet", :raised, nil)
check.call("after multi", dc.get_multi("q1", "q2"), { "q2" => "b" })
check.call("delete", dc.delete("k2"), true)
check.call("delete miss", dc.delete("k2"), nil)
big = "x" * 500_000
check.call("large value", dc.set("big", big).is_a?(Integer) && dc.get("big"), big)
stats = dc.stats.values.first
check.call("stats", stats.key?("curr_items") && stats.key?("get_hits"), true)
check.call("version", dc.version.values.first.to_s.start_with?("1.6"), true)
check.call("flush all", dc.flush.is_a?(Array) && dc.get("k1"), nil)
dc.close
puts "ok #{steps} steps"
