package protocol

import "strconv"

// appendDecimal is strconv.AppendUint(b, v, 10) for the numbers on a
// retrieval's reply lines (flags, value lengths): written in place, so the
// usual one to four digits cost no call.
func appendDecimal(b []byte, v uint64) []byte {
	switch {
	case v < 10:
		return append(b, byte('0'+v))
	case v < 100:
		return append(b, byte('0'+v/10), byte('0'+v%10))
	case v < 1000:
		return append(b, byte('0'+v/100), byte('0'+v/10%10), byte('0'+v%10))
	case v < 10000:
		return append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
	}
	return strconv.AppendUint(b, v, 10)
}
