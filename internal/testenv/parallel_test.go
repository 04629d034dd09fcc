package testenv

import (
	"sync"
	"testing"
	"time"
)

// The pool never lets more than its size be held: 24 goroutines taking
// Waits, Busy and all Slots shares at once hold at most Slots between
// them, a holder of all of them holds them alone, and every one of them
// gets its turn.
func TestPoolShares(t *testing.T) {
	const whole = Load(Slots)
	p := newPool(Slots)
	var mu sync.Mutex
	held, most, alone := 0, 0, 0 // shares held now, the most at once, holders of all now
	var wg sync.WaitGroup
	loads := []Load{Waits, Busy, whole, Waits, Waits, Busy}
	for i := range 24 {
		wg.Add(1)
		go func(load Load) {
			defer wg.Done()
			n := p.take(int(load), plain)
			mu.Lock()
			held += n
			most = max(most, held)
			if load == whole {
				alone++
			}
			if n != int(load) || held > Slots || alone > 0 && held != Slots {
				t.Errorf("took %d for load %d; %d shares held (holders of all %d), at most %d", n, load, held, alone, Slots)
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			held -= n
			if load == whole {
				alone--
			}
			mu.Unlock()
			p.give(n, plain)
		}(loads[i%len(loads)])
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("takers still waiting after 10 s: the pool lost shares")
	}
	if most < 2 {
		t.Errorf("at most %d shares were held at once: nothing ran beside another", most)
	}
	if p.used != 0 {
		t.Errorf("%d shares still used after every taker gave its back", p.used)
	}
	if n := newPool(Slots).take(10, plain); n != Slots {
		t.Errorf("a take of 10 took %d, want the pool's %d", n, Slots)
	}
}

// A test that announced itself gets its shares before tests that asked
// earlier without announcing, even while shares are free for them; they
// get theirs, in the order they asked, once it has its own.
func TestPoolFirst(t *testing.T) {
	p := newPool(2)
	p.announce(first)
	got := make(chan int, 2)
	for i := range 2 {
		go func() { p.take(1, plain); got <- i }()
		// The second asks after the first (the queue's order is the
		// order of take): wait until the first is queued.
		for {
			p.mu.Lock()
			n := len(p.queue)
			p.mu.Unlock()
			if n == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	select {
	case i := <-got:
		t.Fatalf("taker %d got a share while an announced test had not taken its own", i)
	case <-time.After(50 * time.Millisecond):
	}
	if n := p.take(2, first); n != 2 {
		t.Fatalf("the announced test took %d, want 2", n)
	}
	select {
	case i := <-got:
		t.Fatalf("taker %d got a share while the announced test held all of them", i)
	case <-time.After(50 * time.Millisecond):
	}
	p.give(1, first)
	if i := <-got; i != 0 {
		t.Errorf("the one free share went to taker %d, want the first to ask", i)
	}
	p.give(1, first)
	if i := <-got; i != 1 {
		t.Errorf("taker %d, want 1", i)
	}
}

// Quiet tests run two at once before every other test and never beside
// one: a plain and a first test that asked before them wait until every
// quiet test has ended; a quiet test waits for a plain one that holds
// shares to end.
func TestPoolQuiet(t *testing.T) {
	p := newPool(Slots)
	for range 3 {
		p.announce(quiet)
	}
	p.announce(first)
	var mu sync.Mutex
	var events []string
	note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	var wg sync.WaitGroup
	run := func(name string, k kind, n int, hold time.Duration) {
		defer wg.Done()
		got := p.take(n, k)
		note("+" + name)
		time.Sleep(hold)
		note("-" + name)
		p.give(got, k)
	}
	wg.Add(5)
	go run("plain", plain, 1, time.Millisecond)
	go run("first", first, 1, time.Millisecond)
	for _, name := range []string{"q1", "q2", "q3"} {
		go run(name, quiet, Slots/2, 20*time.Millisecond)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("takers still waiting after 10 s: %v", events)
	}
	quietNow, othersNow, mostQuiet, quietEnded := 0, 0, 0, 0
	for _, e := range events {
		isQuiet := e[1] == 'q'
		switch {
		case e[0] == '+' && isQuiet:
			quietNow++
			mostQuiet = max(mostQuiet, quietNow)
		case e[0] == '-' && isQuiet:
			quietNow--
			quietEnded++
		case e[0] == '+':
			othersNow++
			if quietEnded < 3 {
				t.Errorf("%s started before every quiet test ended: %v", e[1:], events)
			}
		default:
			othersNow--
		}
		if quietNow > 0 && othersNow > 0 {
			t.Errorf("a quiet test ran beside another: %v", events)
		}
	}
	if mostQuiet != 2 {
		t.Errorf("at most %d quiet tests ran at once, want 2: %v", mostQuiet, events)
	}
	// A quiet test that asks while a plain test holds shares waits for it.
	p = newPool(Slots)
	p.take(1, plain)
	p.announce(quiet)
	got := make(chan int, 1)
	go func() { got <- p.take(Slots/2, quiet) }()
	select {
	case <-got:
		t.Fatal("a quiet test got its shares beside a plain test")
	case <-time.After(50 * time.Millisecond):
	}
	p.give(1, plain)
	if n := <-got; n != Slots/2 {
		t.Errorf("the quiet test took %d, want %d", n, Slots/2)
	}
}
