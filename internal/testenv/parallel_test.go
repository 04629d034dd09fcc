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
			n := p.take(int(load))
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
	if n := newPool(Slots).take(10); n != Slots {
		t.Errorf("a take of 10 took %d, want the pool's %d", n, Slots)
	}
}
