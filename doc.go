// Package moat runs untrusted, typically LLM-generated, code in a native
// operating-system sandbox: Landlock, seccomp and namespaces on Linux.
//
// A [Sandbox] holds a policy and a private working directory. Its
// [Sandbox.Command] returns a [Cmd] that is used exactly like an
// [os/exec.Cmd]:
//
//	sb, err := moat.New(moat.Config{})
//	if err != nil { ... }
//	defer sb.Close()
//	out, err := sb.Command("python3", "-c", "print(6*7)").Output()
//
// The zero [Config] is the strictest useful policy: the working directory is
// the only writable place and nothing written there can be executed, system
// paths are readable and executable, the network is denied by the kernel, and
// default resource limits stop fork bombs, memory bombs, disk fills and
// descriptor exhaustion.
//
// moat fails closed. If the host cannot enforce what the [Config] asks for,
// [New] returns an [*UnsupportedError] unless [Config.Enforcement] is
// [BestEffort]; [Sandbox.Report] says which layers are really active.
//
// A program that imports moat must let moat's helper run: on Linux the
// sandbox is set up by re-executing the current binary, and the helper role is
// selected by an environment marker checked in a package init function, before
// main runs. Nothing needs to be done for this beyond importing the package.
package moat
