package serve

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API's OpenAPI 3.1 document, served at GET
// /v1/openapi.json and printed by "moat serve --openapi".
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(OpenAPI)
}
