package testproc

import (
	"bufio"
	"net"
	"reflect"
	"strings"
	"testing"
)

func TestParseStats(t *testing.T) {
	names, vals := ParseStats("STAT pid 12\r\nSTAT version 1.6.45\r\nSTAT odd a b\r\njunk\r\nEND\r\n")
	if want := []string{"pid", "version", "odd"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	if vals["pid"] != "12" || vals["version"] != "1.6.45" || vals["odd"] != "a b" {
		t.Fatalf("vals %v", vals)
	}
}

func TestReadStatsError(t *testing.T) {
	_, _, err := ReadStats(bufio.NewReader(strings.NewReader("STAT a 1\r\nERROR\r\n")))
	if err == nil || !strings.Contains(err.Error(), "ERROR") {
		t.Fatalf("err %v, want the ERROR line", err)
	}
}

func TestStatsOverConn(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		defer server.Close()
		line, _ := bufio.NewReader(server).ReadString('\n')
		if line == "stats slabs\r\n" {
			server.Write([]byte("STAT active_slabs 0\r\nSTAT total_malloced 0\r\nEND\r\n"))
		}
	}()
	vals, err := Stats(client, "slabs")
	if err != nil || vals["active_slabs"] != "0" || len(vals) != 2 {
		t.Fatalf("Stats: %v %v", vals, err)
	}
}
