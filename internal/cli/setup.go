package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/moat-sandbox/moat/redact"
	"github.com/moat-sandbox/moat/redact/model"
)

// exitSetupFailed is moat setup's status when a download or check fails,
// as Heimdall's setup exits.
const exitSetupFailed = 1

// newSetupCmd builds "moat setup": the one step that downloads the privacy
// filter's model; moat redact --engine model loads it from the cache only.
func newSetupCmd(std stdio) *cobra.Command {
	var variant, revision, cacheDir string
	var force bool
	cmd := &cobra.Command{
		Use:   "setup [flags]",
		Short: "Download the privacy filter model for moat redact --engine model",
		Long: `moat setup downloads the privacy filter model, ` + model.Repository + ` at a pinned
revision, from the Hugging Face hub (or the hub named by HF_ENDPOINT) into the
Hugging Face cache ($HF_HOME/hub, else ~/.cache/huggingface/hub, or --cache-dir):
config.json, tokenizer.json, tokenizer_config.json, viterbi_calibration.json and
the variant's ONNX file with its external-data sidecars.

Each file's size and hash are taken from the pinned revision's file list (the
download's headers must agree with it), so the revision pins the contents; a
download that sends more bytes is discarded, a file is renamed into place only
once it checks out, and an interrupted download resumes where it stopped. A
token in HF_TOKEN or $HF_HOME/token is sent as a bearer token to the hub's own
origin only, never to storage or another host it redirects to.
Files already in the cache are kept unless --force is given.

This is the only step that touches the network: moat redact --engine model reads
the cache and never downloads. The model engine needs a moat built with cgo and
-tags ` + redact.ModelBuildTag + `, and the ONNX Runtime library (libonnxruntime, which npm's
onnxruntime-node package ships) in $` + model.RuntimeEnv + ` or <cache>/onnxruntime/.

Exit status: 0 when every file is in the cache, 1 when a download or check
failed, 2 for a usage error.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := model.ParseVariant(variant)
			if err != nil {
				return usagef("--variant %q: want one of %s", variant, model.VariantNames(", "))
			}
			rev, err := model.ParseRevision(revision)
			if err != nil {
				return usagef("--revision %q: want a 40-hex-digit commit id", revision)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runSetup(ctx, std, setupRequest{variant: v, revision: rev, cacheDir: cacheDir, force: force})
		},
	}
	f := cmd.Flags()
	f.StringVar(&variant, "variant", string(model.DefaultVariant), "ONNX variant to fetch: "+model.VariantNames(", "))
	f.StringVar(&revision, "revision", model.Revision, "model revision, a 40-hex-digit commit id")
	f.StringVar(&cacheDir, "cache-dir", "", "cache directory (default $HF_HOME/hub, else ~/.cache/huggingface/hub)")
	f.BoolVar(&force, "force", false, "download every file again, even if it is cached")
	return cmd
}

// setupRequest is what moat setup was asked for.
type setupRequest struct {
	variant  model.Variant
	revision string
	cacheDir string
	force    bool
}

// runSetup fetches every file of the request and prints the report.
func runSetup(ctx context.Context, std stdio, req setupRequest) error {
	mreq := model.SetupRequest{
		Variant:   string(req.variant),
		Revision:  req.revision,
		CacheDir:  req.cacheDir,
		Force:     req.force,
		UserAgent: "moat/" + moduleVersion(),
	}
	if term.IsTerminal(int(std.err.Fd())) {
		mreq.Progress = std.err
	}
	rep, err := model.Setup(ctx, mreq)
	if err != nil {
		fmt.Fprintln(std.err, errorLine(fmt.Errorf("setup: %s", err)))
		return &exitStatus{code: exitSetupFailed}
	}
	out := std.out
	fmt.Fprintln(out, "Privacy filter setup complete.")
	fmt.Fprintf(out, "Cache root: %s\n", rep.CacheRoot)
	for _, f := range rep.Files {
		how := "cached"
		switch {
		case f.Resumed:
			how = "downloaded, resumed"
		case f.Downloaded:
			how = "downloaded"
		}
		fmt.Fprintf(out, "  %s (%s, %s)\n", f.Path, model.HumanBytes(f.Size), how)
	}
	if !model.BuiltIn() {
		fmt.Fprintf(out, "Note: this moat has no model engine; build one with CGO_ENABLED=1 go build -tags %s ./cmd/moat\n", redact.ModelBuildTag)
	}
	if lib, err := model.FindRuntimeLibrary("", req.cacheDir); err == nil {
		fmt.Fprintf(out, "ONNX Runtime: %s\n", lib)
	} else {
		fmt.Fprintf(out, "Note: %s\n", err)
	}
	return nil
}
