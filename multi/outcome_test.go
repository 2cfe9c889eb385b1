package multi

import (
	"testing"

	"github.com/multi-launcher/multi/internal/engine"
)

// The engine's outcomes are multi's, value for value: result converts
// one to the other with a cast.
func TestEngineOutcomesAreMultis(t *testing.T) {
	pairs := []struct {
		e engine.Outcome
		m Outcome
	}{
		{engine.NoOutcome, NoOutcome}, {engine.Started, Started}, {engine.Restarted, Restarted},
		{engine.AlreadyRunning, AlreadyRunning}, {engine.Signalled, Signalled}, {engine.Stopped, Stopped},
		{engine.Killed, Killed}, {engine.KilledAfterTimeout, KilledAfterTimeout}, {engine.NotRunning, NotRunning},
		{engine.StaleRemoved, StaleRemoved}, {engine.Lost, Lost}, {engine.Failed, Failed},
	}
	for _, p := range pairs {
		if got := result(engine.Result{Outcome: p.e}).Outcome; got != p.m {
			t.Errorf("engine outcome %d is multi's %s, want %s", p.e, got, p.m)
		}
	}
	if len(pairs) != len(outcomeNames) {
		t.Errorf("%d outcomes paired, multi has %d", len(pairs), len(outcomeNames))
	}
}
