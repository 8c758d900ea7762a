# Dalli's SASL PLAIN: a right password stores and reads back, a wrong one
# leaves no server to talk to.
require "dalli"
require "logger"
Dalli.logger = Logger.new(nil)

addr, user, password = ARGV
c = Dalli::Client.new(addr, username: user, password: password, socket_max_failures: 1)
c.set("sasl-key", "sasl-value")
raise "get: #{c.get("sasl-key").inspect}" unless c.get("sasl-key") == "sasl-value"
puts "ok 1 authenticated set/get"
bad = Dalli::Client.new(addr, username: user, password: password + "x", socket_max_failures: 1)
begin
  bad.set("other", "v")
  raise "wrong password accepted"
rescue Dalli::DalliError => e
  puts "ok 2 wrong password refused (#{e.class})"
end
