package refmc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// machineDebSrc derives deb-src entries from the machine's Debian "deb"
// sources (deb822 .sources files and one-line sources.list entries). With
// suites given, the main archive's entries are used with those suites
// instead of the machine's (a security or updates archive has no sid).
func machineDebSrc(suites []string) (string, error) {
	var deb822 []string
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			deb822 = append(deb822, string(data))
		}
	}
	oneLine, _ := os.ReadFile("/etc/apt/sources.list")
	out := debSrc(deb822, string(oneLine), suites)
	if out == "" {
		return "", fmt.Errorf("no Debian deb sources in /etc/apt to derive deb-src entries from")
	}
	return out, nil
}

// debSrc turns deb822 stanzas and one-line entries into deb-src stanzas.
func debSrc(deb822 []string, oneLine string, suites []string) string {
	var b strings.Builder
	seen := map[string]bool{}
	emit := func(uri, entrySuites, components, signedBy string) {
		if len(suites) > 0 {
			if !hasMainSuite(entrySuites) || seen[uri] {
				return
			}
			seen[uri] = true
			entrySuites = strings.Join(suites, " ")
		}
		fmt.Fprintf(&b, "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", uri, entrySuites, components)
		if signedBy != "" {
			fmt.Fprintf(&b, "Signed-By: %s\n", signedBy)
		}
		b.WriteString("\n")
	}
	for _, file := range deb822 {
		for _, stanza := range strings.Split(file, "\n\n") {
			fields := map[string]string{}
			for _, line := range strings.Split(stanza, "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
					fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			if !strings.Contains(" "+fields["Types"]+" ", " deb ") || fields["URIs"] == "" {
				continue
			}
			// Only Debian's own archive: a third-party repository usually
			// has no source indexes, and apt-get update would fail on it.
			if k := fields["Signed-By"]; k != "" && !strings.Contains(k, "debian-archive") {
				continue
			}
			emit(fields["URIs"], fields["Suites"], fields["Components"], fields["Signed-By"])
		}
	}
	for _, line := range strings.Split(oneLine, "\n") {
		w := strings.Fields(line)
		if len(w) < 4 || w[0] != "deb" || strings.HasPrefix(w[1], "[") || !strings.Contains(w[1], "debian") {
			continue
		}
		emit(w[1], w[2], strings.Join(w[3:], " "), "")
	}
	return b.String()
}

// hasMainSuite reports whether an entry serves a release's main suite
// ("bookworm"), not only its updates or security suites ("bookworm-security").
func hasMainSuite(suites string) bool {
	for _, s := range strings.Fields(suites) {
		if !strings.Contains(s, "-") && !strings.Contains(s, "/") {
			return true
		}
	}
	return false
}
