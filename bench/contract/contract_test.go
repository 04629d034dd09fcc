package contract

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"
)

// wire runs Serve on pipes and returns the parent's ends.
func wire(t *testing.T, start StartFunc) (in io.WriteCloser, out *bufio.Scanner, done chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done = make(chan error, 1)
	go func() {
		err := Serve(inR, outW, start)
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return inW, bufio.NewScanner(outR), done
}

func send(t *testing.T, w io.Writer, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if _, err := w.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

func recv(t *testing.T, sc *bufio.Scanner, v any) {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("no line: %v", sc.Err())
	}
	if err := json.Unmarshal(sc.Bytes(), v); err != nil {
		t.Fatalf("%q: %v", sc.Bytes(), err)
	}
}

func TestServe(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	var got Config
	drained := false
	in, out, done := wire(t, func(cfg Config) (*Started, error) {
		got = cfg
		return &Started{Addr: "127.0.0.1:9", Implementation: "test",
			Drain: func(context.Context) error { drained = true; return nil }}, nil
	})
	send(t, in, Config{Protocol: "h1", Threads: 1, Listen: "127.0.0.1:0", Routes: []Route{{Path: "/plain", Status: 200, Body: "ok", DelayUs: 5}}})
	var h Hello
	recv(t, out, &h)
	if h.Addr != "127.0.0.1:9" || h.Implementation != "test" || h.Protocol != "h1" || h.Threads != 1 || h.Error != "" {
		t.Errorf("hello %+v", h)
	}
	if got.Routes[0].Delay() != 5*time.Microsecond {
		t.Errorf("config %+v", got)
	}
	var s0, s1 Sample
	send(t, in, Command{Cmd: CmdSample})
	recv(t, out, &s0)
	for d := time.Now().Add(20 * time.Millisecond); time.Now().Before(d); {
	}
	send(t, in, Command{Cmd: CmdSample})
	recv(t, out, &s1)
	if c := s1.Sub(s0); c.User+c.System <= 0 {
		t.Errorf("samples %+v %+v: no CPU over a 20 ms spin", s0, s1)
	}
	var bad Sample
	send(t, in, Command{Cmd: "dance"})
	recv(t, out, &bad)
	if bad.Error == "" {
		t.Errorf("unknown command answered %+v", bad)
	}
	var st Sample
	send(t, in, Command{Cmd: CmdStop})
	recv(t, out, &st)
	if !st.Stopped || st.Error != "" {
		t.Errorf("stop answered %+v", st)
	}
	if err := <-done; err != nil || !drained {
		t.Errorf("Serve: %v, drained %v", err, drained)
	}
}

func TestServeEOF(t *testing.T) {
	drained := make(chan bool, 1)
	in, out, done := wire(t, func(cfg Config) (*Started, error) {
		return &Started{Addr: "x:1", Drain: func(context.Context) error { drained <- true; return nil }}, nil
	})
	send(t, in, Config{Protocol: "h1"})
	var h Hello
	recv(t, out, &h)
	in.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve after EOF: %v", err)
	}
	select {
	case <-drained:
	default:
		t.Error("no drain on EOF")
	}
}

func TestServeStartError(t *testing.T) {
	in, out, done := wire(t, func(cfg Config) (*Started, error) { return nil, errors.New("no h2c here") })
	send(t, in, Config{Protocol: "h2c"})
	var h Hello
	recv(t, out, &h)
	if h.Error != "no h2c here" {
		t.Errorf("hello %+v", h)
	}
	if err := <-done; err == nil {
		t.Error("Serve returned nil after a failed start")
	}
}
