package refmc

import (
	"strings"
	"testing"
)

func TestDebSrc(t *testing.T) {
	deb822 := []string{`Types: deb
# a snapshot comment
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: https://example.com/thirdparty
Suites: stable
Components: main
Signed-By: /usr/share/keyrings/example.gpg`}
	oneLine := "# comment\ndeb http://ftp.debian.org/debian bookworm main contrib\ndeb [arch=amd64] http://x/debian bookworm main\n"

	mine := debSrc(deb822, oneLine, nil)
	for _, want := range []string{
		"URIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
		"URIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n",
		"URIs: http://ftp.debian.org/debian\nSuites: bookworm\nComponents: main contrib\n",
	} {
		if !strings.Contains(mine, want) {
			t.Errorf("machine's suites: missing\n%s\nin\n%s", want, mine)
		}
	}
	if strings.Contains(mine, "example.com") || strings.Contains(mine, "http://x/") {
		t.Errorf("a third-party or option-carrying entry was kept:\n%s", mine)
	}
	if n := strings.Count(mine, "Types: deb-src\n"); n != 3 {
		t.Errorf("%d stanzas, want 3:\n%s", n, mine)
	}

	sid := debSrc(deb822, oneLine, []string{"sid"})
	if strings.Contains(sid, "security") || strings.Contains(sid, "bookworm") {
		t.Errorf("sid entries keep an archive without sid or the machine's suite:\n%s", sid)
	}
	if n := strings.Count(sid, "Suites: sid\n"); n != 2 {
		t.Errorf("%d sid stanzas, want one per main archive (2):\n%s", n, sid)
	}
}
