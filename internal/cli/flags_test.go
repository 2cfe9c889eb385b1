package cli

import (
	"flag"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/waiter"
	"github.com/urfave/cli/v2"
)

// verbGrammars are the grammars the verbs declare, by command name.
var verbGrammars = map[string]grammar{
	"start": verbStart.grammar, "stop": verbStop.grammar, "stopwait": verbStopWait.grammar,
	"kill": verbKill.grammar, "restart": verbRestart.grammar, "run": runGrammar, "forget": forgetGrammar,
	"apply": applyGrammar, "scale": scaleGrammar, "show": showGrammar, "get": showGrammar, "status": {}, "logs": {}, "names": {}, "expand": {}, "check": {},
}

// parseFor parses args as the command verb of multi's app does, up to the
// typed call its run function would be given.
func parseFor(t *testing.T, verb string, args ...string) (*call, error) {
	t.Helper()
	app := newApp(io.Discard, io.Discard)
	for _, cmd := range app.Commands {
		if cmd.Name != verb {
			continue
		}
		set := flag.NewFlagSet(verb, flag.ContinueOnError)
		if err := set.Parse(append([]string{"--"}, args...)); err != nil {
			t.Fatal(err)
		}
		c := cli.NewContext(app, set, nil)
		c.Command = cmd
		return parseCommand(c, verbGrammars[verb])
	}
	t.Fatalf("no command %s", verb)
	return nil, nil
}

// flagCases give each of multi's flags on a command line, and say whether
// a verb's typed call carries it.
var flagCases = map[string]struct {
	args []string
	ok   func(a *call) bool
}{
	"pidfile":              {[]string{"--pidfile", "/p/%n.pid"}, func(a *call) bool { return a.PidFile == "/p/%n.pid" }},
	"logfile":              {[]string{"--logfile=/l/%n.log"}, func(a *call) bool { return a.LogFile == "/l/%n.log" }},
	"rundir":               {[]string{"--rundir=/r"}, func(a *call) bool { return a.RunDir == "/r" }},
	"timeout":              {[]string{"--timeout=1.5"}, func(a *call) bool { return a.Timeout == 1500*time.Millisecond }},
	"wait":                 {[]string{"--wait=notify"}, func(a *call) bool { return a.Wait == waiter.Notify{} }},
	"settle":               {[]string{"--settle=0"}, func(a *call) bool { return a.Settle == -1 }},
	"lost":                 {[]string{"--lost"}, func(a *call) bool { return a.Lost }},
	"clean":                {[]string{"--clean"}, func(a *call) bool { return a.Clean }},
	"kill-mode":            {[]string{"--kill-mode=process"}, func(a *call) bool { return a.KillMode == "process" }},
	"limit-nofile":         {[]string{"--limit-nofile=64:1024"}, func(a *call) bool { return a.Limits.NOFILE == "64:1024" }},
	"limit-nproc":          {[]string{"--limit-nproc", "100"}, func(a *call) bool { return a.Limits.NPROC == "100" }},
	"limit-core":           {[]string{"--limit-core=0"}, func(a *call) bool { return a.Limits.Core == "0" }},
	"limit-as":             {[]string{"--limit-as=1G"}, func(a *call) bool { return a.Limits.AS == "1073741824" }},
	"memory-max":           {[]string{"--memory-max=512M"}, func(a *call) bool { return a.Limits.MemoryMax == "536870912" }},
	"memory-high":          {[]string{"--memory-high=max"}, func(a *call) bool { return a.Limits.MemoryHigh == "max" }},
	"cpu-max":              {[]string{"--cpu-max=50%"}, func(a *call) bool { return a.Limits.CPUMax == "50000 100000" }},
	"pids-max":             {[]string{"--pids-max=64"}, func(a *call) bool { return a.Limits.PidsMax == "64" }},
	"log-max-size":         {[]string{"--log-max-size=1M"}, func(a *call) bool { return a.Limits.LogMaxSize == "1048576" }},
	"log-keep":             {[]string{"--log-keep=3"}, func(a *call) bool { return a.Limits.LogKeep == "3" }},
	"rolling":              {[]string{"--rolling"}, func(a *call) bool { return a.Rolling }},
	"all":                  {[]string{"--all"}, func(a *call) bool { return a.All }},
	"group":                {[]string{"--group"}, func(a *call) bool { return a.Group }},
	"json":                 {[]string{"--json"}, func(a *call) bool { return a.JSON }},
	"allow-shared-folders": {[]string{"--allow-shared-folders"}, func(a *call) bool { return a.AllowSharedFolders }},
	"follow":               {[]string{"-f"}, func(a *call) bool { return a.Follow }},
	"lines":                {[]string{"-n", "3"}, func(a *call) bool { return a.Lines == 3 }},
	"env":                  {[]string{"--env=A=1", "--env", "B=2"}, func(a *call) bool { return slices.Equal(a.Env, []string{"A=1", "B=2"}) }},
	"env-file":             {[]string{"--env-file=a.env", "--env-file", "b.env"}, func(a *call) bool { return slices.Equal(a.EnvFiles, []string{"a.env", "b.env"}) }},
	"timestamps":           {[]string{"--timestamps"}, func(a *call) bool { return a.Timestamps }},
	"log-format":           {[]string{"--log-format=json"}, func(a *call) bool { return a.LogFormat == "json" }},
	"dry-run":              {[]string{"--dry-run"}, func(a *call) bool { return a.DryRun }},
	"prune":                {[]string{"--prune"}, func(a *call) bool { return a.Prune }},
	"self-lock":            {[]string{"--self-lock"}, func(a *call) bool { return a.SelfLock }},
	"ready":                {[]string{"--ready=tcp:127.0.0.1:80%i"}, func(a *call) bool { return a.Ready == "tcp:127.0.0.1:80%i" }},
	"ready-timeout":        {[]string{"--ready-timeout=5s"}, func(a *call) bool { return a.ReadyTimeout == 5*time.Second }},
	"max-unavailable":      {[]string{"--max-unavailable=3"}, func(a *call) bool { return a.MaxUnavailable == 3 }},
	"max-restarts":         {[]string{"--max-restarts=4"}, func(a *call) bool { return a.MaxRestarts == 4 }},
	"restart-window":       {[]string{"--restart-window=30s"}, func(a *call) bool { return a.RestartWindow == 30*time.Second }},
	"health":               {[]string{"--health=127.0.0.1:9100"}, func(a *call) bool { return a.Health == "127.0.0.1:9100" }},
	"live":                 {[]string{"--live=tcp:127.0.0.1:80%i"}, func(a *call) bool { return a.Live == "tcp:127.0.0.1:80%i" }},
	"live-interval":        {[]string{"--live-interval=2s"}, func(a *call) bool { return a.LiveInterval == 2*time.Second }},
	"live-failures":        {[]string{"--live-failures=5"}, func(a *call) bool { return a.LiveFailures == 5 }},
	"lock-timeout":         {[]string{"--lock-timeout=2m"}, func(a *call) bool { return a.LockTimeout == 2*time.Minute }},
	"prefix":               {[]string{"--prefix=p-"}, func(a *call) bool { return a.Prefix == "p-" }},
	"suffix":               {[]string{"--suffix="}, func(a *call) bool { return a.Suffix != nil && *a.Suffix == "" }},
	"hostname":             {[]string{"--hostname=h"}, func(a *call) bool { return a.Hostname == "h" }},
	"range-prefix":         {[]string{"--range-prefix=web"}, func(a *call) bool { return a.RangePrefix == "web" }},
	"quiet":                {[]string{"-q"}, func(a *call) bool { return a.Quiet }},
	"verbose":              {[]string{"--verbose"}, func(a *call) bool { return a.Verbose }},
	"no-color":             {[]string{"--no-color"}, func(a *call) bool { return a.NoColor }},
	"on-exit":              {[]string{"--on-exit=restart"}, func(a *call) bool { return a.OnExit == multi.RestartNode }},
	"ready-file":           {[]string{"--ready-file=/tmp/r"}, func(a *call) bool { return a.ReadyFile == "/tmp/r" }},
	"wait-for-lock":        {[]string{"--wait-for-lock"}, func(a *call) bool { return a.WaitForLock }},
	"backoff":              {[]string{"--backoff=250ms"}, func(a *call) bool { return a.Backoff == 250*time.Millisecond }},
	"watch":                {[]string{"--watch"}, func(a *call) bool { return a.Watch }},
	"interval":             {[]string{"--interval=2.5"}, func(a *call) bool { return a.Interval == 2500*time.Millisecond }},
}

// verbFlagCases are the cases of a flag name that means something else
// for one verb ("status --ready").
var verbFlagCases = map[string]struct {
	args []string
	ok   func(a *call) bool
}{
	"status --ready": {[]string{"--ready"}, func(a *call) bool { return a.ReadyOnly }},
}

// Every flag of every verb reaches the verb typed: given, its field holds
// the value; not given, it does not.
func TestVerbFlagsTyped(t *testing.T) {
	t.Parallel()
	for _, cmd := range newApp(io.Discard, io.Discard).Commands {
		if !cmd.SkipFlagParsing {
			continue // not a grammar command: completion, man
		}
		if _, ok := verbGrammars[cmd.Name]; !ok {
			t.Errorf("%s: no grammar in verbGrammars", cmd.Name)
			continue
		}
		for _, f := range cmd.Flags {
			if _, ok := f.(typedFlag); !ok {
				continue // urfave/cli's --help
			}
			name := f.Names()[0]
			tc, ok := flagCases[name]
			if vc, isVerbs := verbFlagCases[cmd.Name+" --"+name]; isVerbs {
				tc, ok = vc, true
			}
			if !ok {
				t.Errorf("--%s: no case in flagCases", name)
				continue
			}
			without, err := parseFor(t, cmd.Name, "w1")
			if err != nil {
				t.Errorf("%s w1: %v", cmd.Name, err)
				continue
			}
			if tc.ok(without) {
				t.Errorf("%s w1: carries --%s although it is not given", cmd.Name, name)
			}
			with, err := parseFor(t, cmd.Name, append([]string{"w1"}, tc.args...)...)
			if err != nil {
				t.Errorf("%s w1 %q: %v", cmd.Name, tc.args, err)
			} else if !tc.ok(with) {
				t.Errorf("%s w1 %q: --%s not carried: %+v", cmd.Name, tc.args, name, with.flags)
			}
		}
	}
}

// A flag not given, or given empty, has its default; a later value wins.
func TestVerbFlagDefaults(t *testing.T) {
	t.Parallel()
	a, err := parseFor(t, "stopwait", "w1", "--wait=notify", "--wait=")
	if err != nil || a.Wait != (waiter.Poll{}) || a.Timeout != 0 {
		t.Errorf("stopwait --wait=notify --wait=: %+v, %v; want poll, no timeout", a, err)
	}
	a, err = parseFor(t, "run", "w1", "--timeout=3", "--", "app")
	if err != nil || a.OnExit != multi.StopAll || a.Timeout != 3*time.Second || a.RangePrefix != "celery" {
		t.Errorf("run --timeout=3: %+v, %v; want stop-all, 3s, celery", a, err)
	}
	a, err = parseFor(t, "stopwait", "w1", "--timeout=x", "--timeout=2")
	if err != nil || a.Timeout != 2*time.Second {
		t.Errorf("stopwait --timeout=x --timeout=2: %+v, %v; want 2s: only the last value counts", a, err)
	}
	a, err = parseFor(t, "start", "w1", "--settle=2", "--settle=", "--", "app")
	if err != nil || a.Settle != 0 {
		t.Errorf("start --settle=2 --settle=: %+v, %v; want the default window", a, err)
	}
}

// Only the flags defined per node (--pidfile, --logfile) may be given for
// some nodes, and go to the call's NodeFiles.
func TestVerbPerNodeFlags(t *testing.T) {
	t.Parallel()
	a, err := parseFor(t, "start", "w1", "w2", "--pidfile:w1=/p/1.pid", "--logfile:2", "/l/2.log", "--", "app")
	if err != nil || len(a.NodeFiles) != 2 || a.NodeFiles[0].Name != "pidfile" || a.NodeFiles[1].Value != "/l/2.log" {
		t.Errorf("start --pidfile:w1= --logfile:2: %+v, %v; want both in NodeFiles", a, err)
	}
	if _, err := parseFor(t, "stopwait", "w1", "--timeout:w1=3"); err == nil {
		t.Errorf("stopwait --timeout:w1=3: no error; want a usage error")
	}
}

func TestSetOnExit(t *testing.T) {
	for s, want := range map[string]multi.OnExit{"": multi.StopAll, "stop-all": multi.StopAll, "restart": multi.RestartNode, "ignore": multi.Ignore} {
		var f flags
		if err := setOnExit(&f, s); err != nil || f.OnExit != want {
			t.Errorf("--on-exit=%q: %q, %v; want %q", s, f.OnExit, err, want)
		}
	}
	var f flags
	if err := setOnExit(&f, "always"); err == nil {
		t.Error("--on-exit=always: no error")
	}
}
