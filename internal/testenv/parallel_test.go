package testenv

import (
	"sync"
	"testing"
	"time"
)

// The pool never lets more than its size be held: 24 goroutines taking
// Waits, Busy and Alone shares at once hold at most Slots between them,
// an Alone holder holds them alone, and every one of them gets its turn.
func TestPoolShares(t *testing.T) {
	p := newPool(Slots)
	var mu sync.Mutex
	held, most, alone := 0, 0, 0 // shares held now, the most at once, Alone holders now
	var wg sync.WaitGroup
	loads := []Load{Waits, Busy, Alone, Waits, Waits, Busy}
	for i := range 24 {
		wg.Add(1)
		go func(load Load) {
			defer wg.Done()
			n := p.take(int(load))
			mu.Lock()
			held += n
			most = max(most, held)
			if load == Alone {
				alone++
			}
			if n != int(load) || held > Slots || alone > 0 && held != Slots {
				t.Errorf("took %d for load %d; %d shares held (Alone holders %d), at most %d", n, load, held, alone, Slots)
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			held -= n
			if load == Alone {
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
	if n := newPool(Slots).take(10); n != Slots {
		t.Errorf("a take of 10 took %d, want the pool's %d", n, Slots)
	}
}
