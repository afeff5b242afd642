//go:build linux

package ipc_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/ipc"
)

// LookupArgs are the arguments of the lookup command: lookup NAME
// [--upper].
type LookupArgs struct {
	Name  string `json:"name"`
	Upper bool   `json:"upper"`
}

// A complete host command: the sandbox runs lookup as an ordinary
// program, and the call reaches this handler, which keeps its state (a
// map and a count of calls) in ordinary Go values.
func Example() {
	phoneBook := map[string]string{"ada": "555-0100", "alan": "555-0199"}
	var mu sync.Mutex
	calls := 0

	r := ipc.NewRouter()
	err := ipc.Register(r, "lookup", func(ctx context.Context, a LookupArgs, c ipc.Call) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		number, ok := phoneBook[a.Name]
		if !ok {
			return "", ipc.Errorf("not_found", "no number for %q", a.Name)
		}
		if a.Upper {
			a.Name = strings.ToUpper(a.Name)
		}
		return a.Name + " " + number + "\n", nil
	}, ipc.Positional("name"), ipc.Summary("look a name up in the host's phone book"))
	if err != nil {
		fmt.Println(err)
		return
	}

	sb, err := moat.New(moat.Config{IPC: r})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	out, _ := sb.Command("/bin/sh", "-c", "lookup ada; lookup alan --upper; lookup bob 2>&1; echo exit=$?").Output()
	fmt.Print(string(out))
	fmt.Println("calls:", calls)
	// Output:
	// ada 555-0100
	// ALAN 555-0199
	// lookup: no number for "bob"
	// exit=1
	// calls: 3
}
