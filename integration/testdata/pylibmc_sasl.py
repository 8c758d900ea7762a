# libmemcached's SASL (its Cyrus client picks CRAM-MD5 when the server
# lists it) through pylibmc: a right password stores and reads back, a
# wrong one fails with libmemcached's authentication error.
import sys
import pylibmc

addr, user, password = sys.argv[1], sys.argv[2], sys.argv[3]
c = pylibmc.Client([addr], binary=True, username=user, password=password)
c.set("sasl-key", "sasl-value")
assert c.get("sasl-key") == "sasl-value", c.get("sasl-key")
print("ok 1 authenticated set/get")
bad = pylibmc.Client([addr], binary=True, username=user, password=password + "x")
try:
    bad.set("other", "v")
except pylibmc.Error as e:
    assert "AUTHENTICATION FAILURE" in str(e), e
    print("ok 2 wrong password refused")
else:
    raise SystemExit("wrong password accepted")
