package extstore

// Bucket separates pages by use, as memcached's page buckets do: items of a
// kind are written to the current page of their bucket, and a file may
// reserve its pages for one bucket (the third field of ext_path).
type Bucket uint8

// The buckets memcached 1.6.45 has, with its numbering.
const (
	BucketDefault Bucket = iota
	BucketCompact
	BucketChunked
	BucketLowTTL
	BucketColdCompact
	BucketOld
	BucketCount = 6
)

var bucketNames = [BucketCount]string{"default", "compact", "chunked", "lowttl", "coldcompact", "old"}

// String is the name ext_path uses for the bucket.
func (b Bucket) String() string {
	if int(b) < len(bucketNames) {
		return bucketNames[b]
	}
	return "unknown"
}

// bucketByName maps an ext_path bucket field to its Bucket.
func bucketByName(name string) (Bucket, bool) {
	for i, n := range bucketNames {
		if n == name {
			return Bucket(i), true
		}
	}
	return 0, false
}
