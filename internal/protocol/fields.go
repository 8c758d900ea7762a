package protocol

// CommandFields splits a text command line (without its '\n') into its
// tokens as the parser reads them: one '\r' before the newline dropped,
// tokens separated by the separator (isSep) only, a NUL a byte like any
// other (memcached 1.6.45). Unlike the parser it keeps no token limit: a
// multiget's keys go on past memcached's MAX_TOKENS, served in runs. For
// callers outside the parser that must see a line as it does (UDP's reply
// cutting).
func CommandFields(line []byte) [][]byte {
	if n := len(line); n > 1 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	var fields [][]byte
	for i := 0; ; {
		start, end := nextToken(line, i)
		if start == len(line) {
			return fields
		}
		fields = append(fields, line[start:end])
		i = end
	}
}
