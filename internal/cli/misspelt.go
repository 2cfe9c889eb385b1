package cli

import (
	"fmt"
	"strings"
)

// misspelt refuses an option to be passed on (tok as given, name without
// dashes and scope) that is one of multi's flags, of this verb or another,
// or, for a long option (near true), is near one: within the edit
// distance closest allows, or the start of one. celery's own options
// always pass. One letter never gets here: those are celery's (-c, -Q,
// -n, -f), whatever letters multi's verbs use.
func (p Parser) misspelt(tok, name string, near bool) error {
	key := strings.ToLower(name)
	if celeryOptions[key] {
		return nil
	}
	after := fmt.Sprintf("to pass %s to the nodes' command, write it after -- with the command (-- COMMAND [ARG...] %s)", tok, tok)
	if _, own := p.Flags[key]; own && key != name {
		return fmt.Errorf("%w: unknown flag %s (did you mean --%s?); %s", ErrUsage, tok, key, after)
	}
	if verbs, ok := p.Others[key]; ok {
		return fmt.Errorf("%w: --%s is a flag of %s, not of this command; %s", ErrUsage, key, andList(verbs), after)
	}
	if !near {
		return nil
	}
	others := Parser{Flags: map[string]bool{}}
	for flag := range p.Others {
		others.Flags[flag] = true
	}
	best := p.closest(name)
	if best == "" {
		best = others.closest(name)
	}
	if best != "" {
		return fmt.Errorf("%w: unknown flag %s (did you mean %s?); %s", ErrUsage, tok, best, after)
	}
	return nil
}

// andList is "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// celeryLetter reports whether word is one capital letter: celery's -Q,
// -E, -B, -O, -P, -S and others, never a signal (no signal's name is one
// letter).
func celeryLetter(word string) bool {
	return len(word) == 1 && word[0] >= 'A' && word[0] <= 'Z'
}

// celeryOptions are the long options of celery's worker, beat and
// celery's global ones (celery 5): passed on to the command whatever
// flags multi's verbs have, near or not.
var celeryOptions = setOf(`app broker result-backend loader config workdir no-color quiet skip-checks
	hostname detach statedb loglevel optimization prefetch-multiplier concurrency pool task-events events
	time-limit soft-time-limit max-tasks-per-child max-memory-per-child purge discard queues
	exclude-queues include without-gossip without-mingle without-heartbeat heartbeat-interval
	autoscale beat schedule-filename schedule scheduler max-interval logfile pidfile uid gid umask executable`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
