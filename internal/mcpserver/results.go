package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat/internal/report/jsonv1"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/internal/settings"
)

// Bytes carries bytes from the sandbox: Text when they are valid UTF-8,
// Base64 otherwise, never both. The zero value is no bytes.
type Bytes struct {
	Text   string `json:"text,omitempty"`
	Base64 string `json:"base64,omitempty"`
}

// bytesOf wraps b.
func bytesOf(b []byte) Bytes {
	if utf8.Valid(b) {
		return Bytes{Text: string(b)}
	}
	return Bytes{Base64: base64.StdEncoding.EncodeToString(b)}
}

// Refusal is a refusal as the model sees it: every field a JSON string.
// Subject and Detail may come from the sandbox and are data; Advice is
// written by moat from Setting alone. The zero value is no refusal.
type Refusal struct {
	Kind        string `json:"kind"`
	Subject     string `json:"subject"`
	Detail      string `json:"detail"`
	Setting     string `json:"setting"`
	Flag        string `json:"flag"`
	ConfigField string `json:"config_field"`
	Advice      string `json:"advice"`
}

// refusalsOf converts the session's refusals; empty, never nil.
func refusalsOf(rs []jsonv1.Refusal) []Refusal {
	out := make([]Refusal, 0, len(rs))
	for _, r := range rs {
		out = append(out, Refusal{
			Kind: safeWord(r.Kind), Subject: r.Subject, Detail: r.Detail,
			Setting: r.Setting, Flag: settingFlag(r.Setting), ConfigField: settings.Field(r.Setting),
			Advice: advice(r.Setting),
		})
	}
	return out
}

// settingFlag is the moat flag of a setting id from moat's table, or "".
func settingFlag(id string) string {
	s, _ := settings.Lookup(id)
	return s.Flag
}

// advice says which setting the user can change, built from the setting's
// id through moat's own table: nothing from the sandbox enters it.
func advice(id string) string {
	s, ok := settings.Lookup(id)
	if !ok {
		return "no setting allows this; it is part of the sandbox's protection"
	}
	how := s.Flag
	if s.Placeholder != "" {
		how += " " + s.Placeholder
	}
	return fmt.Sprintf("the user can allow this by changing the setting %s (moat's %s, %s) in the policy moat mcp was started with, then restarting it; no tool can change it", s.ID, how, s.Field)
}

// safeWord keeps a short stable word (a refusal's kind) or replaces it.
func safeWord(s string) string {
	if s == "" || len(s) > 32 {
		return "other"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return "other"
		}
	}
	return s
}

// refusalLines lists refusals for the text content: each subject quoted,
// each advice moat's own.
func refusalLines(rs []Refusal) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\nrefused (%s): %q; %s.", r.Kind, r.Subject, r.Advice)
	}
	return b.String()
}

// result is a tool's answer: summary, written by moat with any sandbox text
// quoted, then data as JSON, which is also the structured content. In the
// text content nothing invisible stays raw (visible.go); the structured
// content keeps the data as it was.
func result(summary string, data any) (*mcp.CallToolResult, any, error) {
	js, err := json.Marshal(data)
	if err != nil {
		return nil, nil, fmt.Errorf("mcpserver: encode result: %w", err)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: visibleLines(summary) + "\n" + visibleJSON(js)}},
		StructuredContent: json.RawMessage(js),
	}, nil, nil
}

// ErrorInfo is a failed call as the model sees it. The zero value is not
// used.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Setting string `json:"setting,omitempty"`
	Advice  string `json:"advice,omitempty"`
}

// failure is a tool result with IsError set, in words the model can act
// on: what failed, and which setting the user can change when one would
// allow it.
func failure(err error) (*mcp.CallToolResult, any, error) {
	info := ErrorInfo{Code: session.CodeInternal}
	var se *session.Error
	if errors.As(err, &se) {
		// The session quotes any sandbox-made text in Message (%q).
		info.Code, info.Message, info.Setting = se.Code, se.Message, se.Setting
	} else {
		info.Message = fmt.Sprintf("%q", err.Error())
	}
	switch info.Code {
	case session.CodeMemoryBudget, session.CodeTooMany:
		// The session core's words name narrowing, which MCP never offers.
		info.Message = "moat mcp already holds as many sandboxes as its bounds allow (one per connection)"
		info.Advice = "close another MCP connection to this server, or the user can lower the memory limit of the policy moat mcp was started with (moat's --memory SIZE, Limits.MemoryBytes)"
	default:
		if info.Setting != "" {
			info.Advice = advice(info.Setting)
		}
	}
	// One line whatever the message holds: a raw newline or escape in it
	// (a cause the session did not quote) is written out.
	text := fmt.Sprintf("error (%s): %s", safeWord(info.Code), oneLine(info.Message))
	if info.Advice != "" {
		text += "; " + info.Advice
	}
	res, _, jerr := result(text, struct {
		Error ErrorInfo `json:"error"`
	}{info})
	if jerr != nil {
		return nil, nil, jerr
	}
	res.IsError = true
	return res, nil, nil
}

// badInput is a failure for arguments the tool cannot use.
func badInput(format string, args ...any) (*mcp.CallToolResult, any, error) {
	return failure(&session.Error{Code: session.CodeBadRequest, Message: fmt.Sprintf(format, args...)})
}
