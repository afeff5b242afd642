package redact_test

import (
	"fmt"
	"os"

	"github.com/moat-sandbox/moat/redact"
)

func ExampleNewRules() {
	text := "user alice@example.com, key AKIAIOSFODNN7EXAMPLE, card 4111 1111 1111 1111"
	found, _ := redact.NewRules().Detect(text)
	fmt.Println(redact.Apply(text, found))
	// Output: user [REDACTED:private_email], key [REDACTED:secret], card [REDACTED:account_number]
}

func ExampleApply() {
	spans := []redact.Finding{{Start: 6, End: 9, Category: "secret"}, {Start: 7, End: 11, Category: "other"}}
	fmt.Println(redact.Apply("token abcdef", spans))
	// Output: token [REDACTED:secret]f
}

// A stream: the secret arrives in two writes and is still caught.
func ExampleNewWriter() {
	w := redact.NewWriter(os.Stdout, redact.NewRules())
	fmt.Fprint(w, "GITHUB_TOKEN=ghp_16C7e42F292c")
	fmt.Fprint(w, "6912E7710c838347Ae178B4a\n")
	w.Close()
	// Output: GITHUB_TOKEN=[REDACTED:secret]
}

func ExampleOpen() {
	d, err := redact.Open(redact.EngineRules, redact.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	found, _ := d.Detect("ip 192.168.1.20")
	fmt.Println(found[0].Category)
	// Output: ip_address
}
