package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/moat-sandbox/moat/redact"
)

// exitRedactFailed is moat redact's status when the engine cannot be
// loaded or the redaction fails, as Heimdall's redact exits.
const exitRedactFailed = 1

// redactFlags are the engine flags moat redact and moat run --redact share.
type redactFlags struct {
	engine            string
	cacheDir          string
	variant           string
	revision          string
	executionProvider string
}

// options returns the engine options the flags ask for.
func (f *redactFlags) options() redact.Options {
	return redact.Options{CacheDir: f.cacheDir, Variant: f.variant, Revision: f.revision, ExecutionProvider: f.executionProvider}
}

// engineNames are the values of --engine and --redact.
var engineNames = []string{redact.EngineRules, redact.EngineModel, "both"}

// openDetector opens the engine named by --engine: rules, model, both
// (the union of the two) or another engine a linked-in package
// registered. An unknown name is a usage error; an engine that does not
// load is a redactFailure.
func openDetector(engine string, opts redact.Options) (redact.Detector, error) {
	if engine == "both" {
		rules, err := openDetector(redact.EngineRules, opts)
		if err != nil {
			return nil, err
		}
		model, err := openDetector(redact.EngineModel, opts)
		if err != nil {
			return nil, err
		}
		return redact.Union(rules, model), nil
	}
	if err := checkEngine(engine); err != nil {
		return nil, err
	}
	if engine == redact.EngineModel {
		if err := checkModelInputs(opts); err != nil { // redact_inputs.go
			return nil, err
		}
	}
	d, err := redact.Open(engine, opts)
	if err != nil {
		return nil, &redactFailure{what: "privacy filter runtime failed", err: err}
	}
	return d, nil
}

// checkEngine refuses an engine name openDetector does not know.
func checkEngine(engine string) error {
	if engine != "both" && engine != redact.EngineModel && !slices.Contains(redact.Engines(), engine) {
		return usagef("--engine %q: want one of %s", engine, strings.Join(engineNames, ", "))
	}
	return nil
}

// redactFailure is a redaction that could not be done: the engine did not
// load or failed on the input. It exits 1 with a one-line message.
type redactFailure struct {
	what string
	err  error
}

func (e *redactFailure) Error() string {
	return "redact: " + e.what + ": " + e.err.Error()
}
func (e *redactFailure) Unwrap() error { return e.err }

// exitOnRedactFailure prints a redactFailure's line and turns it into
// exit status 1; other errors pass through to exitCode.
func exitOnRedactFailure(std stdio, err error) error {
	var rf *redactFailure
	if errors.As(err, &rf) {
		fmt.Fprintln(std.err, errorLine(err))
		return &exitStatus{code: exitRedactFailed}
	}
	return err
}

// newRedactCmd builds "moat redact".
func newRedactCmd(std stdio) *cobra.Command {
	var f redactFlags
	c := &cobra.Command{
		Use:   "redact [--engine rules|model|both] [flags] [TEXT_OR_FILE]",
		Short: "Replace secrets and personal data in text with [REDACTED:<category>]",
		Long: `Print TEXT_OR_FILE with secrets and personal data replaced by
[REDACTED:<category>] markers, followed by a newline.

TEXT_OR_FILE is read as a file when it names an existing file, and used as the
text itself otherwise. Without it, moat redact reads standard input, which must
not be a terminal. Empty input, an empty file or an empty standard input is
refused with exit status 2, as is a terminal standard input; a redaction that
fails exits 1 and prints nothing of the input.

Engines:
  rules  (default) pure Go patterns and checks, no setup: e-mail addresses,
         phone numbers, payment cards (Luhn), IBANs (mod 97), IP addresses,
         cloud and service tokens (AWS, GCP, GitHub, GitLab, Slack, OpenAI,
         Anthropic), JWTs, PEM private keys, SECRET=... assignments and
         high-entropy values next to secret-ish words
  model  the ONNX privacy filter model (openai/privacy-filter); needs a moat
         built with cgo and -tags ` + redact.ModelBuildTag + `, and its files fetched once with
         moat setup; it never downloads
  both   the union of the two

Categories: secret, private_email, private_phone, account_number,
ip_address, and from the model also private_person, private_address,
private_date and private_url.`,
		Example: `  moat redact 'mail alice@example.com, key AKIAIOSFODNN7EXAMPLE'
  moat redact build.log
  kubectl logs app | moat redact
  moat redact --engine model --variant q4 notes.txt`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("redact: want at most one TEXT_OR_FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return exitOnRedactFailure(std, runRedact(std, &f, args))
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.engine, "engine", redact.EngineRules, "detection engine: rules (no setup), model (needs moat setup and a build with -tags "+redact.ModelBuildTag+") or both")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "model cache directory (default $HF_HOME/hub or ~/.cache/huggingface/hub); model engine only")
	fl.StringVar(&f.variant, "variant", "", "model ONNX variant: q4 (default), q4f16, quantized, fp16 or full; model engine only")
	fl.StringVar(&f.revision, "revision", "", "model revision, 40 hex digits (default the pinned one); model engine only")
	fl.StringVar(&f.executionProvider, "execution-provider", "cpu", "ONNX execution provider: cpu; model engine only")
	c.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions(engineNames, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// runRedact reads the input by Heimdall's rules, redacts it and prints it.
func runRedact(std stdio, f *redactFlags, args []string) error {
	if err := checkEngine(f.engine); err != nil {
		return err
	}
	text, err := redactInput(std.in, args)
	if err != nil {
		return err
	}
	d, err := openDetector(f.engine, f.options())
	if err != nil {
		return err
	}
	found, err := d.Detect(text)
	if err != nil {
		return &redactFailure{what: "privacy filter redaction failed", err: err}
	}
	out := redact.Redact(text, found) // widened: never skips a finding
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	dst, done := terminalOutput(std.out) // run_redact.go: a terminal gets no queries or clipboard writes
	_, err = io.WriteString(dst, out)
	done()
	if err != nil {
		return failf("redact: write output: %v", err)
	}
	return nil
}

// redactInput picks the input: the argument as a file if it names an
// existing regular file, else as text; without one, standard input unless
// it is a terminal. Empty input is a usage error that says so.
func redactInput(stdin *os.File, args []string) (string, error) {
	if len(args) == 1 {
		arg := args[0]
		if arg == "" {
			return "", usagef("redact: input text is empty")
		}
		if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
			b, err := os.ReadFile(arg)
			if err != nil {
				return "", usagef("redact: read %q: %v", arg, unwrapPath(err))
			}
			if len(b) == 0 {
				return "", usagef("redact: input file %q is empty", arg)
			}
			return string(b), nil
		}
		return arg, nil
	}
	if stdin == nil {
		return "", usagef("redact: no input: provide text argument, pipe input, or redirect a file")
	}
	if term.IsTerminal(int(stdin.Fd())) {
		return "", usagef("redact: no input: provide text argument, pipe input, or redirect a file (standard input is a terminal)")
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return "", usagef("redact: read standard input: %v", unwrapPath(err))
	}
	if len(b) == 0 {
		return "", usagef("redact: stdin is empty")
	}
	return string(b), nil
}

// unwrapPath drops the operation and path of an *os.PathError, which the
// message already names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
