package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/quarantine"
)

// maxListFiles bounds the files moat quarantine list prints per place.
const maxListFiles = 20

// newQuarantineCmd builds "moat quarantine": list, show, prune and restore
// what Close set aside. Restoring is offered here only, never through a
// library call meant for programs, an API or MCP: a person names each
// path, after reading it.
func newQuarantineCmd(std stdio) *cobra.Command {
	c := &cobra.Command{
		Use:   "quarantine list | show ENTRY | prune | restore ENTRY PATH...",
		Short: "List, show, prune or restore what moat set aside after a run",
		Long: `A sandbox that creates or changes a control entry (.git and its hooks and
config, .moat-*, .agents, .pi, .heimdall-*) in a place it may write has it moved
aside when the run ends (or, after a moat that was killed, when the next run
starts), into the quarantine in moat's state directory, which no sandbox can
see: one entry per run, named by the run's sandbox id.

  moat quarantine list                  the entries, oldest first: time, size,
                                        the places and the paths set aside
  moat quarantine show ENTRY            the entry's files, escaped, bounded
  moat quarantine prune                 remove entries older than --older-than
                                        and the oldest past --max-size
  moat quarantine restore ENTRY PATH... put PATH back where it was

Everything in an entry was written by a sandbox: show prints names and
contents with every control character escaped (\x1b, \u009b...), at most 16 KiB
of a file and 256 KiB in all, 1 MiB of output and 1000 files, saying what it
left out; it opens no FIFO and follows no link. restore takes
the exact paths list shows (or a directory above them, such as .git), prints
their content first, and asks before it moves them back (--yes when standard
input is not a terminal); it never replaces a file, and restores only into the
directory the entry came from, reached without a link.

moat prunes the quarantine itself when a run ends, at most once an hour, to
entries of the last 30 days and 1 GiB in all. A prune removes whatever tree a
sandbox left (directories it made read-only or unsearchable, deep chains,
FIFOs), following no link, at most 100,000 files a run: a removal past that
goes on at the next prune, or when the next run ends.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("quarantine: missing subcommand (list, show, prune or restore)")
		},
	}
	c.AddCommand(newQuarantineListCmd(std), newQuarantineShowCmd(std), newQuarantinePruneCmd(std), newQuarantineRestoreCmd(std))
	return c
}

// quarantineRoot is the state directory that holds the quarantine.
func quarantineRoot() (string, error) {
	root, err := moat.StateDir()
	if err != nil {
		return "", fail(err)
	}
	return root, nil
}

func newQuarantineListCmd(std stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the quarantine's entries",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			root, err := quarantineRoot()
			if err != nil {
				return err
			}
			ents, err := quarantine.List(root)
			if err != nil {
				return failf("quarantine: %v", err)
			}
			pending := quarantine.TrashPending(root)
			if len(ents) == 0 && !pending {
				fmt.Fprintf(std.out, "The quarantine (%s) is empty.\n", quarantine.Escape(quarantine.Dir(root), false))
				return nil
			}
			for _, e := range ents {
				printEntry(std.out, e)
			}
			if pending {
				fmt.Fprintln(std.out, "Removed entries are partly deleted still; moat quarantine prune goes on with them.")
			}
			return nil
		},
	}
}

// printEntry writes one entry of moat quarantine list.
func printEntry(w io.Writer, e quarantine.Entry) {
	size := humanBytes(e.Size)
	if e.Truncated {
		size = "over " + size
	}
	state := ""
	if e.Live {
		state = ", run not finished"
	}
	noun := "entries"
	if e.Count == 1 {
		noun = "entry"
	}
	fmt.Fprintf(w, "%s  %s  %s in %d %s%s\n", e.ID, e.Time.Local().Format("2006-01-02 15:04"), size, e.Count, noun, state)
	for _, p := range e.Places {
		fmt.Fprintf(w, "  %s\n", quarantine.Escape(p.Path, false))
		for i, f := range p.Files {
			if i == maxListFiles {
				fmt.Fprintf(w, "    (%d more)\n", len(p.Files)-i)
				break
			}
			what := humanBytes(f.Size)
			if !f.Mode.IsRegular() {
				what = f.Kind()
			}
			fmt.Fprintf(w, "    %s  (%s)\n", quarantine.Escape(p.Path+"/"+f.Rel, false), what)
		}
	}
}

func newQuarantineShowCmd(std stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "show ENTRY",
		Short: "Print an entry's files, escaped",
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("quarantine show: want one ENTRY (moat quarantine list shows them)")
			}
			e, err := readEntry(args[0])
			if err != nil {
				return err
			}
			if err := quarantine.Show(std.out, e, nil); err != nil {
				return failf("quarantine show: %v", err)
			}
			return nil
		},
	}
}

// readEntry reads the entry id of the quarantine: an id that is not one is
// a usage error.
func readEntry(id string) (quarantine.Entry, error) {
	if err := quarantine.CheckID(id); err != nil {
		return quarantine.Entry{}, usagef("quarantine: %q: %v", id, err)
	}
	root, err := quarantineRoot()
	if err != nil {
		return quarantine.Entry{}, err
	}
	e, err := quarantine.Read(root, id)
	if err != nil {
		return e, usagef("quarantine: entry %s: %v", id, bareErr(err))
	}
	return e, nil
}

func newQuarantinePruneCmd(std stdio) *cobra.Command {
	var olderThan time.Duration
	var maxSize string
	var all bool
	c := &cobra.Command{
		Use:   "prune [--older-than DURATION] [--max-size SIZE] [--all]",
		Short: "Remove old entries, and the oldest past a total size",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l := quarantine.DefaultLimits
			if cmd.Flags().Changed("older-than") {
				if olderThan < 0 {
					return usagef("quarantine prune: --older-than %v: want a duration of 0 or more", olderThan)
				}
				l.MaxAge = olderThan
			}
			if cmd.Flags().Changed("max-size") {
				n, err := parseSize(maxSize)
				if err != nil {
					return usagef("quarantine prune: --max-size %q: %v", maxSize, err)
				}
				l.MaxBytes = n
			}
			if all {
				l = quarantine.Limits{All: true}
			}
			root, err := quarantineRoot()
			if err != nil {
				return err
			}
			res, err := quarantine.Prune(root, l, time.Now())
			for _, e := range res.Removed {
				fmt.Fprintf(std.out, "removed %s (%s, %s)\n", e.ID, e.Time.Local().Format("2006-01-02 15:04"), humanBytes(e.Size))
			}
			if res.Unfinished {
				fmt.Fprintf(std.out, "the files of removed entries are partly deleted (%d entries a run); run moat quarantine prune again to go on (each run ends with it too)\n", quarantine.DefaultBudget)
			}
			if err != nil {
				return failf("quarantine prune: %v", err)
			}
			return nil
		},
	}
	f := c.Flags()
	f.DurationVar(&olderThan, "older-than", quarantine.DefaultLimits.MaxAge, "remove entries that last changed longer ago than `DURATION` (0: keep any age)")
	f.StringVar(&maxSize, "max-size", formatSize(quarantine.DefaultLimits.MaxBytes), "then remove the oldest entries until the rest hold at most `SIZE` (0: any size)")
	f.BoolVar(&all, "all", false, "remove every entry whose run has finished")
	return c
}

func newQuarantineRestoreCmd(std stdio) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "restore ENTRY PATH... [--yes]",
		Short: "Print paths of an entry, then put them back where they were",
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("quarantine restore: want ENTRY and each PATH to restore, as moat quarantine list shows them")
			}
			e, err := readEntry(args[0])
			if err != nil {
				return err
			}
			targets, err := quarantine.Resolve(e, args[1:])
			if err != nil {
				return usagef("quarantine restore: %v", err)
			}
			only := map[string]bool{}
			for _, t := range targets {
				only[t.Dest] = true
			}
			if err := quarantine.Show(std.out, e, only); err != nil {
				return failf("quarantine restore: %v", err)
			}
			if !yes {
				if !term.IsTerminal(int(std.in.Fd())) || !term.IsTerminal(int(std.err.Fd())) {
					return usagef("quarantine restore: read what a sandbox wrote above, then run again with --yes to restore it")
				}
				fmt.Fprintf(std.err, "Restore %d path(s), written by a sandbox, as shown above? [y/N] ", len(targets))
				line, _ := bufio.NewReader(io.LimitReader(std.in, 64)).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
					fmt.Fprintln(std.err, "moat: quarantine restore: nothing restored")
					return &exitStatus{code: 1}
				}
			}
			if err := quarantine.Restore(targets); err != nil {
				return failf("quarantine restore: %v", err)
			}
			for _, t := range targets {
				fmt.Fprintf(std.out, "restored %s\n", quarantine.Escape(t.Dest, false))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "restore without asking, after printing the content")
	return c
}

// humanBytes is n bytes for a person: 13 B, 4.0 KiB, 1.5 MiB.
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}
