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
			n := p.take(int(load), false)
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
			p.give(n)
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
	if n := newPool(Slots).take(10, false); n != Slots {
		t.Errorf("a take of 10 took %d, want the pool's %d", n, Slots)
	}
}

// A test that announced itself gets its shares before tests that asked
// earlier without announcing, even while shares are free for them; they
// get theirs, in the order they asked, once it has its own.
func TestPoolFirst(t *testing.T) {
	p := newPool(2)
	p.announce()
	got := make(chan int, 2)
	for i := range 2 {
		go func() { p.take(1, false); got <- i }()
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
	if n := p.take(2, true); n != 2 {
		t.Fatalf("the announced test took %d, want 2", n)
	}
	select {
	case i := <-got:
		t.Fatalf("taker %d got a share while the announced test held all of them", i)
	case <-time.After(50 * time.Millisecond):
	}
	p.give(1)
	if i := <-got; i != 0 {
		t.Errorf("the one free share went to taker %d, want the first to ask", i)
	}
	p.give(1)
	if i := <-got; i != 1 {
		t.Errorf("taker %d, want 1", i)
	}
}
