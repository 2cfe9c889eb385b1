package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// logsCommand prints a node's logfile, and follows it with -f.
func logsCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "logs",
		Usage:     "print a node's logfile; -f follows it",
		UsageText: "multi logs [flags] NODE [-f]",
		Description: `   multi logs w1
   multi logs w1 -f      # until Ctrl-C`,
		Flags: common(flagLogfile, flagRundir, flagFollow),
	}, grammar{}, func(c *cli.Context, a *call) (int, error) {
		if len(a.Names) != 1 {
			return exitUsage, usage(c, errors.New("give one node name"))
		}
		ns, err := resolve(c, a)
		if err != nil {
			return exitUsage, err
		}
		err = printLog(c.Context, c.App.Writer, ns[0].LogFile, a.Follow)
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(c.App.ErrWriter, "%s: FAILED: %v\n", ns[0].Name, err)
			return exitFailed, nil
		}
		return exitOK, nil
	})
}

// printLog copies the file at path to w; with follow, it then copies what
// is appended until ctx is done, starting over when the file is truncated
// or replaced. fsnotify says when to look, and a slow poll stays under it.
// The file is opened as [nodes.OpenLogfileToRead] does, every time: no
// link followed, nothing but a regular file.
func printLog(ctx context.Context, w io.Writer, path string, follow bool) error {
	f, err := nodes.OpenLogfileToRead(path)
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	if _, err := io.Copy(w, f); err != nil || !follow {
		return err
	}
	var events <-chan fsnotify.Event // nil, so never ready, without fsnotify
	if watch, err := fsnotify.NewWatcher(); err == nil {
		defer watch.Close()
		watch.Add(filepath.Dir(path))
		events = watch.Events
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-events:
		case <-tick.C:
		}
		pos, _ := f.Seek(0, io.SeekCurrent)
		if nf, err := nodes.OpenLogfileToRead(path); err == nil {
			st, err1 := nf.Stat()
			cur, err2 := f.Stat()
			if err1 == nil && err2 == nil && (!os.SameFile(st, cur) || st.Size() < pos) {
				// Rotated or truncated: read the new file from the start.
				f.Close()
				f = nf
			} else {
				nf.Close()
			}
		}
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
	}
}
