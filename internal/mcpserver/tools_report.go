package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RefusalList lists refusals; never null. The zero value is not used.
type RefusalList struct {
	Refusals []Refusal `json:"refusals"`
}

func (s *Server) addReportTools() {
	mcp.AddTool(s.mcp, s.tool("get_report", "Return the sandbox's report (moat's report-json document v1): its protections and everything it refused so far.", true), s.getReport)
	mcp.AddTool(s.mcp, s.tool("list_refusals", "List what the sandbox refused so far (network, files, limits), each with the setting the user could change to allow it.", true), s.listRefusals)
}

func (s *Server) getReport(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	doc := sess.Report()
	return result(fmt.Sprintf("the sandbox's report: %d refusals", len(doc.Refusals))+refusalLines(refusalsOf(doc.Refusals)), doc)
}

func (s *Server) listRefusals(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	rs := refusalsOf(sess.Refusals())
	return result(fmt.Sprintf("%d refusals", len(rs))+refusalLines(rs), RefusalList{rs})
}
