package protocol

import "math/bits"

// jenkins is memcached's jenkins_hash: Bob Jenkins' lookup3 hashlittle
// with initval 0, its hash_algorithm under no_modern or
// -o hash_algorithm=jenkins.
func jenkins(s string) uint32 {
	a := 0xdeadbeef + uint32(len(s))
	b, c := a, a
	word := func(i, n int) uint32 { // n little-endian bytes from s[i:]
		var w uint32
		for j := n - 1; j >= 0; j-- {
			w = w<<8 | uint32(s[i+j])
		}
		return w
	}
	i := 0
	for len(s)-i > 12 {
		a += word(i, 4)
		b += word(i+4, 4)
		c += word(i+8, 4)
		a -= c
		a ^= bits.RotateLeft32(c, 4)
		c += b
		b -= a
		b ^= bits.RotateLeft32(a, 6)
		a += c
		c -= b
		c ^= bits.RotateLeft32(b, 8)
		b += a
		a -= c
		a ^= bits.RotateLeft32(c, 16)
		c += b
		b -= a
		b ^= bits.RotateLeft32(a, 19)
		a += c
		c -= b
		c ^= bits.RotateLeft32(b, 4)
		b += a
		i += 12
	}
	n := len(s) - i
	if n == 0 {
		return c
	}
	a += word(i, min(n, 4))
	if n > 4 {
		b += word(i+4, min(n-4, 4))
	}
	if n > 8 {
		c += word(i+8, n-8)
	}
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return c
}
