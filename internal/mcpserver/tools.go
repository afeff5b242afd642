package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Forbidden lists tools moat mcp must never offer (docs/mcp.md says why):
// applying a workspace, restoring from the quarantine, and any change to
// the policy. A test checks the tool list holds none of them, and that no
// tool takes a policy argument.
var Forbidden = []string{
	"apply_workspace", "workspace_apply", "merge_workspace",
	"restore_quarantine", "quarantine_restore", "restore_file",
	"set_policy", "change_policy", "update_policy", "load_policy",
	"narrow_policy", "widen_policy", "allow_domain", "add_grant", "set_limits",
}

// addTools registers every tool, each described with what the policy
// allows.
func (s *Server) addTools() {
	s.addRunTools()
	s.addProcTools()
	s.addFileTools()
	s.addReportTools()
	s.addPythonTool()
}

// tool makes a tool whose description ends with the policy's words.
func (s *Server) tool(name, what string, readOnly bool) *mcp.Tool {
	t := &mcp.Tool{Name: name, Description: what + "\n\n" + allowsLine(s.allows)}
	f := false
	t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &f, OpenWorldHint: &f}
	return t
}
