//go:build unix

package launch

import (
	"strings"

	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/internal/step"
	"github.com/multi-launcher/multi/nodes"
)

// The exec step (package step) as the launcher names it.
const (
	stepEnv       = step.Env
	stepLock      = step.Lock
	stepSelfLock  = step.SelfLock
	errFD         = step.ErrFD
	stepDirEnv    = step.DirEnv
	stepCgroupEnv = step.CgroupEnv
	stepPathEnv   = step.PathEnv
	stepProcsEnv  = step.ProcsEnv
	stepReadyEnv  = step.ReadyEnv
	stepLimitsEnv = step.LimitsEnv
	stepLogFDEnv  = step.LogFDEnv
)

// stepEnviron is the exec step's environment: the node's, plus what the
// step needs.
func stepEnviron(env []string, mode string, n nodes.Node) []string {
	procs := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOMAXPROCS="); ok {
			procs = "=" + v // the last one is the one that counts
		}
	}
	lookup := ""
	if p, ok := LookPATH(env); ok {
		lookup = "=" + p
	}
	out := append(env[:len(env):len(env)], stepEnv+"="+mode, nodes.EnvNode+"="+n.FullName(),
		stepProcsEnv+"="+procs, stepPathEnv+"="+lookup, "GOMAXPROCS=1")
	if n.Dir != "" {
		out = append(out, stepDirEnv+"=1")
	}
	if lims := rlimitsOf(n); len(lims) > 0 {
		out = append(out, stepLimitsEnv+"="+step.FormatLimits(lims))
	}
	if shared := safefs.Accepted(); shared != "" {
		// The folders the step, and a node that locks its own pidfile,
		// reach as this process accepted them.
		out = append(out, safefs.SharedEnv+"="+shared)
	}
	return out
}

// The exec step's run mode (see package step): StepOutEnv keeps the
// inherited stdout and stderr (Run's pipes) instead of opening the
// logfile; StepStandbyEnv waits for a held lock instead of failing.
const (
	StepOutEnv     = step.OutEnv
	StepStandbyEnv = step.StandbyEnv
)

// rlimitsOf is the rlimits node n's process is to start under, which
// [Spawn] has checked.
func rlimitsOf(n nodes.Node) []step.Limit {
	rs, _ := n.Limits.Rlimits()
	out := make([]step.Limit, len(rs))
	for i, r := range rs {
		out[i] = step.Limit{Name: r.Name, Soft: r.Soft, Hard: r.Hard}
	}
	return out
}
