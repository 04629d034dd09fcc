package contract

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/brk-bench/brk/internal/machine"
)

// Started is a responder that already accepts connections, as a StartFunc
// returns it.
type Started struct {
	Addr           string
	Implementation string
	// Threads is what Hello reports; 0 reports runtime.GOMAXPROCS(0).
	Threads int
	// CertPEM is the certificate to trust when the responder serves TLS.
	CertPEM string
	// Drain stops accepting, lets the requests in progress finish (until
	// ctx ends) and releases the responder.
	Drain func(ctx context.Context) error
}

// StartFunc starts a responder for cfg. It runs after Serve has set
// GOMAXPROCS to cfg.Threads (when above 0).
type StartFunc func(cfg Config) (*Started, error)

// DrainTimeout bounds a responder's drain after stop or EOF.
const DrainTimeout = 5 * time.Second

// maxLine bounds one line of the wire.
const maxLine = 1 << 20

// Serve speaks the child's side of the contract: it reads the Config from
// in, sets GOMAXPROCS to its Threads, calls start, writes the Hello to
// out, answers sample commands with the process's CPU time (getrusage) and
// drains on stop or EOF of in. It returns after the drain, or with the
// error that kept the responder from starting (already reported to the
// parent in the Hello); the caller then exits non-zero. Nothing else may
// write to out.
func Serve(in io.Reader, out io.Writer, start StartFunc) error {
	r := bufio.NewReaderSize(in, 4096)
	enc := json.NewEncoder(out)
	fail := func(err error) error {
		_ = enc.Encode(Hello{Error: err.Error()})
		return err
	}
	line, err := readLine(r)
	if err != nil {
		return fail(fmt.Errorf("reading the configuration line: %w", err))
	}
	var cfg Config
	if err := json.Unmarshal(line, &cfg); err != nil {
		return fail(fmt.Errorf("bad configuration line: %w", err))
	}
	if cfg.Threads > 0 {
		runtime.GOMAXPROCS(cfg.Threads)
	}
	s, err := start(cfg)
	if err != nil {
		return fail(err)
	}
	threads := s.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	drain := func() error {
		if s.Drain == nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), DrainTimeout)
		defer cancel()
		return s.Drain(ctx)
	}
	if err := enc.Encode(Hello{
		Addr: s.Addr, Implementation: s.Implementation, Protocol: cfg.Protocol,
		TLS: cfg.TLS, Threads: threads, CertPEM: s.CertPEM,
	}); err != nil {
		drain()
		return err
	}
	for {
		line, err := readLine(r)
		if err != nil {
			// EOF (or a broken pipe): the parent is gone or done.
			return drain()
		}
		var c Command
		if err := json.Unmarshal(line, &c); err != nil {
			_ = enc.Encode(Sample{Error: "bad command line: " + err.Error()})
			continue
		}
		switch c.Cmd {
		case CmdSample:
			_ = enc.Encode(sample())
		case CmdStop:
			err := drain()
			s := sample()
			s.Stopped = true
			if err != nil {
				s.Error = "drain: " + err.Error()
			}
			_ = enc.Encode(s)
			return err
		default:
			_ = enc.Encode(Sample{Error: fmt.Sprintf("unknown command %q", c.Cmd)})
		}
	}
}

// sample reads the process's CPU time.
func sample() Sample {
	c := machine.ReadProcessCPU()
	return Sample{UserUs: c.User.Microseconds(), SystemUs: c.System.Microseconds()}
}

// readLine reads one line without its newline; a last line without one
// counts, an empty input is io.EOF.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, errors.New("line too long")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (err != io.EOF || len(buf) == 0) {
			return nil, err
		}
		if n := len(buf); n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
		}
		return buf, nil
	}
}
