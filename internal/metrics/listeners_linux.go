//go:build linux

package metrics

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LoopbackServers finds the processes other than this one that hold a
// listening TCP socket on port: on a loopback target they are the server,
// whose CPU is not the box's other load. It reads /proc/net/tcp{,6} for the
// listening sockets' inodes and every readable /proc/PID/fd for them; it
// finds nothing where /proc is not readable.
func LoopbackServers(port int) []int {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeningInodes(f, port, inodes)
	}
	if len(inodes) == 0 {
		return nil
	}
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		if holdsSocket(d, inodes) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// listeningInodes adds the inodes of the sockets listening on port in a
// /proc/net/tcp-format file.
func listeningInodes(file string, port int, into map[string]bool) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	want := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	want = strings.Repeat("0", max(4-len(want), 0)) + want
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := bytes.Fields(sc.Bytes())
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(fl) < 10 || string(fl[3]) != "0A" { // TCP_LISTEN
			continue
		}
		_, p, ok := bytes.Cut(fl[1], []byte{':'})
		if ok && string(p) == want {
			into["socket:["+string(fl[9])+"]"] = true
		}
	}
}

// holdsSocket reports whether the process at /proc/PID dir has one of the
// sockets open.
func holdsSocket(dir string, sockets map[string]bool) bool {
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(dir + "/fd/" + fd.Name()); err == nil && sockets[l] {
			return true
		}
	}
	return false
}
