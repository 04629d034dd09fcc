package testenv

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pickPort chooses the port a helper asks a server to bind; tests of the
// retry path point it at a port that is already taken.
var pickPort = FreePort

// ListensOn reports whether process pid holds a TCP socket listening on
// addr ("127.0.0.1:PORT", "[::1]:PORT"). Another process that took the
// port between FreePort and the server's bind answers connections just as
// well, so a dial proves nothing; this asks the kernel who owns the
// listener. It reads /proc (Linux); elsewhere it returns an error wrapping
// errors.ErrUnsupported.
func ListensOn(pid int, addr string) (bool, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return false, err
	}
	table := fmt.Sprintf("/proc/%d/net/tcp", pid)
	if ap.Addr().Is6() {
		table += "6"
	}
	inodes, err := listeningInodes(table, ap)
	if errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat("/proc/self/net/tcp"); statErr != nil {
			return false, fmt.Errorf("%w: no /proc/PID/net/tcp", errors.ErrUnsupported)
		}
		return false, nil // the process is gone
	}
	if err != nil || len(inodes) == 0 {
		return false, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, nil // the process is gone
	}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
			return true, nil
		}
	}
	return false, nil
}

// listeningInodes returns the socket inodes of the LISTEN (0A) rows of a
// /proc/net/tcp{,6} table whose local address is ap.
func listeningInodes(table string, ap netip.AddrPort) (map[string]bool, error) {
	f, err := os.Open(table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := procAddr(ap)
	inodes := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fl := strings.Fields(s.Text())
		if len(fl) >= 10 && fl[3] == "0A" && strings.EqualFold(fl[1], want) {
			inodes[fl[9]] = true
		}
	}
	return inodes, s.Err()
}

// procAddr writes ap as /proc/net/tcp does: the address as 32-bit words
// in the machine's byte order, each as 8 hex digits, then ":" and the port
// as 4 hex digits.
func procAddr(ap netip.AddrPort) string {
	b := ap.Addr().AsSlice()
	var s strings.Builder
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		binary.BigEndian.PutUint32(w[:], binary.NativeEndian.Uint32(b[i:i+4]))
		s.WriteString(strings.ToUpper(hex.EncodeToString(w[:])))
	}
	fmt.Fprintf(&s, ":%04X", ap.Port())
	return s.String()
}

// errExited is awaitListener's answer when the process ended first.
var errExited = errors.New("exited before it listened")

// awaitListener waits until process pid listens on addr (ListensOn), at
// most timeout; it returns errExited once exited is closed. Where /proc
// is missing it settles for a connection to addr being accepted (which
// another process on the port would also give).
func awaitListener(pid int, addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-exited:
			return errExited
		default:
		}
		ok, err := ListensOn(pid, addr)
		if errors.Is(err, errors.ErrUnsupported) {
			ok, err = dialable(addr), nil
		}
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d did not listen on %s within %v", pid, addr, timeout)
		}
		// Polling is the only readiness signal these servers offer.
		time.Sleep(10 * time.Millisecond)
	}
}

// dialable reports whether a TCP connection to addr is accepted.
func dialable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// RefusingAddr returns a "127.0.0.1:PORT" address where connections are
// refused and stay refused while the test runs: a socket is bound to the
// port but never listens, so no other process can bind it (a closed
// listener's port is free for anyone, and a process that took it would
// accept). The socket is closed when the test ends.
func RefusingAddr(tb testing.TB) string {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		tb.Fatalf("testenv: socket: %v", err)
	}
	tb.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatalf("testenv: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatalf("testenv: getsockname: %v", err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
