package extstore

import (
	"fmt"
	"strings"
)

// FileSpec is one ext_path entry: FILE:SIZE[:BUCKET].
type FileSpec struct {
	Path string
	// Size in bytes; memcached keeps whole pages of it (Size / PageSize).
	Size uint64
	// FreeBucket is the bucket the file's pages are reserved for;
	// BucketDefault pages serve any bucket that has none of its own.
	FreeBucket Bucket
}

// The lines memcached prints when an ext_path value does not parse. After
// any of them it prints ParseFailedLine.
const (
	msgNoSize       = "must supply size to ext_path, ie: ext_path=/f/e:64m (M|G|T|P supported)"
	msgBadUnit      = "must supply size to ext_path, ie: ext_path=/f/e:64m (m|g|t|p supported)"
	ParseFailedLine = "failed to parse ext_path argument"
)

// ParseError is an ext_path value memcached refuses; Error is the first
// line memcached prints for it.
type ParseError struct{ Line string }

func (e *ParseError) Error() string { return e.Line }

// ParsePath reads one ext_path value as memcached 1.6.45 does. Its fields
// are split on ':' with empty fields skipped (so "::a::64m" is a:64m and
// ":64m" is a file named 64m with no size). The size is a C atoi number
// followed by one unit letter m, g, t or p (any case); a number atoi cannot
// read is 0, which the caller refuses later as a zero size. A fourth field
// is ignored, as memcached ignores it.
func ParsePath(arg string) (FileSpec, error) {
	fields := colonFields(arg, 3)
	if len(fields) == 0 {
		return FileSpec{}, &ParseError{msgNoSize}
	}
	spec := FileSpec{Path: fields[0]}
	if len(fields) < 2 {
		return FileSpec{}, &ParseError{msgNoSize}
	}
	size := fields[1]
	var mult uint64
	switch size[len(size)-1] | 0x20 {
	case 'm':
		mult = 1 << 20
	case 'g':
		mult = 1 << 30
	case 't':
		mult = 1 << 40
	case 'p':
		mult = 1 << 50
	default:
		return FileSpec{}, &ParseError{msgBadUnit}
	}
	// memcached multiplies an int by a uint64: a negative count wraps.
	spec.Size = mult * uint64(int64(cAtoi(size[:len(size)-1])))
	if len(fields) == 3 {
		b, ok := bucketByName(fields[2])
		if !ok {
			return FileSpec{}, &ParseError{"Unknown extstore bucket: " + fields[2]}
		}
		spec.FreeBucket = b
	}
	return spec, nil
}

// String formats the spec so ParsePath reads it back.
func (s FileSpec) String() string {
	out := s.Path + ":" + sizeText(s.Size)
	if s.FreeBucket != BucketDefault {
		out += ":" + s.FreeBucket.String()
	}
	return out
}

func sizeText(n uint64) string {
	for _, u := range []struct {
		shift uint
		unit  string
	}{{50, "p"}, {40, "t"}, {30, "g"}} {
		if n != 0 && n&(1<<u.shift-1) == 0 && n>>u.shift <= 1<<31-1 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.unit)
		}
	}
	return fmt.Sprintf("%dm", n>>20)
}

// colonFields splits like repeated strtok(":"), stopping after max fields.
func colonFields(s string, max int) []string {
	var out []string
	for len(out) < max {
		s = strings.TrimLeft(s, ":")
		if s == "" {
			break
		}
		end := strings.IndexByte(s, ':')
		if end < 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// cAtoi is glibc's atoi: leading white space, a sign, digits; strtol
// saturates at the long range and the int result keeps the low 32 bits.
func cAtoi(s string) int32 {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var v uint64
	over := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if v > (1<<63)/10 {
			over = true
			continue
		}
		v = v*10 + uint64(s[i]-'0')
		if v > 1<<63 {
			over = true
		}
	}
	var l int64
	switch {
	case over && neg:
		l = -1 << 63
	case over:
		l = 1<<63 - 1
	case neg:
		l = -int64(v)
	default:
		if v == 1<<63 {
			l = 1<<63 - 1
		} else {
			l = int64(v)
		}
	}
	return int32(l)
}
