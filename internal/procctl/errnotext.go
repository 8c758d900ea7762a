package procctl

import (
	"errors"
	"syscall"
)

// ErrnoText is strerror's wording of the errno err carries, even wrapped
// in an *os.PathError ("Permission denied"), as memcached's perror prints
// it; other errors as they are.
func ErrnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" && s[0] >= 'a' && s[0] <= 'z' {
			return string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	return err.Error()
}
