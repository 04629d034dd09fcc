//go:build linux

package machine

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LoopbackServers finds the processes other than this one that hold a
// listening TCP socket on port: on a loopback target they are the server,
// whose CPU is not the box's other load. It asks the kernel for the
// listening sockets' inodes (sock_diag, as ss -lt does; /proc/net/tcp{,6}
// where that is refused) and reads every readable /proc/PID/fd for them;
// it finds nothing where /proc is not readable.
func LoopbackServers(port int) []int {
	inodes, err := listeningInodesDiag(port)
	if err != nil {
		inodes = map[string]bool{}
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			listeningInodes(f, port, inodes)
		}
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

// listeningInodesDiag asks the kernel (NETLINK_SOCK_DIAG) for the TCP
// sockets listening on port, IPv4 and IPv6, keyed "socket:[inode]" as
// /proc/PID/fd links name them. The kernel walks only its listening
// sockets: a box with tens of thousands of connections in TIME_WAIT (a
// load tester's) lists them all in /proc/net/tcp, which took 0.2 s to
// read and parse at 30,000 (the race detector on).
func listeningInodesDiag(port int) (map[string]bool, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	// A kernel that never ends its dump must not hold the run: after a
	// second the receive fails and /proc/net/tcp answers instead.
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 1}); err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	buf := make([]byte, 32<<10)
	for seq, family := range []byte{unix.AF_INET, unix.AF_INET6} {
		if err := unix.Sendto(fd, diagListenRequest(family, uint32(seq+1)), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return nil, err
		}
		for done := false; !done; {
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				return nil, err
			}
			if done, err = diagListeners(buf[:n], port, inodes); err != nil {
				return nil, err
			}
		}
	}
	return inodes, nil
}

// The sock_diag messages' layout (linux/netlink.h, linux/inet_diag.h).
const (
	nlmsgHdrLen    = 16 // len u32, type u16, flags u16, seq u32, pid u32
	diagReqLen     = 56 // family, protocol, ext, pad, states u32, inet_diag_sockid (48)
	diagMsgLen     = 72 // family, state, timer, retrans, id (48), expires, rqueue, wqueue, uid, inode
	diagSportAt    = 4  // inet_diag_msg.id.idiag_sport, big-endian
	diagInodeAt    = 68 // inet_diag_msg.idiag_inode
	tcpListenState = 10 // TCP_LISTEN
)

// diagListenRequest is a dump request for family's TCP sockets in
// TCP_LISTEN.
func diagListenRequest(family byte, seq uint32) []byte {
	b := make([]byte, nlmsgHdrLen+diagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(b[8:], seq)
	r := b[nlmsgHdrLen:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 1<<tcpListenState)
	return b
}

// diagListeners reads one datagram of a sock_diag dump: it adds the
// inodes of the sockets on port and reports whether the dump is done.
func diagListeners(b []byte, port int, into map[string]bool) (done bool, err error) {
	ne := binary.NativeEndian
	for len(b) >= nlmsgHdrLen {
		l := int(ne.Uint32(b))
		if l < nlmsgHdrLen || l > len(b) {
			return true, unix.EINVAL
		}
		msg := b[nlmsgHdrLen:l]
		switch ne.Uint16(b[4:]) {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if len(msg) >= 4 {
				if e := int32(ne.Uint32(msg)); e < 0 {
					return true, unix.Errno(-e)
				}
			}
			return true, nil
		case unix.SOCK_DIAG_BY_FAMILY:
			if len(msg) >= diagMsgLen && int(binary.BigEndian.Uint16(msg[diagSportAt:])) == port {
				into["socket:["+strconv.FormatUint(uint64(ne.Uint32(msg[diagInodeAt:])), 10)+"]"] = true
			}
		}
		b = b[min((l+3)&^3, len(b)):] // NLMSG_ALIGN
	}
	return false, nil
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
