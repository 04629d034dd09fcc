package machine

import "os"

// procFile reads one small file (under /proc) again and again into a
// buffer of its own: after the first read it allocates nothing, so that a
// reading every 100 ms during a phase costs the request path nothing.
type procFile struct {
	path string
	f    *os.File
	buf  []byte
}

// read returns the file's bytes (nil when it cannot be read), valid until
// the next read.
func (p *procFile) read() []byte {
	if p.f == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return nil
		}
		p.f, p.buf = f, make([]byte, 4096)
	}
	n, _ := p.f.ReadAt(p.buf, 0)
	if n <= 0 {
		return nil
	}
	return p.buf[:n]
}

func (p *procFile) close() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// fields calls f with each space-separated field of b in turn until f
// returns false.
func fields(b []byte, f func(i int, field []byte) bool) {
	i := 0
	for len(b) > 0 {
		for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
			b = b[1:]
		}
		end := 0
		for end < len(b) && b[end] != ' ' && b[end] != '\t' && b[end] != '\n' {
			end++
		}
		if end == 0 {
			return
		}
		if !f(i, b[:end]) {
			return
		}
		i++
		b = b[end:]
	}
}

// parseUint parses a decimal field (false when it is not one).
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// machineCPUOf reads /proc/stat's aggregate "cpu" line. Busy is
// everything but idle and iowait; guest time is already inside user.
func machineCPUOf(b []byte) MachineCPU {
	var m MachineCPU
	ok := true
	fields(b, func(i int, f []byte) bool {
		switch {
		case i == 0:
			ok = string(f) == "cpu"
			return ok
		case i > 8: // user nice system idle iowait irq softirq steal
			return false
		}
		n, good := parseUint(f)
		if !good {
			ok = false
			return false
		}
		m.Total += n
		if i != 4 && i != 5 {
			m.Busy += n
		}
		if i == 8 {
			m.Steal = n
		}
		return true
	})
	m.OK = ok && m.Total > 0
	return m
}

// cpuTicksOf reads utime + stime (clock ticks) from a /proc/PID/stat,
// counted after the command name; false for a zombie or an unreadable one.
func cpuTicksOf(b []byte) (uint64, bool) {
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	if i < 0 {
		return 0, false
	}
	var ticks uint64
	ok := true
	n := 0
	fields(b[i+1:], func(k int, f []byte) bool {
		switch {
		case k == 0:
			ok = !(len(f) == 1 && (f[0] == 'Z' || f[0] == 'X'))
			return ok
		case k == 11 || k == 12:
			v, good := parseUint(f)
			ok = ok && good
			ticks += v
			n++
			return k < 12
		}
		return true
	})
	return ticks, ok && n == 2
}
