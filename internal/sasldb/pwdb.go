package sasldb

import (
	"bufio"
	"crypto/subtle"
	"io"
)

// The MEMCACHED_SASL_PWDB file of memcached built with --enable-sasl-pwdb:
// "user:password" lines, optionally followed by ":" and more fields, which
// PLAIN logins are checked against.
//
// memcached 1.6.42 fixed a timing leak in that check: it stopped at the
// first line naming the user and compared with memcmp, so the time a login
// took told whether a user existed and how much of a guessed password was
// right. It now reads the whole file and compares every line in full, and
// so a user listed twice logs in with either password. MatchPasswordFile
// is that check, with crypto/subtle's comparisons.

// PasswordEntryMax is the line buffer memcached reads the file with
// (fgets): a longer line is read as several entries, and a user and
// password longer together than PasswordEntryMax-4 are refused unread.
const PasswordEntryMax = 256

// MatchPasswordFile reports whether a line of the password file r holds
// user and pass, reading all of r whatever it finds. Its time depends on
// the file's size and on the lengths of user and pass only. user must not
// be empty, and len(user)+len(pass) must be at most PasswordEntryMax-4,
// as the caller checks first (memcached refuses such a login outright).
func MatchPasswordFile(r io.Reader, user, pass []byte) bool {
	if len(user) == 0 || len(user)+len(pass) > PasswordEntryMax-4 {
		return false
	}
	br := bufio.NewReader(r)
	var entry [PasswordEntryMax]byte
	found := 0
	for {
		n := readEntry(br, &entry)
		if n == 0 {
			return found == 1
		}
		found |= matchEntry(entry[:], user, pass)
	}
}

// readEntry is fgets into a zeroed buffer: up to PasswordEntryMax-1 bytes,
// through the first newline. It returns how many bytes it read, 0 at the
// end of the file (or a read error, which ends the file for fgets too).
func readEntry(br *bufio.Reader, entry *[PasswordEntryMax]byte) int {
	clear(entry[:])
	n := 0
	for n < PasswordEntryMax-1 {
		c, err := br.ReadByte()
		if err != nil {
			break
		}
		entry[n] = c
		n++
		if c == '\n' {
			break
		}
	}
	return n
}

// matchEntry is 1 when entry, zero-padded to PasswordEntryMax bytes,
// starts with user, ':', pass and then ':', a line end or the padding; 0
// otherwise. Every part is compared whatever the others gave.
func matchEntry(entry, user, pass []byte) int {
	u := len(user)
	p := u + 1 + len(pass)
	userOK := subtle.ConstantTimeCompare(user, entry[:u])
	colon := subtle.ConstantTimeByteEq(entry[u], ':')
	passOK := subtle.ConstantTimeCompare(pass, entry[u+1:p])
	end := entry[p]
	ends := subtle.ConstantTimeByteEq(end, ':') | subtle.ConstantTimeByteEq(end, '\n') |
		subtle.ConstantTimeByteEq(end, '\r') | subtle.ConstantTimeByteEq(end, 0)
	return userOK & colon & passOK & ends
}
